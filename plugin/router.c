/** @file router.c
 *  @brief The router (router.h): which engine answers each query, what
 *         happens when it cannot, and the count of why.
 *
 *  One decision (choose) for every front door, one fault rule (the
 *  functions after it), and the engines reached only through the handle
 *  (handle.h) and, for the context's threads, the dispatcher (dispatch.h).
 *  The decision table is in docs/plugin.md.
 *
 *  Query preparation and the CPU matcher only read the shared index, so
 *  they run in the calling thread; only the dispatcher's thread touches
 *  the base handle's GPU engine at the Enquire front.
 */
#include "router.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../gpu/runtime/clock.h"
#include "../gpu/runtime/error.h"
#include "../gpu/runtime/knobs.h"
#include "../gpu/runtime/threads.h"
#include "shapes.h"
#include "unserved.h"
#include "../gpu/runtime/tuning.h"
#include "../gpu/query/batch.h"
#include "../gpu/query/match_ref.h"
#include "cost_model.h"
#include "cpu_load.h"
#include "dispatch.h"

#define XG_ROUTE_STRIPES 16

struct xg_router {
    xg_handle *base;                /* owns the index and the GPU engine */
    struct xg_router_opts o;
    struct xg_cost_model model;
    struct xg_cost_learned learned; /* the model scaled by what is seen */
    struct xg_cpu_load load;        /* scales stock's one-thread time */
    sem_t cpu_slots;                /* xg_router_limit_cpu's searches */
    int cpu_limited;
    _Atomic uint32_t cpu_now, cpu_peak;
    int no_pressure;                /* XG_NO_PRESSURE=1 (knobs.h) */
    int no_cpu_or;                  /* XG_NO_CPU_OR=1 */
    pthread_mutex_t gpu_lock;       /* starting the dispatcher */
    struct xg_dispatch *dispatch;   /* XG_FRONT_ENQUIRE and _REMOTE */
    xg_handle *lanes[XG_DISPATCH_MAX_LANES];   /* the dispatcher's */
    uint32_t n_lanes;
    int dispatch_tried;
    _Atomic int dispatch_ready;     /* dispatch (or its absence) is final */
    _Atomic int gpu_lost;           /* the device failed for good */
    _Atomic uint64_t faults;
    struct xg_unserved unserved;    /* stock:unsupported, by reason */
    struct xg_shapes shapes;        /* the Enquire front's, engine auto */
    /* Route counts, striped so that threads counting every query do not
     * all write one cache line; summed when read. */
    struct {
        _Alignas(128) _Atomic uint64_t n[XG_ROUTE_COUNT];
    } routes[XG_ROUTE_STRIPES];
};

static _Atomic unsigned next_stripe;
static _Thread_local int thread_stripe = -1;

const char *xg_route_name(int route)
{
    static const char *const names[XG_ROUTE_COUNT] = {
        "gpu", "cpu", "stock:unsupported", "stock:stale", "stock:damaged",
        "stock:no-device", "stock:gpu-error", "stock:weighting",
        "stock:cheaper", "stock:deadline"};
    return route >= 0 && route < XG_ROUTE_COUNT ? names[route] : "?";
}

void xg_router_count(xg_router *r, int route)
{
    if (thread_stripe < 0)
        thread_stripe = (int)(atomic_fetch_add(&next_stripe, 1) %
                              XG_ROUTE_STRIPES);
    if (route >= 0 && route < XG_ROUTE_COUNT)
        atomic_fetch_add_explicit(&r->routes[thread_stripe].n[route], 1,
                                  memory_order_relaxed);
}

void xg_router_recount_unsupported(xg_router *r, int route, const char *why)
{
    xg_router_count(r, XG_ROUTE_STOCK_UNSUPPORTED);
    xg_router_note_unserved(r, why);
    if (route >= 0 && route < XG_ROUTE_COUNT)
        atomic_fetch_sub_explicit(&r->routes[thread_stripe].n[route], 1,
                                  memory_order_relaxed);
}

void xg_router_note_unserved(xg_router *r, const char *why)
{
    xg_unserved_note(&r->unserved, why);
}

void xg_router_unserved(xg_router *r, char *buf, size_t n)
{
    xg_unserved_format(&r->unserved, buf, n);
}

void xg_router_routes(const xg_router *r, uint64_t *counts)
{
    xg_router *m = (xg_router *)r;
    for (int i = 0; i < XG_ROUTE_COUNT; ++i) {
        counts[i] = 0;
        for (int s = 0; s < XG_ROUTE_STRIPES; ++s)
            counts[i] += atomic_load(&m->routes[s].n[i]);
    }
}

void xg_router_batches(xg_router *r, struct xg_router_batches *out)
{
    memset(out, 0, sizeof *out);
    if (!atomic_load(&r->dispatch_ready) || !r->dispatch) return;
    struct xg_dispatch_stats ds;
    xg_dispatch_stats(r->dispatch, &ds);
    out->batches = ds.batches;
    out->queries = ds.queries;
    out->inline_batches = ds.inline_batches;
    out->busy_seconds = ds.busy_seconds;
    out->lanes = r->n_lanes;
    /* Every lane runs the base's engine: its counters hold them all. */
    const struct xg_engine_stats *es = xg_handle_gpu_stats(r->base);
    if (es) {
        out->build_seconds = es->build_seconds;
        out->run_seconds = es->run_seconds;
        out->device_seconds = es->device_seconds;
        out->finish_seconds = es->finish_seconds;
    }
}

