/** @file searcher.c
 *  @brief The public searcher (xapian-gpu.h): a handle on the database and
 *         its index, answering through the router at the matcher front
 *         (router.h decides which engine answers and what a fault does).
 */
#include "searcher.h"

#include <stdlib.h>
#include <string.h>

#include "../gpu/runtime/error.h"

struct xg_searcher {
    xg_handle *h;
    xg_router *r;
    int owns_router;            /* a clone shares its base's */
};

int xg_searcher_open(const char *const *db_paths, size_t n_paths,
                     const char *index_path, xg_searcher **out)
{
    *out = NULL;
    xg_searcher *s = calloc(1, sizeof *s);
    if (!s) return xg_set_error(XG_ERR_NOMEM, "out of memory");
    int rc = xg_handle_open(db_paths, n_paths, index_path, &s->h);
    if (!rc) {
        struct xg_router_opts ro;
        memset(&ro, 0, sizeof ro);
        ro.front = XG_FRONT_MATCHER;
        ro.engine = XG_ENGINE_AUTO;
        struct xg_bm25_params bm = XG_BM25_DEFAULTS;
        ro.bm25 = bm;
        rc = xg_router_open(s->h, &ro, &s->r);
        s->owns_router = 1;
    }
    if (rc) {
        xg_searcher_close(s);
        return rc;
    }
    *out = s;
    return XG_OK;
}

void xg_searcher_close(xg_searcher *s)
{
    if (!s) return;
    if (s->owns_router) xg_router_close(s->r);
    xg_handle_close(s->h);
    free(s);
}

int xg_searcher_clone(const xg_searcher *base, const char *const *db_paths,
                      size_t n_paths, xg_searcher **out)
{
    *out = NULL;
    xg_searcher *s = calloc(1, sizeof *s);
    if (!s) return xg_set_error(XG_ERR_NOMEM, "out of memory");
    int rc = xg_handle_clone(base->h, db_paths, n_paths, &s->h);
    if (rc) {
        free(s);
        return rc;
    }
    s->r = base->r;
    *out = s;
    return XG_OK;
}

xg_handle *xg_searcher_handle(xg_searcher *s) { return s->h; }
xg_router *xg_searcher_router(xg_searcher *s) { return s->r; }
xg_db *xg_searcher_db(xg_searcher *s) { return xg_handle_db(s->h); }

const char *xg_searcher_index_error(const xg_searcher *s)
{
    return xg_handle_index_error(s->h);
}

const struct xg_index *xg_searcher_index(const xg_searcher *s)
{
    return xg_handle_index(s->h);
}

int xg_searcher_parse(xg_searcher *s, const char *text,
                      const struct xg_search_opts *o, xg_xquery **out)
{
    return xg_handle_parse(s->h, text, o, out);
}

void xg_searcher_set_engine_opts(xg_searcher *s,
                                 const struct xg_engine_opts *o)
{
    xg_handle_set_engine_opts(s->h, o);
}

int xg_searcher_gpu_status(xg_searcher *s, const char **why)
{
    return xg_handle_gpu_status(s->h, why);
}

uint64_t xg_searcher_gpu_fallbacks(const xg_searcher *s)
{
    return xg_router_gpu_faults(s->r);
}

const struct xg_engine_stats *xg_searcher_gpu_stats(const xg_searcher *s)
{
    return xg_handle_gpu_stats(s->h);
}

int xg_searcher_prepare(xg_searcher *s, const xg_xquery *xq,
                        struct xg_prepared **out)
{
    return xg_handle_prepare(s->h, xq, out);
}

int xg_searcher_prepare_terms(xg_searcher *s, const xg_xquery *xq,
                              struct xg_prepared **out)
{
    return xg_handle_prepare_terms(s->h, xq, out);
}

int xg_searcher_prepare_plans(xg_searcher *s, struct xg_prepared *pq)
{
    return xg_handle_prepare_plans(s->h, pq);
}

int xg_searcher_run_cpu(xg_searcher *s, const struct xg_prepared *pq,
                        const struct xg_search_opts *o, struct xg_result *out)
{
    return xg_handle_run_cpu(s->h, pq, &o->bm25, o->k, out);
}

int xg_searcher_run_prepared(xg_searcher *s, struct xg_prepared *const *pqs,
                             uint32_t n, const struct xg_search_opts *o,
                             struct xg_result *out, int *status)
{
    return xg_searcher_run_prepared_ex(s, pqs, NULL, n, o, out, status, NULL);
}

int xg_searcher_run_prepared_ex(xg_searcher *s,
                                struct xg_prepared *const *pqs,
                                const uint32_t *ks, uint32_t n,
                                const struct xg_search_opts *o,
                                struct xg_result *out, int *status,
                                uint8_t *on_gpu)
{
    int *route = on_gpu ? calloc(n ? n : 1, sizeof *route) : NULL;
    if (on_gpu && !route) return xg_set_error(XG_ERR_NOMEM, "out of memory");
    int rc = xg_router_run_batch(s->r, s->h, pqs, NULL, ks, o->k, n,
                                 o->engine, &o->bm25, out, status, route);
    for (uint32_t i = 0; on_gpu && i < n; ++i)
        on_gpu[i] = !rc && route[i] == XG_ROUTE_GPU;
    free(route);
    return rc;
}

int xg_searcher_run(xg_searcher *s, const xg_xquery *xq,
                    const struct xg_search_opts *o, struct xg_result *out)
{
    return xg_router_search(s->r, s->h, xq, o->engine, &o->bm25, o->k, out,
                            NULL);
}

int xg_searcher_search(xg_searcher *s, const char *query,
                       const struct xg_search_opts *o, struct xg_result *out)
{
    return xg_router_search_text(s->r, s->h, query, o, out, NULL);
}

int xg_searcher_andor_finish(xg_searcher *s, const char *const *texts,
                             uint32_t n, const struct xg_search_opts *o,
                             struct xg_result *res, int *status)
{
    return xg_router_andor_finish(s->r, s->h, texts, n, o, res, status);
}
