/** @file listmeta.c
 *  @brief Regression fit and hash-segment directory of a posting list (see
 *         listmeta.h).
 *
 *  Called by the index writer once per term on the list's dense doc numbers
 *  (strictly ascending, < n_docs).  The fit is least squares in double with
 *  centred sums; the search distances are then measured with the float
 *  model exactly as stored, so the guarantee of listmeta.h holds whatever
 *  rounding the float conversion did.
 */
#include "listmeta.h"

#include <math.h>

/* Store the "no model" fit: the range of every key is the whole list. */
static void lr_whole_list(uint32_t n, float *slope, float *intercept,
                          uint32_t *max_left, uint32_t *max_right)
{
    *slope = 0.0f;
    *intercept = 0.0f;
    *max_left = 0;
    *max_right = n ? n - 1 : 0;
}

/* Fit and measure the search distances; never fails (falls back to the
 * whole-list model). */
void xg_lr_fit(const uint32_t *d, uint32_t n, float *slope, float *intercept,
               uint32_t *max_left, uint32_t *max_right)
{
    if (n < 2) {
        lr_whole_list(n, slope, intercept, max_left, max_right);
        return;
    }
    const double mi = ((double)n - 1.0) / 2.0;
    double sum_d = 0.0;
    for (uint32_t i = 0; i < n; ++i)
        sum_d += (double)d[i];
    const double md = sum_d / (double)n;
    double sxy = 0.0, sxx = 0.0;
    for (uint32_t i = 0; i < n; ++i) {
        double di = (double)i - mi;
        sxx += di * di;
        sxy += di * ((double)d[i] - md);
    }
    const double s = sxy / sxx;
    const double c = md - s * mi;
    const float sf = (float)s, cf = (float)c;
    if (!isfinite(s) || !isfinite(c) || !isfinite(sf) || !isfinite(cf) ||
        !(sf > 0.0f)) {
        lr_whole_list(n, slope, intercept, max_left, max_right);
        return;
    }
    int64_t ml = 0, mr = 0;
    for (uint32_t i = 0; i < n; ++i) {
        int64_t p = xg_lr_predict(sf, cf, d[i]);
        if (p - (int64_t)i > ml)
            ml = p - (int64_t)i;
        if ((int64_t)i - p > mr)
            mr = (int64_t)i - p;
    }
    if (ml > (int64_t)n || mr > (int64_t)n) {
        lr_whole_list(n, slope, intercept, max_left, max_right);
        return;
    }
    *slope = sf;
    *intercept = cf;
    *max_left = (uint32_t)ml;
    *max_right = (uint32_t)mr;
}


/* Smallest shift giving at most max(1, df / target) segments (31 if none). */
uint32_t xg_hashseg_shift(uint32_t n_docs, uint32_t df, uint32_t target)
{
    if (target == 0)
        target = 1;
    uint32_t limit = df / target;
    if (limit < 1)
        limit = 1;
    /* count(s) = ((n_docs - 1) >> s) + 1 falls as s grows: start from the
     * shift that log2 suggests, one below it at most, and walk up. */
    if (n_docs <= 1) return 0;
    uint32_t top = 32u - (uint32_t)__builtin_clz(n_docs - 1); /* bits */
    uint32_t lim = 32u - (uint32_t)__builtin_clz(limit);
    uint32_t s = top > lim ? top - lim : 0;
    if (s > 0) --s;
    for (; s < 32; ++s)
        if (xg_hashseg_count(n_docs, s) <= limit)
            return s;
    return 31;
}

/* Fill the n_segs + 1 segment starts; never fails. */
void xg_hashseg_build(const uint32_t *d, uint32_t n, uint32_t shift,
                      uint32_t n_segs, uint32_t *starts)
{
    if (shift > 31)
        shift = 31;
    uint32_t i = 0;
    for (uint64_t s = 0; s < n_segs; ++s) {
        while (i < n && (uint64_t)(d[i] >> shift) < s)
            ++i;
        starts[s] = i;
    }
    starts[n_segs] = n;
}
