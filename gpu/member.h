/** @file member.h
 *  @brief Membership of a document in a decoded list (seed 004 ch. 4-5):
 *         binary search over the whole list, or over the range the linear
 *         regression or the hash segments allow, optionally behind the
 *         list's Bloom filter.  Host and device share this one definition:
 *         intersect.cu and its twin intersect_ref.c both call it.
 */
#ifndef XG_MEMBER_H
#define XG_MEMBER_H

#include <stdint.h>

#include "bloom.h"
#include "gpu_types.h"
#include "listmeta.h"

/* Index of `key` in the ascending docs[0..df) of term t, or -1.  A Bloom
 * "maybe" is always verified by the search, so the answer is exact. */
XG_HOST_DEVICE static inline int64_t
xg_member_find(const struct xg_dindex *ix, uint32_t t, const uint32_t *docs,
               uint32_t df, uint32_t method, uint32_t key)
{
    const struct xg_fmt_term *e = &ix->terms[t];
    if ((method & XG_MEMBER_BLOOM) && e->bloom_words &&
        !xg_bloom_test(ix->bloom + e->bloom_offset, e->bloom_words,
                       ix->bloom_hashes, key))
        return -1;
    uint32_t lo = 0, hi = df;
    switch (method & 3u) {
    case XG_MEMBER_LR: {
        const struct xg_fmt_term_lr *lr = &ix->terms_lr[t];
        xg_lr_range(e->lr_slope, e->lr_intercept, lr->max_left,
                    lr->max_right, df, key, &lo, &hi);
        break;
    }
    case XG_MEMBER_HASHSEG: {
        xg_hashseg_range(ix->hashseg + e->hashseg_offset, e->hashseg_shift,
                         xg_hashseg_count(ix->n_docs, e->hashseg_shift), key,
                         &lo, &hi);
        break;
    }
    default:
        break;
    }
    while (lo < hi) { /* lower bound */
        uint32_t mid = lo + ((hi - lo) >> 1);
        if (docs[mid] < key) lo = mid + 1; else hi = mid;
    }
    return lo < df && docs[lo] == key ? (int64_t)lo : -1;
}

/* The automatic choice for a list of df postings, from its metadata: the
 * narrower of the regression and hash-segment ranges, binary search when
 * neither narrows the list to under a quarter.  No Bloom prefilter: on an
 * H200 (2026-11-22, docs/gpu.md) it slowed every method at a 10% hit rate
 * (binary 18.7 -> 16.6, regression 26.8 -> 21.5, hash segments 27.2 ->
 * 22.6 G tests/s); --bloom on still forces it. */
static inline uint32_t xg_member_choose(const struct xg_fmt_term *e,
                                        const struct xg_fmt_term_lr *lr,
                                        uint32_t n_docs)
{
    uint32_t nseg = xg_hashseg_count(n_docs, e->hashseg_shift);
    uint64_t seg_span = nseg > 1 ? 2ull * e->df / nseg + 1 : e->df;
    uint64_t lr_span = e->lr_slope > 0.0f
                           ? (uint64_t)lr->max_left + lr->max_right + 1
                           : e->df;
    if (lr_span < e->df / 4 && lr_span <= seg_span) return XG_MEMBER_LR;
    if (seg_span < e->df / 4) return XG_MEMBER_HASHSEG;
    return XG_MEMBER_BINARY;
}

#endif
