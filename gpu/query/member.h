/** @file member.h
 *  @brief Membership of a document in a decoded list (seed 004 ch. 4-5,
 *         seed 003 §8.1): binary search over the whole list, over the range
 *         the linear regression or the hash segments allow, or inside the
 *         one block B* allows; or a merge-path position computed before;
 *         optionally behind the list's Bloom filter.  Host and device share
 *         this one definition: intersect.cu, merge.cu and their twins.
 */
#ifndef XG_MEMBER_H
#define XG_MEMBER_H

#include <stdint.h>

#include "../index/bloom.h"
#include "engine_types.h"
#include "../index/listmeta.h"

/* The block of term t's list whose B* range [first, last] could hold
 * `key` (the first block with last >= key), or -1 if none can.  Shared by
 * the block selection (merge.cu), the BLOCK search and single lookups. */
XG_HOST_DEVICE static inline int64_t
xg_block_of(const struct xg_dindex *ix, uint32_t t, uint32_t key)
{
    const struct xg_fmt_term *e = &ix->terms[t];
    const uint32_t nb = (e->df + XG_FMT_BLOCK - 1) / XG_FMT_BLOCK;
    const struct xg_fmt_skip *sk = ix->skip + e->skip_first;
    uint32_t lo = 0, hi = nb;
    while (lo < hi) {
        const uint32_t mid = (lo + hi) >> 1;
        if (sk[mid].last < key) lo = mid + 1; else hi = mid;
    }
    return lo < nb && sk[lo].first <= key ? (int64_t)lo : -1;
}

/* Index of `key` in the ascending docs[0..df) of term t, or -1.  A Bloom
 * "maybe" is always verified by the search, so the answer is exact.  Not
 * for XG_MEMBER_MERGE, whose positions come precomputed (xg_member_at). */
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
    switch (method & XG_MEMBER_KIND) {
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
    case XG_MEMBER_BLOCK: {
        /* Only this block was decoded (and only if a candidate fell in it:
         * this key is one). */
        const int64_t b = xg_block_of(ix, t, key);
        if (b < 0) return -1;
        lo = (uint32_t)b * XG_FMT_BLOCK;
        hi = df - lo < XG_FMT_BLOCK ? df : lo + XG_FMT_BLOCK;
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

/* Position of candidate i (the i-th posting of its query's shortest list,
 * document `key`) in list l, or -1: the one membership call of the
 * intersection kernel and its twin. */
XG_HOST_DEVICE static inline int64_t
xg_member_at(const struct xg_dindex *ix, const struct xg_dlist *l,
             const uint32_t *docs, const uint32_t *mpos, uint64_t i,
             uint32_t key)
{
    if ((l->method & XG_MEMBER_KIND) == XG_MEMBER_MERGE) {
        const uint32_t at = mpos[l->mpos + i];
        return at == UINT32_MAX ? -1 : (int64_t)at;
    }
    return xg_member_find(ix, l->term, docs + l->decoded, l->df, l->method,
                          key);
}

/* The automatic choice for a list of df postings probed by the shortest
 * list's `probes` candidates, from its metadata (measured on an H100 by
 * `test_kernels --bench`, docs/gpu.md):
 *  - BLOCK when there are at most 4 probes per block of the list (lists
 *    32 times longer or more): the blocks no probe falls in are never
 *    decoded.  Whole AND sequence at 1:1000 in length 0.100 ms against
 *    0.263 for the best search, at 1:50 0.304 against 0.315; at 1:2 it
 *    loses (1.73 against 1.14 ms);
 *  - never MERGE by itself: the merge path cost more than the searches it
 *    replaces at every ratio measured (1:2: 1.49 against 1.14 ms);
 *  - else the narrower of the regression and hash-segment ranges, binary
 *    search when neither narrows the list to under a quarter.
 * No Bloom prefilter: on an H200 (docs/gpu.md) it slowed every
 * method at a 10% hit rate (binary 18.7 -> 16.6, regression 26.8 -> 21.5,
 * hash segments 27.2 -> 22.6 G tests/s); --bloom on still forces it. */
static inline uint32_t xg_member_choose(const struct xg_fmt_term *e,
                                        const struct xg_fmt_term_lr *lr,
                                        uint32_t n_docs, uint32_t probes)
{
    const uint64_t n_blocks = (e->df + XG_FMT_BLOCK - 1) / XG_FMT_BLOCK;
    if ((uint64_t)probes <= 4 * n_blocks) return XG_MEMBER_BLOCK;
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
