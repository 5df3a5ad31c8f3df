/** @file match_tree.c
 *  @brief The CPU matcher that moves its lists as Xapian's postlist tree
 *         does (see match_ref.h, xg_match_tree).
 *
 *  match_ref.c decides each document from the query's meaning.  That is
 *  Xapian's answer wherever Xapian's tree only ever moves with next() and
 *  skip_to().  Under an AND, an OR operand is moved with check(): Xapian
 *  1.4.22's OrPostList then marks a branch whose check failed as being at
 *  the candidate + 1 without moving it, and where its other branch really
 *  is at that document, a parent OR that holds it as its left branch does
 *  not check it again there: the document gets the failed branch's weight
 *  too, the weight of wherever that branch's lists stand (an OR of a
 *  phrase's AND and words: a phrase whose position check failed, or whose
 *  terms are not all present).  No reading of the query gives that weight;
 *  only the same moves do.  So this matcher builds the tree from the
 *  shard's plan (leaves, binary ORs, MultiAnds in their kid order, phrase
 *  filters) and runs Xapian's next/skip_to/check rules on it, at a
 *  minimum weight of 0: stock's full ranking (check_at_least of the
 *  database's size), whose top k stock's own pruned match may miss, as
 *  the tests report apart.
 *
 *  Each shard is a tree of its own over its local docids, as each
 *  sub-database is in Xapian; a leaf's cursor skips other shards' postings.
 */
#include "match_ref.h"

#include "../bm25.h"
#include "match_int.h"
#include "plan_eval.h"
#include "value_range.h"

#define NONE UINT32_MAX

enum { TN_LEAF, TN_AND, TN_OR, TN_SELECT, TN_AND_NOT, TN_AND_MAYBE, TN_SYN };

struct tnode {
    uint8_t kind;
    uint8_t lvalid, rvalid;     /* OR: what check() last learnt */
    uint32_t a, b;              /* LEAF: leaf; OR, AND_NOT, AND_MAYBE: l,
                                   r; SELECT: filter, source; AND: first
                                   kid in kids[], n; SYN: its OR, syn */
    uint32_t did;               /* AND: its document (0: at its end) */
    uint32_t lhead, rhead;      /* OR, AND_NOT, AND_MAYBE: where it takes
                                   each branch to be (0: l at its end) */
};

struct leaf_state {
    uint32_t did;               /* local docid; 0 before its first move */
    uint8_t started, end, live; /* live: the term is in the index */
    uint32_t dense;             /* a value range: the next dense document
                                   to look at */
};

struct tree {
    const struct xg_index *ix;
    const struct xg_query *q;
    const struct xg_bm25_query *bq;
    const struct xg_bm25_params *p;
    const struct xg_weigh_stats *ws;
    uint64_t n_docs;            /* the statistics' collection size */
    const double *tw;
    double syn_tw[XG_QUERY_MAX_SYNS];   /* this shard's synonym weights */
    uint32_t shard, n_shards;
    struct tnode *nodes;
    uint32_t *kids;
    struct cursor *cur;         /* one per leaf: each moves on its own */
    struct leaf_state *ls;
    uint32_t leaf_cur[XG_QUERY_MAX_LEAVES];
    struct pos_buf pb;
    const struct xg_fmt_value_slot *vslot[XG_QUERY_MAX_RANGES];
    int vlist[XG_QUERY_MAX_RANGES];     /* this shard's enum xg_vr_list */
    int rc;                     /* first error; the tree then ends */
};

/* ---- leaves: a term's list, this shard's postings only ---- */

