/** @file mset_compare.h
 *  @brief The C tests' one comparison of two answers (struct xg_result):
 *         the exactness contract's docids, order and bit-equal weights,
 *         and the match estimate where the reference MSet holds every
 *         match (otherwise stock's count is an estimate its pruning made,
 *         which an accelerated Enquire need not reproduce: docs/plugin.md,
 *         "What can differ").
 */
#ifndef XG_TESTS_MSET_COMPARE_H
#define XG_TESTS_MSET_COMPARE_H

#include <stdint.h>
#include <string.h>

#include "../gpu/xapian-gpu-types.h"

/* Same docids, in the same order, with bit-equal weights. */
static inline int xg_test_same_hits(const struct xg_result *a,
                                    const struct xg_result *b)
{
    if (a->n_hits != b->n_hits) return 0;
    for (uint32_t i = 0; i < a->n_hits; ++i)
        if (a->hits[i].docid != b->hits[i].docid ||
            memcmp(&a->hits[i].weight, &b->hits[i].weight, 8))
            return 0;
    return 1;
}

/* The same, and the same estimate where ref (top k) has fewer than k. */
static inline int xg_test_same_mset(const struct xg_result *a,
                                    const struct xg_result *ref, uint32_t k)
{
    return xg_test_same_hits(a, ref) &&
           (ref->n_hits >= k || a->matches_estimated == ref->matches_estimated);
}

#endif
