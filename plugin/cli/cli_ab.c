/** @file cli_ab.c
 *  @brief xapian-gpu ab / bench: answer a query file with several engines,
 *         check every MSet equals the first engine's, and time them.
 *
 *  `ab` is the operator's proof on their own data: one thread per engine,
 *  engines one after the other.  `bench` is the same run built for
 *  throughput: the stock matcher and the CPU matcher run one matcher per
 *  thread (default: every core), the GPU runs batches.  Equality is exact:
 *  same docids, same order, bit-equal weights.  This file runs the engines
 *  and prints; the metrics, qrels and the HTML report are ab_report.c's.
 */
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../gpu/runtime/error.h"
#include "../../gpu/runtime/outfile.h"
#include "ab_report.h"
#include "cli.h"
#include "cli_search_opts.h"
#include "server_child.h"
#include "../context.h"
#include "../router.h"
#include "../searcher.h"
#include "xg_config.h"

static const char help_ab[] =
    "usage: xapian-gpu ab --db DB --queries FILE [OPTIONS]\n"
    "Answer every query with each engine, check the MSets are identical to\n"
    "the first engine's, and print throughput and latency per engine.\n"
    "  --engines LIST          comma-separated from xapian,cpu,gpu,auto,\n"
    "                          plugin (the planner, as applications call it),\n"
    "                          plugin-gpu (the plugin with every query it can\n"
    "                          serve sent to the GPU), server (a remote server\n"
    "                          through --server, one connection per thread;\n"
    "                          without --server, a `serve --engine auto` it\n"
    "                          starts on the databases, on a Unix socket)\n"
    "                          (default xapian,cpu,plugin; and gpu with a GPU)\n"
    "  --server STUB           the stub file engine server opens, e.g. one\n"
    "                          line 'remote :xapian-gpu connect SOCKET' or\n"
    "                          'remote HOST:PORT' of a running server\n"
    "  --threads N             matchers in parallel for xapian and cpu (1)\n"
    "  --batch B               queries per GPU batch (256)\n"
    "  --batch-wait MS         how long the plugin engines' GPU batches wait\n"
    "                          for company (0, the default: none)\n"
    "  --gpu-spin MS           how long their lane threads poll the device\n"
    "                          for a batch before they sleep (0.5; 0: at\n"
    "                          once)\n"
    "  --json=OUT              write the figures as JSON to OUT\n"
    "  --qrels FILE            TREC qrels: MAP, P@10 and nDCG@10 per engine\n"
    "  --html OUT              write a self-contained HTML report to OUT\n"
    "  --repeat N              time every engine N times (1-9), in turns;\n"
    "                          each pass must give the same MSets, and the\n"
    "                          median pass's figures are reported\n"
    "  --samples FILE          write per query: qid, cost (sum of its terms'\n"
    "                          df), then per engine its latency (ms), the\n"
    "                          matcher that answered and its start (ms from\n"
    "                          the reported pass's start) (TSV)\n"
    "  plus the options of 'xapian-gpu search' (--db, --index, -k, --op,\n"
    "  --stem, --stopper, --bm25, --omega).  Exit status 1 if any MSet\n"
    "  differs.\n";

static const char help_bench[] =
    "usage: xapian-gpu bench --db DB --queries FILE [OPTIONS]\n"
    "Throughput run: the stock matcher and the CPU matcher with one matcher\n"
    "per thread (default: all cores), the GPU in batches; checks every MSet\n"
    "against the first engine's and prints queries/s, mean, p50 and p99\n"
    "latency and the ratios.  Options as for 'xapian-gpu ab' (--qrels and\n"
    "--html included).\n";

struct engine_run {
    const char *name;
    int engine;
    struct xg_result *res;      /* per query */
    int *status;
    double *lat;                /* per query seconds */
    double *start;              /* per query: seconds from the pass's start
                                   to the query's (NULL: not kept) */
    double t0;                  /* the pass's start (xg_cli_now) */
    double wall;                /* whole run */
    double cpu;                 /* CPU seconds of the run: this process's
                                   threads, and the server's (child) */
    long child;                 /* the server bench started (0: none) */
    uint32_t n_passes;          /* --repeat: timed passes, walls below */
    double pass_wall[XG_AB_MAX_PASSES];
    uint32_t routing[XG_AB_N_ROUTES];  /* gpu/auto: counted by run_gpu */
    int *route;                 /* plugin: enum xg_route per query */
    uint64_t reasons[XG_ROUTE_COUNT];  /* plugin: the planner's counts */
    int warm;                   /* bench: the GPU engine and the server
                                   answer a tenth of the queries untimed
                                   first (the plugin always does) */
};

/* The plugin: xg_context_search, as an application calls it (engine ids
 * after enum xg_engine's): the planner routing (AUTO), or every query it
 * can serve sent to the GPU. */
#define AB_ENGINE_PLUGIN 4
#define AB_ENGINE_PLUGIN_GPU 5
#define AB_ENGINE_PLUGIN_CPU 6
#define AB_IS_PLUGIN(e) ((e) >= AB_ENGINE_PLUGIN && (e) <= AB_ENGINE_PLUGIN_CPU)
/* A remote server (xapian-gpu serve, xapian-tcpsrv) reached through the
 * stub file of --server, as an application reaches it: stock Xapian's
 * client, one connection per thread. */
#define AB_ENGINE_SERVER 7

struct job {
    struct xg_cli_search_args *a;
    struct xg_cli_queries *qs;
    struct engine_run *run;
    _Atomic uint32_t next;      /* shared query counter (no lock: at 10^5
                                   queries/s a mutex is the bottleneck) */
    pthread_mutex_t lock;
    int rc;
    char err[512];
    xg_searcher **pool;         /* one opened searcher per thread */
    uint32_t pool_next;
    xg_context *ctx;            /* the plugin engine's context */
    xg_db **clients;            /* engine server: one connection a thread */
    uint32_t client_next;
};

/* The calling thread's searcher from the pool (opened before timing). */
static xg_searcher *pool_take(struct job *j)
{
    pthread_mutex_lock(&j->lock);
    xg_searcher *s = j->pool[j->pool_next++];
    pthread_mutex_unlock(&j->lock);
    return s;
}

static uint32_t take(struct job *j)
{
    return atomic_fetch_add_explicit(&j->next, 1, memory_order_relaxed);
}

static void fail(struct job *j)
{
    pthread_mutex_lock(&j->lock);
    if (!j->rc) {
        j->rc = 1;
        snprintf(j->err, sizeof j->err, "%s", xg_last_error());
    }
    atomic_store(&j->next, UINT32_MAX / 2);
    pthread_mutex_unlock(&j->lock);
}

/* Query i, started at t, ended with rc: its latency and status.  1 when
 * the run must stop (a fault, not a query the engine cannot serve). */
static int record(struct job *j, uint32_t i, double t, int rc)
{
    j->run->lat[i] = xg_cli_now() - t;
    if (j->run->start) j->run->start[i] = t - j->run->t0;
    j->run->status[i] = rc;
    if (rc && rc != XG_ERR_UNSUPPORTED && rc != XG_ERR_ARG) {
        fail(j);
        return 1;
    }
    return 0;
}

/* One matcher thread (xapian or cpu): its own searcher, queries from the
 * shared counter. */
static void *matcher_thread(void *arg)
{
    struct job *j = arg;
    xg_searcher *s = pool_take(j);
    struct xg_search_opts o = j->a->opts;
    o.engine = j->run->engine;
    for (uint32_t i; (i = take(j)) < j->qs->n;) {
        double t = xg_cli_now();
        int rc = xg_router_search_text(xg_searcher_router(s),
                                       xg_searcher_handle(s), j->qs->text[i],
                                       &o, &j->run->res[i], NULL);
        if (record(j, i, t, rc)) break;
    }
    return NULL;
}

/* One client thread of engine server: its own connection, QueryParser as
 * the other engines parse, stock Xapian's Enquire through the stub. */
static void *server_thread(void *arg)
{
    struct job *j = arg;
    pthread_mutex_lock(&j->lock);
    xg_db *db = j->clients[j->client_next++];
    pthread_mutex_unlock(&j->lock);
    struct xg_parse_opts po;
    xg_handle_parse_opts(&j->a->opts, &po);
    for (uint32_t i; (i = take(j)) < j->qs->n;) {
        double t = xg_cli_now();
        xg_xquery *xq = NULL;
        int rc = xg_shim_parse(db, j->qs->text[i], &po, &xq);
        if (!rc)
            rc = xg_shim_search(db, xq, &j->a->opts.bm25, j->a->opts.k,
                                &j->run->res[i]);
        if (xq) xg_shim_xquery_free(xq);
        if (record(j, i, t, rc)) break;
    }
    return NULL;
}

/* One application thread of the plugin engine: the context plans, batches
 * for the GPU, or hands the query to stock Xapian. */
static void *plugin_thread(void *arg)
{
    struct job *j = arg;
    for (uint32_t i; (i = take(j)) < j->qs->n;) {
        double t = xg_cli_now();
        int rc = xg_context_search(j->ctx, j->qs->text[i], &j->a->opts, 0,
                                   j->a->opts.k, &j->run->res[i],
                                   &j->run->route[i]);
        j->run->lat[i] = xg_cli_now() - t;
        if (j->run->start) j->run->start[i] = t - j->run->t0;
        j->run->status[i] = rc;
        if (rc && rc != XG_ERR_ARG) {
            fail(j);
            break;
        }
    }
    return NULL;
}

/* How many queries a warm-up answers: the first tenth, at least 1,000
 * (all of them where there are fewer). */
static uint32_t warm_up_queries(uint32_t n)
{
    return n / 10 > 1000 ? n / 10 : (n < 1000 ? n : 1000);
}

/* An untimed pass of the plugin or the server (fn, its thread) over the
 * first tenth of the queries (at least 1,000), so the timed pass does not
 * pay for the GPU's first batches (device buffers grown to their working
 * size, the dispatcher's measured batch time settled), nor the server for
 * its connections' first searches, as a long-running application would
 * not.  Its routes are not counted in the run's.  0, or 1 with j->err
 * set. */
