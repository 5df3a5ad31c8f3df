/** @file test_plugin_app.cc
 *  @brief An application the way Xapian applications are written
 *         (QueryParser, Enquire), with the plugin added: every MSet must be
 *         the stock one, bit for bit (docids, order, weights, every item's
 *         percent and matching terms, each query term's termweight and
 *         termfreq, max_possible, max_attained, and the match bounds
 *         wherever the MSet holds every match).  Otherwise Xapian's lower bound counts
 *         the documents its matcher happened to visit, which differs
 *         between the two queries: those differences are counted and
 *         printed, not failed (docs/plugin.md).
 *
 *  For each query, OR and AND, (first, maxitems) = (0, 10), (0, 100),
 *  (5, 10), (10, 10), (19, 1) and (3, 4): stock Enquire against Enquire
 *  on xg_accelerate()'s query.  Also per served query: the accelerated
 *  query serialised and unserialised with ResultSource registered (what
 *  the remote backend does) gives the same MSet, and a different BM25 on
 *  the Enquire is routed to stock.
 *
 *  usage: test_plugin_app --db DB [--db SHARD2 ...] --queries FILE
 *         [--engine auto|gpu|cpu] [--threads N] [--expect-route NAME]
 *         [--require-route NAME]... [--model FILE] [--min-served F]
 *         [--inject-gpu-fault] [--modify-db] [--deadline-ms MS]
 *         [--wildcard]
 *  --expect-route: every accelerate() call must take that route;
 *  --require-route: at least one must (repeatable);
 *  --model: the cost model file for engine auto;
 *  --min-served: at least that fraction of the servable accelerate() calls
 *  (all but stock:weighting and stock:unsupported) answered by the GPU or
 *  CPU engine;
 *  --inject-gpu-fault: each search's first engine allocation fails;
 *  --modify-db: add a document to the (single) database first (stale);
 *  --deadline-ms: the context's deadline for a query queued for the GPU;
 *  --wildcard: QueryParser's FLAG_WILDCARD too ("in:word" always filters
 *  on the term word, as Omega's boolean prefixes do);
 *  --partial: QueryParser's FLAG_PARTIAL too.
 *  Exit 0 when every MSet was identical and the expectations hold.
 */
#include <xapian.h>

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "../gpu/query/engine.h"
#include "../plugin/xapian-gpu.hh"