void xg_router_learn_stock(xg_router *r, const struct xg_prepared *pq,
                           double seconds)
{
    const struct xg_index *ix = xg_handle_index(r->base);
    if (!ix || !pq) return;
    struct xg_query_features f;
    xg_query_features_of(pq, ix, &f);
    xg_cost_learn(&r->learned, XG_COST_STOCK, f.is_and,
                  xg_cost_stock_seconds(&r->model, &f), seconds);
}

const struct xg_cost_learned *xg_router_learned(const xg_router *r)
{
    return &r->learned;
}

uint64_t xg_router_gpu_faults(const xg_router *r)
{
    return atomic_load(&((xg_router *)r)->faults);
}

const struct xg_router_opts *xg_router_options(const xg_router *r)
{
    return &r->o;
}

/* The cost model: the file named in the options (an error if unreadable),
 * else xapian-gpu.model beside the index if there is one, else built in. */
static int load_model(xg_router *r)
{
    xg_cost_model_default(&r->model);
    if (r->o.cost_model) return xg_cost_model_load(r->o.cost_model, &r->model);
    const struct xg_index *ix = xg_handle_index(r->base);
    if (!ix) return XG_OK;
    char *path = xg_cost_model_path(ix->path);
    if (!path) return XG_ERR_NOMEM;
    int rc = xg_cost_model_load(path, &r->model);
    /* No file: the default.  The searcher never read a model before AUTO
     * meant the cost model, so a bad one beside the index does not stop
     * it from opening: it keeps the default too. */
    if (rc == XG_ERR_IO || (rc && r->o.front == XG_FRONT_MATCHER)) {
        xg_cost_model_default(&r->model);
        rc = XG_OK;
    }
    free(path);
    return rc;
}

/* The dispatcher, started on first use; NULL if there is no usable GPU. */
static struct xg_dispatch *dispatcher(xg_router *r)
{
    /* Started once; after that every thread reads it without the lock. */
    if (atomic_load(&r->dispatch_ready)) return r->dispatch;
    pthread_mutex_lock(&r->gpu_lock);
    if (!r->dispatch_tried) {
        r->dispatch_tried = 1;
        const char *why;
        if (xg_handle_gpu_status(r->base, &why) == XG_OK) {
            /* A lane per engine slot: whichever is free takes the next
             * batch, and all share the engine's one copy of the index. */
            const uint32_t slots = xg_handle_gpu_slots(r->base);
            r->lanes[r->n_lanes++] = r->base;
            while (!r->o.one_lane && r->n_lanes < slots &&
                   r->n_lanes < XG_DISPATCH_MAX_LANES)
                r->lanes[r->n_lanes++] = r->base;
            struct xg_dispatch_opts o;
            memset(&o, 0, sizeof o);
            o.max_batch = 256;
            o.batch_work = XG_BATCH_WORK_DEFAULT;
            o.max_wait = r->o.max_wait;
            o.deadline = r->o.deadline;
            o.bm25 = r->o.bm25;
            (void)xg_dispatch_start(r->lanes, r->n_lanes, &o, &r->dispatch);
        }
    }
    struct xg_dispatch *d = r->dispatch;
    atomic_store(&r->dispatch_ready, 1);
    pthread_mutex_unlock(&r->gpu_lock);
    return d;
}

int xg_router_open(xg_handle *base, const struct xg_router_opts *o,
                   xg_router **out)
{
    *out = NULL;
    /* Aligned for the striped counters. */
    const size_t size = (sizeof(xg_router) + 127) / 128 * 128;
    xg_router *r = aligned_alloc(128, size);
    if (!r) return xg_set_error(XG_ERR_NOMEM, "out of memory");
    memset(r, 0, size);
    r->base = base;
    r->o = *o;
    xg_cpu_load_init(&r->load, NULL);
    r->no_pressure = xg_knob_no_pressure();
    r->no_cpu_or = xg_knob_no_cpu_or();
    pthread_mutex_init(&r->gpu_lock, NULL);
    xg_unserved_init(&r->unserved);
    int rc = load_model(r);
    r->o.cost_model = NULL; /* the caller's string: read, not kept */
    if (rc) {
        xg_router_close(r);
        return rc;
    }
    /* Load the index onto the GPU now, not in the first query's wait (no
     * device is not an error: those queries go elsewhere). */
    if (o->front != XG_FRONT_MATCHER && o->engine != XG_ENGINE_CPU &&
        xg_handle_index(base))
        dispatcher(r);
    *out = r;
    return XG_OK;
}

void xg_router_close(xg_router *r)
{
    if (!r) return;
    xg_dispatch_stop(r->dispatch);
    if (r->cpu_limited) sem_destroy(&r->cpu_slots);
    pthread_mutex_destroy(&r->gpu_lock);
    xg_unserved_destroy(&r->unserved);
    free(r);
}

/* ---- Searches on the host's CPU ---------------------------------------- */

void xg_router_limit_cpu(xg_router *r, unsigned n)
{
    if (n && !r->cpu_limited && !sem_init(&r->cpu_slots, 0, n))
        r->cpu_limited = 1;
}

void xg_router_cpu_enter(xg_router *r)
{
    /* Uncapped, nothing is counted: every search would write one line. */
    if (!r->cpu_limited) return;
    while (sem_wait(&r->cpu_slots) && errno == EINTR) {
    }
    const uint32_t now = atomic_fetch_add(&r->cpu_now, 1) + 1;
    uint32_t peak = atomic_load(&r->cpu_peak);
    while (now > peak &&
           !atomic_compare_exchange_weak(&r->cpu_peak, &peak, now)) {
    }
}

void xg_router_cpu_leave(xg_router *r)
{
    if (!r->cpu_limited) return;
    atomic_fetch_sub(&r->cpu_now, 1);
    sem_post(&r->cpu_slots);
}