static int warm_up(struct job *j, uint32_t threads, void *(*fn)(void *))
{
    struct xg_cli_queries part = *j->qs;
    part.n = warm_up_queries(part.n);
    struct engine_run warm = *j->run;
    warm.start = NULL;
    warm.res = calloc(part.n + 1, sizeof *warm.res);
    warm.status = calloc(part.n + 1, sizeof *warm.status);
    warm.lat = calloc(part.n + 1, sizeof *warm.lat);
    warm.route = calloc(part.n + 1, sizeof *warm.route);
    struct job w = {j->a, &part, &warm, 0, PTHREAD_MUTEX_INITIALIZER, 0, "",
                    j->pool, 0, j->ctx, j->clients, 0};
    pthread_t *t = calloc(threads, sizeof *t);
    uint32_t started = 0;
    if (warm.res && warm.status && warm.lat && warm.route && t)
        for (; started < threads; ++started)
            if (pthread_create(&t[started], NULL, fn, &w)) break;
    for (uint32_t i = 0; i < started; ++i) pthread_join(t[i], NULL);
    if (!started) snprintf(w.err, sizeof w.err, "warm-up: out of memory");
    for (uint32_t i = 0; warm.res && i < part.n; ++i)
        xg_result_free(&warm.res[i]);
    free(warm.res);
    free(warm.status);
    free(warm.lat);
    free(warm.route);
    free(t);
    if (started && !w.rc) return 0;
    snprintf(j->err, sizeof j->err, "%s", w.err);
    return 1;
}

static int run_threads(struct xg_cli_search_args *a, struct xg_cli_queries *qs,
                       struct engine_run *run, uint32_t threads,
                       xg_searcher **pool)
{
    struct job j = {a, qs, run, 0, PTHREAD_MUTEX_INITIALIZER, 0, "", pool, 0,
                    NULL, NULL, 0};
    pthread_t *t = calloc(threads, sizeof *t);
    if (!t) return xg_set_error(XG_ERR_NOMEM, "out of memory");
    /* The plugin's context opens (and loads the GPU) before the clock. */
    if (AB_IS_PLUGIN(run->engine)) {
        struct xg_context_opts co = XG_CONTEXT_DEFAULTS;
        if (run->engine == AB_ENGINE_PLUGIN_GPU) co.engine = XG_ENGINE_GPU;
        if (run->engine == AB_ENGINE_PLUGIN_CPU) co.engine = XG_ENGINE_CPU;
        co.bm25 = a->opts.bm25;
        co.device = a->engine_opts.device;
        co.device_memory = a->engine_opts.memory_budget;
        co.max_wait_ms = a->batch_wait_ms;
        if (a->gpu_spin_ms >= 0) co.wait_spin_ms = a->gpu_spin_ms;
        run->route = calloc(qs->n + 1, sizeof *run->route);
        if (!run->route || xg_context_open((const char *const *)a->dbs,
                                           a->n_dbs, a->index, &co, &j.ctx)) {
            free(t);
            return run->route ? xg_last_error_code()
                              : xg_set_error(XG_ERR_NOMEM, "out of memory");
        }
        /* Its threads' searchers too, as the other engines' are. */
        if (xg_context_reserve(j.ctx, threads)) {
            xg_context_close(j.ctx);
            free(t);
            return xg_last_error_code();
        }
    }
    /* The server engine's connections open before the clock too. */
    if (run->engine == AB_ENGINE_SERVER) {
        j.clients = calloc(threads, sizeof *j.clients);
        if (!j.clients) {
            free(t);
            return xg_set_error(XG_ERR_NOMEM, "out of memory");
        }
        for (uint32_t i = 0; i < threads; ++i)
            if (xg_shim_db_open_client(j.a->server, &j.clients[i])) {
                for (uint32_t c = 0; c < i; ++c) xg_shim_db_close(j.clients[c]);
                free(j.clients);
                free(t);
                return xg_last_error_code();
            }
    }
    void *(*fn)(void *) = j.ctx ? plugin_thread
                        : j.clients ? server_thread : matcher_thread;
    uint64_t before[XG_ROUTE_COUNT] = {0};
    if ((j.ctx || (j.clients && run->warm)) && warm_up(&j, threads, fn)) {
        if (j.ctx) xg_context_close(j.ctx);
        for (uint32_t i = 0; j.clients && i < threads; ++i)
            xg_shim_db_close(j.clients[i]);
        free(j.clients);
        free(t);
        return xg_set_error(XG_ERR_IO, "%s", j.err);
    }
    if (j.ctx) xg_context_routes(j.ctx, before);
    const double cpu0 = xg_cli_cpu_seconds(run->child);
    double t0 = xg_cli_now();
    run->t0 = t0;
    uint32_t started = 0;
    for (; started < threads; ++started)
        if (pthread_create(&t[started], NULL, fn, &j)) break;
    for (uint32_t i = 0; i < started; ++i) pthread_join(t[i], NULL);
    run->wall = xg_cli_now() - t0;
    run->cpu = xg_cli_cpu_seconds(run->child) - cpu0;
    free(t);
    for (uint32_t i = 0; j.clients && i < threads; ++i)
        xg_shim_db_close(j.clients[i]);
    free(j.clients);
    if (j.ctx) {
        xg_context_routes(j.ctx, run->reasons);
        for (int r = 0; r < XG_ROUTE_COUNT; ++r) run->reasons[r] -= before[r];
        char why[1024];
        xg_context_unserved(j.ctx, why, sizeof why);
        if (*why)
            fprintf(stderr, "%s: stock:unsupported by reason (warm-up "
                    "included): %s\n", run->name, why);
        const uint64_t unplanned =
            xg_router_shape_skipped(xg_context_router(j.ctx));
        if (unplanned)
            fprintf(stderr, "%s: %llu queries to stock unplanned, their "
                    "shape's planned queries having gone there (warm-up "
                    "included)\n", run->name, (unsigned long long)unplanned);
        /* Where the dispatcher's time went, as serve prints it. */
        struct xg_router_batches b;
        xg_router_batches(xg_context_router(j.ctx), &b);
        if (b.batches)
            fprintf(stderr, "%s: gpu batches: %llu of %.1f queries on "
                    "average; the batch threads (%u lanes) busy %.3f s: "
                    "build %.3f, run %.3f (device %.3f), finish %.3f; "
                    "%llu alone on their caller's thread\n",
                    run->name, (unsigned long long)b.batches,
                    (double)b.queries / (double)b.batches, b.lanes,
                    b.busy_seconds, b.build_seconds, b.run_seconds,
                    b.device_seconds, b.finish_seconds,
                    (unsigned long long)b.inline_batches);
        xg_context_close(j.ctx);
    }
    if (j.rc) return xg_set_error(XG_ERR_IO, "%s", j.err);
    if (!started) return xg_set_error(XG_ERR_NOMEM, "cannot start threads");
    return XG_OK;
}

struct prep_job {
    struct job j;
    struct xg_prepared **pq;
    xg_xquery **xq;             /* engine auto: kept for stock's answer */
    uint8_t *done;              /* per query: prepared (or failed) */
    uint8_t *answered;          /* per query: its batch is done (GPU) */
    /* The runners' progress: the first query no runner has taken yet
     * (UINT32_MAX once they stop), and how far past it a preparing
     * thread may run (0: no limit). */
    pthread_mutex_t win_mu;
    pthread_cond_t win_cv;
    uint32_t taken, window;
    /* Queries no engine batch takes, answered by their preparing thread:
     * route + 1 per query (0: left to the batch runners). */
    xg_router *router;
    int engine;
    uint8_t *here;
};

/* Wait until query i is within the window of the runners' progress.
 * Preparing threads that run ahead of the batches take the cores the
 * runners need: with 64 of them on 16 cores the engine's AND fell below
 * its 16-thread figure.  An application has as many queries in flight
 * as it can wait for; the window is that bound here. */
static void window_wait(struct prep_job *pj, uint32_t i)
{
    if (!pj->window) return;
    pthread_mutex_lock(&pj->win_mu);
    while (pj->taken != UINT32_MAX && i >= pj->taken + pj->window)
        pthread_cond_wait(&pj->win_cv, &pj->win_mu);
    pthread_mutex_unlock(&pj->win_mu);
}

/* The runners took queries up to `taken` (UINT32_MAX: they stopped). */
static void window_move(struct prep_job *pj, uint32_t taken)
{
    if (!pj->window) return;
    pthread_mutex_lock(&pj->win_mu);
    /* Only a move wakes the waiting threads (the runners call this on
     * every look at the queries). */
    if (pj->taken != UINT32_MAX && taken > pj->taken) {
        pj->taken = taken;
        pthread_cond_broadcast(&pj->win_cv);
    }
    pthread_mutex_unlock(&pj->win_mu);
}

/* A preparing thread frees query i - RECYCLE_BEHIND, once answered, before
 * it prepares query i, as an application frees each query after its
 * answer: the threads then reuse that memory instead of faulting in about
 * 53 KB of fresh pages a query for the whole pass, which bound the GPU
 * engine's AND (docs/benchmarks.md, "The bench's engine path").  Freeing
 * on the batch runners instead put the frees on their serial path and
 * cost OR throughput. */
#define RECYCLE_BEHIND 1024u

/* Query i, prepared (pj->pq[i]) from xq on h: where the router would not
 * put it into an engine batch, answer it now on this thread, as the
 * plugin's application threads answer the queries they keep, instead of
 * holding a whole batch while the CPU matcher or stock runs it.  1 if
 * answered (status, result and latency from t0 in run), 0 if it goes to
 * a batch. */
