/** @file cand_sort.h
 *  @brief A query's candidates in their MSet order: weight descending,
 *         then dense document ascending (the batch's finish, batch.c).
 */
#ifndef XG_CAND_SORT_H
#define XG_CAND_SORT_H

#include <stdint.h>

#include "engine_types.h"

/* 1 if a comes before b. */
static inline int xg_cand_before(const struct xg_dcand *a,
                                 const struct xg_dcand *b)
{
    return a->weight > b->weight || (a->weight == b->weight && a->doc < b->doc);
}

/* c[0..n) into that order.  An introsort with the comparison inlined:
 * qsort's call per comparison was most of a top-1000 query's host
 * finish.  Insertion sort below 16, heap sort past a depth of 2 log2 n. */
void xg_cand_sort(struct xg_dcand *c, uint32_t n);

/* The first k of c[0..m) (k < m), in order, at c[0..k): a quickselect
 * of the k, then those k sorted (the rest left in no order). */
void xg_cand_top(struct xg_dcand *c, uint32_t m, uint32_t k);

/* The heap sort alone (the tests reach the introsort's fallback here). */
void xg_cand_heapsort(struct xg_dcand *c, uint32_t n);

#endif
