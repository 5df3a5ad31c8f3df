/** @file test_router.c
 *  @brief The router's decisions and fault handling (plugin/router.h),
 *         without a GPU: the engine runs the kernels' CPU twins
 *         (XG_GPU_TWINS=1) on the bundled Cranfield sample.
 *
 *  Checked, for real queries, against stock Xapian's top 10 (docids and
 *  bit-equal weights) wherever an engine answers:
 *  - the route of each query for every engine setting (xapian, cpu, gpu,
 *    auto) at the matcher front (searcher) and the Enquire front
 *    (context), with and without a usable device, and auto's cost model
 *    forced each way; at serve's front (XG_FRONT_REMOTE) an AND weighed
 *    against the CPU matcher's law each way;
 *  - a GPU fault in the middle of a batch: every query answered exactly by
 *    the fallback (the CPU matcher at the matcher front, stock through
 *    the context) and the fault counted;
 *  - a stale and a damaged index, and an unsupported shape: stock;
 *  - xg_context_search on a database whose files were truncated under it:
 *    a status code, no exception reaching C;
 *  - the dispatcher's three ways to run a query (XG_DISPATCH_INLINE):
 *    one thread and four at once through one context, every MSet
 *    stock's, and the batches on the callers' threads as each rule
 *    says.
 *  usage: test_router SAMPLE_DIR WORK_DIR
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../gpu/query/batch.h"
#include "../gpu/query/engine.h"
#include "../gpu/query/match_ref.h"
#include "../gpu/runtime/error.h"
#include "../plugin/context.h"
#include "../plugin/cost_model.h"
#include "../plugin/handle.h"
#include "../plugin/router.h"
#include "../plugin/xapian-gpu.h"
#include "mset_compare.h"
#include "sample_db.h"
#include "../shim/tools/indexer.h"
#include "../shim/xg_export.h"
#include "../shim/xg_shim.h"

#define NQ 60
#define K 10

static int failures, checks;
static uint64_t last_counts[XG_ROUTE_COUNT];   /* the last context's */
static uint64_t last_skipped;   /* its queries sent to stock unplanned */

#define CHECK(cond, ...)                                                    \
    do {                                                                    \
        ++checks;                                                           \
        if (!(cond)) {                                                      \
            ++failures;                                                     \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                     \
            printf(__VA_ARGS__);                                            \
            printf("\n");                                                   \
        }                                                                   \
    } while (0)

static char texts[NQ + 6][512];
static int n_texts, n_plain;
static struct xg_result stock_or[NQ + 6], stock_and[NQ + 6];


/* stock_cheap: stock always predicted faster than the GPU; else never.
 * cpu_cheap (-1: no keys, priced as stock): the CPU matcher's AND. */
static int write_model(const char *path, int stock_cheap, int cpu_cheap)
{
    FILE *f = fopen(path, "w");
    if (!f) return 1;
    fprintf(f, "stock_or_scale %s\nstock_or_exponent 1\n"
            "stock_and_scale %s\nstock_and_exponent 1\n"
            "stock_or_spread 1\nstock_and_spread 1\n"
            "gpu_batch 1e-3\ngpu_per_posting 1e-9\n",
            stock_cheap ? "1e-15" : "1e3", stock_cheap ? "1e-15" : "1e3");
    if (cpu_cheap >= 0)
        fprintf(f, "cpu_and_scale %s\ncpu_and_exponent 1\n"
                "cpu_and_spread 1\n", cpu_cheap ? "1e-15" : "1e3");
    return fclose(f) != 0;
}

static int write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) return 1;
    const int bad = fputs(text, f) < 0;
    return (fclose(f) != 0) | bad;
}

/* c_cpu_or's model: stock 1 us a posting (its OR of none 1 us, the
 * accelerated query's Enquire), the CPU matcher's OR top k nearly free,
 * a GPU batch 1 ms, stock's AND nearly free. */
static const char cpu_or_model[] =
    "stock_or_scale 1e-6\nstock_or_exponent 1\n"
    "stock_and_scale 1e-15\nstock_and_exponent 1\n"
    "stock_or_spread 1\nstock_and_spread 1\n"
    "gpu_batch 1e-3\ngpu_per_posting 1e-9\n"
    "cpu_or_scale 1e-15\ncpu_or_exponent 1\ncpu_or_spread 1\n";

/* The same with the CPU matcher's OR top k with its count nearly
 * free and its top k without the count dear: the fronts that answer with
 * the engines' own counts (serve, the matcher front) weigh the first. */
static const char cpu_or_count_model[] =
    "stock_or_scale 1e-6\nstock_or_exponent 1\n"
    "stock_and_scale 1e-15\nstock_and_exponent 1\n"
    "stock_or_spread 1\nstock_and_spread 1\n"
    "gpu_batch 1e-3\ngpu_per_posting 1e-9\n"
    "cpu_or_scale 1\ncpu_or_exponent 0\ncpu_or_spread 1\n"
    "cpu_or_count_scale 1e-15\ncpu_or_count_exponent 1\n"
    "cpu_or_count_spread 1\n";

/* learning_pass's model: stock 1 us on any query, a GPU batch 10 us. */
static const char learn_model[] =
    "stock_or_scale 1e-6\nstock_or_exponent 0\n"
    "stock_and_scale 1e-6\nstock_and_exponent 0\n"
    "stock_or_spread 1\nstock_and_spread 1\n"
    "gpu_batch 1e-5\ngpu_per_posting 0\n";

static struct xg_search_opts opts(int and_op, int engine)
{
    struct xg_search_opts o = XG_SEARCH_DEFAULTS;
    o.k = K;
    o.default_and = and_op;
    o.engine = engine;
    return o;
}

static const struct xg_result *stock_of(int q, int and_op)
{
    return and_op ? &stock_and[q] : &stock_or[q];
}

/* Is query q an AND of several lists (the cost model's is_and)? */
static int is_and_query(xg_handle *h, int q, int and_op)
{
    struct xg_search_opts o = opts(and_op, XG_ENGINE_CPU);
    xg_xquery *xq = NULL;
    struct xg_prepared *pq = NULL;
    struct xg_query_features f = {0};
    if (!xg_handle_parse(h, texts[q], &o, &xq) &&
        !xg_handle_prepare_terms(h, xq, &pq))
        xg_query_features_of(pq, xg_handle_index(h), &f);
    xg_prepared_free(pq);
    if (xq) xg_shim_xquery_free(xq);
    return f.is_and;
}

/* The matcher front: every query with `engine`; routes checked by
 * want(q, and_op, route) returning 1 if the route is right. */
typedef int (*want_fn)(xg_handle *h, int q, int and_op, int route, int rc);