static int answer_here(struct prep_job *pj, xg_handle *h, xg_xquery *xq,
                       uint32_t i, const struct xg_search_opts *o, double t0)
{
    if (!pj->router) return 0;
    const int route = xg_router_route(pj->router, pj->pq[i], pj->engine);
    /* The CPU matcher's, and stock's where auto chose it (engine gpu
     * without a device is the runners' to report). */
    const int stock = route != XG_ROUTE_GPU && route != XG_ROUTE_CPU;
    if (route == XG_ROUTE_GPU || (stock && pj->engine != XG_ENGINE_AUTO))
        return 0;
    /* Out of the runners' way first: the preparing threads' window
     * moves past the queries taken in order, and one in the CPU matcher
     * for milliseconds would hold it. */
    struct xg_prepared *pq = pj->pq[i];
    pj->pq[i] = NULL;
    __atomic_store_n(&pj->done[i], 1, __ATOMIC_RELEASE);
    struct engine_run *run = pj->j.run;
    int rt = route;
    if (stock)
        run->status[i] = xg_handle_run_stock(h, xq, &o->bm25, o->k,
                                             &run->res[i]);
    else if (xg_router_run_batch(pj->router, h, &pq, NULL, NULL, o->k, 1,
                                 XG_ENGINE_CPU, &o->bm25, &run->res[i],
                                 &run->status[i], &rt))
        run->status[i] = xg_last_error_code();
    xg_prepared_free(pq);
    pj->here[i] = (uint8_t)(rt + 1);
    run->lat[i] = xg_cli_now() - t0; /* its preparation and answer */
    return 1;
}

/* A preparing thread: QueryParser, conversion, term ids and plans, with
 * its own searcher (Xapian objects are not shared between threads), as the
 * application threads of a real deployment each prepare their own query. */
static void *prepare_thread(void *arg)
{
    struct prep_job *pj = arg;
    struct job *j = &pj->j;
    xg_searcher *s = pool_take(j);
    struct xg_search_opts o = j->a->opts;
    for (uint32_t i; (i = take(j)) < j->qs->n;) {
        window_wait(pj, i);
        const uint32_t old = i - RECYCLE_BEHIND;
        if (i >= RECYCLE_BEHIND && pj->answered &&
            __atomic_load_n(&pj->answered[old], __ATOMIC_ACQUIRE)) {
            xg_prepared_free(pj->pq[old]);
            pj->pq[old] = NULL;
            if (pj->xq) {
                xg_shim_xquery_free(pj->xq[old]);
                pj->xq[old] = NULL;
            }
        }
        double t = xg_cli_now();
        xg_xquery *xq = NULL;
        int rc = xg_handle_parse(xg_searcher_handle(s), j->qs->text[i], &o,
                                 &xq);
        if (!rc) rc = xg_handle_prepare(xg_searcher_handle(s), xq, &pj->pq[i]);
        if (j->run->start) j->run->start[i] = t - j->run->t0;
        if (!rc && answer_here(pj, xg_searcher_handle(s), xq, i, &o, t)) {
            rc = j->run->status[i];
            __atomic_store_n(&pj->answered[i], 1, __ATOMIC_RELEASE);
            xg_shim_xquery_free(xq);
        } else {
            j->run->status[i] = rc;
            if (xq && pj->xq && pj->pq[i]) pj->xq[i] = xq;
            else if (xq) xg_shim_xquery_free(xq);
            j->run->lat[i] = xg_cli_now() - t; /* its own preparation */
            __atomic_store_n(&pj->done[i], 1, __ATOMIC_RELEASE);
        }
        if (rc && rc != XG_ERR_UNSUPPORTED && rc != XG_ERR_ARG) {
            fail(j);
            break;
        }
    }
    return NULL;
}

/* Queries the GPU engine has served so far (0 once it is closed). */
static uint64_t gpu_served(const xg_searcher *s)
{
    const struct xg_engine_stats *g = xg_searcher_gpu_stats(s);
    return g ? g->served : 0;
}

/* Count which matcher answered each query of a batch.  route says it for
 * the first pass.  With --op andor, the queries whose AND form fell short
 * (rerun[i]) were answered again as OR by xg_searcher_andor_finish(),
 * which does not say per query which matcher served them; the GPU
 * engine's `served` counter, read before (served0) and after, tells how
 * many of them the device answered, and the CPU matcher answered the
 * rest. */
static void count_routes(const xg_searcher *s, uint64_t served0,
                         const int *st, const int *route,
                         const uint8_t *rerun, uint32_t n,
                         struct engine_run *run)
{
    uint32_t reruns = 0;
    for (uint32_t i = 0; i < n; ++i) {
        if (st[i] != XG_OK) continue;
        if (rerun && rerun[i]) ++reruns;
        else ++run->routing[route[i] == XG_ROUTE_GPU ? XG_AB_ROUTE_GPU
                          : route[i] == XG_ROUTE_CPU ? XG_AB_ROUTE_CPU
                                                     : XG_AB_ROUTE_XAPIAN];
    }
    if (!rerun) return;
    /* A GPU fault closes the engine (its counter reads 0); the CPU matcher
     * then answered the whole batch. */
    uint64_t after = gpu_served(s), dev = after > served0 ? after - served0 : 0;
    run->routing[XG_AB_ROUTE_GPU] += (uint32_t)dev;
    run->routing[XG_AB_ROUTE_CPU] += reruns - (uint32_t)dev;
}

/* What run_gpu's batch runners share: the prepared queries, the next one
 * to take, and the run's figures. */
struct gpu_feed {
    struct prep_job *pj;
    struct xg_cli_queries *qs;
    struct engine_run *run;
    xg_searcher *s;
    xg_router *router;
    xg_handle *h;
    struct xg_search_opts o;
    uint32_t batch;
    pthread_mutex_t mu;             /* next, taken, rc, run->routing */
    uint32_t next;                  /* the first query not taken yet */
    uint8_t *taken;                 /* per query: a runner took it */
    int rc;
    char err[1024];                 /* the runner's message with rc */
};

/* Take the prepared queries of [f->next, f->next + window) that no
 * runner took yet, in any order, until ready[] holds a batch or every
 * query is taken (under f->mu).  An application's threads submit each
 * query once it is ready; taken strictly in order, 64 preparing threads
 * on 16 cores had the runners wait on one the scheduler had preempted
 * while the queries after it were ready.  Returns the count; a failed
 * preparation (pj->j.rc set) ends the wait early, and the caller stops. */
static uint32_t gather(struct gpu_feed *f, const xg_xquery **xready,
                       struct xg_prepared **ready, uint32_t *idx)
{
    struct prep_job *pj = f->pj;
    const uint32_t n = f->qs->n;
    uint32_t cnt = 0;
    for (;;) {
        const uint32_t end = pj->window && n - f->next > pj->window
                                 ? f->next + pj->window : n;
        for (uint32_t i = f->next; i < end && cnt < f->batch; ++i) {
            if (f->taken[i] ||
                !__atomic_load_n(&pj->done[i], __ATOMIC_ACQUIRE))
                continue;
            f->taken[i] = 1;
            /* Answered (or refused) where it was prepared, or batched. */
            if (!pj->pq[i]) continue;
            if (xready) xready[cnt] = pj->xq[i];
            ready[cnt] = pj->pq[i];
            idx[cnt++] = i;
        }
        while (f->next < n && f->taken[f->next]) ++f->next;
        /* The preparing threads may go past what was taken. */
        window_move(pj, f->next);
        if (cnt == f->batch || f->next >= n) return cnt;
        pthread_mutex_lock(&pj->j.lock);
        const int failed = pj->j.rc;
        pthread_mutex_unlock(&pj->j.lock);
        if (failed) return cnt;
        sched_yield();
    }
}

/* One batch runner: it takes prepared queries up to a batch (gather) and
 * runs them; then the next batch. */
static void *batch_runner(void *arg)
{
    struct gpu_feed *f = arg;
    struct prep_job *pj = f->pj;
    const struct xg_search_opts *o = &f->o;
    const uint32_t batch = f->batch;
    const xg_xquery **xready = pj->xq ? calloc(batch, sizeof *xready) : NULL;
    struct xg_prepared **ready = calloc(batch, sizeof *ready);
    uint32_t *idx = calloc(batch, sizeof *idx);
    struct xg_result *res = calloc(batch, sizeof *res);
    int *st = calloc(batch, sizeof *st);
    int *route = calloc(batch, sizeof *route);
    uint8_t *rerun = calloc(batch, 1);
    int rc = XG_OK;
    if (!ready || !idx || !res || !st || !route || !rerun ||
        (pj->xq && !xready))
        rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
    while (!rc) {
        pthread_mutex_lock(&f->mu);
        if (f->rc || f->next >= f->qs->n) {
            pthread_mutex_unlock(&f->mu);
            break;
        }
        const uint32_t cnt = gather(f, xready, ready, idx);
        const int prep_failed = pj->j.rc;
        pthread_mutex_unlock(&f->mu);
        if (prep_failed) break;
        if (!cnt) continue;
        double tb = xg_cli_now();
        rc = xg_router_run_batch(f->router, f->h, ready, xready, NULL, o->k,
                                 cnt, o->engine, &o->bm25, res, st, route);
        /* Only AND+OR reads it, with one runner: two runners' searches
         * would update the engine's counters under it. */
        const uint64_t served0 = o->default_and == 2 ? gpu_served(f->s) : 0;
        if (!rc && o->default_and == 2) {
            const char *texts[1024];
            for (uint32_t i = 0; i < cnt; ++i) {
                texts[i] = f->qs->text[idx[i]];
                rerun[i] = st[i] == XG_OK && res[i].n_hits < o->k;
            }
            rc = xg_router_andor_finish(f->router, f->h, texts, cnt, o, res,
                                        st);
        }
        tb = xg_cli_now() - tb;
        pthread_mutex_lock(&f->mu);
        if (!rc) count_routes(f->s, served0, st, route,
                              o->default_and == 2 ? rerun : NULL, cnt, f->run);
        pthread_mutex_unlock(&f->mu);
        for (uint32_t i = 0; i < cnt && !rc; ++i) {
            uint32_t q = idx[i];
            f->run->res[q] = res[i];
            f->run->status[q] = st[i];
            /* A query waits for its own preparation, then its batch. */
            f->run->lat[q] += tb;
            __atomic_store_n(&pj->answered[q], 1, __ATOMIC_RELEASE);
        }
    }
    if (rc) {
        pthread_mutex_lock(&f->mu);
        if (!f->rc) {
            f->rc = rc;
            snprintf(f->err, sizeof f->err, "%s", xg_last_error());
        }
        pthread_mutex_unlock(&f->mu);
    }
    /* No runner waits for more (done, or failed): nobody may wait on. */
    window_move(pj, UINT32_MAX);
    free(xready);
    free(ready);
    free(idx);
    free(res);
    free(st);
    free(route);
    free(rerun);
    return NULL;
}

