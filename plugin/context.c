/** @file context.c
 *  @brief The accelerator context: one verified index and GPU engine for
 *         the whole application, a pool of per-thread searchers, and the
 *         planner that routes each query (docs/plugin.md).
 *
 *  Routing, in order: no usable index -> stock (stale or damaged); a query
 *  shape the engines do not serve -> stock; engine CPU -> the exact CPU
 *  matcher; no usable device -> stock; engine AUTO and the cost model
 *  predicts stock faster, given the GPU's queue and the CPU's contention
 *  (cpu_load.h) -> stock; otherwise the
 *  GPU dispatcher (dispatch.h), where a query the GPU cannot serve exactly
 *  goes to the CPU matcher, and a GPU failure or a missed deadline sends
 *  the query to stock.  Every decision is counted.
 *
 *  Query preparation and the CPU matcher only read the shared index, so
 *  they run in the calling thread; only the dispatcher's thread touches
 *  the GPU engine.
 */
#include "context.h"

#include "cost_model.h"
#include "cpu_load.h"
#include "dispatch.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../gpu/runtime/error.h"

#define XG_ROUTE_STRIPES 16

struct xg_context {
    char **paths;
    size_t n_paths;
    xg_searcher *base;              /* owns the index and the GPU engine */
    struct xg_context_opts o;
    pthread_mutex_t gpu_lock;       /* starting the dispatcher */
    struct xg_dispatch *dispatch;
    int dispatch_tried, dispatch_rc;
    _Atomic int dispatch_ready;     /* dispatch (or its absence) is final */
    struct xg_cost_model model;
    struct xg_cpu_load load;        /* scales stock's one-thread time */
    pthread_key_t key;              /* the thread's struct slot */
    int key_ok;
    struct slot *slots;             /* every thread's slot, freed at close */
    pthread_mutex_t pool_lock;
    xg_searcher **pool;             /* idle searchers not cached by a thread */
    size_t n_pool, cap_pool;
    xg_searcher **all;              /* every clone, closed with the context */
    size_t n_all, cap_all;
    /* Route counts, striped so that threads counting every query do not
     * all write one cache line; summed when read. */
    struct {
        _Alignas(128) _Atomic uint64_t n[XG_ROUTE_COUNT];
    } routes[XG_ROUTE_STRIPES];
};

/* Each application thread keeps the searcher it used last in its slot
 * (the context's thread key), so taking one costs no lock: a shared
 * pool's mutex, taken twice per query by 64 threads, showed in the tail
 * latency.  When the thread ends, its searcher goes back to the pool. */
struct slot {
    xg_context *c;
    xg_searcher *s;
    struct slot *next;
};

static void slot_release(void *slot);

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

static struct xg_dispatch *dispatcher(xg_context *c);

/* The cost model: the file named in the options (an error if unreadable),
 * else xapian-gpu.model beside the index if there is one, else built in. */
static int load_model(xg_context *c, const char *index_path)
{
    xg_cost_model_default(&c->model);
    if (c->o.cost_model) return xg_cost_model_load(c->o.cost_model, &c->model);
    const struct xg_index *ix = xg_searcher_index(c->base);
    const char *p = ix ? ix->path : index_path;
    if (!p) return XG_OK;
    char *path = xg_cost_model_path(p);
    if (!path) return XG_ERR_NOMEM;
    int rc = xg_cost_model_load(path, &c->model);
    if (rc == XG_ERR_IO) {
        xg_cost_model_default(&c->model); /* no file: the default */
        rc = XG_OK;
    }
    free(path);
    return rc;
}

