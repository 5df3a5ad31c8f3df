/** @file intersect.h
 *  @brief The AND path: launcher and CPU twin of the intersection.
 */
#ifndef XG_INTERSECT_H
#define XG_INTERSECT_H

#include <stdint.h>

#include "../bm25.h"
#include "engine_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct CUstream_st;

/* Everything the intersection reads and writes (device pointers for the
 * kernel, host pointers for the twin). */
struct xg_intersect_args {
    const struct xg_dquery *queries;
    const struct xg_dlist *lists;
    const uint32_t *iq;          /* the INTERSECT queries' indices */
    const uint64_t *iprefix;     /* n_iq + 1 prefix sums of shortest df */
    uint32_t n_iq, pad;
    const uint32_t *docs, *wdfs; /* decoded lists (xg_dlist.decoded) */
    const uint32_t *mpos;        /* MERGE lists' positions (merge.h) */
    const uint32_t *leaf_list;   /* leaf -> list index within its query */
    const double *leaf_tw;       /* leaf termweights */
    const struct xg_plan_op *plan;
    struct xg_bm25_query bm25;
    uint32_t *icount;            /* per query: matches written */
    struct xg_dcand *icand;      /* matches at query.icand_first */
    const struct xg_dfilter *filters;   /* position filters (filter_dev.h) */
    uint32_t *ifail;             /* per query: 1 where a filter could not
                                    be decided here (zero on entry) */
};

/* Returns a cudaError_t; `total` = iprefix[n_iq]. */
int xg_intersect_gpu(const struct xg_dindex *ix,
                     const struct xg_intersect_args *a, uint64_t total,
                     struct CUstream_st *stream);

/* The twin: same matches, written in posting order. */
int xg_intersect_ref(const struct xg_dindex *ix,
                     const struct xg_intersect_args *a);

#ifdef __cplusplus
}
#endif
#endif
