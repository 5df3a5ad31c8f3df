/** @file topk.h
 *  @brief Candidate selection per query: launcher and CPU twin.
 */
#ifndef XG_TOPK_H
#define XG_TOPK_H

#include <stdint.h>
#include <string.h>

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

/* The selection's histograms: 2048 bins.  The first round's bins are a
 * weight's octave and the top 6 bits of its mantissa (its double's bits
 * 46 to 62), 32 octaves up from 1 (impact rows, whose bounds are integers
 * from 1 to 2^32 - 1) or from 2^-20 (sums of BM25 weights): weights below
 * fall in bin 0, those above in the top bin.  The pass that counts the
 * matches builds it, so it needs no largest weight first; the later rounds
 * split the chosen bin's range into equal bins. */
#define XG_SELECT_BINS 2048
#define XG_SELECT_ROUNDS 2      /* equal-width rounds after the first */

/* A double's bits and back (memcpy: a register move on either side). */
XG_HOST_DEVICE static inline uint64_t xg_select_bits(double w)
{
    uint64_t b;
    memcpy(&b, &w, sizeof b);
    return b;
}

XG_HOST_DEVICE static inline double xg_select_from_bits(uint64_t b)
{
    double w;
    memcpy(&w, &b, sizeof w);
    return w;
}

/* Bin 0's key: 1.0's or 2^-20's bits 46 to 62. */
XG_HOST_DEVICE static inline int64_t xg_select_log_base(int irow)
{
    return (int64_t)(irow ? 1023 : 1023 - 20) << 6;
}

/* Whether a query's items are impact rows' integer bounds. */
XG_HOST_DEVICE static inline int xg_select_irow(const struct xg_dquery *q)
{
    return q->path == XG_DPATH_DENSE && q->impact_row;
}

/* The first round's bin of weight w >= 0. */
XG_HOST_DEVICE static inline uint32_t xg_select_log_bin(double w, int irow)
{
    const int64_t b = (int64_t)(xg_select_bits(w) >> 46) -
                      xg_select_log_base(irow);
    return b < 0 ? 0u : b >= XG_SELECT_BINS ? XG_SELECT_BINS - 1u
                                            : (uint32_t)b;
}

/* The first round's bin b as the range [*lo, *hi] of the weights in it
 * (hi: the largest double below the next bin's edge; S for the top bin or
 * where S is below that). */
XG_HOST_DEVICE static inline void xg_select_log_range(uint32_t b, int irow,
                                                      double S, double *lo,
                                                      double *hi)
{
    const int64_t base = xg_select_log_base(irow);
    *lo = b ? xg_select_from_bits((uint64_t)(base + b) << 46) : 0.0;
    double top = S;
    if (b < XG_SELECT_BINS - 1) {
        top = xg_select_from_bits(((uint64_t)(base + b + 1) << 46) - 1);
        if (S < top) top = S;
    }
    *hi = top;
}

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
    uint32_t *hist;              /* kernel: XG_SELECT_BINS per query
                                    (scratch, zero on entry; left zero) */
    const uint32_t *ifail;       /* per query, or NULL: 1 sends it to the
                                    CPU matcher (xg_intersect_args) */
    const uint32_t *touched;     /* sparse queries' touched documents
                                    (xg_accumulate_gpu), icount[q] each */
    uint32_t *marks;             /* kernel: the DENSE rows (mask) again,
                                    or NULL: keep writes each kept
                                    candidate's XG_CAND_MARK cell there and
                                    clears its cand_in, for the finish */
    unsigned long long *cand_in; /* per candidate (xg_finish_args) */
};

/* How many items query q's selection reads: its row's documents, its
 * touched list's, or its intersection's matches. */
XG_HOST_DEVICE static inline uint64_t
xg_select_items(const struct xg_select_args *a, const struct xg_dquery *q,
                uint32_t qi)
{
    return q->path == XG_DPATH_DENSE && !q->sparse ? a->n_docs : a->icount[qi];
}

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
