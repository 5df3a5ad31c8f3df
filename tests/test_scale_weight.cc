/** @file test_scale_weight.cc
 *  @brief OP_SCALE_WEIGHT: each factor is decoded exactly, and the CPU
 *         matcher (and the GPU pipeline) answer scaled queries as stock
 *         Enquire does, bit for bit.
 *
 *  Proves DESIGN.md's exactness contract for scaled queries:
 *   1. decoding: Query(f, term) converts to a leaf whose factor is f, bit
 *      for bit, for chosen factors (0.5, 2.5, 3, 1e-3, 1e10, extremes) and
 *      for random doubles over the whole exponent range; nested scales give
 *      (1.0 * f1) * f2 ..., root first, as QueryScaleWeight::postlist.
 *   2. refusals: factor 0 and factors whose product overflows or
 *      underflows are "unsupported: ..." (stock Xapian answers them); an
 *      OR scaled inside an OR and an AND scaled inside an AND are subtrees
 *      of their own in Xapian, which the general form builds (forms 11
 *      and 12 below).
 *   3. matching: every query of cranfield, med and cacm (folded to plain
 *      words), parsed as OR and as AND, is wrapped in OP_SCALE_WEIGHT
 *      around the whole query, around every term, around OR groups inside
 *      an AND, around terms of wqf 3, and nested; for each form the CPU
 *      matcher's top k (10 and 100) must equal stock Enquire's on the same
 *      Query: docids, order, bit-equal weights.  Also at k 10 with
 *      k1 = 1.2, b = 0.75 (k1 + 1 is then not a power of two, so a factor
 *      applied in the wrong place shows) and with k2 = 1 (the
 *      term-independent part, which Xapian does not scale); and the GPU
 *      engine where one is usable (XG_GPU_TWINS=1: its CPU twins).
 *
 *  usage: test_scale_weight IR_DATA WORK_DIR (exit 77 without IR_DATA).
 */
#include <xapian.h>

#include <cctype>
#include <cfloat>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "../plugin/searcher.h"
#include "../shim/xg_export.h"
#include "../shim/tools/indexer.h"
#include "../shim/xg_shim.hh"