int xg_router_learn_due(void)
{
    static _Thread_local unsigned tick;
    return (++tick & 15) == 0;
}

uint32_t xg_router_cpu_peak(const xg_router *r)
{
    return atomic_load(&((xg_router *)r)->cpu_peak);
}

/* ---- The decision ---------------------------------------------------- */

/* Whether the GPU engine can take a query now: at the Enquire front the
 * dispatcher runs and the device was not lost; at the matcher front h's
 * engine opens (on first use). */
/* 1: the GPU batch runs pq's position filters (an AND of terms; the
 * positions' residency is the engine's to check). */
static int gpu_filters(const struct xg_prepared *pq)
{
    const struct xg_engine_query eq = {&pq->q, pq->term, pq->plans, 0,
                                       pq->stats};
    return xg_batch_path(&eq, 1) == XG_DPATH_INTERSECT;
}

/* 1: q is the general form only for its synonyms: an AND at its root
 * over terms, ORs, synonyms and scale weights, with no phrase, NEAR,
 * AND_NOT, AND_MAYBE or FILTER (whose moves the direct matcher does not
 * make). */
static int synonym_and(const struct xg_query *q)
{
    if (q->op != XG_QOP_TREE || !q->n_syns || !q->n_nodes ||
        q->nodes[q->n_nodes - 1].kind != XG_QN_AND)
        return 0;
    for (uint32_t i = 0; i < q->n_nodes; ++i) {
        const uint16_t k = q->nodes[i].kind;
        if (k != XG_QN_LEAF && k != XG_QN_OR && k != XG_QN_AND &&
            k != XG_QN_SYN && k != XG_QN_SCALE)
            return 0;
    }
    return 1;
}

static int device_usable(xg_router *r, xg_handle *h)
{
    if (r->o.front != XG_FRONT_MATCHER)
        return !atomic_load_explicit(&r->gpu_lost, memory_order_relaxed) &&
               dispatcher(r) != NULL;
    const char *why;
    return xg_handle_gpu_status(h, &why) == XG_OK;
}

/* The GPU's predicted latency for a query of features f: behind the
 * dispatcher's queue at the Enquire front, plus the wait beyond the
 * model that recent queries saw (which also corrects the model's price of
 * the GPU itself); an idle GPU at the matcher front. */
static double gpu_seconds(xg_router *r, const struct xg_query_features *f,
                          double *excess)
{
    *excess = 0;
    if (r->o.front != XG_FRONT_MATCHER && r->dispatch) {
        struct xg_dispatch_load l;
        xg_dispatch_load(r->dispatch, &l);
        *excess = l.excess > 0 ? l.excess : 0;
        return xg_cost_gpu_seconds(&r->model, f, l.queued_work, l.batch_work,
                                   l.running, l.batch_seconds, r->o.max_wait);
    }
    return xg_cost_gpu_seconds(&r->model, f, 0, 0, 0, 0, r->o.max_wait);
}

/* The CPU matcher's price of a flat OR at the model's 90th percentile,
 * one thread: through Enquire its top k without the count plus the
 * accelerated query's Enquire; at the other fronts its top k with the
 * exact count (the answer goes out as it is). */
static double cpu_or_p90(const xg_router *r,
                         const struct xg_query_features *f)
{
    return (r->o.front == XG_FRONT_ENQUIRE
                ? xg_cost_cpu_or_enquire_p90(&r->model, f)
                : xg_cost_cpu_seconds_p90(&r->model, f, 1)) *
           xg_cost_learned_factor(&r->learned, XG_COST_CPU, 0);
}

/* A flat OR the CPU matcher answers faster than stock at the model's 90th
 * percentile.  On the real text its top k ran at 3.6-3.8x stock's rate
 * through Enquire, and with the exact count at 2.6x (docs/architecture.md,
 * "The top k without the count"; docs/plugin.md). */
static int cpu_or_cheaper(const xg_router *r, const struct xg_prepared *pq,
                          const struct xg_query_features *f)
{
    if (r->no_cpu_or || f->is_and ||
        !xg_match_top_prunes(&pq->q, &r->o.bm25))
        return 0;
    return cpu_or_p90(r, f) <
           xg_cost_stock_seconds_p90(&r->model, f) *
               xg_cost_learned_factor(&r->learned, XG_COST_STOCK, 0);
}

/* Which engine answers pq (its terms prepared; the index usable), asked
 * for `engine` through h.  Returns XG_ROUTE_GPU, XG_ROUTE_CPU or a stock
 * route; *gpu_s is the GPU's predicted latency when it is the GPU, and
 * gpu_s NULL where the caller has no use for it (engine GPU then skips
 * pricing the query). */