static void matcher_pass(const char *what, xg_router *r, xg_handle *h,
                         int engine, want_fn want, uint64_t *routes)
{
    for (int and_op = 0; and_op < 2; ++and_op)
        for (int q = 0; q < n_texts; ++q) {
            struct xg_search_opts o = opts(and_op, engine);
            struct xg_result res;
            int route = -1;
            int rc = xg_router_search_text(r, h, texts[q], &o, &res, &route);
            CHECK(want(h, q, and_op, route, rc),
                  "%s: query %d '%s' (%s): route %s rc %d (%s)", what, q,
                  texts[q], and_op ? "AND" : "OR", xg_route_name(route), rc,
                  rc ? xg_last_error() : "");
            if (rc == XG_OK) {
                CHECK(xg_test_same_hits(&res, stock_of(q, and_op)),
                      "%s: query %d '%s': MSet differs from stock's", what, q,
                      texts[q]);
                xg_result_free(&res);
            }
            if (routes && route >= 0 && route < XG_ROUTE_COUNT)
                ++routes[route];
        }
}

static int plain(int q) { return q < n_plain; }
/* The last four served queries: a phrase, two AND_NOTs and a NEAR.  The
 * GPU leaves them to the CPU matcher without touching the device, but for
 * the phrase as an AND of terms and the NEAR (a filter over the AND of
 * its terms); through Enquire the phrase as an OR's operand is stock's
 * where two of the top K are adjacent documents (served otherwise),
 * through serve the AND_NOTs are stock's (docs/plugin.md). */
static int special(int q) { return q >= n_plain - 4 && q < n_plain; }
static int front_stock(int q, int remote, int and_op)
{
    return remote ? q == n_plain - 3 || q == n_plain - 2
                  : q == n_plain - 4 && !and_op;
}

/* pred(h, prepared query) on query q in the operator's form; 0 where q
 * cannot be prepared. */
static int of_prepared(xg_handle *h, int q, int and_op,
                       int (*pred)(xg_handle *, const struct xg_prepared *))
{
    struct xg_search_opts o = opts(and_op, XG_ENGINE_CPU);
    xg_xquery *xq = NULL;
    struct xg_prepared *pq = NULL;
    const int yes = !xg_handle_parse(h, texts[q], &o, &xq) &&
                    !xg_handle_prepare(h, xq, &pq) && pred(h, pq);
    xg_prepared_free(pq);
    if (xq) xg_shim_xquery_free(xq);
    return yes;
}

/* An AND of terms with position filters, which the GPU batch runs
 * (batch.h xg_batch_path). */
static int filtered_pred(xg_handle *h, const struct xg_prepared *pq)
{
    (void)h;
    const struct xg_engine_query eq = {&pq->q, pq->term, pq->plans, K, NULL};
    return pq->q.n_filters && xg_batch_path(&eq, 1) == XG_DPATH_INTERSECT;
}
static int gpu_filtered(xg_handle *h, int q, int and_op)
{
    return of_prepared(h, q, and_op, filtered_pred);
}

static xg_handle *feat_h;     /* the want functions' own handle */

/* A flat OR whose top k the CPU matcher gives without the count
 * (match_ref.h xg_match_top_prunes), with postings to weigh. */
static int top_or_pred(xg_handle *h, const struct xg_prepared *pq)
{
    const struct xg_bm25_params p = XG_BM25_DEFAULTS;
    struct xg_query_features f;
    xg_query_features_of(pq, xg_handle_index(h), &f);
    return !f.is_and && f.sum > 0 && xg_match_top_prunes(&pq->q, &p);
}
static int top_or(xg_handle *h, int q, int and_op)
{
    return of_prepared(h, q, and_op, top_or_pred);
}

/* Those four under auto with a device: a phrase AND of terms is weighed
 * between the GPU and the CPU matcher; the others skip the GPU's batch,
 * the CPU matcher taking ANDs and stock the rest (router.c choose()). */
static int cpu_side(xg_handle *h, int q, int a, int route)
{
    if (gpu_filtered(h, q, a))
        return route == XG_ROUTE_GPU || route == XG_ROUTE_CPU;
    return route == (is_and_query(h, q, a) ? XG_ROUTE_CPU
                                           : XG_ROUTE_STOCK_CHEAPER);
}

static int want_xapian(xg_handle *h, int q, int a, int route, int rc)
{
    (void)h, (void)q, (void)a;
    return rc == XG_OK && route == XG_ROUTE_STOCK_ASKED;
}
static int want_cpu(xg_handle *h, int q, int a, int route, int rc)
{
    (void)h, (void)a;
    return plain(q) ? rc == XG_OK && route == XG_ROUTE_CPU
                    : rc == XG_ERR_UNSUPPORTED;
}
static int want_gpu(xg_handle *h, int q, int a, int route, int rc)
{
    (void)h, (void)a;
    return plain(q) ? rc == XG_OK &&
                          (route == XG_ROUTE_GPU || route == XG_ROUTE_CPU)
                    : rc == XG_ERR_UNSUPPORTED;
}
static int want_auto_gpu(xg_handle *h, int q, int a, int route, int rc)
{
    if (special(q)) return rc == XG_OK && cpu_side(h, q, a, route);
    return rc == XG_OK && (plain(q) ? route == XG_ROUTE_GPU ||
                                          route == XG_ROUTE_CPU
                                    : route == XG_ROUTE_STOCK_UNSUPPORTED);
}
static int want_auto_cheaper(xg_handle *h, int q, int a, int route, int rc)
{
    if (special(q)) return rc == XG_OK && cpu_side(h, q, a, route);
    return rc == XG_OK && route == (plain(q) ? XG_ROUTE_STOCK_CHEAPER
                                             : XG_ROUTE_STOCK_UNSUPPORTED);
}
static int want_auto_nodev(xg_handle *h, int q, int a, int route, int rc)
{
    if (rc != XG_OK) return 0;
    if (!plain(q)) return route == XG_ROUTE_STOCK_UNSUPPORTED;
    /* A flat OR: the CPU matcher where the built-in model prices its
     * count below stock. */
    if (top_or(h, q, a))
        return route == XG_ROUTE_CPU || route == XG_ROUTE_STOCK_NO_DEVICE;
    return route == (is_and_query(h, q, a) ? XG_ROUTE_CPU
                                           : XG_ROUTE_STOCK_NO_DEVICE);
}
static int want_gpu_nodev(xg_handle *h, int q, int a, int route, int rc)
{
    (void)h, (void)a, (void)route;
    return plain(q) ? rc == XG_ERR_NODEVICE || rc == XG_ERR_CUDA
                    : rc == XG_ERR_UNSUPPORTED;
}
static int want_stale(xg_handle *h, int q, int a, int route, int rc)
{
    (void)h, (void)q, (void)a;
    return rc == XG_OK && route == XG_ROUTE_STOCK_STALE;
}
static int want_stale_err(xg_handle *h, int q, int a, int route, int rc)
{
    (void)h, (void)q, (void)a, (void)route;
    return rc == XG_ERR_STALE;
}
static int want_damaged(xg_handle *h, int q, int a, int route, int rc)
{
    (void)h, (void)q, (void)a;
    return rc == XG_OK && route == XG_ROUTE_STOCK_DAMAGED;
}

