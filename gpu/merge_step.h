/** @file merge_step.h
 *  @brief One thread's share of a merge path (merge.h), shared by the
 *         kernel and its twin: find where diagonal d0 crosses the merge of
 *         A and B, then walk to d1.
 */
#ifndef XG_MERGE_STEP_H
#define XG_MERGE_STEP_H

#include <stdint.h>

#include "host_device.h"

/* Merge order: A[i] goes before B[j] when A[i] <= B[j], so a document in
 * both is met first as A's, while B's copy is still at j: the step that
 * consumes A[i] sees its match.  Each A[i] is consumed by exactly one
 * step, hence written by exactly one thread. */
XG_HOST_DEVICE static inline void
xg_merge_walk(const uint32_t *A, uint32_t na, const uint32_t *B, uint32_t nb,
              uint64_t d0, uint64_t d1, uint32_t *pos)
{
    /* i = how many of A lie among the first d0 merged. */
    uint64_t lo = d0 > nb ? d0 - nb : 0, hi = d0 < na ? d0 : na;
    while (lo < hi) {
        const uint64_t mid = (lo + hi) >> 1;
        if (A[mid] <= B[d0 - mid - 1]) lo = mid + 1; else hi = mid;
    }
    uint32_t i = (uint32_t)lo, j = (uint32_t)(d0 - lo);
    for (uint64_t d = d0; d < d1; ++d) {
        if (i < na && (j >= nb || A[i] <= B[j])) {
            pos[i] = j < nb && B[j] == A[i] ? j : UINT32_MAX;
            ++i;
        } else {
            ++j;
        }
    }
}

#endif
