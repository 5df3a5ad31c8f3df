/** @file searcher.h
 *  @brief Internal side of the public searcher, for the CLI and tests.
 */
#ifndef XG_SEARCHER_H
#define XG_SEARCHER_H

#include "../gpu/query/engine.h"
#include "../gpu/index/format_read.h"
#include "../shim/xg_shim.h"
#include "xapian-gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

xg_db *xg_searcher_db(xg_searcher *s);

/* A searcher for another thread: its own Xapian handles on db_paths, the
 * base's verified index shared read-only (base must outlive it). */
int xg_searcher_clone(const xg_searcher *base,
                      const char *const *db_paths, size_t n_paths,
                      xg_searcher **out);
const struct xg_index *xg_searcher_index(const xg_searcher *s);

/* Parse once, answer with several engines (the A/B comparison). */
int xg_searcher_parse(xg_searcher *s, const char *text,
                      const struct xg_search_opts *o, xg_xquery **out);
int xg_searcher_run(xg_searcher *s, const xg_xquery *xq,
                    const struct xg_search_opts *o, struct xg_result *out);

/* A query converted to the engine shapes, with term ids and plans. */
struct xg_prepared {
    struct xg_query q;
    int64_t term[XG_QUERY_MAX_LEAVES];
    struct xg_plan *plans;      /* one per shard */
};

int xg_searcher_prepare(xg_searcher *s, const xg_xquery *xq,
                        struct xg_prepared **out);
/* The same in two steps: the shapes and term ids (enough for the cost
 * model), then the per-shard plans. */
int xg_searcher_prepare_terms(xg_searcher *s, const xg_xquery *xq,
                              struct xg_prepared **out);
int xg_searcher_prepare_plans(xg_searcher *s, struct xg_prepared *pq);
void xg_prepared_free(struct xg_prepared *pq);

/* The CPU matcher on a prepared query. */
int xg_searcher_run_cpu(xg_searcher *s, const struct xg_prepared *pq,
                        const struct xg_search_opts *o, struct xg_result *out);

/* Many prepared queries with o->engine (cpu, gpu or auto) in GPU batches;
 * status[i] per query.  GPU-unservable queries go to the CPU matcher. */
int xg_searcher_run_prepared(xg_searcher *s, struct xg_prepared *const *pqs,
                             uint32_t n, const struct xg_search_opts *o,
                             struct xg_result *out, int *status);

/* The same with a k per query (ks NULL: o->k) and, if on_gpu is not
 * NULL, on_gpu[i] = 1 where the GPU engine answered query i (0: the CPU
 * matcher did). */
int xg_searcher_run_prepared_ex(xg_searcher *s,
                                struct xg_prepared *const *pqs,
                                const uint32_t *ks, uint32_t n,
                                const struct xg_search_opts *o,
                                struct xg_result *out, int *status,
                                uint8_t *on_gpu);

/* AND+OR (o->default_and == 2), after a batch answered the AND forms:
 * rerun as OR the queries (texts[i], status XG_OK) with fewer than k
 * results, replacing res[i]/status[i].  No-op for other modes. */
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
