/** @file value_range.h
 *  @brief OP_VALUE_RANGE, OP_VALUE_GE and OP_VALUE_LE over the index's
 *         document values: which documents match, and the postlist Xapian
 *         1.4.22 opens for one on a shard with its estimate (the plan's
 *         shapes depend on it).
 */
#ifndef XG_VALUE_RANGE_H
#define XG_VALUE_RANGE_H

#include <stdint.h>

#include "../index/format_read.h"
#include "../query_shape.h"

/* The postlist QueryValueRange::postlist (or _GE's, _LE's) opens. */
enum xg_vr_list {
    XG_VR_EMPTY = 0,    /* EmptyPostList: nothing in range */
    XG_VR_ALL = 1,      /* the all-documents list: every document has a
                           value and all lie in range (no matching
                           subquery counted: a LeafPostList unweighted) */
    XG_VR_VALUES = 2    /* ValueRangePostList or ValueGePostList (one
                           matching subquery per document) */
};

/* Range r on shard `shard` of shard_doccount documents: *list and its
 * get_termfreq_est() *est, from the shard's bounds in the index.
 * XG_ERR_UNSUPPORTED where the index does not hold the slot's values. */
int xg_value_range_open(const struct xg_index *ix, const struct xg_qrange *r,
                        uint32_t shard, uint32_t shard_doccount, int *list,
                        uint32_t *est);

/* 1 when dense document d's value in e's slot is set and lies in r. */
int xg_value_range_holds(const struct xg_index *ix,
                         const struct xg_fmt_value_slot *e,
                         const struct xg_qrange *r, uint32_t d);

#endif
