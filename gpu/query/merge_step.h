/** @file merge_step.h
 *  @brief One thread's share of a merge path (merge.h), shared by the
 *         kernel and its twin: find where diagonal d0 crosses the merge of
 *         A and B (xg_merge_split), then walk to d1.
 */
#ifndef XG_MERGE_STEP_H
#define XG_MERGE_STEP_H

#include <stdint.h>

#include "../runtime/host_device.h"

/* How many of A lie among the first d of the merge of A and B. */
XG_HOST_DEVICE static inline uint32_t
xg_merge_split(const uint32_t *A, uint32_t na, const uint32_t *B, uint32_t nb,
               uint64_t d)
{
    uint64_t lo = d > nb ? d - nb : 0, hi = d < na ? d : na;
    while (lo < hi) {
        const uint64_t mid = (lo + hi) >> 1;
        if (A[mid] <= B[d - mid - 1]) lo = mid + 1; else hi = mid;
    }
    return (uint32_t)lo;
}

/* Merge order: A[i] goes before B[j] when A[i] <= B[j], so a document in
 * both is met first as A's, while B's copy is still at j: the step that
 * consumes A[i] sees its match.  Each A[i] is consumed by exactly one
 * step, hence written by exactly one thread.  A and B may be a tile of
 * longer lists (merge.cu), B starting at index b_base of its list: B[nb]
 * is then still readable, up to nb_ext, for the match test of the tile's
 * last A's. */
XG_HOST_DEVICE static inline void
xg_merge_walk(const uint32_t *A, uint32_t na, const uint32_t *B, uint32_t nb,
              uint32_t nb_ext, uint32_t b_base, uint64_t d0, uint64_t d1,
              uint32_t *pos)
{
    uint32_t i = xg_merge_split(A, na, B, nb, d0), j = (uint32_t)(d0 - i);
    for (uint64_t d = d0; d < d1; ++d) {
        if (i < na && (j >= nb || A[i] <= B[j])) {
            pos[i] = j < nb_ext && B[j] == A[i] ? b_base + j : UINT32_MAX;
            ++i;
        } else {
            ++j;
        }
    }
}

#endif
