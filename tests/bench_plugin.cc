/** @file bench_plugin.cc
 *  @brief Throughput and latency of an application using the plugin, the
 *         way applications run: T threads, each with its own Database,
 *         QueryParser and Enquire, taking queries from a shared list.
 *
 *  Three runs over the same queries: stock Xapian (all CPU), the plugin
 *  with engine GPU (all GPU, through the dispatcher) and with engine AUTO
 *  (the cost model routes each query).  Every plugin MSet is checked
 *  against the stock one (docids and bit-equal weights); the table gives
 *  queries/s, mean, p50 and p99 latency and the routes, and the last line
 *  how often the cost model picked the side that was faster for the query.
 *
 *  Before the timed runs, one untimed stock pass warms the page cache and
 *  Xapian's tables, so the first timed run is not the cold one.
 *
 *  usage: bench_plugin --db DB --queries FILE [--threads T] [--op or|and]
 *         [-k K] [--stem english|none] [--model FILE] [--max N]
 *         [--runs stock,gpu,auto]
 */
#include <xapian.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "../plugin/xapian-gpu.hh"

namespace {

struct Hit {
    Xapian::docid did;
    double w;
};

struct Args {
    std::vector<std::string> dbs;
    std::string queries, model, stem = "english";
    std::string runs = "stock,gpu,auto";
    unsigned threads = 16, k = 10, max = 0;
    bool op_and = false;
};

double now()
{
    return std::chrono::duration<double>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

struct Run {
    const char *name;
    double wall = 0;
    std::vector<double> lat;
    std::vector<std::vector<Hit>> res;
    std::vector<int> route;         /* per query (plugin runs) */
    uint64_t routes[XG_ROUTE_COUNT] = {0};
};

/* One run: engine < 0 is stock Xapian, else the plugin with that engine. */
void run(const Args &a, const std::vector<std::string> &texts, int engine,
         Run &r)
{
    r.lat.assign(texts.size(), 0);
    r.res.assign(texts.size(), {});
    r.route.assign(texts.size(), -1);
    xg_context *ctx = nullptr;
    if (engine >= 0) {
        std::vector<const char *> paths;
        for (const std::string &p : a.dbs) paths.push_back(p.c_str());
        xg_context_opts o = XG_CONTEXT_DEFAULTS;
        o.engine = engine;
        if (!a.model.empty()) o.cost_model = a.model.c_str();
        if (xg_context_open(paths.data(), paths.size(), nullptr, &o, &ctx)) {
            std::fprintf(stderr, "bench_plugin: %s\n", xg_last_error());
            std::exit(1);
        }
    }
    std::atomic<size_t> next{0};
    auto worker = [&]() {
        Xapian::Database db;
        for (const std::string &p : a.dbs) db.add_database(Xapian::Database(p));
        Xapian::QueryParser qp;
        qp.set_database(db);
        if (a.stem == "english") {
            qp.set_stemmer(Xapian::Stem("english"));
            qp.set_stemming_strategy(Xapian::QueryParser::STEM_SOME);
        }
        qp.set_default_op(a.op_and ? Xapian::Query::OP_AND
                                   : Xapian::Query::OP_OR);
        Xapian::Enquire enq(db);
        for (size_t i; (i = next++) < texts.size();) {
            const double t0 = now();
            Xapian::Query q;
            try {
                q = qp.parse_query(texts[i]);
            } catch (const Xapian::QueryParserError &) {
                continue;
            }
            if (ctx) q = xg_accelerate(ctx, q, 0, a.k, &r.route[i]);
            enq.set_query(q);
            Xapian::MSet m = enq.get_mset(0, a.k);
            for (auto it = m.begin(); it != m.end(); ++it)
                r.res[i].push_back({*it, it.get_weight()});
            r.lat[i] = now() - t0;
        }
    };
    const double t0 = now();
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < a.threads; ++t) pool.emplace_back(worker);
    for (std::thread &t : pool) t.join();
    r.wall = now() - t0;
    if (ctx) {
        xg_context_routes(ctx, r.routes);
        xg_context_close(ctx);
    }
}

} // namespace

