/** @file query_shape.h
 *  @brief A parsed query in the shapes the engines serve, its summation plan,
 *         and the result of a search.
 *
 *  Shapes (what QueryParser builds from plain words): OP_OR or OP_AND of
 *  leaves, where an AND operand is a term or an OR of terms.  Nested ORs
 *  inside an OR and nested ANDs inside an AND are flattened, as Xapian's
 *  OrContext/AndContext flatten them.  Every leaf keeps its own wqf and
 *  position in depth-first order; repeated words stay separate leaves.
 *  OP_SCALE_WEIGHT leaves no node of its own: its factor is multiplied
 *  into each leaf below it, as QueryScaleWeight::postlist does.
 *
 *  OP_AND_NOT at the root: its first operand is converted as a query of
 *  its own, the rest (terms, ORs of terms) become negated leaves.
 *
 *  OP_PHRASE of terms adds a position filter (struct xg_qfilter) over its
 *  leaves, which stay contiguous in the leaf array.  As an operand of an
 *  AND (or as the whole query) its terms are operands of that AND, as
 *  Xapian's AndContext merges them, and the filter applies to the AND's
 *  matches; as an operand of an OR it is a clause of its own: the AND of
 *  its leaves, filtered, as one OR operand.
 *
 *  The plan (struct xg_plan) fixes the order in which leaf weights are
 *  added for one shard, replicating the postlist tree Xapian 1.4.22 builds
 *  (xapian-notes.md §1 step 4): a Huffman tree of binary ORs by termfreq_est,
 *  and MultiAndPostList's sorted chain.  Floating-point addition is
 *  commutative but not associative, so the tree shape is what must match.
 */
#ifndef XG_QUERY_H
#define XG_QUERY_H

#include <stdint.h>

#include "xapian-gpu-types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define XG_QUERY_MAX_LEAVES 1024u
#define XG_QUERY_MAX_FILTERS 64u

enum xg_qop {
    XG_QOP_OR = 1,  /* any leaf matches; all leaves in one OR tree */
    XG_QOP_AND = 2, /* every group matches; a group is an OR of its leaves */
    XG_QOP_TREE = 3 /* the general form: xg_query.nodes (CPU matcher only) */
};

/* The general form: the Query's tree in postfix.  A node with n kids
 * follows them; PHRASE is over its filter's leaves, SCALE over one kid
 * (its factor is already in the leaves below: it only keeps the kid a
 * subtree of its own, as Xapian builds it). */
enum xg_qnode_kind {
    XG_QN_LEAF = 1,     /* arg: leaf */
    XG_QN_OR,           /* arg: kids */
    XG_QN_AND,          /* arg: kids */
    XG_QN_FILTER,       /* arg: kids; the later ones unweighted */
    XG_QN_AND_NOT,      /* arg: kids; the later ones unweighted */
    XG_QN_AND_MAYBE,    /* arg: kids */
    XG_QN_PHRASE,       /* arg: filter */
    XG_QN_SCALE,        /* one kid */
    XG_QN_SYN,          /* arg: syn; one kid, an OR context of its own */
    XG_QN_WILDCARD      /* arg: wildcard; no kid (xg_query_expand_wildcards
                           replaces it with its terms' leaves) */
};

/* OP_SYNONYM, and what a wildcard expands to (QueryWildcard::postlist):
 * the OR of its kid's operands built in an OR context of its own, and,
 * where factor != 0, weighed as one term (SynonymPostList: the wdfs
 * summed, clamped to the document's length; the termfreq estimated from
 * the OR tree; wqf 1).  Its leaves are unweighted (factor 0). */
struct xg_qsyn {
    double factor;      /* 0: an unweighted OR context, no synonym */
};

/* OP_WILDCARD before expansion: its pattern is leaf `leaf` (factor 0,
 * wqf 1: QueryWildcard::get_length()), to become the index's terms that
 * start with it, in byte order, as Database::allterms(pattern) lists
 * them. */
