/** @file topk.h
 *  @brief Candidate selection per query: launcher and CPU twin.
 */
#ifndef XG_TOPK_H
#define XG_TOPK_H

#include <stdint.h>

#include "engine_types.h"
#include "../runtime/host_device.h"

#ifdef __cplusplus
extern "C" {
#endif

struct CUstream_st;

/* The selection cut: every item with weight >= this is kept.  thr < 0
 * keeps every match; otherwise the margin covers the approximate sums'
 * rounding (relative) and, for impact bounds, their quantization. */
XG_HOST_DEVICE static inline double xg_select_cut(double thr, double S,
                                                  double rel_margin,
                                                  double margin)
{
    return thr < 0 ? -1.0 : thr - S * rel_margin - margin;
}

/* Margin below the selection threshold, relative to the largest weight:
 * approximate sums of <= 64 non-negative terms in any order are within
 * 64 * 2^-53 (relative) of the exact one, far below this (docs/gpu.md). */
#define XG_SELECT_MARGIN 1e-12

/* Per-query selection state (device scratch, zeroed by the launcher). */
struct xg_select_state {
    unsigned long long matched, max_bits;   /* max_bits: S as bits */
    unsigned long long above;
    double lo, hi, thr;
    uint32_t done, written;
    uint32_t blocks;            /* a pass's blocks finished (kernel) */
};

struct xg_select_args {
    const struct xg_dquery *queries;
    const double *acc;           /* DENSE rows */
    const uint32_t *mask;
    uint64_t n_docs;
    const uint32_t *icount;      /* INTERSECT matches per query */
    const struct xg_dcand *icand;
    double rel_margin;           /* margin below the threshold, times S */
    struct xg_dcand *out;        /* candidates at query.cand_first */
    struct xg_dqresult *res;     /* one per query */
    struct xg_select_state *state; /* kernel: one per query (scratch,
                                    zero on entry; left zero) */
    uint32_t *hist;              /* kernel: 2048 per query (scratch, zero
                                    on entry; left zero) */
    const uint32_t *ifail;       /* per query, or NULL: 1 sends it to the
                                    CPU matcher (xg_intersect_args) */
};

/* Every query of the batch; max_items = the most items any query has
 * (n_docs for DENSE rows).  Returns a cudaError_t. */
int xg_select_gpu(const struct xg_select_args *a, uint32_t n_queries,
                  uint64_t max_items, struct CUstream_st *stream);

/* Pack each query's n_cand candidates back to back into `packed` (device
 * memory, or mapped pinned host memory: the writes cross the bus), so
 * only they cross back to the host.  A cudaError_t. */
int xg_pack_gpu(const struct xg_dquery *d_queries,
                const struct xg_dqresult *d_res,
                const struct xg_dcand *d_cand, uint32_t n_queries,
                struct xg_dcand *packed,
                struct CUstream_st *stream);

/* The twin: the same matched counts and the same candidate SET (order may
 * differ), given the same rows. */
int xg_select_ref(const struct xg_select_args *a, uint32_t n_queries);

#ifdef __cplusplus
}
#endif
#endif