static xg_router *matcher_router(xg_handle *h, const char *model)
{
    struct xg_router_opts ro;
    memset(&ro, 0, sizeof ro);
    ro.front = XG_FRONT_MATCHER;
    ro.engine = XG_ENGINE_AUTO;
    struct xg_bm25_params bm = XG_BM25_DEFAULTS;
    ro.bm25 = bm;
    ro.cost_model = model;
    xg_router *r = NULL;
    if (xg_router_open(h, &ro, &r)) {
        printf("FAIL router open: %s\n", xg_last_error());
        exit(1);
    }
    return r;
}

/* The Enquire front: every query through xg_context_search; route[] and
 * the context's counts must agree, every MSet must be stock's. */
typedef int (*ctx_want_fn)(int q, int and_op, int route);

/* Every text under both operators through a context, `rounds` times over
 * (enough of them and the Enquire front sends shapes that stay on stock
 * there unplanned: plugin/shapes.c); last_skipped says how many. */
static void context_front_pass(const char *what, const char *db, int engine,
                               const char *model, ctx_want_fn want,
                               int inject, int remote, int rounds)
{
    const char *paths[] = {db};
    struct xg_context_opts co = XG_CONTEXT_DEFAULTS;
    co.engine = engine;
    co.cost_model = model;
    /* Routes, not the deadline, are tested: a loaded machine must not send
     * a query queued behind a slow twin batch to stock:deadline. */
    co.deadline_ms = 600000;
    xg_context *ctx;
    if ((remote ? xg_context_open_remote : xg_context_open)(paths, 1, NULL,
                                                            &co, &ctx)) {
        CHECK(0, "%s: context open: %s", what, xg_last_error());
        return;
    }
    uint64_t mine[XG_ROUTE_COUNT] = {0}, counted[XG_ROUTE_COUNT];
    for (int pass = 0; pass < 2 * rounds; ++pass)
        for (int q = 0, and_op = pass & 1; q < n_texts; ++q) {
            struct xg_search_opts o = opts(and_op, XG_ENGINE_AUTO);
            struct xg_result res;
            int route = -1;
            if (inject) xg_engine_fail_next_alloc(1);
            int rc = xg_context_search(ctx, texts[q], &o, 0, K, &res, &route);
            if (inject) xg_engine_fail_next_alloc(0);
            /* Through Enquire a phrase in an OR may be stock's
             * (docs/plugin.md); serve answers it with the engine's
             * result, and leaves AND_NOT to stock. */
            const int ok =
                front_stock(q, remote, and_op)
                    ? route == XG_ROUTE_STOCK_UNSUPPORTED ||
                          (want(q, and_op, route) &&
                           (!remote || (route != XG_ROUTE_GPU &&
                                        route != XG_ROUTE_CPU)))
                    : want(q, and_op, route);
            CHECK(rc == XG_OK && ok,
                  "%s: query %d '%s' (%s): route %s rc %d %s", what, q,
                  texts[q], and_op ? "AND" : "OR", xg_route_name(route), rc,
                  rc ? xg_last_error() : "");
            if (rc) continue;
            CHECK(xg_test_same_hits(&res, stock_of(q, and_op)),
                  "%s: query %d '%s': MSet differs from stock's", what, q,
                  texts[q]);
            xg_result_free(&res);
            if (route >= 0 && route < XG_ROUTE_COUNT) ++mine[route];
        }
    xg_context_routes(ctx, counted);
    memcpy(last_counts, counted, sizeof counted);
    last_skipped = xg_router_shape_skipped(xg_context_router(ctx));
    CHECK(!memcmp(mine, counted, sizeof mine), "%s: the context's route "
          "counts are not the routes it returned", what);
    /* Every stock:unsupported query is counted under a reason. */
    char why[2048];
    xg_context_unserved(ctx, why, sizeof why);
    uint64_t reasons = 0;
    for (const char *p = why; *p;) {
        reasons += strtoull(p, NULL, 10);
        const char *next = strstr(p, "; ");
        p = next ? next + 2 : p + strlen(p);
    }
    CHECK(reasons == counted[XG_ROUTE_STOCK_UNSUPPORTED], "%s: %llu "
          "stock:unsupported, %llu by reason (%s)", what,
          (unsigned long long)counted[XG_ROUTE_STOCK_UNSUPPORTED],
          (unsigned long long)reasons, why);
    printf("ok %s:", what);
    for (int i = 0; i < XG_ROUTE_COUNT; ++i)
        if (counted[i]) printf(" %s %llu", xg_route_name(i),
                               (unsigned long long)counted[i]);
    printf("\n");
    xg_context_close(ctx);
}

/* serve's front learning from the times it sees: a model that prices
 * stock's OR at 1 us and a GPU batch at 10 us sends the ORs to stock; told
 * 200 times that stock took 1 ms on one of them, the planner scales
 * stock's price (by e^3 at most) and the next OR goes to the GPU.  Every
 * MSet stays stock's. */