int xg_context_open(const char *const *db_paths, size_t n_paths,
                    const char *index_path, const struct xg_context_opts *o,
                    xg_context **out)
{
    static const struct xg_context_opts defaults = XG_CONTEXT_DEFAULTS;
    *out = NULL;
    if (!o) o = &defaults;
    if (o->engine != XG_ENGINE_AUTO && o->engine != XG_ENGINE_GPU &&
        o->engine != XG_ENGINE_CPU)
        return xg_set_error(XG_ERR_ARG, "context: engine must be auto, gpu "
                            "or cpu");
    /* Aligned for the striped counters. */
    const size_t size = (sizeof(xg_context) + 127) / 128 * 128;
    xg_context *c = aligned_alloc(128, size);
    if (!c) return xg_set_error(XG_ERR_NOMEM, "out of memory");
    memset(c, 0, size);
    c->o = *o;
    xg_cpu_load_init(&c->load, NULL);
    pthread_mutex_init(&c->gpu_lock, NULL);
    pthread_mutex_init(&c->pool_lock, NULL);
    c->key_ok = pthread_key_create(&c->key, slot_release) == 0;
    int rc = XG_OK;
    c->paths = calloc(n_paths ? n_paths : 1, sizeof *c->paths);
    if (!c->paths) rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n_paths && !rc; ++i)
        if (!(c->paths[i] = strdup(db_paths[i])))
            rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
    c->n_paths = n_paths;
    if (!rc) rc = xg_searcher_open(db_paths, n_paths, index_path, &c->base);
    if (!rc) {
        struct xg_engine_opts eo = XG_ENGINE_DEFAULTS;
        eo.device = o->device;
        eo.memory_budget = o->device_memory;
        eo.blocking_sync = 1; /* the application's threads need the cores */
        xg_searcher_set_engine_opts(c->base, &eo);
        rc = load_model(c, index_path);
    }
    if (rc) {
        xg_context_close(c);
        return rc;
    }
    /* Load the index onto the GPU now, not in the first query's wait (no
     * device is not an error: those queries go to stock). */
    if (c->o.engine != XG_ENGINE_CPU && xg_context_index(c)) dispatcher(c);
    *out = c;
    return XG_OK;
}

void xg_context_close(xg_context *c)
{
    if (!c) return;
    xg_dispatch_stop(c->dispatch);
    /* No thread may use the context now: no slot is released after this. */
    if (c->key_ok) pthread_key_delete(c->key);
    for (struct slot *sl = c->slots, *next; sl; sl = next) {
        next = sl->next;
        free(sl);
    }
    for (size_t i = 0; i < c->n_all; ++i) xg_searcher_close(c->all[i]);
    free(c->all);
    free(c->pool);
    xg_searcher_close(c->base);
    for (size_t i = 0; c->paths && i < c->n_paths; ++i) free(c->paths[i]);
    free(c->paths);
    pthread_mutex_destroy(&c->gpu_lock);
    pthread_mutex_destroy(&c->pool_lock);
    free(c);
}

const char *xg_context_index_error(const xg_context *c)
{
    return xg_searcher_index_error(c->base);
}

const struct xg_index *xg_context_index(const xg_context *c)
{
    return xg_searcher_index(c->base);
}

const struct xg_context_opts *xg_context_options(const xg_context *c)
{
    return &c->o;
}

void xg_context_count(xg_context *c, int route)
{
    if (thread_stripe < 0)
        thread_stripe = (int)(atomic_fetch_add(&next_stripe, 1) %
                              XG_ROUTE_STRIPES);
    if (route >= 0 && route < XG_ROUTE_COUNT)
        atomic_fetch_add_explicit(&c->routes[thread_stripe].n[route], 1,
                                  memory_order_relaxed);
}

void xg_context_routes(const xg_context *c, uint64_t *counts)
{
    xg_context *m = (xg_context *)c;
    for (int i = 0; i < XG_ROUTE_COUNT; ++i) {
        counts[i] = 0;
        for (int s = 0; s < XG_ROUTE_STRIPES; ++s)
            counts[i] += atomic_load(&m->routes[s].n[i]);
    }
}

/* Append s to a growable array under pool_lock; 0 or -1 (no memory). */
static int push(xg_searcher ***a, size_t *n, size_t *cap, xg_searcher *s);

/* The thread is ending: its searcher goes back to the pool (the slot
 * itself is freed at the close). */
static void slot_release(void *slot)
{
    struct slot *sl = slot;
    if (!sl->s) return;
    pthread_mutex_lock(&sl->c->pool_lock);
    (void)push(&sl->c->pool, &sl->c->n_pool, &sl->c->cap_pool, sl->s);
    pthread_mutex_unlock(&sl->c->pool_lock);
    sl->s = NULL;
}