/* The GPU engine.  Threads prepare the queries, as an application's
 * threads each prepare their own; meanwhile batch runners take them as
 * they are ready (gather) and run batches of B, so preparing and
 * the device overlap as they would in a deployment.  Where the engine
 * runs two batches at once (xg_engine_slots) there are two runners, so
 * that one batch is built and finished on the host while the other runs
 * on the device, as the plugin's two lanes do.  One otherwise; with one
 * thread (one query at a time: one application thread waits for each
 * answer); and for `auto` and AND+OR, whose stock and second pass use
 * the handle's Xapian objects. */
static int run_gpu(xg_searcher *s, struct xg_cli_search_args *a,
                   struct xg_cli_queries *qs, struct engine_run *run,
                   uint32_t batch, uint32_t threads, xg_searcher **pool)
{
    struct xg_search_opts o = a->opts;
    o.engine = run->engine;
    struct prep_job pj = {{a, qs, run, 0, PTHREAD_MUTEX_INITIALIZER, 0, "",
                           pool, 0, NULL, NULL, 0},
                          calloc(qs->n + 1, sizeof(struct xg_prepared *)),
                          o.engine == XG_ENGINE_AUTO
                              ? calloc(qs->n + 1, sizeof(xg_xquery *))
                              : NULL,
                          calloc(qs->n + 1, 1), calloc(qs->n + 1, 1),
                          PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
                          0, 4 * (batch ? batch : 1),
                          /* AND+OR's second pass is the runners' */
                          o.default_and == 2 ? NULL : xg_searcher_router(s),
                          o.engine, calloc(qs->n + 1, 1)};
    struct gpu_feed f = {&pj, qs, run, s, xg_searcher_router(s),
                         xg_searcher_handle(s), o, batch,
                         PTHREAD_MUTEX_INITIALIZER, 0,
                         calloc(qs->n + 1, 1), XG_OK, ""};
    const uint32_t runners =
        o.engine == XG_ENGINE_GPU && o.default_and != 2 && threads > 1 &&
                xg_handle_gpu_slots(f.h) > 1 ? 2 : 1;
    pthread_t *t = calloc(threads, sizeof *t), rt[2];
    int rc = XG_OK;
    uint32_t started = 0, running = 0;
    if (!pj.pq || !pj.done || !pj.answered || !pj.here || !f.taken || !t ||
        (o.engine == XG_ENGINE_AUTO && !pj.xq)) {
        rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
        goto done;
    }
    const double cpu0 = xg_cli_cpu_seconds(run->child);
    double t0 = xg_cli_now();
    run->t0 = t0;
    for (; started < threads; ++started)
        if (pthread_create(&t[started], NULL, prepare_thread, &pj)) break;
    if (!started) {
        rc = xg_set_error(XG_ERR_NOMEM, "cannot start threads");
        goto done;
    }
    for (; running < runners; ++running)
        if (pthread_create(&rt[running], NULL, batch_runner, &f)) break;
    if (!running) batch_runner(&f);
    for (uint32_t i = 0; i < running; ++i) pthread_join(rt[i], NULL);
    if (f.rc) rc = xg_set_error(f.rc, "%s", f.err);
    /* The preparing threads may still answer the queries they kept. */
    for (uint32_t i = 0; i < started; ++i) pthread_join(t[i], NULL);
    started = 0;
    run->wall = xg_cli_now() - t0;
    run->cpu = xg_cli_cpu_seconds(run->child) - cpu0;
done:
    for (uint32_t i = 0; i < started; ++i) pthread_join(t[i], NULL);
    if (!rc && pj.j.rc) rc = xg_set_error(XG_ERR_IO, "%s", pj.j.err);
    for (uint32_t i = 0; !rc && i < qs->n; ++i) {
        if (!pj.here[i] || run->status[i] != XG_OK) continue;
        const int route = pj.here[i] - 1;
        ++run->routing[route == XG_ROUTE_GPU   ? XG_AB_ROUTE_GPU
                       : route == XG_ROUTE_CPU ? XG_AB_ROUTE_CPU
                                               : XG_AB_ROUTE_XAPIAN];
    }
    if (pj.pq)
        for (uint32_t i = 0; i < qs->n; ++i) xg_prepared_free(pj.pq[i]);
    if (pj.xq)
        for (uint32_t i = 0; i < qs->n; ++i)
            if (pj.xq[i]) xg_shim_xquery_free(pj.xq[i]);
    free(pj.pq);
    free(pj.xq);
    free(pj.done);
    free(pj.answered);
    free(pj.here);
    free(f.taken);
    free(t);
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int same_mset(const struct xg_result *a, const struct xg_result *b)
{
    if (a->n_hits != b->n_hits) return 0;
    for (uint32_t i = 0; i < a->n_hits; ++i)
        if (a->hits[i].docid != b->hits[i].docid ||
            memcmp(&a->hits[i].weight, &b->hits[i].weight, sizeof(double)))
            return 0;
    return 1;
}

static const char *const engine_names[] = {"xapian", "cpu", "gpu", "auto",
                                           "plugin", "plugin-gpu",
                                           "plugin-cpu", "server"};

/* Fill runs[] from "--engines LIST"; 0, or the usage exit status.  An
 * engine named twice is refused: the report keys figures by name. */
static int parse_engines(const char *cmd, const char *engines,
                         struct engine_run *runs, uint32_t *n_eng)
{
    char list[256];
    snprintf(list, sizeof list, "%s", engines);
    *n_eng = 0;
    for (char *save, *tok = strtok_r(list, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (*n_eng == XG_AB_MAX_ENGINES)
            return xg_cli_usage(cmd, "too many engines");
        const int n_names = sizeof engine_names / sizeof *engine_names;
        int eng = 0;
        while (eng < n_names && strcmp(tok, engine_names[eng])) ++eng;
        if (eng == n_names)
            return xg_cli_usage(cmd, "unknown engine '%s' (xapian, cpu, gpu, "
                                "auto, plugin, plugin-gpu, plugin-cpu, "
                                "server)", tok);
        for (uint32_t e = 0; e < *n_eng; ++e)
            if (runs[e].engine == eng)
                return xg_cli_usage(cmd, "engine '%s' given twice", tok);
        runs[*n_eng].engine = eng;
        runs[(*n_eng)++].name = engine_names[eng];
    }
    return 0;
}

/* Which matcher answered each query of a threaded run (gpu and auto are
 * counted batch by batch in run_gpu). */
static void count_thread_routes(struct engine_run *r, uint32_t n)
{
    /* A server is asked through stock's client: its own routes line says
     * which of its matchers answered. */
    enum xg_ab_route t = r->engine == XG_ENGINE_XAPIAN ||
                                 r->engine == AB_ENGINE_SERVER
                             ? XG_AB_ROUTE_XAPIAN
                             : XG_AB_ROUTE_CPU;
    for (uint32_t i = 0; i < n; ++i) {
        if (r->status[i] != XG_OK) continue;
        if (r->route) /* the plugin: the planner said who answered */
            t = r->route[i] == XG_ROUTE_GPU ? XG_AB_ROUTE_GPU
              : r->route[i] == XG_ROUTE_CPU ? XG_AB_ROUTE_CPU
                                            : XG_AB_ROUTE_XAPIAN;
        ++r->routing[t];
    }
}

/* The cost of each query for the speedup plot: the sum of the df of its
 * leaves' terms found in the index (a repeated word is a leaf of its own
 * and its list is read again).  Untimed; 0 where the query does not
 * prepare.  Returns NULL, or why every cost is 0. */
static const char *query_costs(xg_searcher *s, const struct xg_search_opts *o,
                               const struct xg_cli_queries *qs, double *cost)
{
    const struct xg_index *ix = xg_searcher_index(s);
    if (!ix) return xg_searcher_index_error(s);
    for (uint32_t i = 0; i < qs->n; ++i) {
        xg_xquery *xq = NULL;
        struct xg_prepared *pq = NULL;
        if (!xg_handle_parse(xg_searcher_handle(s), qs->text[i], o, &xq) &&
            !xg_handle_prepare(xg_searcher_handle(s), xq, &pq))
            for (uint32_t l = 0; l < pq->q.n_leaves; ++l)
                if (pq->term[l] >= 0) cost[i] += ix->terms[pq->term[l]].df;
        if (xq) xg_shim_xquery_free(xq);
        xg_prepared_free(pq);
    }
    return NULL;
}

/* Queries, MSets compared and how they compare. */
struct tally {
    uint32_t identical, different, unsupported, rejected;
    uint32_t stock_self;            /* stock's top k not its full ranking's,
                                       the engine's the full ranking's */
    uint32_t est_cmp, est_equal;    /* match counts where ref's is exact */
    uint32_t diff_queries;          /* queries with any MSet different */
};

/* Stock's full ranking's top k of query text (check_at_least = the
 * database's size); 0 if it ran. */
static int stock_full_ranking(xg_searcher *s, const struct xg_search_opts *o,
                              const char *text, struct xg_result *out)
{
    memset(out, 0, sizeof *out);
    xg_handle *h = xg_searcher_handle(s);
    xg_xquery *xq = NULL;
    int rc = xg_handle_parse(h, text, o, &xq);
    if (!rc) rc = xg_handle_run_stock_unpruned(h, xq, &o->bm25, o->k, out);
    if (xq) xg_shim_xquery_free(xq);
    return rc;
}

/* Whether MSets a and b are stock's top k (top) and its own full
 * ranking's (full), in either order, the two differing: stock's AND_MAYBE
 * skip (docs/architecture.md), where the engines return the full
 * ranking's. */
static int top_and_full(const struct xg_result *top,
                        const struct xg_result *full,
                        const struct xg_result *a, const struct xg_result *b)
{
    return !same_mset(full, top) &&
           ((same_mset(a, top) && same_mset(b, full)) ||
            (same_mset(a, full) && same_mset(b, top)));
}

/* Compare every engine's MSets with engine 0's: the tally, the first
 * differing queries (rep->diffs), all[i] = every engine answered query i,
 * and overlap@k.  Where engine 0 is stock and an engine differs, stock's
 * full ranking decides: an engine that returns its top k while stock's
 * own top k does not is counted apart (stock's AND_MAYBE skip,
 * docs/architecture.md), not as different.  Returns XG_OK or
 * XG_ERR_NOMEM. */
static int compare_runs(const char *cmd, xg_searcher *s,
                        const struct xg_search_opts *o,
                        const struct xg_cli_queries *qs,
                        struct engine_run *runs, uint32_t n_eng,
                        uint8_t *all, struct tally *t,
                        struct xg_ab_report *rep)
{
    const uint32_t k = o->k;
    /* --op andor runs each query in two forms: no one text to ask. */
    const int can_ask = runs[0].engine == XG_ENGINE_XAPIAN &&
                        o->default_and != 2;
    uint32_t *scratch = calloc(2 * (size_t)k + 1, sizeof *scratch);
    if (!scratch) return xg_set_error(XG_ERR_NOMEM, "out of memory");
    double overlap[XG_AB_MAX_ENGINES] = {0};
    uint32_t n_all = 0;
    for (uint32_t i = 0; i < qs->n; ++i) {
        int ok = 1;
        for (uint32_t e = 0; e < n_eng && ok; ++e) {
            if (runs[e].status[i] == XG_ERR_ARG) ++t->rejected, ok = 0;
            else if (runs[e].status[i]) ++t->unsupported, ok = 0;
        }
        if (!ok) continue;
        all[i] = 1;
        ++n_all;
        const struct xg_result *ref = &runs[0].res[i];
        int differs = 0, asked = 0;
        struct xg_result full;
        memset(&full, 0, sizeof full);
        for (uint32_t e = 1; e < n_eng; ++e) {
            const struct xg_result *got = &runs[e].res[i];
            overlap[e] += xg_ab_overlap(ref->hits, ref->n_hits, got->hits,
                                        got->n_hits, k, scratch);
            const int same = same_mset(ref, got);
            if (!same && can_ask && !asked)
                asked = stock_full_ranking(s, o, qs->text[i], &full) ? -1 : 1;
            if (same) {
                ++t->identical;
            } else if (asked == 1 && top_and_full(ref, &full, ref, got)) {
                ++t->stock_self;
                fprintf(stderr, "xapian-gpu %s: query %s: stock's top %u "
                        "differs from its own full ranking; %s returns the "
                        "full ranking's\n", cmd, qs->qid[i], k, runs[e].name);
            } else {
                ++t->different;
                differs = 1;
                fprintf(stderr, "xapian-gpu %s: query %s: %s differs from %s\n",
                        cmd, qs->qid[i], runs[e].name, runs[0].name);
                if (t->diff_queries < XG_AB_MAX_DIFF_QUERIES)
                    rep->diffs[rep->n_diffs++] = (struct xg_ab_diff){
                        qs->qid[i], qs->text[i], e, ref, got};
            }
            if (ref->n_hits < k) {
                ++t->est_cmp;
                t->est_equal += ref->matches_estimated ==
                                got->matches_estimated;
            }
        }
        t->diff_queries += differs;
        xg_result_free(&full);
    }
    for (uint32_t e = 1; e < n_eng; ++e)
        rep->eng[e].overlap = n_all ? overlap[e] / n_all : 0;
    free(scratch);
    return XG_OK;
}

/* MAP, P@10 and nDCG@10 per engine over the queries every engine
 * answered that have a relevant judgement (AP is undefined without one). */
static void score_qrels(const struct xg_qrels *qr,
                        const struct xg_cli_queries *qs,
                        const struct engine_run *runs, uint32_t n_eng,
                        const uint8_t *all, struct xg_ab_report *rep)
{
    for (uint32_t i = 0; i < qs->n; ++i) {
        const struct xg_qrels_query *jq = xg_qrels_find(qr, qs->qid[i]);
        if (!all[i] || !jq || !jq->n_rel) continue;
        ++rep->n_judged;
        for (uint32_t e = 0; e < n_eng; ++e) {
            const struct xg_result *r = &runs[e].res[i];
            rep->eng[e].map += xg_ab_ap(jq, r->hits, r->n_hits);
            rep->eng[e].p10 += xg_ab_precision(jq, r->hits, r->n_hits, 10);
            rep->eng[e].ndcg10 += xg_ab_ndcg(jq, r->hits, r->n_hits, 10);
        }
    }
    for (uint32_t e = 0; e < n_eng && rep->n_judged; ++e) {
        rep->eng[e].map /= rep->n_judged;
        rep->eng[e].p10 /= rep->n_judged;
        rep->eng[e].ndcg10 /= rep->n_judged;
    }
}

/* Queries/s over the whole run; mean, p50 and p99 latency over the
 * queries every engine answered.  lat: room for qs.n values. */
static void latency_figures(const struct engine_run *r, uint32_t n_q,
                            const uint8_t *all, double *lat,
                            struct xg_ab_engine *g)
{
    uint32_t n = 0;
    double sum = 0;
    for (uint32_t i = 0; i < n_q; ++i)
        if (all[i]) {
            lat[n++] = r->lat[i];
            sum += r->lat[i];
        }
    qsort(lat, n, sizeof *lat, cmp_double);
    g->name = r->name;
    g->lat = r->lat;
    g->qps = r->wall > 0 ? n_q / r->wall : 0;
    g->mean_ms = n ? sum / n * 1e3 : 0;
    g->p50_ms = n ? lat[n / 2] * 1e3 : 0;
    g->p99_ms = n ? lat[(uint32_t)(0.99 * (n - 1))] * 1e3 : 0;
    memcpy(g->routing, r->routing, sizeof g->routing);
    g->has_reasons = r->route != NULL;
    memcpy(g->reasons, r->reasons, sizeof g->reasons);
}

/* The engine index running `engine`, or -1. */
static int find_engine(const struct engine_run *runs, uint32_t n_eng,
                       int engine)
{
    for (uint32_t e = 0; e < n_eng; ++e)
        if (runs[e].engine == engine) return (int)e;
    return -1;
}

/* Judge the planner (see struct xg_ab_report): each priced query's two
 * latencies come from the stock and plugin-gpu runs, both under the same
 * concurrency. */
static void judge_planner(const struct engine_run *runs, uint32_t n_eng,
                          uint32_t n_q, struct xg_ab_report *rep)
{
    const int x = find_engine(runs, n_eng, XG_ENGINE_XAPIAN),
              g = find_engine(runs, n_eng, AB_ENGINE_PLUGIN_GPU),
              p = find_engine(runs, n_eng, AB_ENGINE_PLUGIN);
    if (x < 0 || g < 0 || p < 0) return;
    rep->has_planner = 1;
    for (uint32_t i = 0; i < n_q; ++i) {
        const int rt = runs[p].route[i];
        if ((rt != XG_ROUTE_GPU && rt != XG_ROUTE_STOCK_CHEAPER) ||
            runs[g].route[i] != XG_ROUTE_GPU || runs[x].status[i])
            continue;
        const int gpu_faster = runs[g].lat[i] < runs[x].lat[i];
        ++rep->planner_priced;
        rep->planner_gpu_faster += gpu_faster;
        rep->planner_right += gpu_faster == (rt == XG_ROUTE_GPU);
    }
}

/* Both MSets of a difference side by side, '*' on the ranks that differ. */
static void print_diff(const struct xg_ab_report *rep,
                       const struct xg_ab_diff *d)
{
    const char *ref = rep->eng[0].name, *got = rep->eng[d->engine].name;
    printf("query %s, %s against %s: %s\n", d->qid, got, ref, d->text);
    printf("  %4s %10s %24s %10s %24s\n", "rank", ref, "weight", got,
           "weight");
    uint32_t n = d->ref->n_hits > d->got->n_hits ? d->ref->n_hits
                                                 : d->got->n_hits;
    for (uint32_t i = 0; i < n; ++i) {
        const struct xg_hit *a = i < d->ref->n_hits ? &d->ref->hits[i] : NULL,
                            *b = i < d->got->n_hits ? &d->got->hits[i] : NULL;
        int same = a && b && a->docid == b->docid &&
                   !memcmp(&a->weight, &b->weight, sizeof a->weight);
        printf("  %4u", i + 1);
        if (a) printf(" %10u %24.17g", a->docid, a->weight);
        else printf(" %10s %24s", "-", "-");
        if (b) printf(" %10u %24.17g", b->docid, b->weight);
        else printf(" %10s %24s", "-", "-");
        printf("%s\n", same ? "" : " *");
    }
}

static void print_report(const struct xg_ab_report *rep)
{
    char overlap[32];
    snprintf(overlap, sizeof overlap, "overlap@%u", rep->k);
    printf("%-10s %9s %11s %10s %10s %10s %8s %11s\n", "engine", "queries",
           "queries/s", "mean ms", "p50 ms", "p99 ms", "ratio", overlap);
    for (uint32_t e = 0; e < rep->n_eng; ++e) {
        const struct xg_ab_engine *g = &rep->eng[e];
        printf("%-10s %9u %11.0f %10.3f %10.3f %10.3f %7.1fx", g->name,
               rep->n_queries, g->qps, g->mean_ms, g->p50_ms, g->p99_ms,
               g->ratio);
        if (e) printf(" %11.4f\n", g->overlap);
        else printf(" %11s\n", "-");
    }
    for (uint32_t e = 0; e < rep->n_eng && rep->eng[e].n_passes > 1; ++e) {
        const struct xg_ab_engine *g = &rep->eng[e];
        printf("%s passes (queries/s; the median pass is reported):", g->name);
        for (uint32_t p = 0; p < g->n_passes; ++p)
            printf(" %.0f", g->pass_qps[p]);
        printf("\n");
    }
    printf("host CPU a query (the median pass; a server bench started "
           "included):");
    for (uint32_t e = 0; e < rep->n_eng; ++e)
        printf("%s %s %.1f us (%.1f cores busy)", e ? "," : "",
               rep->eng[e].name, rep->eng[e].cpu_us, rep->eng[e].cores);
    printf("\n");
    printf("routing (queries answered by each matcher):\n%-10s", "engine");
    for (int t = 0; t < XG_AB_N_ROUTES; ++t)
        printf(" %9s", xg_ab_route_names[t]);
    printf("\n");
    for (uint32_t e = 0; e < rep->n_eng; ++e) {
        printf("%-10s", rep->eng[e].name);
        for (int t = 0; t < XG_AB_N_ROUTES; ++t)
            printf(" %9u", rep->eng[e].routing[t]);
        printf("\n");
    }
    for (uint32_t e = 0; e < rep->n_eng; ++e) {
        if (!rep->eng[e].has_reasons) continue;
        printf("%s routes (planner):", rep->eng[e].name);
        for (int t = 0; t < XG_ROUTE_COUNT; ++t)
            if (rep->eng[e].reasons[t])
                printf(" %s %llu", xg_route_name(t),
                       (unsigned long long)rep->eng[e].reasons[t]);
        printf("\n");
    }
    if (rep->has_planner)
        printf("planner: chose the faster side for %u of the %u queries it "
               "priced (the GPU was faster for %u)\n", rep->planner_right,
               rep->planner_priced, rep->planner_gpu_faster);
    if (rep->qrels_path) {
        printf("qrels %s: %u queries with a relevant judgement, answered by "
               "every engine (top %u; nDCG gain = rel)\n%-10s %9s %9s %9s\n",
               rep->qrels_path, rep->n_judged, rep->k, "engine", "MAP",
               "P@10", "nDCG@10");
        for (uint32_t e = 0; e < rep->n_eng; ++e)
            printf("%-10s %9.4f %9.4f %9.4f\n", rep->eng[e].name,
                   rep->eng[e].map, rep->eng[e].p10, rep->eng[e].ndcg10);
    }
    if (rep->n_diffs)
        printf("first differences (up to %d queries):\n",
               XG_AB_MAX_DIFF_QUERIES);
    for (uint32_t d = 0; d < rep->n_diffs; ++d) print_diff(rep, &rep->diffs[d]);
}

/* Per query: qid, cost, and each engine's latency and answering matcher
 * (the planner's route name for the plugin engines). */
static int write_samples(const char *path, const struct xg_cli_queries *qs,
                         const struct engine_run *runs, uint32_t n_eng,
                         const double *cost)
{
    struct xg_outfile o;
    int rc = xg_outfile_open(&o, path);
    if (rc) return rc;
    FILE *f = o.f;
    fputs("qid\tcost", f);
    for (uint32_t e = 0; e < n_eng; ++e)
        fprintf(f, "\t%s_ms\t%s_route\t%s_start_ms", runs[e].name,
                runs[e].name, runs[e].name);
    fputc('\n', f);
    for (uint32_t i = 0; i < qs->n; ++i) {
        fprintf(f, "%s\t%.0f", qs->qid[i], cost[i]);
        for (uint32_t e = 0; e < n_eng; ++e)
            fprintf(f, "\t%.4f\t%s\t%.3f", runs[e].lat[i] * 1e3,
                    runs[e].status[i] ? "-"
                    : runs[e].route ? xg_route_name(runs[e].route[i])
                                    : runs[e].name,
                    runs[e].start ? runs[e].start[i] * 1e3 : 0.0);
        fputc('\n', f);
    }
    return xg_outfile_close(&o, 1);
}

static void json_hits(FILE *f, const struct xg_result *r)
{
    fputc('[', f);
    for (uint32_t i = 0; i < r->n_hits; ++i)
        fprintf(f, "%s{\"docid\":%u,\"weight\":%.17g}", i ? "," : "",
                r->hits[i].docid, r->hits[i].weight);
    fputc(']', f);
}

static void write_json(FILE *f, const struct xg_ab_report *rep,
                       uint32_t threads, uint32_t batch)
{
    fprintf(f, "{\"queries\":%u,\"identical\":%u,\"different\":%u,"
            "\"stock_self_disagreeing\":%u,"
            "\"unsupported\":%u,\"rejected\":%u,\"threads\":%u,\"batch\":%u,"
            "\"k\":%u,\"engines\":[", rep->n_queries, rep->identical,
            rep->different, rep->stock_self, rep->unsupported, rep->rejected,
            threads, batch, rep->k);
    for (uint32_t e = 0; e < rep->n_eng; ++e) {
        const struct xg_ab_engine *g = &rep->eng[e];
        fprintf(f, "%s{\"engine\":\"%s\",\"qps\":%.1f,\"mean_ms\":%.4f,"
                "\"p50_ms\":%.4f,\"p99_ms\":%.4f,\"host_cpu_us\":%.2f,"
                "\"cores_busy\":%.3f,\"pass_qps\":[", e ? "," : "", g->name,
                g->qps, g->mean_ms, g->p50_ms, g->p99_ms, g->cpu_us, g->cores);
        for (uint32_t p = 0; p < g->n_passes; ++p)
            fprintf(f, "%s%.1f", p ? "," : "", g->pass_qps[p]);
        fputs("],\"routing\":{", f);
        for (int t = 0; t < XG_AB_N_ROUTES; ++t)
            fprintf(f, "%s\"%s\":%u", t ? "," : "", xg_ab_route_names[t],
                    g->routing[t]);
        fputc('}', f);
        if (g->has_reasons) {
            fputs(",\"routes\":{", f);
            for (int t = 0, first = 1; t < XG_ROUTE_COUNT; ++t)
                if (g->reasons[t]) {
                    fprintf(f, "%s\"%s\":%llu", first ? "" : ",",
                            xg_route_name(t), (unsigned long long)g->reasons[t]);
                    first = 0;
                }
            fputc('}', f);
        }
        if (rep->qrels_path)
            fprintf(f, ",\"map\":%.6f,\"p_at_10\":%.6f,\"ndcg_at_10\":%.6f",
                    g->map, g->p10, g->ndcg10);
        fputc('}', f);
    }
    fputs("],\"overlap_at_k\":{", f);
    for (uint32_t e = 1; e < rep->n_eng; ++e)
        fprintf(f, "%s\"%s\":%.6f", e > 1 ? "," : "", rep->eng[e].name,
                rep->eng[e].overlap);
    fputc('}', f);
    if (rep->has_planner)
        fprintf(f, ",\"planner\":{\"priced\":%u,\"chose_faster\":%u,"
                "\"gpu_faster\":%u}", rep->planner_priced, rep->planner_right,
                rep->planner_gpu_faster);
    fputs(",\"qrels\":", f);
    if (rep->qrels_path) {
        fputs("{\"file\":", f);
        xg_cli_json_string(f, rep->qrels_path);
        fprintf(f, ",\"judged_queries\":%u}", rep->n_judged);
    } else {
        fputs("null", f);
    }
    fputs(",\"first_differences\":[", f);
    for (uint32_t d = 0; d < rep->n_diffs; ++d) {
        const struct xg_ab_diff *x = &rep->diffs[d];
        fputs(d ? ",{\"qid\":" : "{\"qid\":", f);
        xg_cli_json_string(f, x->qid);
        fputs(",\"query\":", f);
        xg_cli_json_string(f, x->text);
        fprintf(f, ",\"engine\":\"%s\",\"results\":",
                rep->eng[x->engine].name);
        json_hits(f, x->got);
        fprintf(f, ",\"reference_engine\":\"%s\",\"reference_results\":",
                rep->eng[0].name);
        json_hits(f, x->ref);
        fputc('}', f);
    }
    fputs("]}\n", f);
}

/* Every engine, one after the other, on threads or in GPU batches; then
 * the pool of per-thread searchers is closed.  0 or the exit status. */
/* One timed pass of one engine: fresh result arrays, then its runner. */
static int run_pass(xg_searcher *s, struct xg_cli_search_args *a,
                    struct xg_cli_queries *qs, struct engine_run *r,
                    uint32_t threads, uint32_t batch, xg_searcher **pool)
{
    r->res = calloc(qs->n + 1, sizeof *r->res);
    r->status = calloc(qs->n + 1, sizeof *r->status);
    r->lat = calloc(qs->n + 1, sizeof *r->lat);
    r->start = calloc(qs->n + 1, sizeof *r->start);
    if (!r->res || !r->status || !r->lat || !r->start)
        return xg_set_error(XG_ERR_NOMEM, "out of memory");
    int gpu = r->engine == XG_ENGINE_GPU || r->engine == XG_ENGINE_AUTO;
    int err = gpu ? run_gpu(s, a, qs, r, batch, threads, pool)
                  : run_threads(a, qs, r, threads, pool);
    if (!err && !gpu) count_thread_routes(r, qs->n);
    return err;
}

/* top_and_full for MSets a and b of query i, stock's top k taken from
 * its reference run (stock: NULL where there is none): an engine that
 * sent the query to stock in one pass and to the GPU in the other (auto)
 * gives both. */
static int stock_and_full(xg_searcher *s, const struct xg_search_opts *o,
                          const struct xg_cli_queries *qs, uint32_t i,
                          const struct engine_run *stock,
                          const struct xg_result *a, const struct xg_result *b)
{
    if (!stock || stock->status[i] != XG_OK) return 0;
    struct xg_result full;
    if (stock_full_ranking(s, o, qs->text[i], &full)) return 0;
    const int yes = top_and_full(&stock->res[i], &full, a, b);
    xg_result_free(&full);
    return yes;
}

/* A later pass must answer every query as the first did: the same status
 * and, where answered, the same MSet, or (stock_and_full) stock's top k in
 * one and its full ranking in the other, which is reported.  1 if so;
 * else 0 with the error set naming the first query that differs. */
static int same_pass(xg_searcher *s, const struct xg_search_opts *o,
                     const char *name, const struct xg_cli_queries *qs,
                     const struct engine_run *stock,
                     const struct engine_run *first,
                     const struct engine_run *later, uint32_t pass)
{
    for (uint32_t i = 0; i < qs->n; ++i) {
        if (first->status[i] == later->status[i] &&
            (first->status[i] != XG_OK ||
             same_mset(&first->res[i], &later->res[i])))
            continue;
        if (first->status[i] == XG_OK && later->status[i] == XG_OK &&
            stock_and_full(s, o, qs, i, stock, &first->res[i],
                           &later->res[i])) {
            fprintf(stderr, "xapian-gpu: engine %s: query %s: pass %u "
                    "answered with stock's full ranking, pass 1 with "
                    "stock's top %u or the other way round (stock's top k "
                    "differs from its own full ranking)\n", name,
                    qs->qid[i], pass + 1, o->k);
            continue;
        }
        xg_set_error(XG_ERR_XAPIAN, "engine %s: pass %u answered query %s "
                     "differently from pass 1", name, pass + 1, qs->qid[i]);
        return 0;
    }
    return 1;
}

/* Free a later pass's MSets once compared (the first pass's are kept). */
static void free_results(struct engine_run *r, uint32_t n)
{
    for (uint32_t i = 0; r->res && i < n; ++i) xg_result_free(&r->res[i]);
    free(r->res);
    r->res = NULL;
}

static void free_run(struct engine_run *r, uint32_t n)
{
    if (r->res)
        for (uint32_t i = 0; i < n; ++i) xg_result_free(&r->res[i]);
    free(r->res);
    free(r->status);
    free(r->lat);
    free(r->start);
    free(r->route);
    memset(r, 0, sizeof *r);
}

/* The pass whose wall time is the median (the lower one for an even
 * count). */
static uint32_t median_pass(const double *wall, uint32_t n)
{
    for (uint32_t p = 0; p < n; ++p) {
        uint32_t below = 0, equal_before = 0;
        for (uint32_t q = 0; q < n; ++q) {
            below += wall[q] < wall[p];
            equal_before += q < p && wall[q] == wall[p];
        }
        if (below + equal_before == (n - 1) / 2) return p;
    }
    return 0;
}

/* Take the timing, latencies and routes of pass `from` (same answers). */
static void keep_timing(struct engine_run *to, struct engine_run *from)
{
    double *lat = to->lat, *start = to->start;
    int *route = to->route;
    to->lat = from->lat;
    to->start = from->start;
    to->route = from->route;
    from->lat = lat;
    from->start = start;
    from->route = route;
    to->wall = from->wall;
    to->cpu = from->cpu;
    memcpy(to->routing, from->routing, sizeof to->routing);
    memcpy(to->reasons, from->reasons, sizeof to->reasons);
}

/* Every engine's passes.  *gpu_base: the GPU engine's counters after its
 * warm-up (zero without one). */
static int run_engines(xg_searcher *s, struct xg_cli_search_args *a,
                       struct xg_cli_queries *qs, struct engine_run *runs,
                       uint32_t n_eng, uint32_t threads, uint32_t batch,
                       struct xg_engine_stats *gpu_base)
{
    /* One searcher per thread, opened before any clock starts: Xapian
     * handles of their own, the verified index shared. */
    xg_searcher **pool = calloc(threads, sizeof *pool);
    if (!pool) return (xg_set_error(XG_ERR_NOMEM, "out of memory"),
                       xg_cli_fail());
    int rc = 0;
    for (uint32_t i = 0; i < threads && !rc; ++i)
        if (xg_searcher_clone(s, (const char *const *)a->dbs, a->n_dbs,
                              &pool[i]))
            rc = xg_cli_fail();
    /* One untimed pass of the stock matcher first, so the engine timed
     * first does not pay for a cold page cache and Xapian's tables. */
    if (!rc && n_eng && runs[0].engine == XG_ENGINE_XAPIAN) {
        struct engine_run warm;
        memset(&warm, 0, sizeof warm);
        warm.name = "warm-up";
        warm.engine = XG_ENGINE_XAPIAN;
        warm.res = calloc(qs->n + 1, sizeof *warm.res);
        warm.status = calloc(qs->n + 1, sizeof *warm.status);
        warm.lat = calloc(qs->n + 1, sizeof *warm.lat);
        if (!warm.res || !warm.status || !warm.lat)
            rc = (xg_set_error(XG_ERR_NOMEM, "out of memory"), xg_cli_fail());
        else if (run_threads(a, qs, &warm, threads, pool))
            rc = xg_cli_fail();
        for (uint32_t i = 0; warm.res && i < qs->n; ++i)
            xg_result_free(&warm.res[i]);
        free(warm.res);
        free(warm.status);
        free(warm.lat);
    }
    /* In bench, the GPU engine (gpu and auto share it) likewise, over the
     * first tenth of the queries (at least 1,000), as the plugin's are
     * (warm_up): its first timed pass paid for the device's start,
     * 37,846 q/s against 426,300-490,815 for the later passes of a
     * real-text AND run at 64 threads.  Its counters stay out of the
     * engine's figures. */
    memset(gpu_base, 0, sizeof *gpu_base);
    for (uint32_t e = 0; e < n_eng && !rc; ++e) {
        if (!runs[e].warm || (runs[e].engine != XG_ENGINE_GPU &&
                              runs[e].engine != XG_ENGINE_AUTO))
            continue;
        struct xg_cli_queries part = *qs;
        part.n = warm_up_queries(qs->n);
        struct engine_run warm;
        memset(&warm, 0, sizeof warm);
        warm.name = "warm-up";
        warm.engine = runs[e].engine;
        if (run_pass(s, a, &part, &warm, threads, batch, pool))
            rc = xg_cli_fail();
        free_run(&warm, part.n);
        const struct xg_engine_stats *gs = xg_searcher_gpu_stats(s);
        if (gs) *gpu_base = *gs;
        break;
    }
    /* The passes go round the engines, so a drift of the machine (clocks,
     * other load) touches every engine alike, and each pass starts one
     * engine later, so no engine always follows the same one. */
    uint32_t passes = a->repeat ? a->repeat : 1;
    /* Stock's first pass, where engine 0 is stock and the queries have one
     * form: a pass that differs from another may be its top k against its
     * full ranking. */
    const struct engine_run *stock_ref =
        n_eng && runs[0].engine == XG_ENGINE_XAPIAN &&
                a->opts.default_and != 2 ? &runs[0] : NULL;
    struct engine_run *extra =
        passes > 1 ? calloc((size_t)(passes - 1) * n_eng, sizeof *extra) : NULL;
    if (passes > 1 && !extra)
        rc = (xg_set_error(XG_ERR_NOMEM, "out of memory"), xg_cli_fail());
    for (uint32_t p = 0; p < passes && !rc; ++p)
        for (uint32_t j = 0; j < n_eng && !rc; ++j) {
            const uint32_t e = (j + p) % n_eng;
            struct engine_run *r = p ? &extra[(p - 1) * n_eng + e] : &runs[e];
            r->name = runs[e].name;
            r->engine = runs[e].engine;
            r->warm = runs[e].warm;
            r->child = runs[e].child;
            if (run_pass(s, a, qs, r, threads, batch, pool)) {
                rc = xg_cli_fail();
                break;
            }
            runs[e].pass_wall[p] = r->wall;
            runs[e].n_passes = p + 1;
            if (p && !same_pass(s, &a->opts, runs[e].name, qs,
                                stock_ref, &runs[e], r, p))
                rc = xg_cli_fail();
            if (p) free_results(r, qs->n);
        }
    /* Each engine's figures are those of its median pass. */
    for (uint32_t e = 0; e < n_eng && !rc && passes > 1; ++e) {
        uint32_t m = median_pass(runs[e].pass_wall, passes);
        if (m) keep_timing(&runs[e], &extra[(m - 1) * n_eng + e]);
    }
    for (uint32_t i = 0; extra && i < (passes - 1) * n_eng; ++i)
        free_run(&extra[i], qs->n);
    free(extra);
    for (uint32_t i = 0; i < threads; ++i) xg_searcher_close(pool[i]);
    free(pool);
    return rc;
}

/* The A/B report once every engine has run: compare, score, print, and
 * write the JSON and HTML files.  0, or 1 on a difference or a fault. */
static int report(const char *cmd, xg_searcher *s,
                  const struct xg_cli_search_args *a,
                  const struct xg_cli_queries *qs, const struct xg_qrels *qr,
                  struct engine_run *runs, uint32_t n_eng, int bench,
                  uint32_t threads, uint32_t batch)
{
    struct xg_ab_report *rep = calloc(1, sizeof *rep);
    uint8_t *all = calloc(qs->n + 1, 1);
    double *lat = calloc(qs->n + 1, sizeof *lat),
           *cost = calloc(qs->n + 1, sizeof *cost);
    struct tally t = {0};
    int rc = 0;
    if (!rep || !all || !lat || !cost ||
        compare_runs(cmd, s, &a->opts, qs, runs, n_eng, all, &t, rep)) {
        rc = (xg_set_error(XG_ERR_NOMEM, "out of memory"), xg_cli_fail());
        goto done;
    }
    rep->cmd = cmd;
    rep->queries_path = a->queries;
    rep->qrels_path = a->qrels;
    rep->k = a->opts.k;
    rep->n_queries = qs->n;
    rep->compared = t.identical + t.different + t.stock_self;
    rep->identical = t.identical;
    rep->different = t.different;
    rep->stock_self = t.stock_self;
    rep->unsupported = t.unsupported;
    rep->rejected = t.rejected;
    rep->n_eng = n_eng;
    rep->answered = all;
    rep->cost = cost;
    for (uint32_t e = 0; e < n_eng; ++e) {
        latency_figures(&runs[e], qs->n, all, lat, &rep->eng[e]);
        rep->eng[e].n_passes = runs[e].n_passes;
        for (uint32_t p = 0; p < runs[e].n_passes; ++p)
            rep->eng[e].pass_qps[p] = runs[e].pass_wall[p] > 0
                                          ? qs->n / runs[e].pass_wall[p] : 0;
        rep->eng[e].ratio = rep->eng[0].qps > 0
                                ? rep->eng[e].qps / rep->eng[0].qps : 0;
        rep->eng[e].cpu_us = runs[e].cpu * 1e6 / (qs->n ? qs->n : 1);
        rep->eng[e].cores = runs[e].wall > 0 ? runs[e].cpu / runs[e].wall : 0;
    }
    if (qr) score_qrels(qr, qs, runs, n_eng, all, rep);
    judge_planner(runs, n_eng, qs->n, rep);

    printf("queries %u: compared %u MSets, identical %u, different %u; "
           "unsupported %u, rejected by QueryParser %u\n", qs->n,
           rep->compared, t.identical, t.different, t.unsupported,
           t.rejected);
    if (t.stock_self)
        printf("stock's top %u differs from its own full ranking: %u MSets, "
               "where the engines return the full ranking's (not counted as "
               "different; docs/architecture.md)\n", a->opts.k,
               t.stock_self);
    printf("match counts compared where the reference is exact: %u of %u "
           "equal\n", t.est_equal, t.est_cmp);
    if (bench)
        printf("threads %u (xapian, cpu), GPU batch %u, k %u, op %s\n",
               threads, batch, a->opts.k,
               a->opts.default_and == 2 ? "andor"
                                        : a->opts.default_and ? "and" : "or");
    print_report(rep);
    if (a->json_out) {
        struct xg_outfile jf;
        if (xg_outfile_open(&jf, a->json_out)) {
            rc = xg_cli_fail();
        } else {
            write_json(jf.f, rep, threads, batch);
            if (xg_outfile_close(&jf, 1)) rc = xg_cli_fail();
        }
    }
    if ((a->html_out && n_eng > 1) || a->samples_out)
        rep->cost_note = query_costs(s, &a->opts, qs, cost);
    if (a->samples_out && write_samples(a->samples_out, qs, runs, n_eng, cost))
        rc = xg_cli_fail();
    if (a->html_out && xg_ab_report_html(rep, a->html_out)) rc = xg_cli_fail();
    if (t.different) rc = 1;
done:
    free(rep);
    free(all);
    free(lat);
    free(cost);
    return rc;
}

static int ab_main(const char *cmd, int argc, char **argv, int bench)
{
    struct xg_cli_search_args a;
    int rc = xg_cli_search_args_parse(cmd, argc, argv,
                                      bench ? help_bench : help_ab, &a);
    if (rc >= 0) return rc;
    if (!a.queries) return xg_cli_usage(cmd, "--queries FILE is required");
    uint32_t threads = a.threads ? a.threads
                                 : bench ? (uint32_t)sysconf(_SC_NPROCESSORS_ONLN)
                                         : 1;
    uint32_t batch = a.batch ? a.batch : 256;
    struct engine_run runs[XG_AB_MAX_ENGINES];
    uint32_t n_eng = 0;
    struct xg_server_child child = {0};
    memset(runs, 0, sizeof runs);

    struct xg_cli_queries qs;
    if (xg_cli_queries_load(a.queries, &qs)) return xg_cli_fail();
    /* Judgements are read before any engine runs: a bad file costs
     * nothing.  A malformed one is bad input (2), a missing one a fault. */
    struct xg_qrels qr = {0};
    if (a.qrels && (rc = xg_qrels_load(a.qrels, &qr))) {
        xg_cli_queries_free(&qs);
        fprintf(stderr, "xapian-gpu: %s\n", xg_last_error());
        return rc == XG_ERR_FORMAT ? 2 : 1;
    }
    xg_searcher *s;
    if (xg_searcher_open((const char *const *)a.dbs, a.n_dbs, a.index, &s)) {
        xg_qrels_free(&qr);
        xg_cli_queries_free(&qs);
        return xg_cli_fail();
    }
    xg_handle_set_engine_opts(xg_searcher_handle(s), &a.engine_opts);
    const char *why = NULL;
    int have_gpu = xg_searcher_index_error(s) == NULL &&
                   xg_handle_gpu_status(xg_searcher_handle(s), &why) == XG_OK;
    /* The plugin answers one query form, so not AND-then-OR. */
    const int andor = a.opts.default_and == 2;
    rc = parse_engines(cmd, a.engines ? a.engines
                            : have_gpu ? (andor ? "xapian,cpu,gpu"
                                                : "xapian,cpu,gpu,plugin")
                                       : (andor ? "xapian,cpu"
                                                : "xapian,cpu,plugin"),
                       runs, &n_eng);
    if (rc) goto out;
    /* Warm-ups where the figures are the point; ab's one pass checks. */
    for (uint32_t e = 0; e < n_eng; ++e) runs[e].warm = bench;
    for (uint32_t e = 0; e < n_eng; ++e) {
        int eng = runs[e].engine;
        if (AB_IS_PLUGIN(eng) && andor) {
            /* It would reject every query: the run would compare
             * nothing. */
            rc = xg_cli_usage(cmd, "engine %s does not take --op andor",
                              runs[e].name);
            goto out;
        }
        if (eng == AB_ENGINE_SERVER && a.opts.default_and == 2) {
            rc = xg_cli_usage(cmd, "engine server does not take --op andor");
            goto out;
        }
        if (eng == AB_ENGINE_SERVER && !a.server && !child.pid) {
            /* No running server named: one of our own, on these
             * databases. */
            if (xg_server_child_start((const char *const *)a.dbs, a.n_dbs,
                                      &child)) {
                rc = 1;
                goto out;
            }
            a.server = child.stub;
        }
        if (eng == AB_ENGINE_SERVER) runs[e].child = child.pid;
        if (eng != XG_ENGINE_XAPIAN && eng != AB_ENGINE_SERVER &&
            xg_searcher_index_error(s)) {
            fprintf(stderr, "xapian-gpu: %s\n", xg_searcher_index_error(s));
            rc = 1;
            goto out;
        }
        if (eng == XG_ENGINE_GPU && !have_gpu) {
            fprintf(stderr, "xapian-gpu: %s\n", why ? why : "no GPU");
            rc = 1;
            goto out;
        }
    }
    struct xg_engine_stats gpu_base;
    rc = run_engines(s, &a, &qs, runs, n_eng, threads, batch, &gpu_base);
    if (rc) goto out;
    rc = report(cmd, s, &a, &qs, a.qrels ? &qr : NULL, runs, n_eng, bench,
                threads, batch);
    struct xg_engine_stats g;
    const struct xg_engine_stats *gs = xg_searcher_gpu_stats(s);
    if (gs) {
        g = *gs;
        xg_engine_stats_since(&g, &gpu_base);
        gs = &g;
    }
    if (gs && gs->queries) {
        printf("gpu engine: %llu queries, %llu served on the device, %llu by "
               "the CPU matcher; %llu batches, %.3f s device time\n",
               (unsigned long long)gs->queries, (unsigned long long)gs->served,
               (unsigned long long)gs->to_cpu,
               (unsigned long long)gs->batches, gs->device_seconds);
        printf("gpu batches, host wall: build %.3f s, device run %.3f s, "
               "finish %.3f s\n", gs->build_seconds, gs->run_seconds,
               gs->finish_seconds);
        printf("candidates: %llu rescored exactly\n",
               (unsigned long long)gs->candidates);
        printf("paths: %llu queries took a row, %llu the intersection\n",
               (unsigned long long)gs->row_queries,
               (unsigned long long)gs->intersect_queries);
        /* enum xg_member_method's order. */
        static const char *const member_names[XG_MEMBER_KINDS] = {
            "binary", "lr", "hashseg", "merge", "block"};
        printf("membership tests (AND lists probed):");
        for (int m = 0; m < XG_MEMBER_KINDS; ++m)
            printf("%s %s %llu", m ? "," : "", member_names[m],
                   (unsigned long long)gs->member_lists[m]);
        printf("; behind a Bloom filter %llu\n",
               (unsigned long long)gs->bloom_lists);
        if (gs->impacts_resident)
            printf("impacts: %llu queries chose their candidates from the "
                   "index's impacts (%llu from touched lists; %llu "
                   "overflowed and ran again on exact sums)\n",
                   (unsigned long long)gs->impact_queries,
                   (unsigned long long)gs->sparse_queries,
                   (unsigned long long)gs->impact_retries);
        if (gs->cache_pool)
            printf("list cache: %llu bytes; %llu hits, %llu misses, %llu "
                   "evictions, %llu bytes loaded; %llu batch splits\n",
                   (unsigned long long)gs->cache_pool,
                   (unsigned long long)gs->cache_hits,
                   (unsigned long long)gs->cache_misses,
                   (unsigned long long)gs->cache_evictions,
                   (unsigned long long)gs->cache_bytes_loaded,
                   (unsigned long long)gs->batch_splits);
    } else {
        printf("gpu engine: %s\n", have_gpu ? "not used" : why ? why : "none");
    }
out:
    /* The server's connections close first, so it stops at once. */
    for (uint32_t e = 0; e < n_eng; ++e) free_run(&runs[e], qs.n);
    if (child.pid && xg_server_child_stop(&child) && !rc) {
        fprintf(stderr, "xapian-gpu: the server it started did not stop "
                "cleanly\n");
        rc = 1;
    }
    xg_searcher_close(s);
    xg_qrels_free(&qr);
    xg_cli_queries_free(&qs);
    return rc;
}

int xg_cli_ab(int argc, char **argv) { return ab_main("ab", argc, argv, 0); }

int xg_cli_bench(int argc, char **argv)
{
    return ab_main("bench", argc, argv, 1);
}
