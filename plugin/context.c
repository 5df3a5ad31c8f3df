/** @file context.c
 *  @brief The accelerator context: what an application keeps open.  A base
 *         handle on the database and its index, the router that answers
 *         every query (router.h: which engine, the fallbacks, the counts),
 *         and a pool of per-thread handles for parsing and for the
 *         starting bounds of accelerated queries (docs/plugin.md).
 */
#include "context.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../gpu/runtime/error.h"


struct xg_context {
    char **paths;
    size_t n_paths;
    xg_handle *base;                /* owns the index and the GPU engine */
    xg_router *router;
    struct xg_context_opts o;
    pthread_key_t key;              /* the thread's struct slot */
    int key_ok;
    struct slot *slots;             /* every thread's slot, freed at close */
    pthread_mutex_t pool_lock;
    xg_handle **pool;               /* idle handles not cached by a thread */
    size_t n_pool, cap_pool;
    xg_handle **all;                /* every clone, closed with the context */
    size_t n_all, cap_all;
};

/* Each application thread keeps the searcher it used last in its slot
 * (the context's thread key), so taking one costs no lock: a shared
 * pool's mutex, taken twice per query by 64 threads, showed in the tail
 * latency.  When the thread ends, its searcher goes back to the pool. */
struct slot {
    xg_context *c;
    xg_handle *s;
    struct slot *next;
};

static void slot_release(void *slot);

static int open_front(const char *const *db_paths, size_t n_paths,
                      const char *index_path, const struct xg_context_opts *o,
                      int front, xg_context **out)
{
    static const struct xg_context_opts defaults = XG_CONTEXT_DEFAULTS;
    *out = NULL;
    if (!db_paths && n_paths)
        return xg_set_error(XG_ERR_ARG, "context: NULL database paths");
    if (!o) o = &defaults;
    if (o->engine != XG_ENGINE_AUTO && o->engine != XG_ENGINE_GPU &&
        o->engine != XG_ENGINE_CPU)
        return xg_set_error(XG_ERR_ARG, "context: engine must be auto, gpu "
                            "or cpu");
    xg_context *c = calloc(1, sizeof *c);
    if (!c) return xg_set_error(XG_ERR_NOMEM, "out of memory");
    c->o = *o;
    pthread_mutex_init(&c->pool_lock, NULL);
    c->key_ok = pthread_key_create(&c->key, slot_release) == 0;
    int rc = XG_OK;
    c->paths = calloc(n_paths ? n_paths : 1, sizeof *c->paths);
    if (!c->paths) rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n_paths && !rc; ++i)
        if (!(c->paths[i] = strdup(db_paths[i])))
            rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
    c->n_paths = n_paths;
    if (!rc) rc = xg_handle_open(db_paths, n_paths, index_path, &c->base);
    if (!rc) {
        struct xg_engine_opts eo = XG_ENGINE_DEFAULTS;
        eo.device = o->device;
        eo.memory_budget = o->device_memory;
        eo.blocking_sync = 1; /* the application's threads need the cores */
        eo.wait_spin_us = o->wait_spin_ms > 0 && o->wait_spin_ms < 1e3
                              ? (uint32_t)(o->wait_spin_ms * 1e3) : 0;
        xg_handle_set_engine_opts(c->base, &eo);
    }
    if (!rc) {
        struct xg_router_opts ro;
        memset(&ro, 0, sizeof ro);
        ro.front = front;
        ro.engine = o->engine;
        ro.bm25 = o->bm25;
        ro.max_wait = o->max_wait_ms > 0 ? o->max_wait_ms / 1e3 : 0;
        ro.deadline = o->deadline_ms > 0 ? o->deadline_ms / 1e3 : 0.05;
        ro.cost_model = o->cost_model;
        ro.one_lane = o->gpu_lanes == 1;
        /* Loads the index onto the GPU now (engines AUTO and GPU). */
        rc = xg_router_open(c->base, &ro, &c->router);
    }
    if (rc) {
        xg_context_close(c);
        return rc;
    }
    c->o.cost_model = NULL; /* the caller's string: not kept */
    *out = c;
    return XG_OK;
}