static int choose(xg_router *r, xg_handle *h, const struct xg_prepared *pq,
                  int engine, struct xg_query_features *fp, double *gpu_s)
{
    struct xg_query_features fl, *f = fp ? fp : &fl;
    double price = 0;
    if (gpu_s) *gpu_s = 0;
    if (engine == XG_ENGINE_XAPIAN) return XG_ROUTE_STOCK_ASKED;
    if (engine == XG_ENGINE_CPU) return XG_ROUTE_CPU;
    /* Engine gpu asked for the route alone needs neither the query's
     * features nor its price. */
    if (engine != XG_ENGINE_GPU || fp || gpu_s)
        xg_query_features_of(pq, xg_handle_index(h), f);
    if (!device_usable(r, h)) {
        if (engine == XG_ENGINE_GPU) return XG_ROUTE_STOCK_NO_DEVICE;
        /* AUTO without a device: the CPU matcher where it is measured
         * faster than stock, an AND whose top k is the answer (16 threads,
         * docs/benchmarks.md: 1.45x stock at 10^6 documents, 1.48x at
         * 10^5).  Through Enquire the accelerated query costs about
         * stock's own on an AND (plugin-cpu 0.77x stock on cheap
         * real-text ANDs, benchmarks-archive.md), so stock.  A flat OR
         * where the model prices the CPU matcher below stock. */
        if (f->is_and && r->o.front != XG_FRONT_ENQUIRE) return XG_ROUTE_CPU;
        return cpu_or_cheaper(r, pq, f) ? XG_ROUTE_CPU
                                        : XG_ROUTE_STOCK_NO_DEVICE;
    }
    /* The GPU runs the phrase and NEAR filters of an AND of terms (where
     * the positions are resident; the batch refuses the query otherwise,
     * and the CPU matcher answers it).  Other position filters, AND_NOT
     * and the general form skip the batch: the CPU matcher for ANDs it
     * walks directly, stock for the rest.  At 16 threads on real text
     * (docs/benchmarks.md) the direct matcher ran phrase ANDs at
     * 1.06-1.59x stock and phrase ORs at 0.47-0.61x; the postlist-tree
     * matcher (the general form, phrases in an AND's ORs) ran operator
     * queries at 0.6x stock as ORs, 1.0x as ANDs and 0.5x in Omega's
     * form. */
    const int filtered = pq->q.n_filters != 0;
    /* An AND of terms, ORs and synonyms (Omega's form with wildcards):
     * the tree matcher moves it as the direct matcher walks an AND, and
     * ran such queries at 2.6x stock (docs/benchmarks.md, "Phrases and
     * operators at every front").  Through Enquire the plugin ran them
     * at 0.4x: stock there. */
    if (engine == XG_ENGINE_AUTO && r->o.front != XG_FRONT_ENQUIRE &&
        synonym_and(&pq->q))
        return XG_ROUTE_CPU;
    if (pq->q.n_negated || pq->q.op == XG_QOP_TREE ||
        (filtered && !gpu_filters(pq))) {
        if (engine == XG_ENGINE_GPU ||
            (f->is_and && !xg_match_needs_tree(&pq->q)))
            return XG_ROUTE_CPU;
        return XG_ROUTE_STOCK_CHEAPER;
    }
    if (engine == XG_ENGINE_GPU && !gpu_s) return XG_ROUTE_GPU;
    double excess;
    price = gpu_seconds(r, f, &excess);
    if (gpu_s) *gpu_s = price;
    if (engine == XG_ENGINE_GPU) return XG_ROUTE_GPU;
    /* AUTO: the cheap side's one-thread time at the model's 90th
     * percentile, stretched when more threads want the cores than there
     * are.  The cheap side is stock, or for an AND at the remote front or
     * with position filters the exact CPU matcher (faster than stock
     * there, and at the remote front its answer needs no Xapian
     * postlist). */
    const double pressure =
        r->no_pressure ? 1 : xg_cpu_load_pressure(&r->load);
    const int cpu_and =
        (r->o.front == XG_FRONT_REMOTE || filtered) && f->is_and;
    const int cpu_or = cpu_or_cheaper(r, pq, f);
    const int cpu_side = cpu_and || cpu_or;
    const double cheap =
        cpu_and  ? xg_cost_cpu_seconds_p90(&r->model, f, 1) *
                       xg_cost_learned_factor(&r->learned, XG_COST_CPU, 1)
        : cpu_or ? cpu_or_p90(r, f)
                 : xg_cost_stock_seconds_p90(&r->model, f) *
                       xg_cost_learned_factor(&r->learned, XG_COST_STOCK,
                                              f->is_and);
    /* The excess is mostly the GPU caller's wait for a core when more
     * threads want them than there are: the wait stock's time is already
     * stretched by, so counted once, not twice. */
    const double stretch = pressure > 1 ? pressure : 1;
    if (cheap * stretch < price + excess / stretch)
        return cpu_side ? XG_ROUTE_CPU : XG_ROUTE_STOCK_CHEAPER;
    return XG_ROUTE_GPU;
}

/* The route for a query that cannot be prepared (rc): an unusable index
 * says why; otherwise a shape the engines do not serve, counted under
 * the shim's reason. */
static int unprepared_route(xg_router *r, xg_handle *h, int rc)
{
    if (xg_handle_index(h)) {
        xg_router_note_unserved(r, xg_last_error());
        return XG_ROUTE_STOCK_UNSUPPORTED;
    }
    (void)rc;
    return xg_handle_index_rc(h) == XG_ERR_STALE ? XG_ROUTE_STOCK_STALE
                                                 : XG_ROUTE_STOCK_DAMAGED;
}

static int is_stock(int route)
{
    return route != XG_ROUTE_GPU && route != XG_ROUTE_CPU;
}

/* A GPU fault on a batch: counted; a device in an unknown state is not
 * used again (the handle closed its engine; the dispatcher's is the
 * base's). */
static void note_fault(xg_router *r, int rc)
{
    atomic_fetch_add(&r->faults, 1);
    if (rc == XG_ERR_CUDA || rc == XG_ERR_NODEVICE)
        atomic_store(&r->gpu_lost, 1);
}

/* ---- The Enquire front (the context) --------------------------------- */

int xg_router_shape_of(int is_term, int is_and, int is_or, uint32_t n,
                       int flat)
{
    return xg_shape_of(is_term, is_and, is_or, n, flat);
}

int xg_router_shapes_on(const xg_router *r)
{
    return r->o.engine == XG_ENGINE_AUTO && r->o.front == XG_FRONT_ENQUIRE;
}

