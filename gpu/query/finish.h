/** @file finish.h
 *  @brief Exact rescoring of DENSE-path candidates: launcher and twin.
 */
#ifndef XG_FINISH_H
#define XG_FINISH_H

#include <stdint.h>

#include "../bm25.h"
#include "engine_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct CUstream_st;

struct xg_finish_args {
    const struct xg_dquery *queries;
    const struct xg_dlist *lists;
    const struct xg_dqresult *res;   /* n_cand per query */
    const uint32_t *leaf_list;       /* leaf -> list index in its query,
                                        >= n_lists if the term is absent */
    const double *leaf_tw;
    const struct xg_plan_op *plan;
    struct xg_bm25_query bm25;
    struct xg_dcand *cand;           /* rescored in place */
    /* The kernel's alone (the twin looks each wdf up in its list): */
    uint32_t *mask;                  /* the DENSE rows; their candidates'
                                        cells are overwritten */
    uint32_t *cand_wdf;              /* wdf_first + candidate * n_lists */
    unsigned long long *cand_in;     /* per candidate: the lists it is in */
    uint32_t n_dense_lists;          /* the DENSE queries' lists come */
    uint64_t dense_blocks;           /* first, and their blocks */
    uint32_t wdfs_by;                /* how the kernels find the wdfs
                                        (below): by cost (0), or forced */
};

/* How the finish's kernels find a query's candidates' wdfs: by gathering
 * (the query's lists decoded again whole, each posting of a marked
 * document keeping its wdf) or by lookup (for each candidate and list,
 * the skip entries' search, then that one block decoded).  By cost, a
 * query looks its wdfs up when its candidates times its lists, times
 * XG_FINISH_LOOKUP_COST, are fewer than its lists' blocks: few
 * candidates in long lists (a top 10 over 10^6 documents); a top 1000,
 * or short real-text lists, gather.  The values of wdfs_by
 * (XG_FINISH_BY_COST, _GATHER, _LOOKUP) are in runtime/knobs.h, beside
 * the switch that forces one. */

/* Each candidate marks its cell of its query's row (unless `marked`: the
 * selection's keep pass did, xg_select_args.marks, and cleared cand_in);
 * the DENSE lists of the queries that gather are decoded again, a warp a
 * block, and each posting of a marked document leaves its wdf in the
 * table; the queries that look up get theirs a warp a candidate and
 * list; then a thread a candidate of the batch adds up its weight.
 * Returns a cudaError_t. */
int xg_finish_gpu(const struct xg_dindex *ix, const struct xg_finish_args *a,
                  uint32_t n_queries, int marked, struct CUstream_st *stream);

/* The twin over host pointers; XG_ERR_FORMAT on a corrupt block. */
int xg_finish_ref(const struct xg_dindex *ix, const struct xg_finish_args *a,
                  uint32_t n_queries);

#ifdef __cplusplus
}
#endif
#endif