int xg_context_open(const char *const *db_paths, size_t n_paths,
                    const char *index_path, const struct xg_context_opts *o,
                    xg_context **out)
{
    return open_front(db_paths, n_paths, index_path, o, XG_FRONT_ENQUIRE,
                      out);
}

int xg_context_open_remote(const char *const *db_paths, size_t n_paths,
                           const char *index_path,
                           const struct xg_context_opts *o, xg_context **out)
{
    return open_front(db_paths, n_paths, index_path, o, XG_FRONT_REMOTE, out);
}

void xg_context_close(xg_context *c)
{
    if (!c) return;
    xg_router_close(c->router);     /* stops the dispatcher first */
    /* No thread may use the context now: no slot is released after this. */
    if (c->key_ok) pthread_key_delete(c->key);
    for (struct slot *sl = c->slots, *next; sl; sl = next) {
        next = sl->next;
        free(sl);
    }
    for (size_t i = 0; i < c->n_all; ++i) xg_handle_close(c->all[i]);
    free(c->all);
    free(c->pool);
    xg_handle_close(c->base);
    for (size_t i = 0; c->paths && i < c->n_paths; ++i) free(c->paths[i]);
    free(c->paths);
    pthread_mutex_destroy(&c->pool_lock);
    free(c);
}

xg_router *xg_context_router(xg_context *c) { return c->router; }

const char *xg_context_index_error(const xg_context *c)
{
    return xg_handle_index_error(c->base);
}

const struct xg_index *xg_context_index(const xg_context *c)
{
    return xg_handle_index(c->base);
}

int xg_context_index_rc(const xg_context *c)
{
    return xg_handle_index_rc(c->base);
}

const struct xg_context_opts *xg_context_options(const xg_context *c)
{
    return &c->o;
}

void xg_context_routes(const xg_context *c, uint64_t *counts)
{
    xg_router_routes(c->router, counts);
}

void xg_context_unserved(const xg_context *c, char *buf, size_t n)
{
    xg_router_unserved(c->router, buf, n);
}

/* Append s to a growable array under pool_lock; 0 or -1 (no memory). */
static int push(xg_handle ***a, size_t *n, size_t *cap, xg_handle *s);

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

static int push(xg_handle ***a, size_t *n, size_t *cap, xg_handle *s)
{
    if (*n == *cap) {
        size_t nc = *cap ? 2 * *cap : 8;
        xg_handle **p = realloc(*a, nc * sizeof *p);
        if (!p) return -1;
        *a = p;
        *cap = nc;
    }
    (*a)[(*n)++] = s;
    return 0;
}

/* A new searcher, owned by `all` until the close. */
static int clone_handle(xg_context *c, xg_handle **out)
{
    int rc = xg_handle_clone(c->base, (const char *const *)c->paths,
                               c->n_paths, out);
    if (rc) return rc;
    pthread_mutex_lock(&c->pool_lock);
    int full = push(&c->all, &c->n_all, &c->cap_all, *out);
    pthread_mutex_unlock(&c->pool_lock);
    if (full) {
        xg_handle_close(*out);
        *out = NULL;
        return xg_set_error(XG_ERR_NOMEM, "out of memory");
    }
    return XG_OK;
}

int xg_context_open_handle(xg_context *c, xg_handle **out)
{
    return xg_handle_clone(c->base, (const char *const *)c->paths, c->n_paths,
                           out);
}

int xg_context_take(xg_context *c, xg_handle **out)
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
    return clone_handle(c, out);
}

void xg_context_give(xg_context *c, xg_handle *s)
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
        xg_handle *s;
        int rc = clone_handle(c, &s);
        if (rc) return rc;
        pthread_mutex_lock(&c->pool_lock);
        int full = push(&c->pool, &c->n_pool, &c->cap_pool, s);
        pthread_mutex_unlock(&c->pool_lock);
        if (full) return xg_set_error(XG_ERR_NOMEM, "out of memory");
    }
}