int xg_router_shape_skip(xg_router *r, int shape)
{
    if (!xg_router_shapes_on(r) || !xg_shapes_skip(&r->shapes, shape))
        return 0;
    xg_router_count(r, XG_ROUTE_STOCK_CHEAPER);
    return 1;
}

void xg_router_shape_note(xg_router *r, int shape, int route)
{
    if (!xg_router_shapes_on(r)) return;
    /* The routes the cost model chose (a GPU query withdrawn at its
     * deadline was one). */
    if (route == XG_ROUTE_GPU || route == XG_ROUTE_CPU ||
        route == XG_ROUTE_STOCK_DEADLINE)
        xg_shapes_note(&r->shapes, shape, 1);
    else if (route == XG_ROUTE_STOCK_CHEAPER)
        xg_shapes_note(&r->shapes, shape, 0);
}

uint64_t xg_router_shape_skipped(xg_router *r)
{
    return atomic_load_explicit(&r->shapes.skipped, memory_order_relaxed);
}

/* quiet: a search answered ahead (xg_router_answer_ahead) notes no
 * reason a query went to stock; its caller discards such an answer. */
static int answer(xg_router *r, const xg_xquery *xq,
                  struct xg_prepared *given, uint64_t k64, int weighting_ok,
                  const struct xg_weigh_stats *ws, struct xg_result *out,
                  int *route, int quiet)
{
    if (!weighting_ok) {
        *route = XG_ROUTE_STOCK_WEIGHTING;
        return XG_OK;
    }
    if (k64 > 0xffffffffu) {
        *route = XG_ROUTE_STOCK_UNSUPPORTED;
        if (!quiet) xg_router_note_unserved(r, "an MSet of 2^32 or more");
        return XG_OK;
    }
    const uint32_t k = (uint32_t)k64;
    struct xg_prepared *pq = given;
    int rc = pq ? XG_OK : xg_handle_prepare_terms(r->base, xq, &pq);
    if (rc == XG_ERR_NOMEM) return rc;
    if (rc) {
        /* No usable index, or a query the shim could not read: stock. */
        *route = unprepared_route(r, r->base, rc);
        return XG_OK;
    }
    pq->stats = ws;
    double gpu_s;
    /* choose() fills it unless the engine is fixed (then nothing learns). */
    struct xg_query_features f;
    memset(&f, 0, sizeof f);
    *route = choose(r, r->base, pq, r->o.engine, &f, &gpu_s);
    /* Plans only for the queries the engines will run. */
    if (!is_stock(*route) && (rc = xg_handle_prepare_plans(r->base, pq))) {
        if (!given) xg_prepared_free(pq);
        if (rc == XG_ERR_NOMEM) return rc;
        *route = XG_ROUTE_STOCK_UNSUPPORTED;
        if (!quiet) xg_router_note_unserved(r, xg_last_error());
        return XG_OK;
    }
    int st = XG_OK;
    if (*route == XG_ROUTE_GPU) {
        int outcome;
        rc = xg_dispatch_submit(r->dispatch, pq, k, xg_cost_gpu_work(&f),
                                gpu_s, out, &st, &outcome);
        if (!rc && outcome == XG_DISPATCH_WITHDRAWN)
            *route = XG_ROUTE_STOCK_DEADLINE;
        else if (!rc && outcome == XG_DISPATCH_STOPPED)
            *route = XG_ROUTE_STOCK_NO_DEVICE;
        else if (!rc && st == XG_ERR_UNSUPPORTED)
            *route = XG_ROUTE_CPU; /* the GPU cannot serve it exactly */
        else if (!rc && st != XG_OK) {
            note_fault(r, st);     /* the GPU failed: stock answers */
            *route = XG_ROUTE_STOCK_GPU_ERROR;
        }
    }
    if (!rc && *route == XG_ROUTE_CPU) {
        /* Learned from where the planner priced it (f filled). */
        const int flat_or = r->o.engine == XG_ENGINE_AUTO && !f.is_and &&
                            xg_match_top_prunes(&pq->q, &r->o.bm25);
        const int timed = (f.is_and || flat_or) && xg_router_learn_due();
        xg_router_cpu_enter(r);
        const double t0 = timed ? xg_thread_cpu_now() : 0;
        /* Through Enquire, Xapian reports the bounds: no count needed. */
        st = r->o.front == XG_FRONT_ENQUIRE
                 ? xg_handle_run_cpu_top(r->base, pq, &r->o.bm25, k, out)
                 : xg_handle_run_cpu(r->base, pq, &r->o.bm25, k, out);
        const double t1 = timed ? xg_thread_cpu_now() : 0;
        xg_router_cpu_leave(r);
        if (timed && !st)
            xg_cost_learn(&r->learned, XG_COST_CPU, f.is_and,
                          xg_cost_cpu_seconds(&r->model, &f,
                                              r->o.front != XG_FRONT_ENQUIRE),
                          t1 - t0);
        if (st == XG_ERR_UNSUPPORTED) {
            *route = XG_ROUTE_STOCK_UNSUPPORTED;
            if (!quiet) xg_router_note_unserved(r, xg_last_error());
        } else if (st == XG_ERR_NOMEM) {
            rc = st;
        }
        else if (st) *route = XG_ROUTE_STOCK_GPU_ERROR; /* an engine error */
    }
    if (!given) xg_prepared_free(pq);
    if (!rc && is_stock(*route)) {
        xg_result_free(out);
        memset(out, 0, sizeof *out);
    }
    return rc;
}

