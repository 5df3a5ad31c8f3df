/** @file bench_remote.cc
 *  @brief Throughput and latency of Xapian remote servers as clients see
 *         them: C clients (threads), each with its own connection,
 *         QueryParser and Enquire, taking queries from a shared list.
 *
 *  For each server given (HOST:PORT, e.g. xapian-tcpsrv and
 *  xapian-gpu serve on the same database) and each client count, every
 *  client connects before the clock starts (a forking server's backlog is
 *  not measured), then the queries run once.  Prints one line per run:
 *  queries/s, mean, p50 and p99 latency in ms, and a digest of every MSet
 *  (docids, weights, percentages and match counts, in query order), so
 *  runs whose digests are equal answered identically.  Servers take turns
 *  within each client count.
 *
 *  usage: bench_remote --queries FILE [--clients 1,16,64] [--op or|and]
 *         [-k K] [--stem english|none] [--max N] [--exact-counts]
 *         [--warmup N] [--connect-each] NAME=HOST:PORT[,HOST:PORT...]... | NAME=STUBFILE...
 *  Several HOST:PORT: one server per shard, combined by the client
 *  (add_database) as a stub of several remote lines is.  A STUBFILE (any
 *  argument whose value holds a '/') is opened as a database, for example
 *  "remote :xapian-gpu connect SOCKET" (a Unix socket).
 *  --exact-counts asks for check_at_least = the database's size, so the
 *  match counts enter the digest (stock's are otherwise estimates).
 *  --warmup N: each client first runs N queries (the last N of the list,
 *  in turn) untimed on its connection, as a long-running application's
 *  connection is warm.  --connect-each: a new connection for every query,
 *  opened and closed inside its time (a CGI program such as Omega, or a
 *  PHP page, connects for each request).
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

namespace {

struct Server {
    std::string name;
    std::vector<std::pair<std::string, unsigned>> shards;  /* host, port */
    std::string stub;                                       /* or a stub */

    Xapian::Database open() const
    {
        if (!stub.empty()) return Xapian::Database(stub);
        Xapian::Database db;
        for (const auto &hp : shards)
            db.add_database(Xapian::Remote::open(hp.first, hp.second));
        return db;
    }
};

struct Args {
    std::string queries, stem = "english";
    std::vector<unsigned> clients{1, 16, 64};
    std::vector<Server> servers;
    unsigned k = 10, max = 0, warmup = 0;
    bool op_and = false, exact_counts = false, connect_each = false;
};

double now()
{
    return std::chrono::duration<double>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = static_cast<const unsigned char *>(p);
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

/* One run: `clients` connections to s, every query once. */
int run(const Args &a, const Server &s, unsigned clients,
        const std::vector<std::string> &texts)
{
    std::vector<Xapian::Database> conns;
    try {
        for (unsigned c = 0; c < clients; ++c)
            conns.push_back(s.open());
    } catch (const Xapian::Error &e) {
        std::fprintf(stderr, "bench_remote: %s: connect: %s\n", s.name.c_str(),
                     e.get_description().c_str());
        return 1;
    }
    std::vector<double> lat(texts.size(), -1);
    std::vector<uint64_t> digest(texts.size(), 0);
    std::atomic<size_t> next{0};
    std::atomic<int> failed{0};
    std::atomic<unsigned> warm{0};
    auto worker = [&](unsigned c) {
        Xapian::QueryParser qp;
        if (a.stem == "english") {
            qp.set_stemmer(Xapian::Stem("english"));
            qp.set_stemming_strategy(Xapian::QueryParser::STEM_SOME);
        }
        qp.set_default_op(a.op_and ? Xapian::Query::OP_AND
                                   : Xapian::Query::OP_OR);
        Xapian::Enquire warm_enq(conns[c]);
        const Xapian::doccount cal = a.exact_counts ? conns[c].get_doccount() : 0;
        try {
            for (unsigned w = 0; w < a.warmup && !texts.empty(); ++w) {
                const size_t i = texts.size() - 1 -
                                 (c + (size_t)w * clients) % texts.size();
                warm_enq.set_query(qp.parse_query(texts[i]));
                (void)warm_enq.get_mset(0, a.k, cal);
            }
        } catch (const Xapian::Error &) {
            /* a query the parser refuses: not timed anyway */
        }
        /* Every client warm before any is timed. */
        ++warm;
        while (warm.load() < clients) std::this_thread::yield();
        for (size_t i; (i = next++) < texts.size();) {
            Xapian::Query q;
            try {
                q = qp.parse_query(texts[i]);
            } catch (const Xapian::QueryParserError &) {
                continue;
            }
            const double t0 = now();
            try {
                /* A fresh connection per query, or the client's own. */
                Xapian::Database db = a.connect_each ? s.open() : conns[c];
                Xapian::Enquire enq(db);
                enq.set_query(q);
                Xapian::MSet m = enq.get_mset(0, a.k, cal);
                lat[i] = now() - t0;
                uint64_t h = 14695981039346656037ull;
                for (auto it = m.begin(); it != m.end(); ++it) {
                    const Xapian::docid d = *it;
                    const double w = it.get_weight();
                    const int pc = it.get_percent();
                    h = fnv(h, &d, sizeof d);
                    h = fnv(h, &w, sizeof w);
                    h = fnv(h, &pc, sizeof pc);
                }
                if (a.exact_counts) {
                    const Xapian::doccount n[3] = {
                        m.get_matches_lower_bound(), m.get_matches_estimated(),
                        m.get_matches_upper_bound()};
                    h = fnv(h, n, sizeof n);
                }
                digest[i] = h;
            } catch (const Xapian::Error &e) {
                std::fprintf(stderr, "bench_remote: %s: %s\n", s.name.c_str(),
                             e.get_description().c_str());
                failed = 1;
                return;
            }
        }
    };
    std::vector<std::thread> pool;
    for (unsigned c = 0; c < clients; ++c) pool.emplace_back(worker, c);
    while (warm.load() < clients) std::this_thread::yield();
    const double t0 = now();
    for (std::thread &t : pool) t.join();
    const double wall = now() - t0;
    if (failed) return 1;
    std::vector<double> l;
    uint64_t all = 14695981039346656037ull;
    for (size_t i = 0; i < texts.size(); ++i) {
        if (lat[i] >= 0) l.push_back(lat[i]);
        all = fnv(all, &digest[i], sizeof digest[i]);
    }
    std::sort(l.begin(), l.end());
    double sum = 0;
    for (double x : l) sum += x;
    const auto pct = [&](double p) {
        return l.empty() ? 0.0 : l[std::min(l.size() - 1, (size_t)(p * l.size()))];
    };
    std::printf("%-12s %3s clients %3u  queries %6zu  %9.0f q/s  mean %7.3f  "
                "p50 %7.3f  p99 %7.3f ms  digest %016" PRIx64 "\n",
                s.name.c_str(), a.op_and ? "and" : "or", clients, l.size(),
                l.size() / wall, l.empty() ? 0 : 1e3 * sum / l.size(),
                1e3 * pct(0.5), 1e3 * pct(0.99), all);
    std::fflush(stdout);
    return 0;
}

std::vector<unsigned> parse_list(const char *s)
{
    std::vector<unsigned> v;
    for (const char *p = s; *p;) {
        char *end;
        unsigned long x = std::strtoul(p, &end, 10);
        if (end == p || x == 0 || x > 4096) return {};
        v.push_back((unsigned)x);
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') return {};
    }
    return v;
}

int usage()
{
    std::fprintf(stderr, "usage: bench_remote --queries FILE [--clients 1,16,64] "
                         "[--op or|and] [-k K] [--stem english|none] [--max N] "
                         "[--exact-counts] [--warmup N] [--connect-each] "
                         "NAME=HOST:PORT[,HOST:PORT...]... | NAME=STUBFILE...\n");
    return 2;
}

} // namespace

