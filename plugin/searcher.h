/** @file searcher.h
 *  @brief Internal side of the public searcher (xg_searcher_*): a handle
 *         (handle.h) and the router (router.h) it answers through.
 *
 *  The functions below the accessors are kept for the tests written
 *  against them; each is the handle's or the router's (matcher front).
 */
#ifndef XG_SEARCHER_H
#define XG_SEARCHER_H

#include "handle.h"
#include "router.h"

#ifdef __cplusplus
extern "C" {
#endif

xg_handle *xg_searcher_handle(xg_searcher *s);
xg_router *xg_searcher_router(xg_searcher *s);

xg_db *xg_searcher_db(xg_searcher *s);

/* A searcher for another thread: its own Xapian handles on db_paths, the
 * base's verified index and router shared (base must outlive it). */
int xg_searcher_clone(const xg_searcher *base,
                      const char *const *db_paths, size_t n_paths,
                      xg_searcher **out);
const struct xg_index *xg_searcher_index(const xg_searcher *s);

/* Parse once, answer with several engines (the A/B comparison). */
int xg_searcher_parse(xg_searcher *s, const char *text,
                      const struct xg_search_opts *o, xg_xquery **out);
int xg_searcher_run(xg_searcher *s, const xg_xquery *xq,
                    const struct xg_search_opts *o, struct xg_result *out);

int xg_searcher_prepare(xg_searcher *s, const xg_xquery *xq,
                        struct xg_prepared **out);
int xg_searcher_prepare_terms(xg_searcher *s, const xg_xquery *xq,
                              struct xg_prepared **out);
int xg_searcher_prepare_plans(xg_searcher *s, struct xg_prepared *pq);

/* The CPU matcher on a prepared query. */
int xg_searcher_run_cpu(xg_searcher *s, const struct xg_prepared *pq,
                        const struct xg_search_opts *o, struct xg_result *out);

/* xg_router_run_batch with o->engine and o->k (ks NULL) or ks; on_gpu[i]
 * (may be NULL) = 1 where the GPU engine answered query i. */
int xg_searcher_run_prepared(xg_searcher *s, struct xg_prepared *const *pqs,
                             uint32_t n, const struct xg_search_opts *o,
                             struct xg_result *out, int *status);
int xg_searcher_run_prepared_ex(xg_searcher *s,
                                struct xg_prepared *const *pqs,
                                const uint32_t *ks, uint32_t n,
                                const struct xg_search_opts *o,
                                struct xg_result *out, int *status,
                                uint8_t *on_gpu);

/* xg_router_andor_finish. */
int xg_searcher_andor_finish(xg_searcher *s, const char *const *texts,
                             uint32_t n, const struct xg_search_opts *o,
                             struct xg_result *res, int *status);

void xg_searcher_set_engine_opts(xg_searcher *s,
                                 const struct xg_engine_opts *o);

/* XG_OK if the GPU engine is usable, else its error and *why. */
int xg_searcher_gpu_status(xg_searcher *s, const char **why);
const struct xg_engine_stats *xg_searcher_gpu_stats(const xg_searcher *s);

/* Batches the CPU matcher answered because the GPU engine failed. */
uint64_t xg_searcher_gpu_fallbacks(const xg_searcher *s);

#ifdef __cplusplus
}
#endif
#endif