static int answer_once(xg_router *r, const xg_xquery *xq,
                       struct xg_prepared *pq, uint64_t k, int weighting_ok,
                       const struct xg_weigh_stats *ws, struct xg_result *out,
                       int *route, int ahead)
{
    memset(out, 0, sizeof *out);
    *route = XG_ROUTE_STOCK_UNSUPPORTED;
    int rc = answer(r, xq, pq, k, weighting_ok, ws, out, route, ahead);
    if (rc && rc != XG_ERR_NOMEM) {
        /* An engine's error: stock answers. */
        xg_result_free(out);
        memset(out, 0, sizeof *out);
        *route = XG_ROUTE_STOCK_GPU_ERROR;
        rc = XG_OK;
    }
    if (!rc && !ahead) xg_router_count(r, *route);
    return rc;
}

int xg_router_answer(xg_router *r, const xg_xquery *xq,
                     struct xg_prepared *pq, uint64_t k, int weighting_ok,
                     const struct xg_weigh_stats *ws, struct xg_result *out,
                     int *route)
{
    return answer_once(r, xq, pq, k, weighting_ok, ws, out, route, 0);
}

int xg_router_answer_ahead(xg_router *r, const xg_xquery *xq,
                           struct xg_prepared *pq, uint64_t k,
                           const struct xg_weigh_stats *ws,
                           struct xg_result *out, int *route)
{
    return answer_once(r, xq, pq, k, 1, ws, out, route, 1);
}

/* ---- The matcher front (searcher, commands) -------------------------- */

/* What the threads of cpu_rest share: the queries to answer, taken in
 * turn (their costs differ by orders of magnitude). */
struct cpu_job {
    xg_handle *h;
    struct xg_prepared *const *pqs;
    const uint32_t *ks, *todo;
    uint32_t k, n_todo;
    const struct xg_bm25_params *p;
    struct xg_result *out;
    int *status;
    _Atomic uint32_t next;
};

static void *cpu_share(void *arg)
{
    struct cpu_job *j = *(struct cpu_job **)arg;
    for (uint32_t t; (t = atomic_fetch_add(&j->next, 1)) < j->n_todo;) {
        const uint32_t i = j->todo[t];
        j->status[i] = xg_handle_run_cpu(j->h, j->pqs[i], j->p,
                                         j->ks ? j->ks[i] : j->k, &j->out[i]);
    }
    return NULL;
}

/* The CPU matcher for queries the GPU did not answer (status[i] != XG_OK
 * on entry, route[i] XG_ROUTE_CPU): status[i] becomes its answer's.  They
 * run on every core: on one thread, a batch's phrase ORs held `bench
 * --engine gpu` to an eighth of the CPU engine's own rate
 * (docs/benchmarks-archive.md, 2026-11-27, "phrases and operators
 * before the plugin and serve were benchmarked").
 * A fault of the CPU
 * matcher (not XG_ERR_UNSUPPORTED) frees every out[] and is returned. */
static int cpu_rest(xg_handle *h, struct xg_prepared *const *pqs,
                    const uint32_t *ks, uint32_t k, uint32_t n,
                    const struct xg_bm25_params *p, struct xg_result *out,
                    int *status, const int *route)
{
    /* Every query of the matcher front passes here: no allocation for
     * the few of a single search. */
    uint32_t small[16], m = 0;
    uint32_t *todo = n <= 16 ? small : malloc(n * sizeof *todo);
    struct cpu_job job = {h, pqs, ks, todo, k, 0, p, out, status, 0};
    if (!todo) return xg_set_error(XG_ERR_NOMEM, "out of memory");
    for (uint32_t i = 0; i < n; ++i)
        if (route[i] == XG_ROUTE_CPU && status[i] != XG_OK) todo[m++] = i;
    job.n_todo = m;
    struct cpu_job *jp[XG_THREADS_MAX_SHARES];
    /* One query (the one-at-a-time path) on this thread: waking the pool
     * would cost it more than it saves. */
    const uint32_t shares =
        m < 2 ? 1 : xg_threads_shares(xg_threads_cores(), m - 1, 0);
    for (uint32_t s = 0; s < shares; ++s) jp[s] = &job;
    if (m) xg_threads_run(shares, cpu_share, jp, sizeof *jp);
    int rc = XG_OK;
    for (uint32_t t = 0; t < m && !rc; ++t)
        if (status[todo[t]] != XG_OK && status[todo[t]] != XG_ERR_UNSUPPORTED)
            rc = status[todo[t]];
    if (todo != small) free(todo);
    if (rc)
        for (uint32_t j = 0; j < n; ++j)
            if (status[j] == XG_OK) {
                xg_result_free(&out[j]);
                status[j] = XG_ERR_UNSUPPORTED;
            }
    return rc;
}

/* One GPU engine batch of n queries on h, then the fault rule: a query the
 * engine cannot serve exactly goes to the CPU matcher; a fault sends the
 * whole batch to the CPU matcher, counted.  route[] in/out. */
static int gpu_batch(xg_router *r, xg_handle *h, struct xg_prepared *const *pqs,
                     const uint32_t *ks, uint32_t k, uint32_t n,
                     const struct xg_bm25_params *p, struct xg_result *out,
                     int *status, int *route)
{
    int rc = xg_handle_run_gpu(h, pqs, ks, k, n, p, out, NULL, status);
    if (rc) note_fault(r, rc);
    for (uint32_t i = 0; i < n; ++i)
        route[i] = status[i] == XG_OK ? XG_ROUTE_GPU : XG_ROUTE_CPU;
    return cpu_rest(h, pqs, ks, k, n, p, out, status, route);
}