namespace {

struct Args {
    std::vector<std::string> dbs;
    std::string queries, expect_route, model;
    std::vector<std::string> require_routes;
    int engine = XG_ENGINE_AUTO;
    unsigned threads = 1;
    double min_served = 0, deadline_ms = 0, batch_wait_ms = 0;
    bool inject = false, modify = false;
    unsigned parser_flags = Xapian::QueryParser::FLAG_DEFAULT;
};

std::atomic<uint64_t> compared{0}, differences{0};

Xapian::Database open_db(const Args &a)
{
    Xapian::Database db;
    for (const std::string &p : a.dbs) db.add_database(Xapian::Database(p));
    return db;
}

std::string describe(const Xapian::MSet &m)
{
    std::string s = "matches " + std::to_string(m.get_matches_lower_bound()) +
                    "/" + std::to_string(m.get_matches_estimated()) + "/" +
                    std::to_string(m.get_matches_upper_bound()) + ":";
    for (auto it = m.begin(); it != m.end(); ++it) {
        char buf[64];
        snprintf(buf, sizeof buf, " %u/%.17g", *it, it.get_weight());
        s += buf;
    }
    return s;
}

/* The parts of an MSet compared beyond docids, order and weights, each
 * counted where it differs (printed at the end): */
enum part {
    PART_PERCENT,       /* any item's get_percent() */
    PART_TERMWEIGHT,    /* get_termweight(t) of some query term t */
    PART_TERMFREQ,      /* get_termfreq(t) of some query term t */
    PART_TERMS,         /* get_matching_terms() of some item */
    PART_COUNT
};
const char *const part_names[PART_COUNT] = {"percent", "termweight",
                                            "termfreq", "matching terms"};
std::atomic<uint64_t> part_differs[PART_COUNT];
std::atomic<uint64_t> items_compared{0}, terms_compared{0};
std::atomic<int> termweight_shown{0};

/* 0: the same MSet, bit for bit (docids, order, weights, the matching
 * terms and percent of every item, each query term's termweight and
 * termfreq, max_possible and max_attained, and the match bounds whenever
 * the MSet holds every match, so that Xapian's bounds are exact by
 * construction); 1: different; 2 (lower bound) or 3 (estimate or upper
 * bound): the same but for the bounds of a stock MSet whose bounds are
 * estimates (docs/plugin.md). */
int compare(Xapian::Enquire &e1, const Xapian::MSet &a, Xapian::Enquire &e2,
            const Xapian::MSet &b, Xapian::doccount maxitems,
            const Xapian::Query &q, std::string *why)
{
    if (a.size() != b.size()) return *why = "size", 1;
    const double pa = a.get_max_possible(), pb = b.get_max_possible(),
                 ta = a.get_max_attained(), tb = b.get_max_attained();
    if (std::memcmp(&pa, &pb, sizeof pa) != 0)
        return *why = "max_possible", 1;
    if (std::memcmp(&ta, &tb, sizeof ta) != 0)
        return *why = "max_attained", 1;
    bool differs[PART_COUNT] = {};
    for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j) {
        const double x = i.get_weight(), y = j.get_weight();
        if (*i != *j || std::memcmp(&x, &y, sizeof x) != 0)
            return *why = "docids or weights", 1;
        ++items_compared;
        if (i.get_percent() != j.get_percent()) differs[PART_PERCENT] = true;
        std::vector<std::string> t1(e1.get_matching_terms_begin(i),
                                    e1.get_matching_terms_end(i));
        std::vector<std::string> t2(e2.get_matching_terms_begin(j),
                                    e2.get_matching_terms_end(j));
        if (t1 != t2) differs[PART_TERMS] = true;
    }
    for (auto t = q.get_unique_terms_begin(); t != q.get_unique_terms_end();
         ++t) {
        ++terms_compared;
        const double x = a.get_termweight(*t), y = b.get_termweight(*t);
        if (std::memcmp(&x, &y, sizeof x) != 0) {
            if (!differs[PART_TERMWEIGHT] && ++termweight_shown <= 1)
                std::printf("e.g. termweight %s: stock %.17g plugin %.17g\n",
                            (*t).c_str(), x, y);
            differs[PART_TERMWEIGHT] = true;
        }
        if (a.get_termfreq(*t) != b.get_termfreq(*t))
            differs[PART_TERMFREQ] = true;
    }
    int rc = 0;
    for (int p = 0; p < PART_COUNT; ++p) {
        if (!differs[p]) continue;
        ++part_differs[p];
        if (!rc) {
            *why = part_names[p];
            rc = 1;
        }
    }
    if (rc) return rc;
    const bool bounds_same =
        a.get_matches_estimated() == b.get_matches_estimated() &&
        a.get_matches_lower_bound() == b.get_matches_lower_bound() &&
        a.get_matches_upper_bound() == b.get_matches_upper_bound();
    if (bounds_same) return 0;
    if (a.size() < maxitems) return *why = "bounds of a complete MSet", 1;
    return a.get_matches_estimated() == b.get_matches_estimated() &&
                   a.get_matches_upper_bound() == b.get_matches_upper_bound()
               ? 2   /* the lower bound only */
               : 3;
}

std::atomic<uint64_t> estimates_differ{0}, lower_differs{0}, stock_self{0};

/* Whether b is stock's own unpruned page (check_at_least every document,
 * as xg_shim_search_unpruned asks) in every field compare() reads:
 * Xapian 1.4.22's matcher can leave out of its top k a document its full
 * ranking holds there, and where a phrase lies in an OR that an AND
 * moves, its pruned moves give other documents a phrase's weight than
 * its full ranking's (docs/architecture.md, "When stock disagrees with
 * itself"): stock's error, not the plugin's. */