static int push(xg_searcher ***a, size_t *n, size_t *cap, xg_searcher *s)
{
    if (*n == *cap) {
        size_t nc = *cap ? 2 * *cap : 8;
        xg_searcher **p = realloc(*a, nc * sizeof *p);
        if (!p) return -1;
        *a = p;
        *cap = nc;
    }
    (*a)[(*n)++] = s;
    return 0;
}

/* A new searcher, owned by `all` until the close. */
static int clone_searcher(xg_context *c, xg_searcher **out)
{
    int rc = xg_searcher_clone(c->base, (const char *const *)c->paths,
                               c->n_paths, out);
    if (rc) return rc;
    pthread_mutex_lock(&c->pool_lock);
    int full = push(&c->all, &c->n_all, &c->cap_all, *out);
    pthread_mutex_unlock(&c->pool_lock);
    if (full) {
        xg_searcher_close(*out);
        *out = NULL;
        return xg_set_error(XG_ERR_NOMEM, "out of memory");
    }
    return XG_OK;
}

int xg_context_take(xg_context *c, xg_searcher **out)
{
    struct slot *sl = c->key_ok ? pthread_getspecific(c->key) : NULL;
    if (sl && sl->s) {
        *out = sl->s;
        sl->s = NULL;
        return XG_OK;
    }
    pthread_mutex_lock(&c->pool_lock);
    if (c->n_pool) {
        *out = c->pool[--c->n_pool];
        pthread_mutex_unlock(&c->pool_lock);
        return XG_OK;
    }
    pthread_mutex_unlock(&c->pool_lock);
    return clone_searcher(c, out);
}

void xg_context_give(xg_context *c, xg_searcher *s)
{
    struct slot *sl = c->key_ok ? pthread_getspecific(c->key) : NULL;
    if (!sl && c->key_ok && (sl = calloc(1, sizeof *sl))) {
        sl->c = c;
        pthread_mutex_lock(&c->pool_lock);
        sl->next = c->slots;
        c->slots = sl;
        pthread_mutex_unlock(&c->pool_lock);
        if (pthread_setspecific(c->key, sl)) sl = NULL;
    }
    if (sl && !sl->s) {
        sl->s = s;
        return;
    }
    pthread_mutex_lock(&c->pool_lock);
    /* No room: it stays owned by `all` and idle until the close. */
    (void)push(&c->pool, &c->n_pool, &c->cap_pool, s);
    pthread_mutex_unlock(&c->pool_lock);
}

int xg_context_reserve(xg_context *c, unsigned n)
{
    for (;;) {
        pthread_mutex_lock(&c->pool_lock);
        const size_t have = c->n_pool;
        pthread_mutex_unlock(&c->pool_lock);
        if (have >= n) return XG_OK;
        xg_searcher *s;
        int rc = clone_searcher(c, &s);
        if (rc) return rc;
        pthread_mutex_lock(&c->pool_lock);
        int full = push(&c->pool, &c->n_pool, &c->cap_pool, s);
        pthread_mutex_unlock(&c->pool_lock);
        if (full) return xg_set_error(XG_ERR_NOMEM, "out of memory");
    }
}

/* The route for an unusable index, from why it is unusable (the code the
 * searcher just reported). */
static int index_route(void)
{
    return xg_last_error_code() == XG_ERR_STALE ? XG_ROUTE_STOCK_STALE
                                                : XG_ROUTE_STOCK_DAMAGED;
}

/* The dispatcher, started on first use; NULL if there is no usable GPU. */
static struct xg_dispatch *dispatcher(xg_context *c)
{
    /* Started once; after that every thread reads it without the lock. */
    if (atomic_load(&c->dispatch_ready)) return c->dispatch;
    pthread_mutex_lock(&c->gpu_lock);
    if (!c->dispatch_tried) {
        c->dispatch_tried = 1;
        struct xg_dispatch_opts o;
        memset(&o, 0, sizeof o);
        o.max_batch = 256;
        o.batch_work = 1ull << 27; /* the engine's default threshold */
        o.max_wait = c->o.max_wait_ms > 0 ? c->o.max_wait_ms / 1e3 : 1e-3;
        o.deadline = c->o.deadline_ms > 0 ? c->o.deadline_ms / 1e3 : 0.05;
        o.bm25 = c->o.bm25;
        c->dispatch_rc = xg_dispatch_start(c->base, &o, &c->dispatch);
    }
    struct xg_dispatch *d = c->dispatch;
    atomic_store(&c->dispatch_ready, 1);
    pthread_mutex_unlock(&c->gpu_lock);
    return d;
}

