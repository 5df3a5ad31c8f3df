/** @file context.c
 *  @brief The accelerator context: one verified index and GPU engine for
 *         the whole application, a pool of per-thread searchers, and the
 *         planner that routes each query (docs/plugin.md).
 *
 *  Routing, in order: no usable index -> stock (stale or damaged); a query
 *  shape the engines do not serve -> stock; engine CPU -> the exact CPU
 *  matcher; no usable device -> stock; engine AUTO and the cost model
 *  predicts stock faster, given the GPU's queue -> stock; otherwise the
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
#include "dispatch.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../gpu/error.h"

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
    pthread_mutex_t pool_lock;
    xg_searcher **pool;             /* idle per-thread searchers */
    size_t n_pool, cap_pool;
    _Atomic uint64_t routes[XG_ROUTE_COUNT];
};

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
    xg_context *c = calloc(1, sizeof *c);
    if (!c) return xg_set_error(XG_ERR_NOMEM, "out of memory");
    c->o = *o;
    pthread_mutex_init(&c->gpu_lock, NULL);
    pthread_mutex_init(&c->pool_lock, NULL);
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
    for (size_t i = 0; i < c->n_pool; ++i) xg_searcher_close(c->pool[i]);
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
    if (route >= 0 && route < XG_ROUTE_COUNT)
        atomic_fetch_add(&c->routes[route], 1);
}

void xg_context_routes(const xg_context *c, uint64_t *counts)
{
    for (int i = 0; i < XG_ROUTE_COUNT; ++i)
        counts[i] = atomic_load(&((xg_context *)c)->routes[i]);
}

int xg_context_take(xg_context *c, xg_searcher **out)
{
    pthread_mutex_lock(&c->pool_lock);
    if (c->n_pool) {
        *out = c->pool[--c->n_pool];
        pthread_mutex_unlock(&c->pool_lock);
        return XG_OK;
    }
    pthread_mutex_unlock(&c->pool_lock);
    return xg_searcher_clone(c->base, (const char *const *)c->paths,
                             c->n_paths, out);
}

void xg_context_give(xg_context *c, xg_searcher *s)
{
    pthread_mutex_lock(&c->pool_lock);
    if (c->n_pool == c->cap_pool) {
        size_t cap = c->cap_pool ? 2 * c->cap_pool : 8;
        xg_searcher **p = realloc(c->pool, cap * sizeof *p);
        if (!p) {
            pthread_mutex_unlock(&c->pool_lock);
            xg_searcher_close(s);
            return;
        }
        c->pool = p;
        c->cap_pool = cap;
    }
    c->pool[c->n_pool++] = s;
    pthread_mutex_unlock(&c->pool_lock);
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
    if (c->o.engine == XG_ENGINE_AUTO) {
        const double wait = c->o.max_wait_ms > 0 ? c->o.max_wait_ms / 1e3 : 1e-3;
        if (xg_cost_stock_seconds(&c->model, &f) <
            xg_cost_gpu_seconds(&c->model, &f, xg_dispatch_queued_work(d),
                                wait)) {
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
    if (!rc) rc = xg_dispatch_submit(d, pq, k, xg_cost_gpu_work(&f), out, route);
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