int main(int argc, char **argv)
{
    Args a;
    for (int i = 1; i < argc; ++i) {
        std::string o = argv[i];
        const bool v = i + 1 < argc;
        if (o == "--db" && v) a.dbs.push_back(argv[++i]);
        else if (o == "--queries" && v) a.queries = argv[++i];
        else if (o == "--threads" && v) a.threads = (unsigned)std::atoi(argv[++i]);
        else if (o == "-k" && v) a.k = (unsigned)std::atoi(argv[++i]);
        else if (o == "--max" && v) a.max = (unsigned)std::atoi(argv[++i]);
        else if (o == "--op" && v) a.op_and = std::string(argv[++i]) == "and";
        else if (o == "--stem" && v) a.stem = argv[++i];
        else if (o == "--model" && v) a.model = argv[++i];
        else if (o == "--runs" && v) a.runs = argv[++i];
        else {
            std::fprintf(stderr, "bench_plugin: bad argument %s\n", argv[i]);
            return 2;
        }
    }
    if (a.dbs.empty() || a.queries.empty() || !a.threads) {
        std::fprintf(stderr, "usage: bench_plugin --db DB --queries FILE "
                     "[options]\n");
        return 2;
    }
    std::vector<std::string> texts;
    std::ifstream in(a.queries);
    for (std::string line; std::getline(in, line);) {
        size_t tab = line.find('\t');
        if (tab != std::string::npos) texts.push_back(line.substr(tab + 1));
        if (a.max && texts.size() == a.max) break;
    }
    /* Stock always runs: it is the reference every MSet is checked against. */
    const std::string want = "," + a.runs + ",";
    const bool want_gpu = want.find(",gpu,") != std::string::npos;
    const bool want_auto = want.find(",auto,") != std::string::npos;
    Run warm, runs[3];
    runs[0].name = "stock";
    runs[1].name = "plugin-gpu";
    runs[2].name = "plugin-auto";
    run(a, texts, -1, warm);
    run(a, texts, -1, runs[0]);
    if (want_gpu) run(a, texts, XG_ENGINE_GPU, runs[1]);
    if (want_auto) run(a, texts, XG_ENGINE_AUTO, runs[2]);
    int bad = 0;
    std::printf("queries %zu, threads %u, k %u, op %s\n", texts.size(),
                a.threads, a.k, a.op_and ? "and" : "or");
    std::printf("%-12s %9s %9s %8s %8s %8s  %s\n", "run", "q/s", "identical",
                "mean ms", "p50 ms", "p99 ms", "routes");
    for (Run &r : runs) {
        if (r.wall == 0) continue; /* not asked for */
        size_t same = 0;
        for (size_t i = 0; i < texts.size(); ++i) {
            const auto &x = runs[0].res[i], &y = r.res[i];
            bool eq = x.size() == y.size();
            for (size_t j = 0; eq && j < x.size(); ++j)
                eq = x[j].did == y[j].did &&
                     std::memcmp(&x[j].w, &y[j].w, sizeof(double)) == 0;
            same += eq;
        }
        bad |= same != texts.size();
        std::vector<double> l = r.lat;
        std::sort(l.begin(), l.end());
        double mean = 0;
        for (double t : l) mean += t;
        mean /= l.empty() ? 1 : (double)l.size();
        const double p50 = l.empty() ? 0 : l[l.size() / 2];
        const double p99 = l.empty() ? 0 : l[std::min(l.size() - 1, l.size() * 99 / 100)];
        std::printf("%-12s %9.0f %9zu %8.3f %8.3f %8.3f ", r.name,
                    texts.size() / r.wall, same, mean * 1e3, p50 * 1e3,
                    p99 * 1e3);
        for (int k = 0; k < XG_ROUTE_COUNT; ++k)
            if (r.routes[k])
                std::printf(" %s %" PRIu64, xg_route_name(k), r.routes[k]);
        std::printf("\n");
    }
    /* Did the cost model pick the faster side?  Each query's latency on
     * stock and through the GPU comes from the first two runs (both under
     * the same concurrency); only the queries it priced count. */
    uint64_t priced = 0, right = 0, gpu_faster = 0;
    for (size_t i = 0; i < texts.size(); ++i) {
        const int rt = runs[2].route[i];
        if (!want_gpu || !want_auto ||
            (rt != XG_ROUTE_GPU && rt != XG_ROUTE_STOCK_CHEAPER) ||
            runs[1].route[i] != XG_ROUTE_GPU)
            continue;
        const bool faster = runs[1].lat[i] < runs[0].lat[i];
        ++priced;
        gpu_faster += faster;
        right += faster == (rt == XG_ROUTE_GPU);
    }
    std::printf("cost model: chose the faster side for %" PRIu64 " of %" PRIu64
                " queries it priced (the GPU was faster for %" PRIu64 ")\n",
                right, priced, gpu_faster);
    return bad;
}