bool stock_full_agrees(Xapian::Enquire &e1, Xapian::Enquire &e2,
                       const Xapian::MSet &b, unsigned first,
                       Xapian::doccount maxitems, const Xapian::Query &q)
{
    const Xapian::doccount all = e1.get_mset(0, 0).get_matches_upper_bound();
    const Xapian::MSet full = e1.get_mset(first, maxitems, all);
    std::string why;
    return compare(e1, full, e2, b, maxitems, q, &why) != 1;
}

void check(const char *what, const std::string &qtext, Xapian::Enquire &e1,
           const Xapian::MSet &a, Xapian::Enquire &e2, const Xapian::MSet &b,
           Xapian::doccount maxitems, const Xapian::Query &q,
           unsigned first = 0)
{
    ++compared;
    std::string why;
    const int c = compare(e1, a, e2, b, maxitems, q, &why);
    if (c == 0) return;
    if (c == 2) {
        ++lower_differs;
        return;
    }
    if (c == 3) {
        ++estimates_differ;
        return;
    }
    if ((why == "docids or weights" || why == "size" ||
         why == "max_attained") &&
        stock_full_agrees(e1, e2, b, first, maxitems, q)) {
        if (++stock_self <= 3)
            std::printf("STOCK AGAINST ITSELF: query '%s', first %u, "
                        "maxitems %u: the plugin's page is stock's own "
                        "full ranking's\n", qtext.c_str(), first,
                        maxitems);
        return;
    }
    if (++differences <= 5) {
        std::string da = describe(a), db = describe(b);
        if (da.size() > 300) da.resize(300);
        if (db.size() > 300) db.resize(300);
        std::printf("DIFFERENT %s (%s), query '%s', first %u, maxitems %u:\n"
                    "  stock  %s\n  plugin %s\n", what, why.c_str(),
                    qtext.c_str(), first, maxitems, da.c_str(), db.c_str());
    }
}