int main(int argc, char **argv)
{
    Args a;
    for (int i = 1; i < argc; ++i) {
        std::string o = argv[i];
        const bool v = i + 1 < argc;
        if (o == "--queries" && v) a.queries = argv[++i];
        else if (o == "--clients" && v) a.clients = parse_list(argv[++i]);
        else if (o == "-k" && v) a.k = (unsigned)std::atoi(argv[++i]);
        else if (o == "--max" && v) a.max = (unsigned)std::atoi(argv[++i]);
        else if (o == "--op" && v) a.op_and = std::string(argv[++i]) == "and";
        else if (o == "--stem" && v) a.stem = argv[++i];
        else if (o == "--exact-counts") a.exact_counts = true;
        else if (o == "--connect-each") a.connect_each = true;
        else if (o == "--warmup" && v) a.warmup = (unsigned)std::atoi(argv[++i]);
        else if (o.find('=') != std::string::npos && o[0] != '-') {
            const size_t eq = o.find('=');
            Server srv;
            srv.name = o.substr(0, eq);
            const std::string v = o.substr(eq + 1);
            if (v.find('/') != std::string::npos) {
                srv.stub = v;
            } else {
                for (size_t at = 0; at <= v.size();) {
                    size_t end = v.find(',', at);
                    if (end == std::string::npos) end = v.size();
                    const std::string hp = v.substr(at, end - at);
                    const size_t colon = hp.rfind(':');
                    if (colon == std::string::npos || colon == 0) return usage();
                    srv.shards.emplace_back(hp.substr(0, colon),
                                            (unsigned)std::atoi(hp.c_str() + colon + 1));
                    at = end + 1;
                }
            }
            a.servers.push_back(srv);
        } else {
            return usage();
        }
    }
    if (a.queries.empty() || a.servers.empty() || a.clients.empty() || !a.k)
        return usage();
    std::ifstream f(a.queries);
    if (!f) {
        std::fprintf(stderr, "bench_remote: %s: cannot open\n", a.queries.c_str());
        return 1;
    }
    std::vector<std::string> texts;
    for (std::string line; std::getline(f, line);) {
        const size_t tab = line.find('\t');
        texts.push_back(tab == std::string::npos ? line : line.substr(tab + 1));
        if (a.max && texts.size() == a.max) break;
    }
    /* A server that fails a run (xapian-tcpsrv's connects time out when
     * many come at once) does not stop the others'. */
    int bad = 0;
    for (unsigned c : a.clients)
        for (const Server &s : a.servers)
            if (run(a, s, c, texts)) {
                std::printf("%-12s %3s clients %3u  failed\n", s.name.c_str(),
                            a.op_and ? "and" : "or", c);
                bad = 1;
            }
    return bad;
}
