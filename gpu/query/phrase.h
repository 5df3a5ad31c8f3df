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
 */
#ifndef XG_PHRASE_H
#define XG_PHRASE_H

#include <stdint.h>

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

#endif
