/** @file phrase.h
 *  @brief Whether a document's positions satisfy an OP_PHRASE filter, as
 *         Xapian 1.4.22's position filters decide (shared by the CPU
 *         matcher and, later, the kernels).
 *
 *  pos[i] holds the ascending positions of the phrase's i-th term in the
 *  document, count[i] of them (a term repeated in the phrase has its own
 *  copy).
 *  - window == n (ExactPhrasePostList::test_doc): some base >= 0 has
 *    base + i among term i's positions for every i.  Its leapfrog reads
 *    the terms in order of wdf, but decides exactly that.
 *  - window > n (PhrasePostList::test_doc): positions p_0 < ... < p_(n-1),
 *    p_i among term i's, with p_(n-1) - p_0 + 1 <= window.  Xapian takes,
 *    for each first position in turn, each next term's first position
 *    after the last; positions only move right as the first one does, so
 *    when a chain cannot be completed no later start can, and that greedy
 *    chain is what is tested here too.
 *  - XG_QF_NEAR (NearPostList::test_doc): one position of each term, all
 *    different, within a span of window positions (last - first <
 *    window), in any order.  Xapian slides a window over the terms' lists
 *    (a heap of their current positions, the lowest moved up to the
 *    highest - window + 1); for terms whose positions in a document are
 *    all different (the converter refuses a term repeated in a NEAR) that
 *    decides exactly this, and so does the slide here.
 */
#ifndef XG_PHRASE_H
#define XG_PHRASE_H

#include <stdint.h>

#include "../query_shape.h"
#include "../runtime/host_device.h"

/* The first index in a[0, n) whose value is >= v (n if none). */
XG_HOST_DEVICE static inline uint32_t xg_phrase_lower(const uint32_t *a,
                                                      uint32_t n, uint64_t v)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if (a[mid] < v) lo = mid + 1; else hi = mid;
    }
    return lo;
}

XG_HOST_DEVICE static inline int xg_phrase_holds(const uint32_t *const *pos,
                                                 const uint32_t *count,
                                                 uint32_t n, uint32_t window)
{
    for (uint32_t i = 0; i < n; ++i)
        if (!count[i]) return 0;
    if (window == n) {
        for (uint32_t s = 0; s < count[0]; ++s) {
            const uint64_t base = pos[0][s];
            uint32_t i = 1;
            for (; i < n; ++i) {
                const uint32_t at = xg_phrase_lower(pos[i], count[i], base + i);
                if (at == count[i] || pos[i][at] != base + i) break;
            }
            if (i == n) return 1;
        }
        return 0;
    }
    for (uint32_t s = 0; s < count[0]; ++s) {
        const uint64_t first = pos[0][s];
        uint64_t last = first;
        for (uint32_t i = 1; i < n; ++i) {
            const uint32_t at = xg_phrase_lower(pos[i], count[i], last + 1);
            if (at == count[i]) return 0;   /* no later start completes */
            last = pos[i][at];
        }
        if (last - first + 1 <= window) return 1;
    }
    return 0;
}

XG_HOST_DEVICE static inline int xg_near_holds(const uint32_t *const *pos,
                                               const uint32_t *count,
                                               uint32_t n, uint32_t window,
                                               uint32_t *at)
{
    for (uint32_t i = 0; i < n; ++i) {
        if (!count[i]) return 0;
        at[i] = 0;
    }
    for (;;) {
        uint32_t lo = 0;
        uint64_t hi = pos[0][at[0]];
        for (uint32_t i = 1; i < n; ++i) {
            if (pos[i][at[i]] < pos[lo][at[lo]]) lo = i;
            if (pos[i][at[i]] > hi) hi = pos[i][at[i]];
        }
        if (hi - pos[lo][at[lo]] < window) {
            int distinct = 1;
            for (uint32_t i = 0; i < n && distinct; ++i)
                for (uint32_t j = i + 1; j < n; ++j)
                    if (pos[i][at[i]] == pos[j][at[j]]) { distinct = 0; break; }
            if (distinct) return 1;
            if (++at[lo] == count[lo]) return 0;
            continue;
        }
        const uint64_t from = hi - window + 1;
        at[lo] = xg_phrase_lower(pos[lo], count[lo], from);
        if (at[lo] == count[lo]) return 0;
    }
}

/* The filter of kind `kind` (enum xg_qfilter_kind); `at` has room for n. */
XG_HOST_DEVICE static inline int xg_filter_holds(uint32_t kind,
                                                 const uint32_t *const *pos,
                                                 const uint32_t *count,
                                                 uint32_t n, uint32_t window,
                                                 uint32_t *at)
{
    return kind == XG_QF_NEAR ? xg_near_holds(pos, count, n, window, at)
                     : xg_phrase_holds(pos, count, n, window);
}

#endif
