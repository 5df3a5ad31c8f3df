/** @file handle.h
 *  @brief A handle on one database and its GPU index: the mechanisms the
 *         router (router.h) uses to answer a query, and no policy.
 *
 *  A handle holds Xapian handles of its own (shim) and, shared read-only
 *  with its clones, the verified index.  It parses, prepares (engine
 *  shapes, term ids, per-shard plans), runs the stock matcher, the exact
 *  CPU matcher, or a batch on the GPU engine, and reports what happened:
 *  which engine answers a query, and what is done when one cannot, is the
 *  router's.  Not safe to use from several threads at once, except for
 *  preparing and the CPU matcher, which only read the shared index.
 */
#ifndef XG_HANDLE_H
#define XG_HANDLE_H

#include "../gpu/query/engine.h"
#include "../gpu/index/format_read.h"
#include "../shim/xg_shim.h"
#include "xapian-gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct xg_handle xg_handle;

/* Open the database at db_paths and its index (index_path, or next to the
 * first database).  An unusable index (missing, corrupt, stale) is not an
 * error: xg_handle_index() is then NULL and xg_handle_index_error() and
 * xg_handle_index_rc() say why. */
int xg_handle_open(const char *const *db_paths, size_t n_paths,
                   const char *index_path, xg_handle **out);
/* A handle for another thread: its own Xapian handles on db_paths, the
 * base's verified index shared read-only (base must outlive it).  It
 * has no GPU engine of its own unless asked (the base's is not shared). */
int xg_handle_clone(const xg_handle *base, const char *const *db_paths,
                    size_t n_paths, xg_handle **out);
void xg_handle_close(xg_handle *h);

xg_db *xg_handle_db(xg_handle *h);
const struct xg_index *xg_handle_index(const xg_handle *h);
/* NULL if the index is usable, else why not, and its status code. */
const char *xg_handle_index_error(const xg_handle *h);
int xg_handle_index_rc(const xg_handle *h);

/* The QueryParser settings of the search options o. */
void xg_handle_parse_opts(const struct xg_search_opts *o,
                          struct xg_parse_opts *po);

/* QueryParser with o's settings. */
int xg_handle_parse(xg_handle *h, const char *text,
                    const struct xg_search_opts *o, xg_xquery **out);

/* A query converted to the engine shapes, with term ids and plans. */
struct xg_prepared {
    struct xg_query q;
    int64_t term[XG_QUERY_MAX_LEAVES];
    struct xg_plan *plans;      /* one per shard */
    const struct xg_weigh_stats *stats; /* what BM25 weighs with (the
                                   caller's; NULL: the index's own) */
};

/* The shapes and term ids (enough for the cost model): XG_ERR_UNSUPPORTED
 * for a shape the engines do not serve, the index's error without a
 * usable index. */
int xg_handle_prepare_terms(xg_handle *h, const xg_xquery *xq,
                            struct xg_prepared **out);
/* Then the per-shard plans (XG_ERR_UNSUPPORTED: a plan the engines do not
 * serve). */
int xg_handle_prepare_plans(xg_handle *h, struct xg_prepared *pq);
/* Both. */
int xg_handle_prepare(xg_handle *h, const xg_xquery *xq,
                      struct xg_prepared **out);
void xg_prepared_free(struct xg_prepared *pq);

/* The stock Xapian matcher: the top k with BM25 p. */
int xg_handle_run_stock(xg_handle *h, const xg_xquery *xq,
                        const struct xg_bm25_params *p, uint32_t k,
                        struct xg_result *out);

/* Stock's full ranking's top k (xg_shim_search_unpruned). */
int xg_handle_run_stock_unpruned(xg_handle *h, const xg_xquery *xq,
                                 const struct xg_bm25_params *p, uint32_t k,
                                 struct xg_result *out);

/* How many of pq's subqueries document `hit` matches: Xapian's
 * count_matching_subqs() for it, the numerator of its percentages (the
 * denominator is xg_query_weighted_subqs).  The engines count it with
 * the hit; an AND of single terms matches every leaf, a single term its
 * one; otherwise Xapian's postlists tell, but for the general form and
 * an AND whose OR groups hold phrases (XG_ERR_UNSUPPORTED: only the tree
 * matcher's hits carry their count). */
int xg_handle_doc_leaves(xg_handle *h, const struct xg_prepared *pq,
                         const struct xg_hit *hit, uint32_t *matched);

/* The hit whose matching leaves Xapian's percentages use: of the hits
 * with the greatest weight, the first its matcher meets, which visits
 * shard after shard (of n_shards, docids interleaved), each in docid
 * order.  r holds at least one hit. */
const struct xg_hit *xg_result_greatest(const struct xg_result *r,
                                        uint32_t n_shards);

/* The exact CPU matcher on a prepared query (XG_ERR_UNSUPPORTED: it
 * cannot serve it exactly). */
int xg_handle_run_cpu(xg_handle *h, const struct xg_prepared *pq,
                      const struct xg_bm25_params *p, uint32_t k,
                      struct xg_result *out);
/* The same top k where the caller reads no match count (the Enquire
 * front: Xapian gives the MSet's bounds): a flat OR may skip documents
 * that cannot enter it (xg_match_ref_top). */
int xg_handle_run_cpu_top(xg_handle *h, const struct xg_prepared *pq,
                          const struct xg_bm25_params *p, uint32_t k,
                          struct xg_result *out);

/* The GPU engine's options, used when it opens (before the first batch). */
void xg_handle_set_engine_opts(xg_handle *h, const struct xg_engine_opts *o);

/* Open the GPU engine (once; XG_GPU_TWINS=1 runs the kernels' CPU twins).
 * XG_OK if it is usable, else why not (*why, kept for later calls). */
int xg_handle_gpu_status(xg_handle *h, const char **why);

/* One engine batch: n prepared queries, the top ks[i] (ks NULL: k) of
 * each.  Returns XG_OK with status[i] per query: XG_OK (out[i] holds its
 * exact MSet, or, with `later`, xg_later_finish(&later[i], &out[i])
 * completes it: xg_engine_search) or XG_ERR_UNSUPPORTED (the engine
 * cannot serve it exactly; out[i] empty).  Otherwise the engine's fault (XG_ERR_CUDA,
 * XG_ERR_NOMEM, ...) or why the engine is not usable (XG_ERR_NODEVICE
 * ...), with every status[i] that code and every out[i] empty.  After
 * XG_ERR_CUDA or XG_ERR_NODEVICE the device is in an unknown state: the
 * engine is closed and xg_handle_gpu_status() reports that fault.
 * Thread-safe: up to xg_handle_gpu_slots(h) batches run at once (the
 * rest of h is the thread's own). */
struct xg_later;
int xg_handle_run_gpu(xg_handle *h, struct xg_prepared *const *pqs,
                      const uint32_t *ks, uint32_t k, uint32_t n,
                      const struct xg_bm25_params *p, struct xg_result *out,
                      struct xg_later *later, int *status);

/* How many GPU batches h runs at once (xg_engine_slots); 0 without a
 * usable engine. */
uint32_t xg_handle_gpu_slots(xg_handle *h);

/* The engine's counters (NULL if it is not open). */
const struct xg_engine_stats *xg_handle_gpu_stats(const xg_handle *h);

#ifdef __cplusplus
}
#endif
#endif