static void learning_pass(const char *db, const char *model)
{
    const char *paths[] = {db};
    struct xg_context_opts co = XG_CONTEXT_DEFAULTS;
    co.engine = XG_ENGINE_AUTO;
    co.cost_model = model;
    co.deadline_ms = 600000;
    /* Times, not the machine's load, decide here: tests run side by side. */
    setenv("XG_NO_PRESSURE", "1", 1);
    xg_context *ctx;
    int orc = xg_context_open_remote(paths, 1, NULL, &co, &ctx);
    unsetenv("XG_NO_PRESSURE");
    xg_handle *h = NULL;
    if (orc || xg_handle_open(paths, 1, NULL, &h)) {
        CHECK(0, "learning: open: %s", xg_last_error());
        if (!orc) xg_context_close(ctx);
        return;
    }
    xg_router *r = xg_context_router(ctx);
    uint32_t stock[2] = {0}, engine[2] = {0};
    int first_after = -1;
    for (int phase = 0; phase < 2; ++phase) {
        for (int q = 0; q < n_plain; ++q) {
            if (q >= n_plain - 3) continue; /* the AND_NOTs and the NEAR */
            struct xg_search_opts o = opts(0, XG_ENGINE_AUTO);
            struct xg_result res;
            int route = -1;
            int rc = xg_context_search(ctx, texts[q], &o, 0, K, &res, &route);
            CHECK(rc == XG_OK && xg_test_same_hits(&res, stock_of(q, 0)),
                  "learning: query %d '%s': rc %d or MSet differs", q, texts[q],
                  rc);
            if (rc == XG_OK) xg_result_free(&res);
            if (phase && first_after < 0) first_after = route;
            stock[phase] += route == XG_ROUTE_STOCK_CHEAPER;
            engine[phase] += route == XG_ROUTE_GPU || route == XG_ROUTE_CPU;
        }
        if (phase) break;
        /* Stock's time as serve tells it, on the first query. */
        struct xg_search_opts o = opts(0, XG_ENGINE_AUTO);
        xg_xquery *xq = NULL;
        struct xg_prepared *pq = NULL;
        if (!xg_handle_parse(h, texts[0], &o, &xq) &&
            !xg_handle_prepare_terms(h, xq, &pq))
            for (int i = 0; i < 200; ++i) xg_router_learn_stock(r, pq, 1e-3);
        xg_prepared_free(pq);
        if (xq) xg_shim_xquery_free(xq);
    }
    const struct xg_cost_learned *l = xg_router_learned(r);
    const double sf = xg_cost_learned_factor(l, XG_COST_STOCK, 0);
    const int n_learn = n_plain - 3;    /* the AND_NOTs and NEAR skipped */
    CHECK(stock[0] == (uint32_t)n_learn, "learning: before, %u of %d ORs on "
          "stock", stock[0], n_learn);
    /* The first after: the GPU's price has seen no batch yet.  Later ones
     * weigh the twins' slow batches too (the dispatcher's excess). */
    CHECK(first_after == XG_ROUTE_GPU || first_after == XG_ROUTE_CPU,
          "learning: the first OR after went to %s", xg_route_name(first_after));
    CHECK(sf > 19 && sf <= exp(3) &&
              xg_cost_learned_seen(l, XG_COST_STOCK, 0) == 200,
          "learning: stock's OR factor %.2f after 200 times", sf);
    printf("ok remote auto, learning: %d ORs on stock; stock seen 200 times "
           "20x slower than priced (factor %.2f, clamped at e^3); then the "
           "first OR on the engines (%u of %d, the slow twins' batches "
           "counted)\n", n_learn, sf, engine[1], n_learn);
    xg_handle_close(h);
    xg_context_close(ctx);
}

static void context_pass(const char *what, const char *db, int engine,
                         const char *model, ctx_want_fn want, int inject)
{
    context_front_pass(what, db, engine, model, want, inject, 0, 1);
}

/* Several threads through one context under one of the dispatcher's
 * rules (XG_DISPATCH_INLINE, read when the context opens its
 * dispatcher): every plain query of both operators, each thread from
 * its own offset, each MSet compared with stock's. */
struct dispatch_job {
    xg_context *ctx;
    int id, bad, gpu;
};

static void *dispatch_worker(void *arg)
{
    struct dispatch_job *j = arg;
    for (int pass = 0; pass < 2; ++pass)
        for (int i = 0; i < n_plain; ++i) {
            const int q = (i + 7 * j->id) % n_plain;
            const int and_op = (pass + j->id) & 1;
            struct xg_search_opts o = opts(and_op, XG_ENGINE_AUTO);
            struct xg_result res;
            int route = -1;
            if (xg_context_search(j->ctx, texts[q], &o, 0, K, &res, &route)) {
                ++j->bad;
                continue;
            }
            if (!xg_test_same_hits(&res, stock_of(q, and_op))) ++j->bad;
            j->gpu += route == XG_ROUTE_GPU;
            xg_result_free(&res);
        }
    return NULL;
}

static void dispatch_pass(const char *db, const char *rule, int threads)
{
    setenv("XG_DISPATCH_INLINE", rule, 1);
    const char *paths[] = {db};
    struct xg_context_opts co = XG_CONTEXT_DEFAULTS;
    co.engine = XG_ENGINE_GPU;
    co.deadline_ms = 600000;
    xg_context *ctx;
    const int rc = xg_context_open(paths, 1, NULL, &co, &ctx);
    unsetenv("XG_DISPATCH_INLINE");
    if (rc) {
        CHECK(0, "dispatch rule %s: context open: %s", rule, xg_last_error());
        return;
    }
    struct dispatch_job jobs[4];
    pthread_t tid[4];
    int bad = 0, gpu = 0, started = 0;
    for (int t = 0; t < threads && t < 4; ++t, ++started) {
        jobs[t] = (struct dispatch_job){.ctx = ctx, .id = t};
        if (pthread_create(&tid[t], NULL, dispatch_worker, &jobs[t])) break;
    }
    for (int t = 0; t < started; ++t) {
        pthread_join(tid[t], NULL);
        bad += jobs[t].bad;
        gpu += jobs[t].gpu;
    }
    struct xg_router_batches b;
    xg_router_batches(xg_context_router(ctx), &b);
    CHECK(started == threads && !bad, "dispatch rule %s, %d threads: %d "
          "searches failed or differ from stock's", rule, threads, bad);
    CHECK(gpu > 0 && b.queries >= (uint64_t)gpu, "dispatch rule %s: %d gpu "
          "routes, %llu queries in batches", rule, gpu,
          (unsigned long long)b.queries);
    if (!strcmp(rule, "0"))
        CHECK(!b.inline_batches, "dispatch rule 0: %llu batches on the "
              "callers' threads", (unsigned long long)b.inline_batches);
    else if (threads == 1)
        CHECK(b.inline_batches == b.batches, "dispatch rule %s, one "
              "thread: %llu of %llu batches on its own thread", rule,
              (unsigned long long)b.inline_batches,
              (unsigned long long)b.batches);
    printf("ok dispatch rule %s, %d threads: %d gpu, %llu batches, %llu on "
           "the callers' threads\n", rule, threads, gpu,
           (unsigned long long)b.batches,
           (unsigned long long)b.inline_batches);
    xg_context_close(ctx);
}

/* Wildcards under auto: as an AND in Omega's form (a synonym of one
 * wildcard per prefix in each AND operand) the CPU matcher's, as an OR
 * stock's; both MSets stock's own. */
