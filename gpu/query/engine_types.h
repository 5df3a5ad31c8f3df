/** @file engine_types.h
 *  @brief Plain structs shared by the GPU runtime (C) and the kernels
 *         (CUDA): the resident index and one batch's work description.
 *
 *  Everything here is POD with fixed-width fields so the host builds a
 *  batch in one pinned buffer and copies it with a single cudaMemcpyAsync.
 *  The same structs feed the CPU twins (*_ref.c), so a GPU test runs the
 *  twin and the kernel on identical inputs.
 */
#ifndef XG_GPU_TYPES_H
#define XG_GPU_TYPES_H

#include <stdint.h>

#include "../index/format.h"
#include "../query_shape.h"

/* Most leaves / AND operands a query may have on the GPU; more goes to the
 * CPU matcher (still exact). */
#define XG_GPU_MAX_LEAVES 64u
#define XG_GPU_MAX_GROUPS 32u
/* Position filters on the GPU (an AND of terms only): at most this many
 * per query, of at most this many terms; a term with more positions in a
 * document than the device reads sends its query to the CPU matcher. */
#define XG_GPU_MAX_FILTERS 8u
#define XG_GPU_MAX_FILTER_TERMS 8u
#define XG_GPU_MAX_FILTER_POS 32u

/* The resident index: device pointers (or, for the twins, host pointers). */
struct xg_dindex {
    const uint8_t *postings;            /* POSTINGS, padded at the end; or
                                           the LRU cache's pool */
    const uint64_t *list_off;           /* per term: its list's byte offset
                                           in `postings` (the cache moves
                                           lists, so kernels read this, not
                                           xg_fmt_term.postings_offset) */
    const struct xg_fmt_skip *skip;
    const struct xg_fmt_term *terms;
    const struct xg_fmt_term_lr *terms_lr;
    const uint64_t *bloom;
    const uint32_t *hashseg;
    const uint32_t *docids;             /* dense -> Xapian docid */
    const uint32_t *doclens;
    const double *kd;                   /* xg_bm25_kd() per dense doc */
    const struct xg_fmt_impact *impacts;/* per term, or NULL: the engine
                                           does not use impacts */
    const uint8_t *impact_codes;        /* one per posting (format.h) */
    const uint64_t *pos_offsets;        /* POSITIONS (positions.h), or NULL:
                                           not resident, so position
                                           filters stay on the CPU */
    const uint8_t *pos_data;
    uint32_t n_docs, n_shards, bloom_hashes, pad;
};

/* A position filter of an INTERSECT query (struct xg_qfilter's kind and
 * window): its terms are the query's leaves [first, first + n). */
struct xg_dfilter {
    uint32_t kind, window, first, n;
};

/* Membership tests for AND (seed 004 ch. 4-5, seed 003 §8.1).  The kind
 * is in the low bits of xg_dlist.method; flags above it. */
enum xg_member_method {
    XG_MEMBER_BINARY = 0,   /* binary search over the whole list */
    XG_MEMBER_LR = 1,       /* linear-regression search range */
    XG_MEMBER_HASHSEG = 2,  /* hash-segment search range */
    XG_MEMBER_MERGE = 3,    /* merge path of the shortest list and this one
                               (positions precomputed by merge.cu) */
    XG_MEMBER_BLOCK = 4,    /* Parallel Merge Find: only the blocks whose
                               B* range holds a candidate are decoded; the
                               search runs inside that block */
    XG_MEMBER_AUTO = 7      /* chosen per list by xg_member_choose() */
};
#define XG_MEMBER_KIND 7u   /* mask of the kind */
#define XG_MEMBER_KINDS 5   /* BINARY .. BLOCK */
#define XG_MEMBER_BLOOM 8u  /* flag: Bloom prefilter before the search */

/* One list of the batch: a distinct term of a query. */
struct xg_dlist {
    uint32_t query;         /* index of its query in the batch */
    uint32_t term;          /* term id */
    uint32_t df, n_blocks;
    uint64_t block_start;   /* prefix of n_blocks over the batch's lists */
    uint64_t decoded;       /* offset of its decoded postings in scratch
                               (AND queries), or ~0 if not decoded */
    double weight;          /* OR: sum of its leaves' termweights (for the
                               approximate score) */
    uint32_t group_mask;    /* AND operands it belongs to */
    uint32_t method;        /* enum xg_member_method [| XG_MEMBER_BLOOM] */
    uint64_t mpos;          /* MERGE: offset of its per-candidate positions
                               (one per posting of the shortest list) */
    uint32_t imp_mult;      /* impact rows: xg_impact_units' multiplier */
    uint32_t pad;
};

enum xg_dpath {
    XG_DPATH_DENSE = 0,     /* accumulate into dense per-doc arrays */
    XG_DPATH_INTERSECT = 1  /* AND of single terms: intersect the lists */
};

/* One query of the batch. */
struct xg_dquery {
    uint32_t path;          /* enum xg_dpath */
    uint32_t k;
    uint32_t n_lists, list_first;
    uint32_t n_leaves, leaf_first;  /* into the leaf arrays */
    uint32_t n_groups;
    uint32_t all_groups;    /* mask a document must reach (AND); 0: OR */
    uint32_t plan_first;    /* plan ops of shard s at plan_first +
                               s * plan_stride */
    uint32_t plan_stride, plan_len;
    uint32_t shortest;      /* INTERSECT: list index of the shortest */
    uint64_t slot;          /* DENSE: accumulator row */
    uint64_t cand_first;    /* selection output: candidate buffer offset */
    uint64_t wdf_first;     /* DENSE: the finish's wdf table, n_lists a
                               candidate (finish.cu) */
    uint32_t cand_cap;
    uint32_t impact_row;    /* DENSE OR from impacts: its row is the uint32
                               `mask` row of integer bounds (impact.h), no
                               double accumulator */
    uint64_t icand_first;   /* INTERSECT: offset of its matches (room for
                               the shortest list's df) */
    uint32_t filter_first;  /* INTERSECT: its position filters, which */
    uint32_t n_filters;     /* the plan's FILTER ops number from 0 */
    double k2_qlen;         /* unused unless k2 != 0 (query_length) */
    double margin;          /* impact_row: how many units a row may exceed
                               the weight by (xg_impact_units); 0 else */
    uint64_t match_bound;   /* DENSE: at most this many documents match
                               (its lists' dfs summed; AND: the least sum
                               over its groups); the selection skips its
                               histograms below half the room */
    uint64_t touch_first;   /* sparse: where its touched list starts */
    uint32_t sparse;        /* impact_row with few postings: the
                               accumulation lists each document it first
                               touches (touched[touch_first ..], counted in
                               icount[query]), and the selection reads that
                               list instead of the whole row */
    uint32_t pad_sparse;
};

/* Per-query results of the selection and the finish. */
struct xg_dqresult {
    uint64_t matched;       /* exact number of matching documents */
    uint32_t n_cand;        /* candidates written */
    uint32_t overflow;      /* 1: too many near-ties, use the CPU matcher */
    double max_score;
    double threshold;
};

/* A candidate's cell of its DENSE query's row, once the selection is
 * done: its slot in the query's room under this bit, which no slot
 * reaches (the selection's keep pass writes it, finish.cu reads it). */
#define XG_CAND_MARK 0x80000000u

/* A candidate: dense doc and its (approximate, then exact) weight. */
struct xg_dcand {
    uint32_t doc;
    uint32_t matched;       /* the finish's: 0, or 1 + the leaves the
                               document matches; 1 on the intersection */
    double weight;
};

#endif