static uint32_t dense_lower_bound(const struct xg_index *ix, uint64_t docid)
{
    uint32_t lo = 0, hi = (uint32_t)ix->hdr->n_docs;
    /* Docids 1..n without a gap (no deletions): the place is docid - 1. */
    if (hi && ix->docids[hi - 1] == hi)
        return docid == 0 ? 0 : docid - 1 < hi ? (uint32_t)(docid - 1) : hi;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (ix->docids[mid] < docid) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static void leaf_settle(struct tree *t, uint32_t i)
{
    struct cursor *c = &t->cur[i];
    while (!t->rc && !c->at_end &&
           (t->ix->docids[cursor_doc(c)] - 1) % t->n_shards != t->shard)
        t->rc = cursor_next(c);
    if (t->rc || c->at_end) t->ls[i].end = 1;
    else t->ls[i].did = (t->ix->docids[cursor_doc(c)] - 1) / t->n_shards + 1;
}

/* A value range's leaf: from dense document s->dense on, the first of
 * this shard whose value lies in the range. */
static void range_settle(struct tree *t, uint32_t i)
{
    struct leaf_state *s = &t->ls[i];
    const uint32_t r = t->q->leaves[i].range - 1;
    const uint32_t n = (uint32_t)t->ix->hdr->n_docs;
    for (; s->dense < n; ++s->dense) {
        const uint32_t g = t->ix->docids[s->dense] - 1;
        if (g % t->n_shards == t->shard &&
            xg_value_range_holds(t->ix, t->vslot[r], &t->q->ranges[r],
                                 s->dense)) {
            s->did = g / t->n_shards + 1;
            return;
        }
    }
    s->end = 1;
}

/* ValueRangePostList::check at did, a document of this shard: where did
 * has a value, at did, valid if it is in range; where it has none and
 * lies inside a value chunk, at the shard's next document with a value,
 * valid if that one is in range; otherwise not valid (format.h). */
static void range_check(struct tree *t, uint32_t i, uint32_t did,
                        int *valid)
{
    struct leaf_state *s = &t->ls[i];
    const uint32_t r = t->q->leaves[i].range - 1;
    const struct xg_fmt_value_slot *e = t->vslot[r];
    const uint32_t n = (uint32_t)t->ix->hdr->n_docs;
    uint32_t d = dense_lower_bound(
        t->ix, (uint64_t)(did - 1) * t->n_shards + t->shard + 1);
    s->started = 1;
    s->did = did;
    s->dense = d;
    *valid = 0;
    if (d >= n) return;
    if (!xg_fmt_value_len(t->ix, e, d)) {
        if (!xg_fmt_value_in_chunk(t->ix, e, d)) return;
        while (++d < n &&
               ((t->ix->docids[d] - 1) % t->n_shards != t->shard ||
                !xg_fmt_value_len(t->ix, e, d)))
            ;
        if (d >= n) return;
        s->dense = d;
        s->did = (t->ix->docids[d] - 1) / t->n_shards + 1;
    }
    *valid = xg_value_range_holds(t->ix, e, &t->q->ranges[r], d);
}

static void leaf_next(struct tree *t, uint32_t i)
{
    struct leaf_state *s = &t->ls[i];
    if (s->end) return;
    if (t->q->leaves[i].range) {
        if (!s->live) { s->end = 1; return; }
        s->dense += s->started;
        s->started = 1;
        range_settle(t, i);
        return;
    }
    if (!s->live) { s->end = 1; return; }
    if (s->started) t->rc = t->rc ? t->rc : cursor_next(&t->cur[i]);
    s->started = 1;
    leaf_settle(t, i);
}

static void leaf_skip_to(struct tree *t, uint32_t i, uint32_t did)
{
    struct leaf_state *s = &t->ls[i];
    if (s->end || (s->started && s->did >= did)) return;
    if (!s->live) { s->end = 1; return; }
    s->started = 1;
    uint64_t g = (uint64_t)(did - 1) * t->n_shards + t->shard + 1;
    if (t->q->leaves[i].range) {
        const uint32_t d = dense_lower_bound(t->ix, g);
        if (d > s->dense) s->dense = d;
        range_settle(t, i);
        return;
    }
    if (!t->rc) t->rc = cursor_skip_to(&t->cur[i], dense_lower_bound(t->ix, g));
    leaf_settle(t, i);
}

/* ---- the tree: each move returns the node that replaces this one (an
 * OR whose branch ran out becomes its other branch), or NONE ---- */

static uint32_t tn_next(struct tree *t, uint32_t n);
static uint32_t tn_skip_to(struct tree *t, uint32_t n, uint32_t did);
static uint32_t tn_check(struct tree *t, uint32_t n, uint32_t did, int *valid);

static int tn_at_end(const struct tree *t, uint32_t n)
{
    const struct tnode *x = &t->nodes[n];
    switch (x->kind) {
    case TN_LEAF: return t->ls[x->a].end;
    case TN_AND: return x->did == 0;
    case TN_OR: return 0;   /* it is replaced before a branch runs out */
    case TN_SELECT: return tn_at_end(t, x->b);
    case TN_SYN: return tn_at_end(t, x->a);
    default: return x->lhead == 0;
    }
}

static uint32_t tn_docid(const struct tree *t, uint32_t n)
{
    const struct tnode *x = &t->nodes[n];
    switch (x->kind) {
    case TN_LEAF: return t->ls[x->a].did;
    case TN_AND: return x->did;
    case TN_OR: return x->lhead < x->rhead ? x->lhead : x->rhead;
    case TN_SELECT: return tn_docid(t, x->b);
    case TN_SYN: return tn_docid(t, x->a);
    default: return x->lhead;
    }
}

/* get_wdf() of a synonym's OR tree: OrPostList's l, r, or l + r. */
static uint32_t tn_wdf(const struct tree *t, uint32_t n)
{
    const struct tnode *x = &t->nodes[n];
    if (x->kind == TN_LEAF) {
        const struct cursor *c = &t->cur[x->a];
        return c->wdfs[c->pos];
    }
    if (x->kind != TN_OR) return tn_wdf(t, x->a);
    if (x->lhead < x->rhead) return tn_wdf(t, x->a);
    if (x->lhead > x->rhead) return tn_wdf(t, x->b);
    return tn_wdf(t, x->a) + tn_wdf(t, x->b);
}

/* The length of the document a synonym's OR tree is on. */
static uint32_t tn_doclen(const struct tree *t, uint32_t n)
{
    const struct tnode *x = &t->nodes[n];
    if (x->kind == TN_LEAF)
        return t->ix->doclens[cursor_doc(&t->cur[x->a])];
    return tn_doclen(t, x->kind == TN_OR && x->rhead < x->lhead ? x->b : x->a);
}

/* get_weight() and count_matching_subqs(): the same walk. */
static double tn_weight(const struct tree *t, uint32_t n, uint32_t *count)
{
    const struct tnode *x = &t->nodes[n];
    switch (x->kind) {
    case TN_LEAF: {
        const struct cursor *c = &t->cur[x->a];
        const uint32_t r = t->q->leaves[x->a].range;
        /* ValueRangePostList counts itself, weighted or not. */
        if (r) {
            *count += t->vlist[r - 1] == XG_VR_VALUES;
            return 0;
        }
        if (t->q->leaves[x->a].factor == 0) return 0;  /* opened unweighted */
        *count += 1;
        return xg_bm25_sumpart(t->bq, t->tw[x->a], c->wdfs[c->pos],
                               t->ix->doclens[cursor_doc(c)]);
    }
    case TN_AND: {
        double s = 0;
        for (uint32_t i = 0; i < x->b; ++i)
            s += tn_weight(t, t->kids[x->a + i], count);
        return s;
    }
    case TN_OR:
        if (x->lhead < x->rhead) return tn_weight(t, x->a, count);
        if (x->lhead > x->rhead) return tn_weight(t, x->b, count);
        {
            double l = tn_weight(t, x->a, count);
            return l + tn_weight(t, x->b, count);
        }
    case TN_SELECT: return tn_weight(t, x->b, count);
    case TN_AND_NOT: return tn_weight(t, x->a, count);
    case TN_SYN: {
        /* SynonymPostList::get_weight: one term whose wdf is its OR's,
         * clamped to the document's length (a no-op unless the wdfs
         * overlap, so always applying it is the same). */
        uint32_t wdf = tn_wdf(t, x->a), len = tn_doclen(t, x->a);
        *count += 1;
        return xg_bm25_sumpart(t->bq, t->syn_tw[x->b], wdf < len ? wdf : len,
                               len);
    }
    default:
        if (x->lhead == x->rhead) {
            double l = tn_weight(t, x->a, count);
            return l + tn_weight(t, x->b, count);
        }
        return tn_weight(t, x->a, count);
    }
}

static void replace(uint32_t *slot, uint32_t by)
{
    if (by != NONE) *slot = by;
}

/* The position filter of SELECT node x, on the document its source is on
 * (every leaf below that source is there). */
static int select_holds(struct tree *t, const struct tnode *x)
{
    uint8_t passed = 0;
    if (!t->rc)
        t->rc = filter_passes(&t->q->filters[x->a], t->cur, t->leaf_cur,
                              &t->pb, &passed);
    return passed && !t->rc;
}

/* MultiAndPostList: its first kid leads, the others are checked at the
 * lead's document; one that is elsewhere sends the lead there. */
static void and_find_match(struct tree *t, uint32_t n)
{
    uint32_t *kid = t->kids + t->nodes[n].a, nk = t->nodes[n].b;
    for (;;) {
        if (t->rc || tn_at_end(t, kid[0])) { t->nodes[n].did = 0; return; }
        uint32_t did = tn_docid(t, kid[0]);
        t->nodes[n].did = did;
        uint32_t i = 1;
        for (; i < nk; ++i) {
            int valid;
            replace(&kid[i], tn_check(t, kid[i], did, &valid));
            if (!valid) { replace(&kid[0], tn_next(t, kid[0])); break; }
            if (tn_at_end(t, kid[i])) { t->nodes[n].did = 0; return; }
            uint32_t nd = tn_docid(t, kid[i]);
            if (nd != did) { replace(&kid[0], tn_skip_to(t, kid[0], nd)); break; }
        }
        if (i == nk) return;
    }
}

static uint32_t or_next(struct tree *t, uint32_t n)
{
    struct tnode *x = &t->nodes[n];
    int ldry = 0, rnext = !x->rvalid;
    if (!x->lvalid || x->lhead <= x->rhead) {
        if (x->lhead == x->rhead) rnext = 1;
        replace(&x->a, tn_next(t, x->a));
        x->lvalid = 1;
        ldry = tn_at_end(t, x->a);
    } else {
        rnext = 1;
    }
    if (rnext) {
        replace(&x->b, tn_next(t, x->b));
        x->rvalid = 1;
        if (tn_at_end(t, x->b)) return x->a;
        x->rhead = tn_docid(t, x->b);
    }
    if (!ldry) { x->lhead = tn_docid(t, x->a); return NONE; }
    return x->b;
}

static uint32_t or_skip_to(struct tree *t, uint32_t n, uint32_t did)
{
    struct tnode *x = &t->nodes[n];
    int ldry = 0;
    if (x->lhead < did) {
        replace(&x->a, tn_skip_to(t, x->a, did));
        x->lvalid = 1;
        ldry = tn_at_end(t, x->a);
    }
    if (x->rhead < did) {
        replace(&x->b, tn_skip_to(t, x->b, did));
        x->rvalid = 1;
        if (tn_at_end(t, x->b)) return x->a;
        x->rhead = tn_docid(t, x->b);
    }
    if (!ldry) { x->lhead = tn_docid(t, x->a); return NONE; }
    return x->b;
}

/* OrPostList::check: a branch whose check failed is taken to be at
 * did + 1, not moved there. */
static uint32_t or_check(struct tree *t, uint32_t n, uint32_t did, int *valid)
{
    struct tnode *x = &t->nodes[n];
    int ldry = 0, v;
    if (!x->lvalid || x->lhead < did) {
        replace(&x->a, tn_check(t, x->a, did, &v));
        x->lvalid = (uint8_t)v;
        ldry = tn_at_end(t, x->a);
    }
    if (!x->rvalid || x->rhead <= did) {
        replace(&x->b, tn_check(t, x->b, did, &v));
        x->rvalid = (uint8_t)v;
        if (tn_at_end(t, x->b)) { *valid = x->lvalid; return x->a; }
        x->rhead = x->rvalid ? tn_docid(t, x->b) : did + 1;
    }
    if (!ldry) {
        x->lhead = x->lvalid ? tn_docid(t, x->a) : did + 1;
        *valid = x->lhead < x->rhead ? x->lvalid
                 : x->rhead < x->lhead ? x->rvalid : x->lvalid || x->rvalid;
        return NONE;
    }
    *valid = x->rvalid;
    return x->b;
}

/* SelectPostList: its source's documents that pass the filter. */
static uint32_t select_next(struct tree *t, uint32_t n)
{
    struct tnode *x = &t->nodes[n];
    do {
        replace(&x->b, tn_next(t, x->b));
    } while (!tn_at_end(t, x->b) && !select_holds(t, x));
    return NONE;
}

/* AndNotPostList: l's documents that r does not hold; r moves only with
 * skip_to(), and l takes its place once r has run out. */
static uint32_t and_not_advance(struct tree *t, uint32_t n)
{
    struct tnode *x = &t->nodes[n];
    if (tn_at_end(t, x->a)) { x->lhead = 0; return NONE; }
    x->lhead = tn_docid(t, x->a);
    while (x->rhead <= x->lhead) {
        if (x->lhead == x->rhead) {
            replace(&x->a, tn_next(t, x->a));
            if (tn_at_end(t, x->a)) { x->lhead = 0; return NONE; }
            x->lhead = tn_docid(t, x->a);
        }
        replace(&x->b, tn_skip_to(t, x->b, x->lhead));
        if (tn_at_end(t, x->b)) return x->a;
        x->rhead = tn_docid(t, x->b);
    }
    return NONE;
}

/* AndMaybePostList: l's documents; r is checked at each one it is not
 * already past, and l takes its place once r has run out. */
static uint32_t and_maybe_advance(struct tree *t, uint32_t n)
{
    struct tnode *x = &t->nodes[n];
    int valid;
    if (tn_at_end(t, x->a)) { x->lhead = 0; return NONE; }
    x->lhead = tn_docid(t, x->a);
    if (x->lhead <= x->rhead) return NONE;
    replace(&x->b, tn_check(t, x->b, x->lhead, &valid));
    if (tn_at_end(t, x->b)) return x->a;
    x->rhead = valid ? tn_docid(t, x->b) : 0;
    return NONE;
}

static uint32_t tn_next(struct tree *t, uint32_t n)
{
    struct tnode *x = &t->nodes[n];
    switch (x->kind) {
    case TN_LEAF: leaf_next(t, x->a); return NONE;
    case TN_AND:
        replace(&t->kids[x->a], tn_next(t, t->kids[x->a]));
        and_find_match(t, n);
        return NONE;
    case TN_OR: return or_next(t, n);
    case TN_SELECT: return select_next(t, n);
    case TN_SYN: replace(&x->a, tn_next(t, x->a)); return NONE;
    default:
        replace(&x->a, tn_next(t, x->a));
        return x->kind == TN_AND_NOT ? and_not_advance(t, n)
                                     : and_maybe_advance(t, n);
    }
}

static uint32_t tn_skip_to(struct tree *t, uint32_t n, uint32_t did)
{
    struct tnode *x = &t->nodes[n];
    switch (x->kind) {
    case TN_LEAF: leaf_skip_to(t, x->a, did); return NONE;
    case TN_AND:
        replace(&t->kids[x->a], tn_skip_to(t, t->kids[x->a], did));
        and_find_match(t, n);
        return NONE;
    case TN_OR: return or_skip_to(t, n, did);
    case TN_SYN: replace(&x->a, tn_skip_to(t, x->a, did)); return NONE;
    case TN_AND_NOT:
    case TN_AND_MAYBE:
        if (did <= x->lhead) return NONE;
        replace(&x->a, tn_skip_to(t, x->a, did));
        return x->kind == TN_AND_NOT ? and_not_advance(t, n)
                                     : and_maybe_advance(t, n);
    default:
        if (did > tn_docid(t, x->b)) {
            replace(&x->b, tn_skip_to(t, x->b, did));
            if (!tn_at_end(t, x->b) && !select_holds(t, x))
                return select_next(t, n);
        }
        return NONE;
    }
}

static uint32_t tn_check(struct tree *t, uint32_t n, uint32_t did, int *valid)
{
    struct tnode *x = &t->nodes[n];
    if (x->kind == TN_OR) return or_check(t, n, did, valid);
    if (x->kind == TN_LEAF && t->q->leaves[x->a].range &&
        t->vlist[t->q->leaves[x->a].range - 1] == XG_VR_VALUES &&
        !t->ls[x->a].end) {
        range_check(t, x->a, did, valid);
        return NONE;
    }
    if (x->kind != TN_SELECT) {   /* PostList::check: skip_to, valid */
        *valid = 1;
        return tn_skip_to(t, n, did);
    }
    replace(&x->b, tn_check(t, x->b, did, valid));
    if (*valid && !tn_at_end(t, x->b) && !select_holds(t, x)) *valid = 0;
    return NONE;
}

/* get_termfreq_est_using_stats() of a synonym's OR tree: each OR's
 * estimate l + r - l * r / N rounded to a doccount, from the leaves'
 * termfreqs in the statistics (the collection's).  -1: not an OR tree. */
static int64_t syn_termfreq(const struct tree *t, uint32_t n, double docs)
{
    const struct tnode *x = &t->nodes[n];
    if (x->kind == TN_LEAF) {
        const struct xg_weigh_stats *ws = t->ws;
        if (ws) return ws->leaf_termfreq[x->a];
        return t->ls[x->a].live ? (int64_t)t->ix->terms[t->cur[x->a].term].df
                                : 0;
    }
    if (x->kind != TN_OR) return -1;
    int64_t l = syn_termfreq(t, x->a, docs), r = syn_termfreq(t, x->b, docs);
    if (l < 0 || r < 0) return -1;
    return xg_or_termfreq_est(l, r, docs);
}

/* SynonymPostList's weight object (LocalSubMatch::make_synonym_postlist):
 * BM25 of a term of wqf 1 whose termfreq is the OR tree's estimate. */
static int syn_weight(struct tree *t, const struct tnode *x)
{
    const double docs = (double)t->n_docs;
    int64_t tf = docs == 0 ? 0 : syn_termfreq(t, x->a, docs);
    if (tf < 0) return 0;
    t->syn_tw[x->b] = xg_bm25_termweight(t->p, t->n_docs, (uint64_t)tf, 1,
                                          t->q->syns[x->b].factor);
    return 1;
}

/* GlassValueList::next() after a check() that failed between chunks
 * starts its chunk again, moving back; only an OR moves a value range
 * with next() after check().  So a value range below an OR is served
 * where every document of the shard has a value (no check() fails that
 * way).  XG_ERR_UNSUPPORTED otherwise. */
static int ranges_in_ors(const struct tree *t, const struct xg_plan *plan)
{
    uint8_t below[XG_PLAN_MAX_OPS];
    uint32_t sp = 0;
    for (uint32_t i = 0; i < plan->n_ops && t->q->n_ranges; ++i) {
        const struct xg_plan_op op = plan->ops[i];
        uint32_t kids = op.kind == XG_PLAN_LEAF ? 0
                        : op.kind == XG_PLAN_AND ? op.arg
                        : op.kind == XG_PLAN_FILTER || op.kind == XG_PLAN_SYN
                        ? 1 : 2;
        if (kids > sp) return XG_OK;    /* build() reports it */
        uint8_t v = 0;
        if (op.kind == XG_PLAN_LEAF) {
            const uint32_t r = t->q->leaves[op.arg].range;
            v = r && t->vlist[r - 1] == XG_VR_VALUES &&
                t->vslot[r - 1] &&
                t->ix->value_bounds[t->vslot[r - 1]->bounds_first +
                                    t->shard].freq !=
                    t->ix->shards[t->shard].doccount;
        }
        for (uint32_t k = 0; k < kids; ++k) v |= below[--sp];
        if (v && op.kind == XG_PLAN_OR2)
            return xg_set_error(XG_ERR_UNSUPPORTED, "unsupported: a value "
                                "range in an OR, on a slot some documents "
                                "lack");
        below[sp++] = v;
    }
    return XG_OK;
}

/* The tree of a postfix plan; returns its root, or NONE if malformed. */
static uint32_t build(struct tree *t, const struct xg_plan *plan)
{
    uint32_t stack[XG_PLAN_MAX_OPS], sp = 0, nn = 0, nk = 0;
    for (uint32_t i = 0; i < plan->n_ops; ++i) {
        const struct xg_plan_op op = plan->ops[i];
        struct tnode *x = &t->nodes[nn];
        memset(x, 0, sizeof *x);
        if (op.kind == XG_PLAN_LEAF) {
            x->kind = TN_LEAF;
            x->a = op.arg;
        } else if (op.kind == XG_PLAN_OR2) {
            if (sp < 2) return NONE;
            x->kind = TN_OR;
            x->b = stack[--sp];
            x->a = stack[--sp];
        } else if (op.kind == XG_PLAN_AND_NOT ||
                   op.kind == XG_PLAN_AND_MAYBE) {
            if (sp < 2) return NONE;
            x->kind = op.kind == XG_PLAN_AND_NOT ? TN_AND_NOT : TN_AND_MAYBE;
            x->b = stack[--sp];
            x->a = stack[--sp];
        } else if (op.kind == XG_PLAN_FILTER) {
            if (sp < 1) return NONE;
            x->kind = TN_SELECT;
            x->a = op.arg;
            x->b = stack[--sp];
        } else if (op.kind == XG_PLAN_SYN) {
            if (sp < 1 || op.arg >= t->q->n_syns) return NONE;
            x->kind = TN_SYN;
            x->a = stack[--sp];
            x->b = op.arg;
            if (!syn_weight(t, x)) return NONE;
        } else {
            if (op.arg < 1 || sp < op.arg) return NONE;
            x->kind = TN_AND;
            x->a = nk;
            x->b = op.arg;
            sp -= op.arg;
            memcpy(t->kids + nk, stack + sp, op.arg * sizeof *stack);
            nk += op.arg;
        }
        stack[sp++] = nn++;
    }
    return sp == 1 ? stack[0] : NONE;
}

int xg_match_tree(const struct xg_index *ix, const struct xg_query *q,
                  const int64_t *leaf_term, const struct xg_plan *plans,
                  const struct xg_bm25_params *p,
                  const struct xg_weigh_stats *ws, uint32_t k,
                  struct xg_result *out)
{
    const struct xg_fmt_header *h = ix->hdr;
    const uint32_t nl = q->n_leaves;
    double tw[XG_QUERY_MAX_LEAVES];
    struct xg_bm25_query bq = {0};
    struct topk top = {k, 0, NULL};
    struct tree t;
    uint64_t n_matched = 0;
    int rc = XG_OK;

    memset(out, 0, sizeof *out);
    memset(&t, 0, sizeof t);
    if (q->n_negated)   /* the flat form's AND_NOT: match_ref.c's */
        return xg_set_error(XG_ERR_UNSUPPORTED, "unsupported: negated "
                            "leaves in the postlist-tree matcher");
    if ((rc = match_setup(ix, q, leaf_term, p, ws, &bq, tw))) return rc;
    t.ix = ix;
    t.q = q;
    t.bq = &bq;
    t.p = p;
    t.ws = ws;
    t.n_docs = ws ? ws->n_docs : h->n_docs;
    t.tw = tw;
    t.n_shards = h->n_shards;
    t.nodes = malloc(XG_PLAN_MAX_OPS * sizeof *t.nodes);
    t.kids = malloc(XG_PLAN_MAX_OPS * sizeof *t.kids);
    t.cur = calloc(nl ? nl : 1, sizeof *t.cur);
    t.ls = calloc(nl ? nl : 1, sizeof *t.ls);
    top.h = malloc((k ? k : 1) * sizeof *top.h);
    if (!t.nodes || !t.kids || !t.cur || !t.ls || !top.h) {
        rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (uint32_t i = 0; i < nl; ++i) {
        t.leaf_cur[i] = i;
        t.cur[i].ix = ix;
        if (leaf_term[i] >= 0) {
            t.cur[i].term = (uint64_t)leaf_term[i];
            t.cur[i].n_blocks = xg_fmt_n_blocks(ix, t.cur[i].term);
        }
    }
    for (uint32_t r = 0; r < q->n_ranges; ++r)
        if ((rc = xg_fmt_value_slot(ix, q->ranges[r].slot, &t.vslot[r])))
            goto done;
    for (uint32_t s = 0; s < h->n_shards && nl; ++s) {
        t.shard = s;
        for (uint32_t r = 0; r < q->n_ranges; ++r) {
            uint32_t est;
            if ((rc = xg_value_range_open(ix, &q->ranges[r], s,
                                          ix->shards[s].doccount,
                                          &t.vlist[r], &est)))
                goto done;
        }
        for (uint32_t i = 0; i < nl; ++i) {
            memset(&t.ls[i], 0, sizeof t.ls[i]);
            t.ls[i].live = leaf_term[i] >= 0;
            if (q->leaves[i].range)
                t.ls[i].live = t.vlist[q->leaves[i].range - 1] != XG_VR_EMPTY;
            t.cur[i].at_end = 0;
            if (t.ls[i].live && (rc = cursor_load(&t.cur[i], 0))) goto done;
        }
        if ((rc = ranges_in_ors(&t, &plans[s]))) goto done;
        uint32_t root = build(&t, &plans[s]);
        if (root == NONE) {
            rc = xg_set_error(XG_ERR_ARG, "match: malformed plan");
            goto done;
        }
        for (;;) {
            replace(&root, tn_next(&t, root));
            if (t.rc) { rc = t.rc; goto done; }
            if (tn_at_end(&t, root)) break;
            const uint32_t docid = (tn_docid(&t, root) - 1) * h->n_shards + s + 1;
            uint32_t count = 0;
            double wt = tn_weight(&t, root, &count);
            if (bq.k2 != 0)
                wt = wt + xg_bm25_sumextra(
                    &bq, ix->doclens[dense_lower_bound(ix, docid)]);
            ++n_matched;
            topk_push(&top, docid, wt, count);
        }
    }
    qsort(top.h, top.n, sizeof *top.h, cmp_hits);
    out->hits = top.h;
    out->n_hits = top.n;
    out->matches_estimated = n_matched;
    top.h = NULL;
done:
    free(t.pb.v);
    free(top.h);
    free(t.nodes);
    free(t.kids);
    free(t.cur);
    free(t.ls);
    return rc;
}