namespace {

int failures = 0;

void fail(const std::string &what)
{
    if (failures++ < 20) printf("FAIL %s\n", what.c_str());
}

bool same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* The engine form of q (xg_query is large, so it lives on the heap). */
struct Converted {
    std::unique_ptr<xg_query> q{new xg_query()};
    int rc;
    explicit Converted(const Xapian::Query &query) {
        xg_xquery *x = xg_shim_xquery_wrap(query);
        rc = xg_shim_xquery_convert(x, q.get());
        xg_shim_xquery_free(x);
    }
    ~Converted() { xg_query_free(q.get()); }
};

Xapian::Query term(const char *t) { return Xapian::Query(t); }

void check_factor(double f)
{
    Converted c(Xapian::Query(f, term("t")));
    if (c.rc != XG_OK || c.q->n_leaves != 1 ||
        !same_bits(c.q->leaves[0].factor, f)) {
        char buf[160];
        snprintf(buf, sizeof buf, "decode %a: rc %d, factor %a", f, c.rc,
                 c.rc == XG_OK ? c.q->leaves[0].factor : 0.0);
        fail(buf);
    }
}

/* 1. Every factor comes back bit for bit; nesting multiplies root first. */
void check_decoding()
{
    const double chosen[] = {
        0.5, 2.5, 3, 1e-3, 1e10, 1, 0.1, 1.0 / 3, 7e22, 1e-300, 1e300,
        DBL_MAX, DBL_MIN, std::numeric_limits<double>::denorm_min(),
        std::nextafter(1.0, 2.0), std::nextafter(1.0, 0.0)};
    for (double f : chosen) check_factor(f);
    const uint64_t seed = 20240522;
    std::mt19937_64 rng(seed);
    int n_random = 0;
    while (n_random < 5000) {
        uint64_t bits = rng() & ~(uint64_t(1) << 63);
        double f;
        memcpy(&f, &bits, sizeof f);
        if (!std::isfinite(f) || f == 0) continue;
        check_factor(f);
        ++n_random;
    }
    /* (0.1 * 0.2) * 0.3 != 0.1 * (0.2 * 0.3): the order is tested. */
    const double f1 = 0.1, f2 = 0.2, f3 = 0.3;
    using Q = Xapian::Query;
    Converted c(Q(f1, Q(Q::OP_AND, Q(f2, term("a")),
                        Q(Q::OP_OR, term("b"), Q(f2, Q(f3, term("c")))))));
    const double want[] = {(1.0 * f1) * f2, 1.0 * f1, ((1.0 * f1) * f2) * f3};
    bool ok = c.rc == XG_OK && c.q->n_leaves == 3;
    for (int i = 0; ok && i < 3; ++i)
        ok = same_bits(c.q->leaves[i].factor, want[i]);
    if (!ok) fail("nested factors");
    printf("decoding: %zu chosen and %d random factors (seed %" PRIu64
           "), and nesting: %s\n", sizeof chosen / sizeof chosen[0], n_random,
           seed, failures ? "FAILED" : "exact");
}

/* 2. What the engines must leave to stock Xapian. */
void check_refusals()
{
    using Q = Xapian::Query;
    const struct {
        const char *what;
        Q q;
    } cases[] = {
        {"factor 0", Q(0.0, term("a"))},
        {"factors overflow", Q(1e200, Q(1e200, term("a")))},
        {"factors underflow", Q(1e-200, Q(1e-200, term("a")))},
    };
    for (const auto &c : cases) {
        Converted v(c.q);
        if (v.rc != XG_ERR_UNSUPPORTED ||
            strncmp(xg_last_error(), "unsupported: ", 13) != 0)
            fail(std::string("refusal of ") + c.what + ": rc " +
                 std::to_string(v.rc) + " " + xg_last_error());
        else
            printf("refused %-18s %s\n", c.what, xg_last_error());
    }
}

/* The factors the matching forms cycle through. */
const double factors[] = {0.5, 2.5, 3, 1e-3, 1e10, 0.1, 7};
const size_t n_factors = sizeof factors / sizeof factors[0];

void leaves_of(const Xapian::Query &q, std::vector<Xapian::Query> &out)
{
    if (q.get_type() == Xapian::Query::LEAF_TERM) {
        out.push_back(q);
        return;
    }
    for (size_t i = 0; i < q.get_num_subqueries(); ++i)
        leaves_of(q.get_subquery(i), out);
}

/* q with every term wrapped in its own factor. */
Xapian::Query scale_terms(const Xapian::Query &q, size_t &i)
{
    if (q.get_type() == Xapian::Query::LEAF_TERM)
        return Xapian::Query(factors[i++ % n_factors], q);
    std::vector<Xapian::Query> kids;
    for (size_t j = 0; j < q.get_num_subqueries(); ++j)
        kids.push_back(scale_terms(q.get_subquery(j), i));
    return Xapian::Query(q.get_type(), kids.begin(), kids.end());
}

/* An AND of ORs of two of q's terms (Omega's shape); scaled: every other
 * group scaled, a term in the others scaled twice, and the whole by 0.1
 * (0.1 * 0.2 * 0.3 differs with the association, so the order shows). */
Xapian::Query and_of_ors(const Xapian::Query &q, bool scaled)
{
    std::vector<Xapian::Query> t, groups;
    leaves_of(q, t);
    for (size_t i = 0; i < t.size(); i += 2) {
        Xapian::Query a = t[i];
        if (scaled && groups.size() % 2)
            a = Xapian::Query(0.2, Xapian::Query(0.3, a));
        Xapian::Query g = i + 1 < t.size()
            ? Xapian::Query(Xapian::Query::OP_OR, a, t[i + 1]) : a;
        if (scaled && groups.size() % 2 == 0)
            g = Xapian::Query(factors[groups.size() % n_factors], g);
        groups.push_back(g);
    }
    Xapian::Query r(Xapian::Query::OP_AND, groups.begin(), groups.end());
    return scaled ? Xapian::Query(0.1, r) : r;
}

/* q with every other term given wqf 3 (k3's part of the term weight is
 * then not 1), and each of those scaled. */
Xapian::Query wqf_terms(const Xapian::Query &q, size_t &i)
{
    if (q.get_type() == Xapian::Query::LEAF_TERM) {
        if (i++ % 2) return q;
        return Xapian::Query(factors[i % n_factors],
                             Xapian::Query(*q.get_terms_begin(), 3));
    }
    std::vector<Xapian::Query> kids;
    for (size_t j = 0; j < q.get_num_subqueries(); ++j)
        kids.push_back(wqf_terms(q.get_subquery(j), i));
    return Xapian::Query(q.get_type(), kids.begin(), kids.end());
}

/* p's terms split in two halves: the first scaled as an OR inside an OR of
 * the rest (or as an AND inside an AND): Xapian builds the scaled half as
 * a subtree of its own (the general form). */
Xapian::Query scaled_subtree(const Xapian::Query &p, Xapian::Query::op op)
{
    std::vector<Xapian::Query> t;
    leaves_of(p, t);
    if (t.size() < 3) return Xapian::Query(0.5, p);
    const size_t half = t.size() / 2;
    std::vector<Xapian::Query> outer;
    outer.push_back(Xapian::Query(2.5, Xapian::Query(op, t.begin(),
                                                     t.begin() + (long)half)));
    outer.insert(outer.end(), t.begin() + (long)half, t.end());
    return Xapian::Query(op, outer.begin(), outer.end());
}

/* Form f (0 .. n_forms-1) of the parsed query p. */
const int n_forms = 13;
Xapian::Query form(const Xapian::Query &p, int f)
{
    size_t i = 0;
    switch (f) {
    case 0: return p;
    case 1: case 2: case 3: case 4: case 5:
        return Xapian::Query(factors[f - 1], p);
    case 6: return scale_terms(p, i);
    case 7: return and_of_ors(p, false);
    case 8: return and_of_ors(p, true);
    case 9: return wqf_terms(p, i);
    case 11: return scaled_subtree(p, Xapian::Query::OP_OR);
    case 12: return scaled_subtree(p, Xapian::Query::OP_AND);
    default:
        return Xapian::Query(0.1, Xapian::Query(0.3, Xapian::Query(7.0, p)));
    }
}

struct Hits {
    std::vector<uint32_t> docid;
    std::vector<double> weight;
};

Hits stock(const Xapian::Database &db, const Xapian::Query &q, uint32_t k,
           const struct xg_bm25_params &p)
{
    Xapian::Enquire e(db);
    e.set_query(q);
    e.set_weighting_scheme(
        Xapian::BM25Weight(p.k1, p.k2, p.k3, p.b, p.min_normlen));
    Xapian::MSet m = e.get_mset(0, k);
    Hits h;
    for (auto it = m.begin(); it != m.end(); ++it) {
        h.docid.push_back(*it);
        h.weight.push_back(it.get_weight());
    }
    return h;
}

bool equal(const Hits &want, const struct xg_result &got)
{
    if (got.n_hits != want.docid.size()) return false;
    for (uint32_t i = 0; i < got.n_hits; ++i)
        if (got.hits[i].docid != want.docid[i] ||
            !same_bits(got.hits[i].weight, want.weight[i]))
            return false;
    return true;
}

struct Case {
    std::string name;
    Xapian::Query q;
    struct xg_prepared *pq;
    uint32_t k;
    Hits want;
};

/* Index, export, open. */
xg_searcher *build(const std::string &tsv, const std::string &db)
{
    std::filesystem::remove_all(db);
    struct xg_index_opts io = {1, 0, 1, 1, 0};
    const char *paths[] = {db.c_str()};
    xg_db *xdb = NULL;
    struct xg_export_opts eo;
    xg_export_opts_init(&eo);
    struct xg_export_report rep;
    xg_searcher *s = NULL;
    if (xg_shim_index_tsv(tsv.c_str(), db.c_str(), &io) ||
        xg_shim_db_open(paths, 1, &xdb) ||
        xg_export(xdb, (db + "/xapian-gpu.idx").c_str(), &eo, &rep) ||
        xg_searcher_open(paths, 1, NULL, &s)) {
        fail(db + ": " + xg_last_error());
        s = NULL;
    }
    xg_shim_db_close(xdb);
    return s;
}

/* Plain words: what QueryParser makes phrases or operators of goes. */
std::string fold(std::string text)
{
    for (char &c : text)
        c = isalnum((unsigned char)c) ? (char)tolower((unsigned char)c) : ' ';
    return text;
}

/* 3. One collection: every form, k 10 and 100, against stock. */
void check_collection(const std::string &dir, const std::string &work)
{
    std::string name = std::filesystem::path(dir).filename();
    xg_searcher *s = build(dir + "/docs.tsv", work + "/" + name);
    if (!s) return;
    Xapian::Database db(work + "/" + name);
    std::ifstream in(dir + "/queries.tsv");
    std::vector<Case> cases;
    const struct xg_bm25_params bm25 = XG_BM25_DEFAULTS;
    /* k1 + 1 not a power of two (so the factor's place shows), and k2. */
    const struct xg_bm25_params others[] = {{1.2, 0.0, 1.0, 0.75, 0.5},
                                            {1.0, 1.0, 1.0, 0.5, 0.5}};
    struct xg_search_opts o = XG_SEARCH_DEFAULTS;
    uint32_t n_queries = 0, rescaled = 0, others_checked = 0;
    std::string line;
    while (std::getline(in, line)) {
        size_t tab = line.find('\t');
        if (tab == std::string::npos) continue;
        for (int op = 0; op < 2; ++op) {
            Xapian::QueryParser qp;
            qp.set_stemmer(Xapian::Stem("english"));
            qp.set_stemming_strategy(Xapian::QueryParser::STEM_SOME);
            qp.set_default_op(op ? Xapian::Query::OP_AND : Xapian::Query::OP_OR);
            Xapian::Query p = qp.parse_query(fold(line.substr(tab + 1)));
            if (p.empty()) continue;
            ++n_queries;
            double top0 = 0;
            for (int f = 0; f < n_forms; ++f) {
                Xapian::Query q = form(p, f);
                std::string what = name + " q" + line.substr(0, tab) +
                                   (op ? " AND" : " OR") + " form " +
                                   std::to_string(f) + " " +
                                   q.get_description();
                xg_xquery *x = xg_shim_xquery_wrap(q);
                struct xg_prepared *pq = NULL;
                int rc = xg_searcher_prepare(s, x, &pq);
                xg_shim_xquery_free(x);
                if (rc) {
                    fail(what + ": " + xg_last_error());
                    continue;
                }
                for (uint32_t k : {10u, 100u}) {
                    Case c{what, q, pq, k, stock(db, q, k, bm25)};
                    struct xg_result r;
                    o.k = k;
                    o.bm25 = bm25;
                    if (xg_searcher_run_cpu(s, pq, &o, &r) || !equal(c.want, r))
                        fail(what + " k " + std::to_string(k));
                    xg_result_free(&r);
                    if (k == 10 && !c.want.weight.empty()) {
                        if (f == 0) top0 = c.want.weight[0];
                        else rescaled += c.want.weight[0] != top0;
                    }
                    cases.push_back(std::move(c));
                }
                /* With k2 != 0 the extra part is added once, unscaled. */
                for (const struct xg_bm25_params &bp : others) {
                    struct xg_result r;
                    o.k = 10;
                    o.bm25 = bp;
                    if (xg_searcher_run_cpu(s, pq, &o, &r) ||
                        !equal(stock(db, q, 10, bp), r))
                        fail(what + " with BM25 k1 " + std::to_string(bp.k1) +
                             " k2 " + std::to_string(bp.k2));
                    xg_result_free(&r);
                    ++others_checked;
                }
            }
        }
    }
    if (!rescaled) fail(name + ": no form changed any weight");
    printf("%s: %u parsed queries x %d forms, k 10 and 100: %zu MSets "
           "compared with stock (CPU matcher), and %u at k 10 with BM25 "
           "(1.2,0,1,0.75,0.5) or (1,1,1,0.5,0.5)\n",
           name.c_str(), n_queries, n_forms, cases.size(), others_checked);

    /* The GPU engine (its twins under XG_GPU_TWINS=1) on the same cases. */
    const char *why = NULL;
    if (xg_searcher_gpu_status(s, &why) == XG_OK) {
        std::vector<struct xg_prepared *> pqs;
        std::vector<uint32_t> ks;
        for (const Case &c : cases) {
            pqs.push_back(c.pq);
            ks.push_back(c.k);
        }
        std::vector<struct xg_result> got(cases.size());
        std::vector<int> status(cases.size());
        o.engine = XG_ENGINE_GPU;
        o.bm25 = bm25;
        if (xg_searcher_run_prepared_ex(s, pqs.data(), ks.data(),
                                        (uint32_t)pqs.size(), &o, got.data(),
                                        status.data(), NULL)) {
            fail(name + " GPU engine: " + xg_last_error());
        } else {
            for (size_t i = 0; i < cases.size(); ++i) {
                if (status[i] != XG_OK || !equal(cases[i].want, got[i]))
                    fail(cases[i].name + " k " + std::to_string(cases[i].k) +
                         " (GPU engine)");
                xg_result_free(&got[i]);
            }
            printf("%s: the same %zu MSets from the GPU engine\n",
                   name.c_str(), cases.size());
        }
    } else {
        printf("%s: GPU engine not usable (%s)\n", name.c_str(), why);
    }
    for (size_t i = 0; i < cases.size(); i += 2)  /* one pq per k pair */
        xg_prepared_free(cases[i].pq);
    xg_searcher_close(s);
}

} // namespace

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_scale_weight IR_DATA WORK_DIR\n");
        return 2;
    }
    check_decoding();
    check_refusals();
    std::filesystem::create_directories(argv[2]);
    int n_coll = 0;
    for (const char *c : {"cranfield", "med", "cacm"}) {
        std::string dir = std::string(argv[1]) + "/" + c;
        if (!std::filesystem::exists(dir + "/docs.tsv")) continue;
        check_collection(dir, argv[2]);
        ++n_coll;
    }
    if (!n_coll) {
        printf("SKIP: no ir-data collection under %s\n", argv[1]);
        return failures ? 1 : 77;
    }
    printf("%s (%d failures)\n", failures ? "FAIL" : "PASS", failures);
    return failures ? 1 : 0;
}