static void wildcard_pass(xg_router *r, xg_handle *h)
{
    static const char *const texts_w[] = {"boundar* layer*", "heat transf*",
                                          "pressure distrib* superson*"};
    for (int and_op = 0; and_op < 2; ++and_op)
        for (size_t i = 0; i < sizeof texts_w / sizeof texts_w[0]; ++i) {
            struct xg_search_opts o = opts(and_op, XG_ENGINE_AUTO);
            o.parser_flags = XG_PARSE_FLAG_DEFAULT | XG_PARSE_FLAG_WILDCARD;
            o.omega = and_op;
            struct xg_search_opts so = o;
            so.engine = XG_ENGINE_XAPIAN;
            struct xg_result res, ref;
            int route = -1, sroute = -1;
            int rc = xg_router_search_text(r, h, texts_w[i], &o, &res, &route);
            int src = xg_router_search_text(r, h, texts_w[i], &so, &ref,
                                            &sroute);
            const int want = and_op ? XG_ROUTE_CPU : XG_ROUTE_STOCK_CHEAPER;
            CHECK(rc == XG_OK && src == XG_OK && route == want,
                  "wildcards, %s: '%s': route %s rc %d (%s)",
                  and_op ? "Omega's AND" : "OR", texts_w[i],
                  xg_route_name(route), rc, rc ? xg_last_error() : "");
            if (rc || src) continue;
            CHECK(res.n_hits > 0 && xg_test_same_hits(&res, &ref),
                  "wildcards: '%s': MSet differs from stock's", texts_w[i]);
            xg_result_free(&res);
            xg_result_free(&ref);
        }
}

/* serve's front under auto: an AND of several lists weighed between the
 * GPU and the CPU matcher (feat_h: the handle its features come from). */
static int r_cpu_cheap(int q, int a, int route)
{
    if (!plain(q)) return route == XG_ROUTE_STOCK_UNSUPPORTED;
    if (special(q)) return cpu_side(feat_h, q, a, route);
    if (is_and_query(feat_h, q, a)) return route == XG_ROUTE_CPU;
    return route == XG_ROUTE_GPU || route == XG_ROUTE_CPU;
}
static int r_cpu_dear(int q, int a, int route)
{
    if (special(q)) return cpu_side(feat_h, q, a, route);
    return plain(q) ? route == XG_ROUTE_GPU || route == XG_ROUTE_CPU
                    : route == XG_ROUTE_STOCK_UNSUPPORTED;
}

static int c_cpu(int q, int a, int route)
{
    (void)a;
    return route == (plain(q) ? XG_ROUTE_CPU : XG_ROUTE_STOCK_UNSUPPORTED);
}
/* The phrase as an AND of terms, and the NEAR: through Enquire too, their
 * filter runs on the GPU, and the CPU matcher is the cheap side
 * (router.c choose()). */
static int phrase_and(int q, int a)
{
    return (a && q == n_plain - 4) || q == n_plain - 1;
}
static int c_gpu(int q, int a, int route)
{
    /* engine gpu: the CPU matcher; auto: as cpu_side() */
    if (phrase_and(q, a))
        return route == XG_ROUTE_GPU || route == XG_ROUTE_CPU;
    if (special(q))
        return route == XG_ROUTE_CPU || route == XG_ROUTE_STOCK_CHEAPER;
    return plain(q) ? route == XG_ROUTE_GPU || route == XG_ROUTE_CPU
                    : route == XG_ROUTE_STOCK_UNSUPPORTED;
}
static int c_cheaper(int q, int a, int route)
{
    if (phrase_and(q, a)) return route == XG_ROUTE_CPU;
    return route == (plain(q) ? XG_ROUTE_STOCK_CHEAPER
                              : XG_ROUTE_STOCK_UNSUPPORTED);
}
/* A query that cannot match is answered on the host, where no
 * allocation can fail: the GPU's route. */
static int c_fault(int q, int a, int route)
{
    (void)a;
    return plain(q) ? route == XG_ROUTE_STOCK_GPU_ERROR ||
                          route == XG_ROUTE_GPU ||
                          (special(q) && route == XG_ROUTE_CPU)
                    : route == XG_ROUTE_STOCK_UNSUPPORTED;
}
/* Without a device auto may give a flat OR's top k to the CPU matcher
 * where the model prices it below stock (router.c cpu_or_cheaper). */
static int c_nodev(int q, int a, int route)
{
    if (!plain(q)) return route == XG_ROUTE_STOCK_UNSUPPORTED;
    return route == XG_ROUTE_STOCK_NO_DEVICE ||
           (route == XG_ROUTE_CPU && top_or(feat_h, q, a));
}
/* cpu-or.model: the CPU matcher's OR top k priced below stock and the
 * GPU for any OR with postings, stock's AND below the GPU: every such
 * OR goes to the CPU matcher, with a device or without. */
static int c_cpu_or(int q, int a, int route)
{
    if (!plain(q)) return route == XG_ROUTE_STOCK_UNSUPPORTED;
    if (top_or(feat_h, q, a)) return route == XG_ROUTE_CPU;
    if (special(q))
        return route == XG_ROUTE_CPU || route == XG_ROUTE_GPU ||
               route == XG_ROUTE_STOCK_CHEAPER;
    return route == XG_ROUTE_STOCK_CHEAPER || route == XG_ROUTE_GPU;
}
static int c_no_cpu_or(int q, int a, int route)
{
    if (plain(q) && top_or(feat_h, q, a))
        return route == XG_ROUTE_STOCK_CHEAPER || route == XG_ROUTE_GPU;
    return c_cpu_or(q, a, route);
}
static int c_cpu_or_nodev(int q, int a, int route)
{
    if (!plain(q)) return route == XG_ROUTE_STOCK_UNSUPPORTED;
    return route == (top_or(feat_h, q, a) ? XG_ROUTE_CPU
                                          : XG_ROUTE_STOCK_NO_DEVICE);
}
/* cpu-or-count.model at serve's front: every flat OR with postings to
 * the CPU matcher (its count is exact); through Enquire (the top k law,
 * dear) none. */
static int r_cpu_or_count(int q, int a, int route)
{
    if (!plain(q)) return route == XG_ROUTE_STOCK_UNSUPPORTED;
    if (top_or(feat_h, q, a)) return route == XG_ROUTE_CPU;
    return route == XG_ROUTE_CPU || route == XG_ROUTE_GPU ||
           route == XG_ROUTE_STOCK_CHEAPER;
}
static int c_cpu_or_count(int q, int a, int route)
{
    if (plain(q) && top_or(feat_h, q, a)) return route != XG_ROUTE_CPU;
    return r_cpu_or_count(q, a, route);
}
/* Without a device at serve's front: ANDs and, with the count priced
 * below stock, flat ORs to the CPU matcher. */
static int r_cpu_or_count_nodev(int q, int a, int route)
{
    if (!plain(q)) return route == XG_ROUTE_STOCK_UNSUPPORTED;
    if (top_or(feat_h, q, a) || is_and_query(feat_h, q, a))
        return route == XG_ROUTE_CPU;
    return route == XG_ROUTE_CPU || route == XG_ROUTE_STOCK_NO_DEVICE;
}
static int c_stale(int q, int a, int route)
{
    (void)q, (void)a;
    return route == XG_ROUTE_STOCK_STALE;
}