struct xg_qwild {
    uint32_t leaf;
    uint32_t max_expansion;     /* 0: no limit */
    uint32_t max_type;          /* XG_WILDCARD_LIMIT_* */
};

/* Query::WILDCARD_LIMIT_ERROR, _FIRST and _MOST_FREQUENT's values. */
#define XG_WILDCARD_LIMIT_ERROR 0u
#define XG_WILDCARD_LIMIT_FIRST 1u
#define XG_WILDCARD_LIMIT_MOST_FREQUENT 2u

/* OP_VALUE_RANGE, OP_VALUE_GE and OP_VALUE_LE: the documents whose value
 * in `slot` is set and lies in [begin, end] in byte order (no end for
 * GE; an empty begin for LE).  Each is leaf `leaf` (term "", wqf 0, the
 * factor of where it stands), as Xapian opens a postlist of weight 0 for
 * it; only the general form holds them. */
enum xg_qrange_kind { XG_QR_RANGE = 1, XG_QR_GE = 2, XG_QR_LE = 3 };

#define XG_QRANGE_MAX 64u     /* longest bound held (longer: unsupported) */

struct xg_qrange {
    uint32_t kind;          /* enum xg_qrange_kind */
    uint32_t slot;
    uint32_t leaf;
    uint32_t begin_len, end_len;
    char begin[XG_QRANGE_MAX];
    char end[XG_QRANGE_MAX];
};

#define XG_QUERY_MAX_RANGES 16u

#define XG_QUERY_MAX_SYNS 256u
#define XG_QUERY_MAX_WILDCARDS 256u

struct xg_qnode {
    uint16_t kind;      /* enum xg_qnode_kind */
    uint16_t arg;
};

#define XG_QUERY_MAX_NODES (2u * XG_QUERY_MAX_LEAVES)

struct xg_qleaf {
    const char *term;   /* points into xg_query.strbuf */
    uint32_t term_len;
    uint32_t wqf;       /* within-query frequency of this leaf */
    uint32_t group;     /* AND operand index (always 0 under XG_QOP_OR) */
    uint32_t expanded;  /* 1: from a wildcard's expansion (or its pattern,
                           where none): the match registers its term for
                           the statistics, the query's terms do not */
    double factor;      /* BM25Weight::init's factor: the product of the
                           enclosing OP_SCALE_WEIGHT factors, root first
                           (1.0 under none); > 0 unless negated */
    uint32_t range;     /* 0: a term; r + 1: value range r (no term) */
    uint32_t negated;   /* 1: a right operand of the root's OP_AND_NOT
                           (factor 0, in no group and no plan): a document
                           it matches is excluded */
};

/* A position filter: Xapian 1.4's ExactPhrasePostList when window equals
 * the number of terms, PhrasePostList when it is larger; NearPostList for
 * XG_QF_NEAR (general form only).  Its terms are leaves [first, first +
 * n), in the query's order. */
enum xg_qfilter_kind { XG_QF_PHRASE = 1, XG_QF_NEAR = 2 };

struct xg_qfilter {
    uint32_t kind;              /* enum xg_qfilter_kind */
    uint32_t window;            /* >= n */
    uint32_t first, n;          /* n >= 2 */
    uint32_t clause;            /* 1: an OR operand of its own (the AND of
                                   its leaves, filtered; the leaves carry
                                   the OR's group); 0: its leaves are
                                   operands of the query's AND, each its
                                   own group, and it filters that AND */
};

