/** @file match_ref.h
 *  @brief The exact CPU matcher over the GPU index (CPU twin of the GPU
 *         engine).
 *
 *  Document-at-a-time over the query's lists: every matching document is
 *  scored with BM25 (bm25.h) summed in the order of its shard's plan
 *  (query_shape.h), so weights are bit-equal to Xapian's; the top k are kept with
 *  Xapian's MSet order (weight descending, then docid ascending).
 */
#ifndef XG_MATCH_REF_H
#define XG_MATCH_REF_H

#include <stdint.h>

#include "../index/format_read.h"
#include "../bm25.h"
#include "../query_shape.h"

/* Match `q` on `ix`.  leaf_term[i] is leaf i's term id (-1: not in the
 * index), plans[s] the plan for shard s (ix->hdr->n_shards of them);
 * ws the statistics it is weighed with (NULL: the index's own).
 * out->matches_estimated is the exact number of matching documents.
 * Returns XG_OK, XG_ERR_FORMAT (corrupt block), XG_ERR_NOMEM. */
int xg_match_ref(const struct xg_index *ix, const struct xg_query *q,
                 const int64_t *leaf_term, const struct xg_plan *plans,
                 const struct xg_bm25_params *p,
                 const struct xg_weigh_stats *ws, uint32_t k,
                 struct xg_result *out);

#endif
