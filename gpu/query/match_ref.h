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

/* The same top k (hits, weights, matched leaves) where the match count is
 * not needed: a flat OR of terms skips the documents whose BM25 upper
 * bound cannot reach the k-th weight (match_prune.c), and
 * out->matches_estimated is then only the number of documents weighed,
 * at most the true count.  Other queries: xg_match_ref. */
int xg_match_ref_top(const struct xg_index *ix, const struct xg_query *q,
                     const int64_t *leaf_term, const struct xg_plan *plans,
                     const struct xg_bm25_params *p,
                     const struct xg_weigh_stats *ws, uint32_t k,
                     struct xg_result *out);

/* The same top k with the exact count (matches_estimated is the number
 * of matching documents, as xg_match_ref's): for a query that
 * xg_match_ref_top prunes (a flat OR: no value range), its pruned top k
 * and the union of its lists counted apart (a bitmap over the documents;
 * a list alone, its length).  Other queries: xg_match_ref. */
int xg_match_ref_top_counted(const struct xg_index *ix,
                             const struct xg_query *q,
                             const int64_t *leaf_term,
                             const struct xg_plan *plans,
                             const struct xg_bm25_params *p,
                             const struct xg_weigh_stats *ws, uint32_t k,
                             struct xg_result *out);

/* Whether xg_match_ref_top prunes q (at any k > 0): a flat OR of terms,
 * with no position filter or exclusion, weighed with no per-document
 * extra (k2 = 0). */
static inline int xg_match_top_prunes(const struct xg_query *q,
                                      const struct xg_bm25_params *p)
{
    return q->op == XG_QOP_OR && !q->n_filters && !q->n_negated &&
           p->k2 == 0;
}

/* The same match, moving the lists as Xapian 1.4.22's postlist tree moves
 * them (match_tree.c): where an AND checks an OR that holds a phrase,
 * Xapian's weights follow those moves, not the query's meaning.
 * xg_match_ref() hands such queries (xg_match_needs_tree) to it; other
 * queries give the same MSet from both.  Queries with AND_NOT are
 * refused (XG_ERR_UNSUPPORTED). */
int xg_match_tree(const struct xg_index *ix, const struct xg_query *q,
                  const int64_t *leaf_term, const struct xg_plan *plans,
                  const struct xg_bm25_params *p,
                  const struct xg_weigh_stats *ws, uint32_t k,
                  struct xg_result *out);

/* 1: the general form, or an AND with a phrase inside one of its OR
 * operands. */
static inline int xg_match_needs_tree(const struct xg_query *q)
{
    if (q->op == XG_QOP_TREE) return 1;
    if (q->op != XG_QOP_AND || q->n_groups < 2) return 0;
    for (uint32_t f = 0; f < q->n_filters; ++f)
        if (q->filters[f].clause) return 1;
    return 0;
}

#endif
