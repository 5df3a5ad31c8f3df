/** @file test_match_tree.cc
 *  @brief The postlist-tree matcher (match_tree.c) against stock Xapian on
 *         real collections, and against the direct matcher (match_ref.c).
 *
 *  Where an AND checks an OR that holds a phrase, Xapian 1.4.22 can give a
 *  document the weight of a phrase whose check failed (lisa's query 2,
 *  "information on non-users libraries AND they": document 3716 weighs
 *  9.844, its terms 4.537).  The CPU matcher answers those queries with
 *  match_tree.c.  For lisa, time and cranfield, one shard and (lisa) two:
 *   1. every bundled query as QueryParser builds it (OR, AND, Omega's
 *      form; with wildcards, plain and Omega's), and queries built to
 *      hold phrases in an AND's ORs: phrases of adjacent words of real
 *      documents, with words, in ORs under an
 *      AND (Omega's shape of a phrase is an OR of phrases), and the
 *      general form: AND in OR, AND_MAYBE, AND_NOT, FILTER, scaled
 *      subtrees and NEAR (windows 2 to 12); synonyms and wildcards
 *      (one shard: over shards the engines leave wildcards to stock).
 *      Each served
 *      one equals stock's full ranking (check_at_least = the database's
 *      size) at k 10 and 100: docids, order, bit-equal weights.  Where
 *      stock's own top k is not its full ranking's, that is counted
 *      apart.
 *   2. every served query the direct matcher answers by itself gives the
 *      same MSet from the tree matcher (both at k 100);
 *   3. every served flat OR gives the direct matcher's hits and matched
 *      leaves from the top k without the count (match_prune.c) at k 1, 3,
 *      10 and 100, and most skip documents.
 *  usage: test_match_tree IR_DATA WORK_DIR (exit 77 without IR_DATA).
 */
#include <xapian.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

extern "C" {
#include "../gpu/query/match_ref.h"
}
#include "../plugin/searcher.h"
#include "../shim/tools/split.h"
#include "../shim/xg_shim.hh"
#include "mset_compare.h"
#include "sample_db.h"