int xg_router_route(xg_router *r, const struct xg_prepared *pq, int engine)
{
    /* On the base, whose engine runs the batches: asked on a thread's
     * clone, the device check would open a GPU engine of the clone's
     * own (the index again on the device for every thread). */
    return choose(r, r->base, pq, engine, NULL, NULL);
}

int xg_router_run_batch(xg_router *r, xg_handle *h,
                        struct xg_prepared *const *pqs,
                        const xg_xquery *const *xqs, const uint32_t *ks,
                        uint32_t k, uint32_t n, int engine,
                        const struct xg_bm25_params *p,
                        struct xg_result *out, int *status, int *route_out)
{
    if (engine < XG_ENGINE_CPU || engine > XG_ENGINE_AUTO)
        return xg_set_error(XG_ERR_ARG, "batch: engine must be cpu, gpu or "
                            "auto, not %d", engine);
    int one, *route = route_out;
    if (!route && !(route = n > 1 ? malloc(n * sizeof *route) : &one))
        return xg_set_error(XG_ERR_NOMEM, "out of memory");
    int rc = XG_OK;
    if (engine == XG_ENGINE_GPU) {
        const char *why;
        int grc = xg_handle_gpu_status(h, &why);
        if (!grc) {
            /* The throughput path: the whole batch, as given, to the
             * engine. */
            rc = gpu_batch(r, h, pqs, ks, k, n, p, out, status, route);
        } else if (!xg_router_gpu_faults(r)) {
            /* Asked for the GPU and there never was one: say so. */
            rc = grc;
        } else {
            /* The GPU failed earlier: the CPU matcher goes on. */
            for (uint32_t i = 0; i < n; ++i) {
                status[i] = XG_ERR_UNSUPPORTED;
                route[i] = XG_ROUTE_CPU;
            }
            rc = cpu_rest(h, pqs, ks, k, n, p, out, status, route);
        }
    } else {
        /* CPU, or AUTO: each query where choose() sends it; the GPU's in
         * one engine batch. */
        uint32_t n_gpu = 0;
        struct xg_prepared **gq = NULL;
        uint32_t *gk = NULL, *gi = NULL;
        for (uint32_t i = 0; i < n; ++i) {
            status[i] = XG_ERR_UNSUPPORTED;
            memset(&out[i], 0, sizeof out[i]);
            route[i] = choose(r, h, pqs[i], engine, NULL, NULL);
            if (route[i] == XG_ROUTE_GPU) ++n_gpu;
        }
        if (n_gpu && (!(gq = malloc(n_gpu * sizeof *gq)) ||
                      !(gk = malloc(n_gpu * sizeof *gk)) ||
                      !(gi = malloc(n_gpu * sizeof *gi))))
            rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
        if (!rc && n_gpu) {
            struct xg_result *gres = calloc(n_gpu, sizeof *gres);
            int *gst = calloc(n_gpu, sizeof *gst), *grt = calloc(n_gpu, sizeof *grt);
            uint32_t m = 0;
            if (!gres || !gst || !grt) {
                rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
            } else {
                for (uint32_t i = 0; i < n; ++i)
                    if (route[i] == XG_ROUTE_GPU) {
                        gq[m] = pqs[i];
                        gk[m] = ks ? ks[i] : k;
                        gi[m++] = i;
                    }
                rc = gpu_batch(r, h, gq, gk, k, m, p, gres, gst, grt);
                for (uint32_t j = 0; !rc && j < m; ++j) {
                    out[gi[j]] = gres[j];
                    status[gi[j]] = gst[j];
                    route[gi[j]] = grt[j];
                }
            }
            free(gres);
            free(gst);
            free(grt);
        }
        if (!rc) rc = cpu_rest(h, pqs, ks, k, n, p, out, status, route);
        for (uint32_t i = 0; !rc && i < n; ++i) {
            if (!is_stock(route[i])) continue;
            if (xqs && xqs[i]) {
                status[i] = xg_handle_run_stock(h, xqs[i], p, ks ? ks[i] : k,
                                                &out[i]);
                if (status[i] && status[i] != XG_ERR_UNSUPPORTED &&
                    status[i] != XG_ERR_ARG)
                    rc = status[i];
            }
        }
        if (rc)
            for (uint32_t i = 0; i < n; ++i)
                if (status[i] == XG_OK) xg_result_free(&out[i]);
        free(gq);
        free(gk);
        free(gi);
    }
    /* A query neither engine serves is counted as stock's. */
    for (uint32_t i = 0; !rc && i < n; ++i) {
        if (status[i] == XG_ERR_UNSUPPORTED && !is_stock(route[i])) {
            route[i] = XG_ROUTE_STOCK_UNSUPPORTED;
            xg_router_note_unserved(r, "refused by the batch");
        }
        xg_router_count(r, route[i]);
    }
    if (route != route_out && route != &one) free(route);
    return rc;
}