/* A GPU fault mid-batch at the matcher front: the n-th allocation of the
 * batch fails, for growing n until one reaches the engine. */
static void batch_fault(xg_router *r, xg_handle *h)
{
    struct xg_prepared *pq[NQ + 6];
    uint32_t n = 0;
    struct xg_search_opts o = opts(0, XG_ENGINE_GPU);
    for (int q = 0; q < n_plain; ++q) {
        xg_xquery *xq = NULL;
        if (!xg_handle_parse(h, texts[q], &o, &xq) &&
            !xg_handle_prepare(h, xq, &pq[n]))
            ++n;
        if (xq) xg_shim_xquery_free(xq);
    }
    struct xg_result res[NQ + 6];
    int st[NQ + 6], route[NQ + 6], hit = 0;
    for (int fault = 1; fault <= 12; ++fault) {
        const uint64_t before = xg_router_gpu_faults(r);
        xg_engine_fail_next_alloc(fault);
        int rc = xg_router_run_batch(r, h, pq, NULL, NULL, K, n,
                                     XG_ENGINE_GPU, &o.bm25, res, st, route);
        xg_engine_fail_next_alloc(0);
        const uint64_t took = xg_router_gpu_faults(r) - before;
        CHECK(rc == XG_OK, "batch fault %d: rc %d (%s)", fault, rc,
              xg_last_error());
        if (rc) continue;
        int all_cpu = 1;
        for (uint32_t i = 0; i < n; ++i) {
            CHECK(st[i] == XG_OK && xg_test_same_hits(&res[i], &stock_or[i]),
                  "batch fault %d: query %u not stock's MSet", fault, i);
            all_cpu &= route[i] == XG_ROUTE_CPU;
            xg_result_free(&res[i]);
        }
        CHECK(took <= 1, "batch fault %d: %llu faults counted", fault,
              (unsigned long long)took);
        if (took) {
            CHECK(all_cpu, "batch fault %d: a query was not answered by "
                  "the CPU matcher after the fault", fault);
            ++hit;
        }
    }
    CHECK(hit > 0, "no injected fault reached the engine");
    printf("ok GPU faults mid-batch: %d of 12 injected faults reached the "
           "engine; every batch answered by the CPU matcher, exactly, each "
           "fault counted\n", hit);
    for (uint32_t i = 0; i < n; ++i) xg_prepared_free(pq[i]);
}

/* One handle parses every text under each set of parse options in turn,
 * its QueryParser set up again at each change (shim_query.cc keeps one per
 * database); every query must be the one a fresh handle parses. */