namespace {

int failures = 0;

void fail(const std::string &what)
{
    if (failures++ < 20) printf("FAIL %s\n", what.c_str());
}

/* The tree and direct matchers: the same hits, counts of matching
 * subqueries (percentages) and match counts. */
bool same(const struct xg_result &a, const struct xg_result &b)
{
    if (!xg_test_same_hits(&a, &b) || a.matches_estimated != b.matches_estimated)
        return false;
    for (uint32_t i = 0; i < a.n_hits; ++i)
        if (a.hits[i].matched_leaves != b.hits[i].matched_leaves) return false;
    return true;
}

/* got against the first k of stock's MSet `ref`. */
bool same_top(const struct xg_result &got, struct xg_result ref, uint32_t k)
{
    if (ref.n_hits > k) ref.n_hits = k;
    return xg_test_same_hits(&got, &ref);
}

/* Adjacent word pairs of the collection's documents, as the indexer's
 * terms (lower case, unstemmed: what a phrase holds). */
std::vector<std::pair<std::string, std::string>> word_pairs(
    const std::string &tsv, size_t max)
{
    std::vector<std::pair<std::string, std::string>> out;
    std::ifstream in(tsv);
    std::string line;
    std::mt19937 rng(20261126);
    while (std::getline(in, line) && out.size() < max) {
        std::vector<std::string> words;
        std::string w;
        for (char c : line.substr(line.find('\t') + 1) + " ") {
            if (isalnum((unsigned char)c)) {
                w += (char)tolower((unsigned char)c);
            } else if (!w.empty()) {
                words.push_back(w);
                w.clear();
            }
        }
        if (words.size() < 8) continue;
        size_t i = rng() % (words.size() - 1);
        out.emplace_back(words[i], words[i + 1]);
    }
    return out;
}

Xapian::Query phrase(const std::pair<std::string, std::string> &p,
                     Xapian::Query::op op = Xapian::Query::OP_PHRASE,
                     Xapian::termcount window = 2)
{
    Xapian::Query t[] = {Xapian::Query(p.first), Xapian::Query(p.second)};
    return Xapian::Query(op, t, t + 2, window);
}

struct Tally {
    uint32_t served = 0, tree = 0, apart = 0, twins = 0, syn = 0;
    uint32_t top_ors = 0, top_skipped = 0, top_one = 0;
    uint32_t ranges = 0, ranges_asked = 0;
    uint32_t bounds = 0, bounds_unknown = 0;
};

/* The plans' match bounds (shim_plan.cc) against the ones stock starts
 * from, get_mset(0, 0) on each shard: the plugin reports the plans'. */
void check_bounds(xg_searcher *s, const Xapian::Query &q,
                  const struct xg_prepared *pq, const std::string &what,
                  Tally &t)
{
    const uint32_t n_shards = xg_searcher_index(s)->hdr->n_shards;
    bool known = true;
    for (uint32_t sh = 0; sh < n_shards; ++sh)
        known &= pq->plans[sh].bounds_known != 0;
    if (!known) {
        ++t.bounds_unknown;
        return;
    }
    std::vector<uint64_t> ref(3 * n_shards);
    if (xg_shim_tree_bounds(xg_searcher_db(s), q, ref.data())) {
        fail(what + ": stock's bounds: " + xg_last_error());
        return;
    }
    ++t.bounds;
    for (uint32_t sh = 0; sh < n_shards; ++sh)
        for (uint32_t b = 0; b < 3; ++b)
            if (ref[3 * sh + b] != pq->plans[sh].bounds[b])
                fail(what + ": shard " + std::to_string(sh) + " bound " +
                     std::to_string(b) + " " +
                     std::to_string(pq->plans[sh].bounds[b]) + ", stock's " +
                     std::to_string(ref[3 * sh + b]));
}

/* Values as applications store them: slot 0 a 4-byte big-endian time
 * (Omega's last-modified), slot 2 sortable_serialise() of a number
 * (Omega's size), both on every document; slot 5 a short string on about
 * two documents in five (gaps inside and between glass's value chunks);
 * slot 7 one value too long for the index.  Written in three commits, so
 * the chunks are not one run. */
std::string be4(uint32_t v)
{
    char b[4] = {char(v >> 24), char(v >> 16), char(v >> 8), char(v)};
    return std::string(b, 4);
}

void add_values(const std::string &path)
{
    Xapian::WritableDatabase w(path);
    const Xapian::docid last = w.get_lastdocid();
    for (Xapian::docid d = 1; d <= last; ++d) {
        Xapian::Document doc;
        try {
            doc = w.get_document(d);
        } catch (const Xapian::DocNotFoundError &) {
            continue;
        }
        std::mt19937 g(d);
        doc.add_value(0, be4(1500000000u + g() % 400000000u));
        doc.add_value(2, Xapian::sortable_serialise(double(g() % 100000)));
        if (g() % 5 < 2)
            doc.add_value(5, std::string(1 + g() % 6, char('a' + g() % 26)) +
                                 std::to_string(g() % 1000));
        if (d == 3) doc.add_value(7, std::string(40, 'x'));
        w.replace_document(d, doc);
        if (d % (last / 3 + 1) == 0) w.commit();
    }
    w.commit();
}

/* Value ranges around a query: filters (Omega's size: and date forms),
 * AND_NOT, weighted in an AND and in an OR, alone, an OR of ranges, on a
 * slot with gaps and on one the index does not hold. */
std::vector<Xapian::Query> with_ranges(const Xapian::Query &q, size_t i)
{
    using Q = Xapian::Query;
    std::mt19937 g(uint32_t(i) * 7919u);
    const uint32_t t0 = 1500000000u + g() % 400000000u;
    const std::string lo = be4(t0), hi = be4(t0 + 40000000u + g() % 9000000u);
    const std::string s1 = Xapian::sortable_serialise(double(g() % 60000));
    const std::string s2 = Xapian::sortable_serialise(double(60000 + g() % 40000));
    const std::string c1(1, char('a' + g() % 13)), c2(1, char('n' + g() % 13));
    Q date(Q::OP_VALUE_RANGE, 0, lo, hi), size_ge(Q::OP_VALUE_GE, 2, s1),
        size_le(Q::OP_VALUE_LE, 2, s2), sparse(Q::OP_VALUE_RANGE, 5, c1, c2);
    return {
        Q(Q::OP_FILTER, q, date),
        Q(Q::OP_FILTER, q, Q(Q::OP_AND, size_ge, size_le)),
        Q(Q::OP_FILTER, q, sparse),
        Q(Q::OP_AND_NOT, q, sparse),
        Q(Q::OP_AND, q, Q(Q::OP_VALUE_RANGE, 2, s1, s2)),
        Q(Q::OP_OR, q, date),
        Q(Q::OP_FILTER, q, Q(Q::OP_OR, date, size_le)),
        Q(Q::OP_OR, q, sparse),
        Q(Q::OP_VALUE_GE, 5, c2),
        Q(Q::OP_FILTER, q, Q(Q::OP_VALUE_LE, 7, "y")),
    };
}

/* The top k without the count (match_prune.c) against the direct
 * matcher's: the same hits and matched leaves at every k, and never more
 * documents weighed than match; counted where it skipped some. */
void check_top(const struct xg_index *ix, const struct xg_prepared *pq,
               const std::string &what, Tally &t)
{
    const struct xg_bm25_params p = XG_BM25_DEFAULTS;
    bool skipped = false;
    for (uint32_t k : {1u, 3u, 10u, 100u}) {
        struct xg_result a, b;
        if (xg_match_ref(ix, &pq->q, pq->term, pq->plans, &p, pq->stats, k,
                         &a)) {
            fail(what + ": " + xg_last_error());
            return;
        }
        if (xg_match_ref_top(ix, &pq->q, pq->term, pq->plans, &p, pq->stats,
                             k, &b)) {
            fail(what + ": top: " + xg_last_error());
            xg_result_free(&a);
            return;
        }
        bool leaves = a.n_hits == b.n_hits;
        for (uint32_t i = 0; leaves && i < a.n_hits; ++i)
            leaves = a.hits[i].matched_leaves == b.hits[i].matched_leaves;
        if (!xg_test_same_hits(&a, &b) || !leaves ||
            b.matches_estimated > a.matches_estimated)
            fail(what + " k " + std::to_string(k) + ": the top k without "
                 "the count differs from the direct matcher's");
        skipped |= b.matches_estimated < a.matches_estimated;
        xg_result_free(&b);
        /* With the count: the same top k, the exact count. */
        if (xg_match_ref_top_counted(ix, &pq->q, pq->term, pq->plans, &p,
                                     pq->stats, k, &b)) {
            fail(what + ": counted: " + xg_last_error());
            xg_result_free(&a);
            return;
        }
        leaves = a.n_hits == b.n_hits;
        for (uint32_t i = 0; leaves && i < a.n_hits; ++i)
            leaves = a.hits[i].matched_leaves == b.hits[i].matched_leaves;
        if (!xg_test_same_hits(&a, &b) || !leaves ||
            b.matches_estimated != a.matches_estimated)
            fail(what + " k " + std::to_string(k) + ": the top k with the "
                 "count differs from the direct matcher's (count " +
                 std::to_string(b.matches_estimated) + " against " +
                 std::to_string(a.matches_estimated) + ")");
        xg_result_free(&a);
        xg_result_free(&b);
    }
    ++t.top_ors;
    t.top_skipped += skipped;
    /* One list (its block-max walk): every indexed leaf on one term. */
    int64_t term = -1;
    bool one = true;
    for (uint32_t i = 0; i < pq->q.n_leaves; ++i)
        if (pq->term[i] >= 0) {
            one = one && (term < 0 || term == pq->term[i]);
            term = pq->term[i];
        }
    t.top_one += one && term >= 0;
}

/* True where the engines serve q (then checked). */
bool check_query(xg_searcher *s, const Xapian::Database &db,
                 const Xapian::Query &q, const std::string &what, Tally &t)
{
    xg_xquery *x = xg_shim_xquery_wrap(q);
    struct xg_prepared *pq = NULL;
    int rc = xg_searcher_prepare(s, x, &pq);
    xg_shim_xquery_free(x);
    if (rc == XG_ERR_UNSUPPORTED) return false;
    if (rc) {
        fail(what + ": " + xg_last_error());
        return false;
    }
    struct xg_search_opts o = XG_SEARCH_DEFAULTS;
    struct xg_result r0;
    o.k = 1;
    /* What only the run can tell (a value range below an OR, on a slot
     * with gaps) is stock's too. */
    rc = xg_searcher_run_cpu(s, pq, &o, &r0);
    if (rc == XG_ERR_UNSUPPORTED) {
        xg_prepared_free(pq);
        return false;
    }
    if (!rc) xg_result_free(&r0);
    ++t.served;
    check_bounds(s, q, pq, what, t);
    t.syn += pq->q.n_syns > 0;
    const bool tree = xg_match_needs_tree(&pq->q);
    t.tree += tree;
    /* Stock's full ranking: an MSet of every document never prunes. */
    struct xg_result full, pruned;
    xg_db *xdb = xg_searcher_db(s);
    if (xg_shim_search_query(xdb, q, NULL, 0, db.get_doccount(), &full)) {
        fail(what + ": stock: " + xg_last_error());
        xg_prepared_free(pq);
        return true;
    }
    for (uint32_t k : {10u, 100u}) {
        struct xg_result r;
        o.k = k;
        if (xg_searcher_run_cpu(s, pq, &o, &r)) {
            fail(what + ": " + xg_last_error());
            continue;
        }
        if (!same_top(r, full, k)) {
            fail(what + " k " + std::to_string(k) + " differs from stock's "
                 "full ranking");
        } else if (xg_shim_search_query(xdb, q, NULL, 0, k, &pruned) == XG_OK) {
            t.apart += !xg_test_same_hits(&r, &pruned);
            xg_result_free(&pruned);
        }
        xg_result_free(&r);
    }
    xg_result_free(&full);
    if (!tree) {
        const struct xg_index *ix = xg_searcher_index(s);
        const struct xg_bm25_params p = XG_BM25_DEFAULTS;
        struct xg_result a, b;
        if (xg_match_ref(ix, &pq->q, pq->term, pq->plans, &p, pq->stats,
                         100, &a) ||
            xg_match_tree(ix, &pq->q, pq->term, pq->plans, &p, pq->stats,
                          100, &b)) {
            if (pq->q.n_negated == 0) fail(what + ": " + xg_last_error());
        } else {
            if (!same(a, b)) fail(what + ": tree and direct matchers differ");
            ++t.twins;
            xg_result_free(&a);
            xg_result_free(&b);
        }
        if (pq->q.op == XG_QOP_OR) check_top(ix, pq, what, t);
    }
    xg_prepared_free(pq);
    return true;
}

void check_collection(const std::string &dir, const std::string &work,
                      uint32_t shards)
{
    const std::string name = std::filesystem::path(dir).filename();
    std::string db_path = work + "/" + name;
    if (make_db((dir + "/docs.tsv").c_str(), db_path.c_str(), 0))
        return fail(name + ": no database");
    add_values(db_path);
    if (shards == 1) {
        xg_db *xdb = NULL;
        struct xg_export_opts eo;
        xg_export_opts_init(&eo);
        struct xg_export_report rep;
        const char *paths[] = {db_path.c_str()};
        const int bad = xg_shim_db_open(paths, 1, &xdb) ||
            xg_export(xdb, (db_path + "/xapian-gpu.idx").c_str(), &eo, &rep);
        xg_shim_db_close(xdb);
        if (bad) return fail(db_path + ": " + xg_last_error());
        if (rep.value_slots != 3 || rep.value_slots_long != 1)
            return fail(db_path + ": export kept " +
                        std::to_string(rep.value_slots) + " value slots");
    }
    if (shards > 1) {
        const char *src[] = {db_path.c_str()};
        const std::string out = db_path + "-" + std::to_string(shards);
        std::filesystem::remove_all(out);
        struct xg_split_opts so = {shards, 1};
        uint64_t n = 0;
        xg_db *xdb = NULL;
        struct xg_export_opts eo;
        xg_export_opts_init(&eo);
        struct xg_export_report rep;
        const char *paths[] = {out.c_str()};
        if (xg_shim_split(src, 1, out.c_str(), &so, &n) ||
            xg_shim_db_open(paths, 1, &xdb) ||
            xg_export(xdb, (out + "/xapian-gpu.idx").c_str(), &eo, &rep)) {
            xg_shim_db_close(xdb);
            return fail(out + ": " + xg_last_error());
        }
        xg_shim_db_close(xdb);
        db_path = out;
    }
    const char *paths[] = {db_path.c_str()};
    xg_searcher *s = NULL;
    if (xg_searcher_open(paths, 1, NULL, &s) ||
        xg_searcher_index(s) == NULL)
        return fail(db_path + ": " + xg_last_error());
    Xapian::Database db(db_path);
    Tally t;
    std::ifstream in(dir + "/queries.tsv");
    std::string line;
    std::vector<std::string> texts;
    while (std::getline(in, line))
        if (line.find('\t') != std::string::npos)
            texts.push_back(line.substr(line.find('\t') + 1));
    /* 1. The bundled queries as QueryParser and Omega's setup build them;
     * forms 3 and 4 with FLAG_WILDCARD, every third word of four letters
     * or more cut to its first four and a '*'; forms 5 and 6 with
     * FLAG_PARTIAL, the last word cut to its first two to five letters
     * (search as you type: the 100 most frequent terms it starts). */
    for (size_t i = 0; i < texts.size(); ++i)
        for (int form = 0; form < 7; ++form) {
            struct xg_search_opts o = XG_SEARCH_DEFAULTS;
            o.default_and = form == 1;
            o.omega = form == 2 || form == 4 || form == 6;
            std::string text = texts[i];
            if (form >= 5) {
                o.parser_flags = XG_PARSE_FLAG_DEFAULT | XG_PARSE_FLAG_PARTIAL;
                while (!text.empty() && !isalpha((unsigned char)text.back()))
                    text.pop_back();
                size_t sp = text.find_last_of(' ');
                sp = sp == std::string::npos ? 0 : sp + 1;
                text = text.substr(0, sp + std::min<size_t>(2 + i % 4,
                                                             text.size() - sp));
            } else if (form >= 3) {
                o.parser_flags = XG_PARSE_FLAG_DEFAULT | XG_PARSE_FLAG_WILDCARD;
                std::istringstream in(texts[i]);
                std::string w;
                text.clear();
                for (int n = 0; in >> w; ++n)
                    text += (n % 3 == 1 && w.size() >= 4 && isalpha((unsigned char)w[3])
                                 ? w.substr(0, 4) + "*" : w) + " ";
            }
            xg_xquery *x = NULL;
            if (xg_searcher_parse(s, text.c_str(), &o, &x)) continue;
            const std::string what = name + " q" + std::to_string(i) +
                                     " form " + std::to_string(form);
            if (check_query(s, db, xg_shim_xquery_get(x), what, t) &&
                i % 4 == size_t(form % 4)) {
                const auto rq = with_ranges(xg_shim_xquery_get(x), i);
                for (size_t v = 0; v < rq.size(); ++v)
                    t.ranges += check_query(s, db, rq[v],
                                            what + " V" + std::to_string(v), t);
                t.ranges_asked += (uint32_t)rq.size();
            }
            xg_shim_xquery_free(x);
        }
    /* Phrases in an AND's ORs, from the collection's own word pairs. */
    auto pairs = word_pairs(dir + "/docs.tsv", 400);
    using Q = Xapian::Query;
    for (size_t i = 0; i + 5 < pairs.size(); i += 3) {
        Q w1(pairs[i].first), w2(pairs[i + 1].second), w3(pairs[i + 2].first);
        Q or1[] = {w1, phrase(pairs[i]), w2, phrase(pairs[i + 3])};
        Q or2[] = {phrase(pairs[i + 1]), w3};
        Q and1[] = {Q(Q::OP_OR, or1, or1 + 4), Q(Q::OP_OR, or2, or2 + 2)};
        check_query(s, db, Q(Q::OP_AND, and1, and1 + 2),
                    name + " built " + std::to_string(i) + " A", t);
        /* One word, and one word twice at two weights: one list. */
        check_query(s, db, w1, name + " built " + std::to_string(i) + " W", t);
        check_query(s, db, Q(Q::OP_OR, w2, Q(2.0, w2)),
                    name + " built " + std::to_string(i) + " WW", t);
        /* Omega's: a word group, and a phrase as an OR of phrases. */
        Q ph[] = {phrase(pairs[i]), phrase(pairs[i + 4]), phrase(pairs[i + 5])};
        Q and2[] = {Q(Q::OP_OR, w1, Q(pairs[i].second)),
                    Q(Q::OP_OR, ph, ph + 3)};
        check_query(s, db, Q(Q::OP_AND, and2, and2 + 2),
                    name + " built " + std::to_string(i) + " B", t);
        /* The general form: AND in OR, AND_MAYBE, AND_NOT, FILTER and
         * scaled subtrees, at the root and inside ANDs. */
        Q w4(pairs[i + 3].first), p1 = phrase(pairs[i]), p2 = phrase(pairs[i + 4]);
        /* NEAR: a pair of one document, either way round, windows 2-12. */
        Q n1 = phrase(pairs[i + 1], Q::OP_NEAR, 2 + i % 11);
        Q n2 = phrase({pairs[i + 2].second, pairs[i + 2].first}, Q::OP_NEAR,
                      3 + i % 5);
        Q general[] = {
            Q(Q::OP_OR, Q(Q::OP_AND, w1, w2), Q(Q::OP_OR, w3, p1)),
            Q(Q::OP_AND_MAYBE, Q(Q::OP_OR, w1, w2), Q(Q::OP_OR, p1, w3)),
            Q(Q::OP_AND_NOT, Q(Q::OP_AND, w1, Q(Q::OP_OR, p1, w2)),
              Q(Q::OP_OR, w3, p2)),
            Q(Q::OP_FILTER, Q(Q::OP_OR, w1, Q(Q::OP_OR, w2, p1)), w3),
            Q(Q::OP_OR, Q(2.5, Q(Q::OP_OR, w1, w2)), Q(Q::OP_AND, w3, w4)),
            Q(Q::OP_AND, Q(0.5, Q(Q::OP_AND, w1, w2)), Q(Q::OP_OR, w3, p2)),
            Q(Q::OP_AND, Q(Q::OP_AND, Q(Q::OP_OR, w1, w4),
                           Q(Q::OP_AND_NOT, Q(Q::OP_OR, w2, p1), w3)),
              Q(Q::OP_AND_MAYBE, Q(Q::OP_OR, w3, w2), p2)),
            n1,
            Q(Q::OP_OR, n1, Q(Q::OP_OR, w1, n2)),
            Q(Q::OP_AND, Q(Q::OP_OR, w1, n1), Q(Q::OP_OR, w3, n2)),
            Q(Q::OP_AND, n2, Q(Q::OP_OR, w3, p1)),
            /* A sparse slot's range checked beside phrases in ORs. */
            Q(Q::OP_FILTER, Q(Q::OP_AND, Q(Q::OP_OR, or1, or1 + 4),
                              Q(Q::OP_OR, or2, or2 + 2)),
              Q(Q::OP_VALUE_RANGE, 5, std::string(1, char('a' + i % 9)),
                std::string(1, char('j' + i % 17)))),
            Q(Q::OP_FILTER, Q(Q::OP_AND, and2, and2 + 2),
              Q(Q::OP_VALUE_GE, 5, std::string(1, char('c' + i % 20)))),
        };
        for (size_t g = 0; g < sizeof general / sizeof general[0]; ++g)
            check_query(s, db, general[g], name + " built " +
                        std::to_string(i) + " G" + std::to_string(g), t);
        /* Synonyms and wildcards (the first 3 to 5 letters of a word):
         * alone, in OR, AND, AND_MAYBE, unweighted under AND_NOT and
         * FILTER, scaled, a repeated term (wdfs that overlap), QueryParser's
         * several prefixes (a synonym of OR-combined wildcards), and the
         * limits (the first N; an error past N, which stock throws and the
         * engines leave to it). */
        const std::string pre1 = pairs[i].first.substr(0, 3 + i % 3);
        const std::string pre2 = pairs[i + 2].second.substr(0, 3 + i % 2);
        Q wc1(Q::OP_WILDCARD, pre1), wc2(Q::OP_WILDCARD, pre2);
        Q syn3[] = {w1, w2, w3}, rep[] = {w1, w1, w2};
        Q multi[] = {Q(Q::OP_WILDCARD, pre1, 0, Q::WILDCARD_LIMIT_ERROR,
                       Q::OP_OR),
                     Q(Q::OP_WILDCARD, "S" + pre1, 0, Q::WILDCARD_LIMIT_ERROR,
                       Q::OP_OR),
                     Q(Q::OP_WILDCARD, pre2, 0, Q::WILDCARD_LIMIT_ERROR,
                       Q::OP_OR)};
        Q synonyms[] = {
            Q(Q::OP_SYNONYM, syn3, syn3 + 3),
            Q(Q::OP_OR, Q(Q::OP_SYNONYM, rep, rep + 3), w4),
            wc1,
            Q(Q::OP_AND, wc1, Q(Q::OP_OR, w3, p1)),
            Q(Q::OP_OR, wc2, Q(Q::OP_OR, Q(Q::OP_SYNONYM, w2, w4), p1)),
            Q(Q::OP_AND_NOT, Q(Q::OP_OR, w1, w2), wc2),
            Q(Q::OP_FILTER, Q(Q::OP_OR, w2, w3), wc1),
            Q(Q::OP_SYNONYM, multi, multi + 3),
            Q(Q::OP_AND_MAYBE, Q(Q::OP_OR, w1, w3), wc1),
            Q(Q::OP_OR, Q(2.0, wc1), Q(Q::OP_AND, w2, wc2)),
            Q(Q::OP_WILDCARD, pre1, 3, Q::WILDCARD_LIMIT_FIRST),
            /* FLAG_PARTIAL's limit: the most frequent terms, kept in the
             * order std::nth_element leaves them. */
            Q(Q::OP_WILDCARD, pre1.substr(0, 2), 3 + i % 40,
              Q::WILDCARD_LIMIT_MOST_FREQUENT),
            Q(Q::OP_OR, w1, Q(Q::OP_WILDCARD, pre2.substr(0, 2), 2 + i % 9,
                              Q::WILDCARD_LIMIT_MOST_FREQUENT)),
            /* One letter: more terms than the engines' leaves to choose
             * from (lisa's "c" has 1,800). */
            Q(Q::OP_AND, w2, Q(Q::OP_WILDCARD, pre1.substr(0, 1), 100,
                               Q::WILDCARD_LIMIT_MOST_FREQUENT)),
            Q(Q::OP_WILDCARD, pre2, 2 + i % 3, Q::WILDCARD_LIMIT_ERROR),
        };
        for (size_t g = 0; i % 6 == 0 && g < sizeof synonyms / sizeof synonyms[0]; ++g)
            check_query(s, db, synonyms[g], name + " built " +
                        std::to_string(i) + " S" + std::to_string(g), t);
    }
    printf("%s (%u shard%s): %u queries served, %u by the tree matcher (%u "
           "with synonyms or wildcards, %u of %u with value ranges), all "
           "equal to stock's full ranking at k 10 and 100 (%u where stock's "
           "top k is not its full ranking's, apart); %u equal from both "
           "matchers; match bounds of %u equal to stock's from the plans "
           "(%u left to Xapian)\n", name.c_str(), shards, shards > 1 ? "s" : "",
           t.served, t.tree, t.syn, t.ranges, t.ranges_asked, t.apart,
           t.twins, t.bounds, t.bounds_unknown);
    /* Of the ten forms around a served query, the slot too long to hold
     * and (where gaps lie between chunks) a sparse slot in an OR are
     * stock's. */
    if (t.ranges < t.ranges_asked * 8 / 10)
        fail(name + ": too few value ranges served");
    if (t.tree == 0) fail(name + ": no query needed the tree matcher");
    if (t.syn == 0) fail(name + ": no synonym served");
    if (t.bounds < t.served / 2) fail(name + ": too few plans' bounds");
    printf("%s: %u ORs' top k without the count equal to the direct "
           "matcher's at k 1, 3, 10 and 100, and with the count its hits "
           "and count; %u of them skipped documents; %u on one list\n",
           name.c_str(), t.top_ors, t.top_skipped, t.top_one);
    if (t.top_one == 0) fail(name + ": no OR on one list");
    if (t.top_skipped < t.top_ors / 4)
        fail(name + ": the top k without the count skipped too little");
    xg_searcher_close(s);
}

} // namespace

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_match_tree IR_DATA WORK_DIR\n");
        return 2;
    }
    std::filesystem::create_directories(argv[2]);
    int n = 0;
    for (const char *c : {"lisa", "time", "cranfield"}) {
        const std::string dir = std::string(argv[1]) + "/" + c;
        if (!std::filesystem::exists(dir + "/docs.tsv")) continue;
        check_collection(dir, argv[2], 1);
        if (!strcmp(c, "lisa")) check_collection(dir, argv[2], 2);
        ++n;
    }
    if (!n) {
        printf("SKIP: no ir-data collection under %s\n", argv[1]);
        return failures ? 1 : 77;
    }
    printf("%s (%d failures)\n", failures ? "FAIL" : "PASS", failures);
    return failures ? 1 : 0;
}
