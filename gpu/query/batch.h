/** @file batch.h
 *  @brief Build one batch's work description (query/engine_types.h) from parsed
 *         queries, and turn the selected, rescored candidates back into
 *         MSets.  Pure C: shared by the GPU pipeline and the twin pipeline.
 */
#ifndef XG_BATCH_H
#define XG_BATCH_H

#include <stdint.h>

#include "../bm25.h"
#include "engine.h"
#include "engine_types.h"

struct xg_batch {
    uint32_t n_queries;             /* queries sent to the device */
    struct xg_dquery *queries;
    uint32_t *qmap;                 /* batch query -> caller's index */
    uint32_t n_lists, n_dense_lists;/* DENSE queries' lists come first */
    struct xg_dlist *lists;
    uint64_t dense_blocks, total_blocks;
    uint32_t n_leaves;
    uint32_t *leaf_list;
    double *leaf_tw;
    uint32_t n_plan;
    struct xg_plan_op *plan;
    uint32_t n_filters, cap_filters;
    struct xg_dfilter *filters;     /* INTERSECT queries' position filters */
    uint32_t n_iq;                  /* INTERSECT queries */
    uint32_t *iq;
    uint64_t *iprefix;
    uint32_t n_ml;                  /* XG_MEMBER_MERGE lists (merge.h) */
    uint32_t *mlist;
    uint64_t *mprefix;              /* n_ml + 1 prefix sums of chunks */
    uint64_t mpos_total;            /* their positions (xg_dlist.mpos) */
    uint32_t n_rows;                /* dense accumulator rows */
    uint64_t decoded_total;         /* scratch postings (INTERSECT lists) */
    uint64_t icand_total, cand_total;
    uint64_t touch_total;           /* sparse queries' touched lists */
    uint64_t wdf_total;             /* DENSE: cand_cap * n_lists, summed */
    uint32_t cap_queries, cap_lists, cap_leaves, cap_plan, cap_mlist;
    struct xg_bm25_query bm25;
    int impacts;                    /* OR queries accumulate impact bounds */
    uint32_t exact_rows;            /* DENSE queries with a double row */
    uint64_t member_lists[XG_MEMBER_KINDS]; /* lists probed, by method */
    uint64_t bloom_lists;           /* of which behind a Bloom filter */
    uint32_t cand_min;
    double impact_slack;
    int sparse;                     /* impact rows may list their touched
                                       documents (a large batch) */
    int all_sparse;
};

/* How a batch is built. */
struct xg_batch_opts {
    uint32_t member;                /* engine option (enum xg_member_method) */
    int bloom;                      /* engine option */
    int impacts;                    /* DENSE OR queries choose candidates
                                       from the index's impacts (the caller
                                       checked they were made for p) */
    uint32_t cand_min;              /* least candidate room per query */
    double impact_slack;            /* impact margins times this (1; the
                                       tests widen them to force overflows
                                       and so the engine's retry) */
    uint64_t n_docs, total_length;  /* the collection statistics every
                                       query of the batch is weighed with
                                       (its K_d per document) */
    int positions;                  /* the positions are resident: an AND
                                       of terms with phrase or NEAR
                                       filters runs on the device */
    int all_sparse;                 /* every impact row lists its touched
                                       documents (tests) */
};

/* The path (enum xg_dpath) that serves query eq, -1 where the CPU
 * matcher must (for a position filter too where positions is 0: the
 * index's positions are not resident), or -2 where the answer is empty
 * (an AND operand with no indexed term). */
int xg_batch_path(const struct xg_engine_query *eq, int positions);

/* Build the batch for queries [first, first + n) of qs.  Queries answered
 * without the device (no leaves, an AND operand with no indexed term) get
 * their (empty) result and status XG_OK here; those the engine cannot
 * serve get XG_ERR_UNSUPPORTED.  Returns XG_OK or XG_ERR_NOMEM. */
int xg_batch_build(struct xg_batch *b, const struct xg_index *ix,
                   const struct xg_engine_query *qs, uint32_t first,
                   uint32_t n, const struct xg_bm25_params *p,
                   const struct xg_batch_opts *o, struct xg_result *out,
                   int *status);

/* A query's matched candidates, taken from a batch's buffers but not yet
 * in MSet order: the last step of the finish, which xg_later_finish runs
 * on whichever thread waits for the query.  All zero: nothing to finish
 * (the query's result was final). */
struct xg_later {
    struct xg_dcand *c;         /* malloc'd, m of them */
    const uint32_t *docids;     /* the index's: dense number -> docid */
    uint64_t matched;           /* the query's matches_estimated */
    uint32_t m, k;
    uint32_t leaves;            /* an intersection's: each candidate
                                   matches them all; 0: its own count */
};

/* Turn the batch's per-query results and candidates (host copies) into
 * MSets for the caller's queries, or, with `later`, into each query's
 * later[caller] (the caller's out[] untouched) for xg_later_finish.
 * Query i's candidates start at its cand_first, or, if `packed`, right
 * after query i-1's n_cand ones.  An overflowing query gets status
 * XG_ERR_UNSUPPORTED.  Returns XG_OK or XG_ERR_NOMEM. */
int xg_batch_finish(const struct xg_batch *b, const struct xg_index *ix,
                    const struct xg_dqresult *res,
                    const struct xg_dcand *cand, int packed,
                    struct xg_result *out, struct xg_later *later,
                    int *status);

/* out: l's top k in MSet order, as xg_batch_finish gives it; frees l's
 * candidates.  Nothing where l is all zero.  XG_OK or XG_ERR_NOMEM (out
 * empty). */
int xg_later_finish(struct xg_later *l, struct xg_result *out);
void xg_later_free(struct xg_later *l);

void xg_batch_free(struct xg_batch *b);

#endif