struct xg_query {
    int op;                     /* enum xg_qop */
    uint32_t n_leaves;          /* 0: matches nothing */
    uint32_t n_groups;
    uint32_t query_length;      /* sum of wqf over the leaves before any
                                   wildcard's expansion (BM25 k2) */
    uint32_t n_filters;         /* position filters (0: none) */
    uint32_t n_negated;         /* negated leaves (0: no OP_AND_NOT) */
    uint32_t n_nodes;           /* XG_QOP_TREE: its nodes */
    uint32_t n_syns, n_wildcards;   /* XG_QOP_TREE: XG_QN_SYN/WILDCARD's */
    uint32_t n_ranges;              /* XG_QOP_TREE: value ranges */
    struct xg_qfilter filters[XG_QUERY_MAX_FILTERS];
    struct xg_qnode nodes[XG_QUERY_MAX_NODES];
    struct xg_qsyn syns[XG_QUERY_MAX_SYNS];
    struct xg_qwild wildcards[XG_QUERY_MAX_WILDCARDS];
    struct xg_qrange ranges[XG_QUERY_MAX_RANGES];
    struct xg_qleaf leaves[XG_QUERY_MAX_LEAVES];
    char *strbuf;               /* owned; freed by xg_query_free() */
};

void xg_query_free(struct xg_query *q);

/* The subqueries Xapian 1.4.22 counts for the percentages
 * (QueryOptimiser::inc_total_subqs): each leaf of factor other than 0
 * and each weighted synonym (one for all its terms); not a FILTER's or
 * AND_NOT's later operands, nor anything scaled by 0. */
uint32_t xg_query_weighted_subqs(const struct xg_query *q);

/* neg[i] = 1 for each leaf i under an AND_NOT's later operand (whose
 * postlists Xapian weighs not at all: AndNotPostList's maximum is its
 * left side's).  0, or -1 for a malformed tree. */
int xg_query_negated_leaves(const struct xg_query *q, uint8_t *neg);

/* Summation plan: a postfix program over leaf weights.  Evaluating it for a
 * document yields (matched, weight):
 *   XG_PLAN_LEAF i  push (leaf i matched?, its sumpart)
 *   XG_PLAN_OR2     pop r, l; push matched = l|r, weight = l+r, l or r
 *                   (OrPostList::get_weight)
 *   XG_PLAN_AND n   pop n kids pushed in order; matched = all;
 *                   weight = ((0 + w0) + w1) + ... (MultiAndPostList)
 *   XG_PLAN_FILTER f  pop (m, w); push (m && filter f passes, w)
 *   XG_PLAN_AND_NOT   pop r, l; push (l and not r, l's weight)
 *   XG_PLAN_AND_MAYBE pop r, l; push (l, l + r where r matches, else l)
 *   XG_PLAN_SYN s     the OR tree below is synonym s: its weight is the
 *                     summed wdf's, not the kids' (the tree matcher's only)
 * The last three come only from XG_QOP_TREE queries. */
enum xg_plan_kind {
    XG_PLAN_LEAF = 1, XG_PLAN_OR2 = 2, XG_PLAN_AND = 3, XG_PLAN_FILTER = 4,
    XG_PLAN_AND_NOT = 5, XG_PLAN_AND_MAYBE = 6, XG_PLAN_SYN = 7
};

struct xg_plan_op {
    uint16_t kind;  /* enum xg_plan_kind */
    uint16_t arg;   /* leaf index (LEAF) or number of kids (AND) */
};

#define XG_PLAN_MAX_OPS (3u * XG_QUERY_MAX_LEAVES + XG_QUERY_MAX_FILTERS + \
                         XG_QUERY_MAX_SYNS)

/* The root's get_termfreq_min/est/max(): the match bounds Xapian starts
 * a match on the shard from (multimatch.cc), as Enquire::get_mset(0, 0)
 * reports them.  bounds_known is 0 where the plan does not hold the whole
 * tree Xapian builds (an OP_AND_NOT's negated leaves in the flat shapes,
 * value ranges); then only Xapian can tell. */
enum { XG_PLAN_MIN = 0, XG_PLAN_EST = 1, XG_PLAN_MAX = 2 };

struct xg_plan {
    uint32_t n_ops;
    uint32_t bounds_known;
    uint32_t bounds[3];         /* XG_PLAN_MIN, _EST, _MAX */
    struct xg_plan_op ops[XG_PLAN_MAX_OPS];
};

/* struct xg_bm25_params, xg_hit, xg_result: the public API's types. */


#ifdef __cplusplus
}
#endif
#endif