void run_queries(const Args &a, xg_context *ctx,
                 const std::vector<std::string> &texts, size_t from,
                 size_t step)
{
    Xapian::Database db = open_db(a);
    Xapian::Stem stem("english");
    Xapian::Registry registry;
    registry.register_posting_source(xapian_gpu::ResultSource(nullptr));
    /* Pages: the top 10 and 100, later pages, and a page cut in a run of
     * ties (first 1..20 with maxitems 1 are each k = first + 1). */
    static const unsigned pages[][2] = {{0, 10}, {0, 100}, {5, 10},
                                        {10, 10}, {19, 1}, {3, 4}};
    for (size_t qi = from; qi < texts.size(); qi += step) {
        for (int op = 0; op < 2; ++op) {
            Xapian::QueryParser qp;
            qp.set_database(db);
            qp.set_stemmer(stem);
            qp.set_stemming_strategy(Xapian::QueryParser::STEM_SOME);
            qp.set_default_op(op ? Xapian::Query::OP_AND : Xapian::Query::OP_OR);
            /* "in:word" filters on the term word, as Omega's boolean
             * prefixes filter (OP_FILTER, unweighted). */
            qp.add_boolean_prefix("in", "");
            /* "size:A..B", Omega's value range on slot 2. */
            Xapian::NumberRangeProcessor size(2, "size:");
            qp.add_rangeprocessor(&size);
            Xapian::Query q;
            try {
                q = qp.parse_query(texts[qi], a.parser_flags);
            } catch (const Xapian::QueryParserError &) {
                continue;
            }
            for (const auto &pg : pages) {
                Xapian::Enquire stock(db), plug(db);
                stock.set_query(q);
                Xapian::MSet ms = stock.get_mset(pg[0], pg[1]);
                if (a.inject) xg_engine_fail_next_alloc(1);
                int route;
                Xapian::Query aq = xg_accelerate(ctx, q, pg[0], pg[1],
                                                 Xapian::BM25Weight(),
                                                 &route);
                plug.set_query(aq);
                Xapian::MSet mp = plug.get_mset(pg[0], pg[1]);
                check("MSet", texts[qi], stock, ms, plug, mp, pg[1], q, pg[0]);
                if (!a.expect_route.empty() &&
                    a.expect_route != xg_route_name(route)) {
                    if (++differences <= 5)
                        std::printf("ROUTE %s, expected %s: '%s'\n",
                                    xg_route_name(route),
                                    a.expect_route.c_str(), texts[qi].c_str());
                }
                if (route != XG_ROUTE_GPU && route != XG_ROUTE_CPU) continue;
                if (pg[1] != 10 || pg[0] != 0) continue;
                /* The remote backend's path: serialise, unserialise. */
                Xapian::Enquire remote(db);
                remote.set_query(
                    Xapian::Query::unserialise(aq.serialise(), registry));
                check("unserialised", texts[qi], stock, ms, remote,
                      remote.get_mset(pg[0], pg[1]), pg[1], q);
                /* Another BM25 on the Enquire: stock answers it. */
                Xapian::BM25Weight other(1.2, 0, 1, 0.75, 0.5);
                Xapian::Enquire s2(db), p2(db);
                s2.set_weighting_scheme(other);
                p2.set_weighting_scheme(other);
                s2.set_query(q);
                p2.set_query(xg_accelerate(ctx, q, 0, 10, other, &route));
                check("other BM25", texts[qi], s2, s2.get_mset(0, 10), p2,
                      p2.get_mset(0, 10), 10, q);
                if (route != XG_ROUTE_STOCK_WEIGHTING && ++differences <= 5)
                    std::printf("ROUTE %s for another BM25\n",
                                xg_route_name(route));
            }
        }
    }
}

} // namespace