static int decide(xg_context *c, const xg_xquery *xq, uint32_t k,
                  struct xg_result *out, int *route)
{
    struct xg_prepared *pq = NULL;
    int rc = xg_searcher_prepare_terms(c->base, xq, &pq);
    if (rc == XG_ERR_UNSUPPORTED) {
        *route = XG_ROUTE_STOCK_UNSUPPORTED;
        return XG_OK;
    }
    if (rc == XG_ERR_NOMEM) return rc;
    if (rc) {
        /* No usable index (the searcher kept why), or a query the shim
         * could not read: stock Xapian answers either way. */
        *route = xg_context_index(c) ? XG_ROUTE_STOCK_UNSUPPORTED
                                     : index_route();
        return XG_OK;
    }
    struct xg_search_opts so = XG_SEARCH_DEFAULTS;
    so.k = k;
    so.bm25 = c->o.bm25;
    if (c->o.engine == XG_ENGINE_CPU) {
        rc = xg_searcher_prepare_plans(c->base, pq);
        if (!rc) rc = xg_searcher_run_cpu(c->base, pq, &so, out);
        *route = XG_ROUTE_CPU;
        if (rc == XG_ERR_UNSUPPORTED) {
            *route = XG_ROUTE_STOCK_UNSUPPORTED;
            rc = XG_OK;
        }
        xg_prepared_free(pq);
        return rc;
    }
    struct xg_dispatch *d = dispatcher(c);
    if (!d) {
        *route = XG_ROUTE_STOCK_NO_DEVICE;
        xg_prepared_free(pq);
        return XG_OK;
    }
    struct xg_query_features f;
    xg_query_features_of(pq, xg_context_index(c), &f);
    /* The GPU's latency for it: behind its queue, plus the wait beyond
     * the model that recent queries saw (the dispatcher measures it, for
     * every engine, so that AUTO starts from it). */
    const double wait = c->o.max_wait_ms > 0 ? c->o.max_wait_ms / 1e3 : 1e-3;
    struct xg_dispatch_load load;
    xg_dispatch_load(d, &load);
    const double gpu_s = xg_cost_gpu_seconds(&c->model, &f, load.queued_work,
                                             load.batch_work, load.running,
                                             load.batch_seconds, wait);
    if (c->o.engine == XG_ENGINE_AUTO) {
        /* Stock's one-thread time at the model's 90th percentile,
         * stretched when more threads want the cores than there are. */
        const double pressure = xg_cpu_load_pressure(&c->load);
        if (xg_cost_stock_seconds_p90(&c->model, &f) *
                (pressure > 1 ? pressure : 1) <
            gpu_s + (load.excess > 0 ? load.excess : 0)) {
            *route = XG_ROUTE_STOCK_CHEAPER;
            xg_prepared_free(pq);
            return XG_OK;
        }
    }
    /* Plans only for the queries the engines will run. */
    rc = xg_searcher_prepare_plans(c->base, pq);
    if (rc == XG_ERR_UNSUPPORTED) {
        *route = XG_ROUTE_STOCK_UNSUPPORTED;
        xg_prepared_free(pq);
        return XG_OK;
    }
    if (!rc) rc = xg_dispatch_submit(d, pq, k, xg_cost_gpu_work(&f), gpu_s,
                                     out, route);
    xg_prepared_free(pq);
    return rc;
}

int xg_context_answer(xg_context *c, const xg_xquery *xq, uint32_t k,
                      struct xg_result *out, int *route)
{
    memset(out, 0, sizeof *out);
    *route = XG_ROUTE_STOCK_UNSUPPORTED;
    int rc = decide(c, xq, k, out, route);
    if (!rc) xg_context_count(c, *route);
    return rc;
}