int xg_router_search(xg_router *r, xg_handle *h, const xg_xquery *xq,
                     int engine, const struct xg_bm25_params *p, uint32_t k,
                     struct xg_result *out, int *route_out)
{
    int route_local, *route = route_out ? route_out : &route_local;
    memset(out, 0, sizeof *out);
    *route = XG_ROUTE_STOCK_ASKED;
    if (engine == XG_ENGINE_XAPIAN) return xg_handle_run_stock(h, xq, p, k, out);
    if (engine < XG_ENGINE_CPU || engine > XG_ENGINE_AUTO)
        return xg_set_error(XG_ERR_ARG, "unknown engine %d", engine);
    struct xg_prepared *pq;
    int rc = xg_handle_prepare_terms(h, xq, &pq);
    if (rc) {
        /* An explicit engine says why it cannot; AUTO lets stock answer. */
        if (engine != XG_ENGINE_AUTO || rc == XG_ERR_NOMEM) return rc;
        *route = unprepared_route(r, h, rc);
        xg_router_count(r, *route);
        return xg_handle_run_stock(h, xq, p, k, out);
    }
    *route = choose(r, h, pq, engine, NULL, NULL);
    if (!is_stock(*route) && (rc = xg_handle_prepare_plans(h, pq))) {
        xg_prepared_free(pq);
        if (engine != XG_ENGINE_AUTO || rc == XG_ERR_NOMEM) return rc;
        *route = XG_ROUTE_STOCK_UNSUPPORTED;
        xg_router_note_unserved(r, xg_last_error());
        xg_router_count(r, *route);
        return xg_handle_run_stock(h, xq, p, k, out);
    }
    if (*route == XG_ROUTE_STOCK_NO_DEVICE && engine == XG_ENGINE_GPU) {
        /* The batch entry says why there is no GPU, or, after a GPU
         * fault, lets the CPU matcher go on. */
        *route = XG_ROUTE_GPU;
        if ((rc = xg_handle_prepare_plans(h, pq))) {
            xg_prepared_free(pq);
            return rc;
        }
    }
    int st = XG_OK;
    if (*route == XG_ROUTE_GPU) {
        rc = xg_router_run_batch(r, h, &pq, NULL, NULL, k, 1, XG_ENGINE_GPU,
                                 p, out, &st, route);
        if (!rc) rc = st;
    } else if (*route == XG_ROUTE_CPU) {
        rc = xg_handle_run_cpu(h, pq, p, k, out);
        if (rc == XG_ERR_UNSUPPORTED) {
            *route = XG_ROUTE_STOCK_UNSUPPORTED;
            xg_router_note_unserved(r, xg_last_error());
        }
        if (!rc || rc == XG_ERR_UNSUPPORTED) xg_router_count(r, *route);
    } else {
        xg_router_count(r, *route);
    }
    xg_prepared_free(pq);
    if (rc == XG_ERR_UNSUPPORTED && engine == XG_ENGINE_AUTO) {
        *route = XG_ROUTE_STOCK_UNSUPPORTED;
        rc = XG_OK;
    }
    if (!rc && is_stock(*route))
        return xg_handle_run_stock(h, xq, p, k, out);
    return rc;
}

static int search_text_op(xg_router *r, xg_handle *h, const char *text,
                          const struct xg_search_opts *o,
                          struct xg_result *out, int *route)
{
    xg_xquery *xq = NULL;
    memset(out, 0, sizeof *out);
    int rc = xg_handle_parse(h, text, o, &xq);
    if (!rc)
        rc = xg_router_search(r, h, xq, o->engine, &o->bm25, o->k, out, route);
    if (xq) xg_shim_xquery_free(xq);
    return rc;
}

int xg_router_search_text(xg_router *r, xg_handle *h, const char *text,
                          const struct xg_search_opts *o,
                          struct xg_result *out, int *route)
{
    if (o->default_and != 2) return search_text_op(r, h, text, o, out, route);
    /* AND+OR: the OR query only when the AND one finds fewer than k. */
    struct xg_search_opts and_o = *o, or_o = *o;
    and_o.default_and = 1;
    or_o.default_and = 0;
    int rc = search_text_op(r, h, text, &and_o, out, route);
    if (rc || out->n_hits >= o->k) return rc;
    xg_result_free(out);
    return search_text_op(r, h, text, &or_o, out, route);
}

int xg_router_andor_finish(xg_router *r, xg_handle *h,
                           const char *const *texts, uint32_t n,
                           const struct xg_search_opts *o,
                           struct xg_result *res, int *status)
{
    if (o->default_and != 2) return XG_OK;
    struct xg_search_opts or_o = *o;
    or_o.default_and = 0;
    struct xg_prepared **pq = calloc(n ? n : 1, sizeof *pq);
    xg_xquery **xq = calloc(n ? n : 1, sizeof *xq);
    uint32_t *idx = calloc(n ? n : 1, sizeof *idx);
    struct xg_result *r2 = calloc(n ? n : 1, sizeof *r2);
    int *st2 = calloc(n ? n : 1, sizeof *st2);
    uint32_t m = 0;
    int rc = XG_OK;
    if (!pq || !xq || !idx || !r2 || !st2) {
        rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (uint32_t i = 0; i < n; ++i) {
        if (status[i] != XG_OK || res[i].n_hits >= o->k) continue;
        int prc = xg_handle_parse(h, texts[i], &or_o, &xq[m]);
        if (!prc) prc = xg_handle_prepare(h, xq[m], &pq[m]);
        if (prc) {
            /* The OR form cannot be served: report that, not a short AND. */
            if (xq[m]) xg_shim_xquery_free(xq[m]);
            xq[m] = NULL;
            xg_result_free(&res[i]);
            status[i] = prc;
            continue;
        }
        idx[m++] = i;
    }
    if (m && !(rc = xg_router_run_batch(r, h, pq, (const xg_xquery *const *)xq,
                                        NULL, o->k, m, o->engine, &o->bm25,
                                        r2, st2, NULL)))
        for (uint32_t j = 0; j < m; ++j) {
            xg_result_free(&res[idx[j]]);
            res[idx[j]] = r2[j];
            status[idx[j]] = st2[j];
        }
done:
    for (uint32_t j = 0; j < m; ++j) {
        xg_prepared_free(pq[j]);
        if (xq[j]) xg_shim_xquery_free(xq[j]);
    }
    free(pq);
    free(xq);
    free(idx);
    free(r2);
    free(st2);
    return rc;
}