int main(int argc, char **argv)
{
    Args a;
    for (int i = 1; i < argc; ++i) {
        std::string o = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
        if (o == "--db" && v) a.dbs.push_back(argv[++i]);
        else if (o == "--queries" && v) a.queries = argv[++i];
        else if (o == "--threads" && v) a.threads = (unsigned)std::atoi(argv[++i]);
        else if (o == "--expect-route" && v) a.expect_route = argv[++i];
        else if (o == "--require-route" && v) a.require_routes.push_back(argv[++i]);
        else if (o == "--model" && v) a.model = argv[++i];
        else if (o == "--min-served" && v) a.min_served = std::atof(argv[++i]);
        else if (o == "--inject-gpu-fault") a.inject = true;
        else if (o == "--modify-db") a.modify = true;
        else if (o == "--deadline-ms" && v) a.deadline_ms = std::atof(argv[++i]);
        else if (o == "--batch-wait-ms" && v) a.batch_wait_ms = std::atof(argv[++i]);
        else if (o == "--wildcard")
            a.parser_flags |= Xapian::QueryParser::FLAG_WILDCARD;
        else if (o == "--partial")
            a.parser_flags |= Xapian::QueryParser::FLAG_PARTIAL;
        else if (o == "--engine" && v) {
            std::string e = argv[++i];
            a.engine = e == "gpu" ? XG_ENGINE_GPU
                     : e == "cpu" ? XG_ENGINE_CPU : XG_ENGINE_AUTO;
        } else {
            std::fprintf(stderr, "test_plugin_app: bad argument %s\n", argv[i]);
            return 2;
        }
    }
    if (a.dbs.empty() || a.queries.empty() || a.threads == 0) {
        std::fprintf(stderr, "usage: test_plugin_app --db DB --queries FILE "
                     "[options]\n");
        return 2;
    }
    if (a.modify) {
        Xapian::WritableDatabase w(a.dbs[0], Xapian::DB_OPEN);
        Xapian::Document d;
        d.add_term("xgstaletestterm");
        w.add_document(d);
        w.commit();
    }
    std::vector<std::string> texts;
    std::ifstream in(a.queries);
    for (std::string line; std::getline(in, line);) {
        size_t tab = line.find('\t');
        if (tab != std::string::npos) texts.push_back(line.substr(tab + 1));
    }
    std::vector<const char *> paths;
    for (const std::string &p : a.dbs) paths.push_back(p.c_str());
    xg_context_opts o = XG_CONTEXT_DEFAULTS;
    o.engine = a.engine;
    o.deadline_ms = a.deadline_ms;
    o.max_wait_ms = a.batch_wait_ms;
    if (!a.model.empty()) o.cost_model = a.model.c_str();
    xg_context *ctx;
    if (xg_context_open(paths.data(), paths.size(), nullptr, &o, &ctx)) {
        std::fprintf(stderr, "test_plugin_app: %s\n", xg_last_error());
        return 1;
    }
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < a.threads; ++t)
        pool.emplace_back(run_queries, std::cref(a), ctx, std::cref(texts), t,
                          a.threads);
    for (std::thread &t : pool) t.join();
    uint64_t routes[XG_ROUTE_COUNT], total = 0;
    xg_context_routes(ctx, routes);
    std::printf("compared: %" PRIu64 " items (docid, weight, percent, "
                "matching terms), %" PRIu64 " query terms (termweight, "
                "termfreq); MSets differing in:", items_compared.load(),
                terms_compared.load());
    for (int p = 0; p < PART_COUNT; ++p)
        std::printf(" %s %" PRIu64, part_names[p], part_differs[p].load());
    std::printf("\n");
    std::printf("%zu queries, %u threads: %" PRIu64 " MSets compared, %" PRIu64
                " different; where stock's bounds are estimates, %" PRIu64
                " with another lower bound only, %" PRIu64 " with another "
                "estimate; %" PRIu64 " where stock's top k is not its own "
                "full ranking's; routes:", texts.size(), a.threads,
                compared.load(), differences.load(), lower_differs.load(),
                estimates_differ.load(), stock_self.load());
    for (int r = 0; r < XG_ROUTE_COUNT; ++r) {
        total += routes[r];
        if (routes[r]) std::printf(" %s %" PRIu64, xg_route_name(r), routes[r]);
    }
    std::printf("\n");
    if (routes[XG_ROUTE_STOCK_UNSUPPORTED]) {
        char unserved[1024];
        xg_context_unserved(ctx, unserved, sizeof unserved);
        std::printf("unsupported: %s\n", unserved);
    }
    const char *why = xg_context_index_error(ctx);
    if (why) std::printf("index: %s\n", why);
    xg_context_close(ctx);
    /* --min-served counts the queries the engines can serve: not the
     * other-BM25 probes (stock:weighting by design), nor the shapes they
     * do not serve (stock:unsupported). */
    const uint64_t served = routes[XG_ROUTE_GPU] + routes[XG_ROUTE_CPU];
    const uint64_t servable = total - routes[XG_ROUTE_STOCK_WEIGHTING] -
                              routes[XG_ROUTE_STOCK_UNSUPPORTED];
    if (a.min_served > 0 &&
        (servable == 0 || served < a.min_served * (double)servable)) {
        std::printf("FAIL: only %" PRIu64 " of the %" PRIu64 " servable "
                    "queries served by the plugin's engines\n", served,
                    servable);
        return 1;
    }
    for (const std::string &want : a.require_routes) {
        int r = 0;
        while (r < XG_ROUTE_COUNT && want != xg_route_name(r)) ++r;
        if (r == XG_ROUTE_COUNT || routes[r] == 0) {
            std::printf("FAIL: no query took route %s\n", want.c_str());
            return 1;
        }
    }
    if (compared == 0) {
        std::printf("FAIL: nothing compared\n");
        return 1;
    }
    return differences ? 1 : 0;
}
