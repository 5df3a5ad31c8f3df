/** @file listmeta.h
 *  @brief Per-list search metadata (seed 004 ch. 5): the linear-regression
 *         search range and the hash-segment directory.
 *
 *  Both narrow the binary search for a key in a strictly ascending list
 *  d[0..n) of dense doc numbers (d[i] < n_docs) to a half-open index range
 *  [lo, hi) that contains the key's index whenever the key is in the list.
 *  The writer (shim/ export) computes them with xg_lr_fit() and
 *  xg_hashseg_build() and stores them in struct xg_fmt_term /
 *  xg_fmt_term_lr and section XG_SEC_HASHSEG (gpu/index/format.h); the ranges are
 *  static inline XG_HOST_DEVICE functions so the GPU kernel and the CPU
 *  twin compute the very same bounds.
 *
 *  Regression (ch. 5 §4): d[i] ~ slope * i + intercept, least squares in
 *  double, stored as float.  The position of a key is predicted by
 *  xg_lr_predict(): floorf(((float)key - intercept) / slope), subtraction
 *  then division in float (no multiply, so no FMA contraction can make host
 *  and device differ; device code must keep IEEE division, i.e. no
 *  --use_fast_math, and host code must evaluate float in float precision,
 *  FLT_EVAL_METHOD 0 as on x86-64/SSE).  max_left and max_right are measured
 *  with that very function over the whole list, so every index i lies in
 *  [predict(d[i]) - max_left, predict(d[i]) + max_right].  slope == 0 means
 *  "no model": the range is the whole list.
 *
 *  Hash segments (ch. 5 §5): segment of a doc number = doc >> shift;
 *  starts[s] is the first index whose doc has segment >= s, so segment s of
 *  the list is [starts[s], starts[s+1]).  shift is in 0..31 (larger values
 *  are treated as 31 by every function here).
 */
#ifndef XG_LISTMETA_H
#define XG_LISTMETA_H

#include <math.h>
#include <stdint.h>

#include "../runtime/host_device.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Least-squares fit of d[i] on i for d[0..n).  Sets *slope, *intercept
 * (float) and *max_left, *max_right as described above.  If n < 2, the fit
 * is not finite or its float slope is not > 0, or a measured distance
 * exceeds n, stores slope = intercept = 0, max_left = 0 and
 * max_right = n - 1 (0 for n == 0): the range is then the whole list.
 * Never fails; d need not be ascending (the bounds hold for any input, but
 * a non-monotone list gives wide ranges). */
void xg_lr_fit(const uint32_t *d, uint32_t n, float *slope, float *intercept,
               uint32_t *max_left, uint32_t *max_right);

/* Predicted index of `key`: slope > 0 ? floorf(((float)key - intercept) /
 * slope) : 0, the float result clamped to [-1e12, 1e12] (NaN to -1e12)
 * before conversion so a corrupt model cannot overflow int64; values from
 * xg_lr_fit() never reach the clamp. */
static inline XG_HOST_DEVICE int64_t xg_lr_predict(float slope,
                                                   float intercept,
                                                   uint32_t key)
{
    if (!(slope > 0.0f))
        return 0;
    float q = floorf(((float)key - intercept) / slope);
    if (!(q >= -1e12f))
        q = -1e12f;
    if (q > 1e12f)
        q = 1e12f;
    return (int64_t)q;
}

/* The half-open range [*lo, *hi) of a list of n elements (0 <= lo <= hi <=
 * n) in which `key` must lie if present: [predict - max_left,
 * predict + max_right + 1) clamped to [0, n), or [0, n) if slope <= 0. */
static inline XG_HOST_DEVICE void xg_lr_range(float slope, float intercept,
                                              uint32_t max_left,
                                              uint32_t max_right, uint32_t n,
                                              uint32_t key, uint32_t *lo,
                                              uint32_t *hi)
{
    if (!(slope > 0.0f)) {
        *lo = 0;
        *hi = n;
        return;
    }
    int64_t p = xg_lr_predict(slope, intercept, key);
    int64_t l = p - (int64_t)max_left;
    int64_t h = p + (int64_t)max_right + 1;
    if (l < 0)
        l = 0;
    if (l > (int64_t)n)
        l = (int64_t)n;
    if (h > (int64_t)n)
        h = (int64_t)n;
    if (h < l)
        h = l;
    *lo = (uint32_t)l;
    *hi = (uint32_t)h;
}

/* Segment count for doc numbers 0 .. n_docs-1: ((n_docs - 1) >> shift) + 1,
 * 1 if n_docs == 0.  The directory has this many + 1 entries. */
static inline XG_HOST_DEVICE uint32_t xg_hashseg_count(uint32_t n_docs,
                                                       uint32_t shift)
{
    if (n_docs == 0)
        return 1;
    if (shift > 31)
        shift = 31;
    return ((n_docs - 1) >> shift) + 1;
}

/* The shift for a list of df elements over n_docs doc numbers: the smallest
 * s in 0..31 with xg_hashseg_count(n_docs, s) <= max(1, df / target)
 * (integer division; target 0 counts as 1), or 31 if none (only when
 * n_docs > 2^31 and df < 2 * target).  So the mean number of list elements
 * per segment, df / count, is at least target when df >= target, and,
 * because s is the smallest such shift, below about 2 * target. */
uint32_t xg_hashseg_shift(uint32_t n_docs, uint32_t df, uint32_t target);

/* Fill starts[0..n_segs] for the ascending list d[0..n): starts[s] = first
 * index i with (d[i] >> shift) >= s (n if none), starts[n_segs] = n.
 * n_segs is normally xg_hashseg_count(n_docs, shift).  Never fails. */
void xg_hashseg_build(const uint32_t *d, uint32_t n, uint32_t shift,
                      uint32_t n_segs, uint32_t *starts);

/* The range [*lo, *hi) = [starts[seg], starts[seg + 1]) of key's segment
 * seg = key >> shift, or an empty range at starts[n_segs] if seg >= n_segs
 * (a key outside 0 .. n_docs-1). */
static inline XG_HOST_DEVICE void xg_hashseg_range(const uint32_t *starts,
                                                   uint32_t shift,
                                                   uint32_t n_segs,
                                                   uint32_t key, uint32_t *lo,
                                                   uint32_t *hi)
{
    uint32_t seg = key >> (shift > 31u ? 31u : shift);
    if (seg >= n_segs) {
        *lo = *hi = starts[n_segs];
        return;
    }
    *lo = starts[seg];
    *hi = starts[seg + 1];
}

#ifdef __cplusplus
}
#endif
#endif