static void parser_reuse(const char *const *paths, xg_handle *h)
{
    static const char *const more[] = {
        "the running foxes", "shock AND (wave OR waves) -heat",
        "\"boundary layers\" flows", "size:100..200 jet"};
    const int n_more = (int)(sizeof more / sizeof more[0]);
    int compared = 0;
    for (int round = 0; round < 2; ++round)
        for (int v = 0; v < 16; ++v) {
            struct xg_search_opts o = opts(v & 1, XG_ENGINE_CPU);
            o.stem_english = (v >> 1) & 1;
            o.stopper = (v >> 2) & 1 ? "english" : NULL;
            o.omega = (v >> 3) & 1;
            xg_handle *fresh;
            if (xg_handle_open(paths, 1, NULL, &fresh)) {
                CHECK(0, "parser reuse: open: %s", xg_last_error());
                return;
            }
            for (int i = 0; i < n_texts + n_more; ++i) {
                const char *t = i < n_texts ? texts[i] : more[i - n_texts];
                xg_xquery *a = NULL, *b = NULL;
                const int ra = xg_handle_parse(h, t, &o, &a);
                const int rb = xg_handle_parse(fresh, t, &o, &b);
                char *da = ra ? NULL : xg_shim_xquery_describe(a);
                char *db = rb ? NULL : xg_shim_xquery_describe(b);
                CHECK(ra == rb && (ra || (da && db && !strcmp(da, db))),
                      "parser reuse: options %d, '%s': %s against a fresh "
                      "parser's %s", v, t, da ? da : "error",
                      db ? db : "error");
                compared += !ra;
                free(da);
                free(db);
                if (a) xg_shim_xquery_free(a);
                if (b) xg_shim_xquery_free(b);
            }
            xg_handle_close(fresh);
        }
    printf("ok parser reuse: %d queries under 16 option sets, twice, each "
           "the fresh parser's\n", compared);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_router SAMPLE_DIR WORK_DIR\n");
        return 2;
    }
    char tsv[4096], db[4096], stale[4096], damaged[4096], bad[4096],
        qpath[4096], cmd[40000], model_gpu[4200], model_stock[4200],
        model_cpu[4200], model_cpu_dear[4200], model_learn[4200],
        model_cpu_or[4200], model_cpu_or_count[4200];
    snprintf(tsv, sizeof tsv, "%s/docs.tsv", argv[1]);
    snprintf(qpath, sizeof qpath, "%s/queries.tsv", argv[1]);
    snprintf(db, sizeof db, "%s/router-db", argv[2]);
    snprintf(stale, sizeof stale, "%s/router-stale", argv[2]);
    snprintf(damaged, sizeof damaged, "%s/router-damaged", argv[2]);
    snprintf(bad, sizeof bad, "%s/router-bad", argv[2]);
    snprintf(model_gpu, sizeof model_gpu, "%s/gpu.model", argv[2]);
    snprintf(model_stock, sizeof model_stock, "%s/stock.model", argv[2]);
    snprintf(model_cpu, sizeof model_cpu, "%s/cpu.model", argv[2]);
    snprintf(model_cpu_or, sizeof model_cpu_or, "%s/cpu-or.model", argv[2]);
    snprintf(model_cpu_or_count, sizeof model_cpu_or_count,
             "%s/cpu-or-count.model", argv[2]);
    snprintf(model_learn, sizeof model_learn, "%s/learn.model", argv[2]);
    snprintf(model_cpu_dear, sizeof model_cpu_dear, "%s/cpu-dear.model",
             argv[2]);
    mkdir(argv[2], 0755);
    if (make_db(tsv, db, 1) || make_db(tsv, stale, 0) ||
        write_model(model_gpu, 0, -1) || write_model(model_stock, 1, -1) ||
        write_model(model_cpu, 0, 1) || write_model(model_cpu_dear, 0, 0) ||
        write_text(model_learn, learn_model) ||
        write_text(model_cpu_or, cpu_or_model) ||
        write_text(model_cpu_or_count, cpu_or_count_model))
        return 1;
    /* Another database (its own uuid) with db's index: stale.  A copy
     * with a truncated index: damaged.  And a copy to break later. */
    snprintf(cmd, sizeof cmd, "cp '%s/xapian-gpu.idx' '%s/' && rm -rf '%s' "
             "'%s' && cp -r '%s' '%s' && cp -r '%s' '%s' && "
             "truncate -s 100 '%s/xapian-gpu.idx'", db, stale, damaged, bad,
             db, damaged, db, bad, damaged);
    if (system(cmd) != 0) return 1;

    /* Queries: plain words from the sample, a phrase, NOT, a prefix
     * negation and NEAR, then shapes the engines do not serve (XOR, a
     * NEAR of one term twice). */
    if ((n_texts = sample_queries(qpath, texts, NQ)) <= 0) return 1;
    strcpy(texts[n_texts++], "\"boundary layer\" flow");
    strcpy(texts[n_texts++], "shock NOT wave");
    strcpy(texts[n_texts++], "heat -transfer");
    strcpy(texts[n_texts++], "shock NEAR wave");
    n_plain = n_texts;
    strcpy(texts[n_texts++], "shock XOR wave");
    strcpy(texts[n_texts++], "shock NEAR shock");

    /* Stock's answers: the reference for every engine. */
    const char *paths[] = {db};
    xg_handle *h;
    if (xg_handle_open(paths, 1, NULL, &h)) {
        printf("FAIL open: %s\n", xg_last_error());
        return 1;
    }
    if (stock_answers(h, texts, n_texts, K, stock_or, stock_and)) return 1;
    if (xg_handle_open(paths, 1, NULL, &feat_h)) return 1;
    parser_reuse(paths, h);
    printf("test_router: %d plain queries and %d of other shapes, OR and "
           "AND, top %d; stock Xapian is the reference\n", n_plain,
           n_texts - n_plain, K);

    /* ---- No usable device (no twins; a build without CUDA) ---- */
    unsetenv("XG_GPU_TWINS");
    const char *why;
    int have_device = xg_handle_gpu_status(h, &why) == XG_OK;
    xg_router *r = matcher_router(h, NULL);
    if (!have_device) {
        matcher_pass("matcher gpu, no device", r, h, XG_ENGINE_GPU,
                     want_gpu_nodev, NULL);
        uint64_t rt[XG_ROUTE_COUNT] = {0};
        matcher_pass("matcher auto, no device", r, h, XG_ENGINE_AUTO,
                     want_auto_nodev, rt);
        CHECK(rt[XG_ROUTE_CPU] > 0 && rt[XG_ROUTE_STOCK_NO_DEVICE] > 0,
              "auto without a device: %llu to the CPU matcher, %llu to stock",
              (unsigned long long)rt[XG_ROUTE_CPU],
              (unsigned long long)rt[XG_ROUTE_STOCK_NO_DEVICE]);
        printf("ok matcher auto, no device: cpu %llu (ANDs, flat ORs), "
               "stock:no-device "
               "%llu\n", (unsigned long long)rt[XG_ROUTE_CPU],
               (unsigned long long)rt[XG_ROUTE_STOCK_NO_DEVICE]);
        context_pass("context auto, no device", db, XG_ENGINE_AUTO, NULL,
                     c_nodev, 0);
        context_pass("context gpu, no device", db, XG_ENGINE_GPU, NULL,
                     c_nodev, 0);
        context_pass("context auto, no device, the CPU matcher's OR "
                     "cheaper", db, XG_ENGINE_AUTO, model_cpu_or,
                     c_cpu_or_nodev, 0);
        CHECK(last_counts[XG_ROUTE_CPU] > 0, "no device, the CPU matcher's "
              "OR cheaper: no query to the CPU matcher");
        context_front_pass("remote auto, no device, the CPU matcher's "
                           "counted OR cheaper", db, XG_ENGINE_AUTO,
                           model_cpu_or_count, r_cpu_or_count_nodev, 0, 1, 1);
    } else {
        printf("skip the no-device checks: a device is usable (%s)\n",
               "the kernels run on it");
    }
    xg_router_close(r);
    xg_handle_close(h);

    /* ---- The twins: a usable "device" ---- */
    setenv("XG_GPU_TWINS", "1", 1);
    if (xg_handle_open(paths, 1, NULL, &h)) return 1;
    r = matcher_router(h, model_gpu);
    matcher_pass("matcher xapian", r, h, XG_ENGINE_XAPIAN, want_xapian, NULL);
    matcher_pass("matcher cpu", r, h, XG_ENGINE_CPU, want_cpu, NULL);
    uint64_t rt[XG_ROUTE_COUNT] = {0};
    matcher_pass("matcher gpu", r, h, XG_ENGINE_GPU, want_gpu, rt);
    CHECK(rt[XG_ROUTE_GPU] > 0, "engine gpu: no query on the GPU");
    matcher_pass("matcher auto, GPU cheaper", r, h, XG_ENGINE_AUTO,
                 want_auto_gpu, NULL);
    wildcard_pass(r, h);
    printf("ok matcher xapian, cpu, gpu (%llu gpu, %llu cpu), auto\n",
           (unsigned long long)rt[XG_ROUTE_GPU],
           (unsigned long long)rt[XG_ROUTE_CPU]);
    batch_fault(r, h);
    xg_router_close(r);
    r = matcher_router(h, model_stock);
    matcher_pass("matcher auto, stock cheaper", r, h, XG_ENGINE_AUTO,
                 want_auto_cheaper, NULL);
    xg_router_close(r);
    xg_handle_close(h);

    context_pass("context cpu", db, XG_ENGINE_CPU, NULL, c_cpu, 0);
    context_pass("context gpu", db, XG_ENGINE_GPU, NULL, c_gpu, 0);
    context_pass("context auto, GPU cheaper", db, XG_ENGINE_AUTO, model_gpu,
                 c_gpu, 0);
    context_pass("context auto, stock cheaper", db, XG_ENGINE_AUTO,
                 model_stock, c_cheaper, 0);
    /* Six rounds: the shapes the cost model keeps sending to stock go
     * there unplanned, each MSet still stock's and still stock:cheaper;
     * the phrase ANDs, which the CPU matcher takes, keep being planned. */
    context_front_pass("context auto, stock cheaper, six rounds", db,
                       XG_ENGINE_AUTO, model_stock, c_cheaper, 0, 0, 6);
    CHECK(last_skipped > 0, "six rounds of stock:cheaper: no query went to "
          "stock unplanned");
    printf("ok %llu queries to stock unplanned\n",
           (unsigned long long)last_skipped);
    dispatch_pass(db, "0", 1);
    dispatch_pass(db, "1", 1);
    dispatch_pass(db, "0", 4);
    dispatch_pass(db, "1", 4);
    dispatch_pass(db, "2", 4);
    context_pass("context gpu, a GPU fault on every batch", db,
                 XG_ENGINE_GPU, NULL, c_fault, 1);
    CHECK(last_counts[XG_ROUTE_STOCK_GPU_ERROR] >= (uint64_t)n_plain,
          "injected faults: only %llu counted as stock:gpu-error",
          (unsigned long long)last_counts[XG_ROUTE_STOCK_GPU_ERROR]);
    /* The Enquire front: a flat OR's top k on the CPU matcher where the
     * model prices it cheapest; never with XG_NO_CPU_OR=1. */
    context_pass("context auto, the CPU matcher's OR cheaper", db,
                 XG_ENGINE_AUTO, model_cpu_or, c_cpu_or, 0);
    CHECK(last_counts[XG_ROUTE_CPU] > 0, "context auto, the CPU matcher's "
          "OR cheaper: no query to the CPU matcher");
    setenv("XG_NO_CPU_OR", "1", 1);
    context_pass("context auto, XG_NO_CPU_OR=1", db, XG_ENGINE_AUTO,
                 model_cpu_or, c_no_cpu_or, 0);
    unsetenv("XG_NO_CPU_OR");
    /* serve's front: a flat OR's top k with its count where the
     * model prices that cheapest; through Enquire the top k's law
     * decides; never with XG_NO_CPU_OR=1. */
    context_front_pass("remote auto, the CPU matcher's counted OR cheaper",
                       db, XG_ENGINE_AUTO, model_cpu_or_count,
                       r_cpu_or_count, 0, 1, 1);
    CHECK(last_counts[XG_ROUTE_CPU] > 0, "remote auto, the counted OR "
          "cheaper: no query to the CPU matcher");
    context_pass("context auto, the counted OR cheaper, the top k dear", db,
                 XG_ENGINE_AUTO, model_cpu_or_count, c_cpu_or_count, 0);
    setenv("XG_NO_CPU_OR", "1", 1);
    context_front_pass("remote auto, XG_NO_CPU_OR=1", db, XG_ENGINE_AUTO,
                       model_cpu_or_count, c_cpu_or_count, 0, 1, 1);
    unsetenv("XG_NO_CPU_OR");
    /* serve's front: stock priced out, the CPU matcher's AND each way. */
    context_front_pass("remote auto, CPU matcher cheaper", db, XG_ENGINE_AUTO,
                       model_cpu, r_cpu_cheap, 0, 1, 1);
    CHECK(last_counts[XG_ROUTE_CPU] > 0 && last_counts[XG_ROUTE_GPU] > 0,
          "remote auto: ANDs to the CPU matcher, the rest to the GPU");
    context_front_pass("remote auto, CPU matcher dearer", db, XG_ENGINE_AUTO,
                       model_cpu_dear, r_cpu_dear, 0, 1, 1);
    CHECK(last_counts[XG_ROUTE_GPU] > last_counts[XG_ROUTE_CPU],
          "remote auto, CPU matcher dearer: the GPU answers");
    learning_pass(db, model_learn);

    /* ---- Stale and damaged indexes ---- */
    const char *spaths[] = {stale}, *dpaths[] = {damaged};
    if (xg_handle_open(spaths, 1, NULL, &h)) return 1;
    CHECK(xg_handle_index_rc(h) == XG_ERR_STALE, "stale index not refused "
          "as stale: %s", xg_handle_index_error(h));
    r = matcher_router(h, NULL);
    /* The stale copy holds the same documents: stock's answers hold. */
    matcher_pass("matcher auto, stale index", r, h, XG_ENGINE_AUTO,
                 want_stale, NULL);
    for (int e = XG_ENGINE_CPU; e <= XG_ENGINE_GPU; ++e)
        matcher_pass("matcher cpu/gpu, stale index", r, h, e, want_stale_err,
                     NULL);
    xg_router_close(r);
    xg_handle_close(h);
    context_pass("context auto, stale index", stale, XG_ENGINE_AUTO, NULL,
                 c_stale, 0);
    if (xg_handle_open(dpaths, 1, NULL, &h)) return 1;
    r = matcher_router(h, NULL);
    matcher_pass("matcher auto, damaged index", r, h, XG_ENGINE_AUTO,
                 want_damaged, NULL);
    xg_router_close(r);
    xg_handle_close(h);
    printf("ok stale and damaged indexes: stock answers, or the explicit "
           "engines say why\n");

    /* ---- A database broken under an open context ---- */
    {
        const char *bpaths[] = {bad};
        struct xg_context_opts co = XG_CONTEXT_DEFAULTS;
        co.engine = XG_ENGINE_CPU;
        xg_context *ctx;
        if (xg_context_open(bpaths, 1, NULL, &co, &ctx)) return 1;
        struct xg_search_opts o = opts(0, XG_ENGINE_AUTO);
        struct xg_result res;
        int route, rc = xg_context_search(ctx, texts[0], &o, 0, K, &res,
                                          &route);
        CHECK(rc == XG_OK && xg_test_same_hits(&res, &stock_or[0]), "bad db: before");
        if (!rc) xg_result_free(&res);
        /* Truncate every table under the open handles (same inodes). */
        snprintf(cmd, sizeof cmd, "for f in '%s'/*.glass; do : > \"$f\"; "
                 "done", bad);
        if (system(cmd) != 0) return 1;
        int errors = 0;
        for (int q = 0; q < n_texts; ++q) {
            rc = xg_context_search(ctx, texts[q], &o, 0, K, &res, &route);
            if (rc) {
                ++errors;
                CHECK(*xg_last_error(), "bad db: no message for rc %d", rc);
            } else {
                xg_result_free(&res);
            }
        }
        /* And a database removed after the open. */
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", bad);
        if (system(cmd) != 0) return 1;
        rc = xg_context_search(ctx, texts[1], &o, 0, K, &res, &route);
        if (!rc) xg_result_free(&res);
        else ++errors;
        CHECK(errors > 0, "bad db: every search succeeded on truncated "
              "tables");
        printf("ok broken database under an open context: %d searches "
               "returned a status code (last: %s), no exception escaped\n",
               errors, xg_last_error());
        xg_context_close(ctx);
    }

    xg_handle_close(feat_h);
    for (int q = 0; q < n_texts; ++q) {
        xg_result_free(&stock_or[q]);
        xg_result_free(&stock_and[q]);
    }
    printf("%d checks, %d failed\n", checks, failures);
    return failures ? 1 : 0;
}
