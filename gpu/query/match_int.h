/** @file match_int.h
 *  @brief What the two CPU matchers share: a cursor over one posting list,
 *         reading a posting's positions, and the top-k heap in Xapian's
 *         MSet order.  match_ref.c walks the lists directly; match_tree.c
 *         moves them as Xapian's postlist tree does.
 */
#ifndef XG_MATCH_INT_H
#define XG_MATCH_INT_H

#include <stdlib.h>
#include <string.h>

#include "../bm25.h"
#include "../index/format_read.h"
#include "../index/positions.h"
#include "../query_shape.h"
#include "../runtime/error.h"
#include "phrase.h"

struct cursor {
    const struct xg_index *ix;
    uint64_t term;
    uint32_t n_blocks, blk, pos, n;
    int at_end;
    uint32_t docs[XG_FMT_BLOCK], wdfs[XG_FMT_BLOCK];
};

static inline int cursor_load(struct cursor *c, uint32_t blk)
{
    c->blk = blk;
    c->pos = 0;
    if (blk >= c->n_blocks) {
        c->at_end = 1;
        return XG_OK;
    }
    return xg_fmt_block_decode(c->ix, c->term, blk, c->docs, c->wdfs, &c->n);
}

static inline uint32_t cursor_doc(const struct cursor *c)
{
    return c->docs[c->pos];
}

static inline int cursor_next(struct cursor *c)
{
    if (++c->pos < c->n) return XG_OK;
    return cursor_load(c, c->blk + 1);
}

/* Move to the first posting >= target. */
static inline int cursor_skip_to(struct cursor *c, uint32_t target)
{
    if (c->at_end || cursor_doc(c) >= target) return XG_OK;
    const struct xg_fmt_skip *sk = c->ix->skip + c->ix->terms[c->term].skip_first;
    if (sk[c->blk].last < target) {
        /* The first later block whose last docid reaches target: the next
         * one most often, else a galloping then binary search (a long
         * list has thousands of blocks). */
        uint32_t lo = c->blk + 1, step = 1, hi = lo;
        while (hi < c->n_blocks && sk[hi].last < target) {
            lo = hi + 1;
            hi += step;
            step *= 2;
        }
        if (hi > c->n_blocks) hi = c->n_blocks;
        while (lo < hi) {
            const uint32_t mid = lo + (hi - lo) / 2;
            if (sk[mid].last < target) lo = mid + 1;
            else hi = mid;
        }
        int rc = cursor_load(c, lo);
        if (rc || c->at_end) return rc;
    }
    while (c->docs[c->pos] < target) ++c->pos; /* block's last >= target */
    return XG_OK;
}

/* One cursor per distinct term of q's leaves, each at its list's start
 * (repeated words share it): leaf_cur[i] is leaf i's cursor in cur[],
 * UINT32_MAX for a leaf whose term is not indexed.  cur has room for a
 * cursor per leaf. */
static inline int open_leaf_cursors(const struct xg_index *ix,
                                    const struct xg_query *q,
                                    const int64_t *leaf_term,
                                    struct cursor *cur, uint32_t *leaf_cur,
                                    uint32_t *n_cur)
{
    *n_cur = 0;
    for (uint32_t i = 0; i < q->n_leaves; ++i) {
        leaf_cur[i] = UINT32_MAX;
        if (leaf_term[i] < 0) continue;
        for (uint32_t c = 0; c < *n_cur; ++c)
            if (cur[c].term == (uint64_t)leaf_term[i]) leaf_cur[i] = c;
        if (leaf_cur[i] != UINT32_MAX) continue;
        struct cursor *c = &cur[*n_cur];
        c->ix = ix;
        c->term = (uint64_t)leaf_term[i];
        c->n_blocks = xg_fmt_n_blocks(ix, c->term);
        int rc = cursor_load(c, 0);
        if (rc) return rc;
        leaf_cur[i] = (*n_cur)++;
    }
    return XG_OK;
}

/* Positions read for one document's filters, reused from one to the next. */
struct pos_buf {
    uint32_t *v;
    size_t n, cap;
};

/* Append the positions of the posting c is on to b. */
static inline int read_positions(const struct cursor *c, struct pos_buf *b)
{
    const uint8_t *begin, *end;
    struct xg_pos_cursor pc;
    uint32_t p;
    xg_fmt_block_positions(c->ix, c->term, c->blk, &begin, &end);
    if (xg_pos_open(&pc, begin, end, c->pos))
        return xg_set_error(XG_ERR_FORMAT, "%s: term %llu: bad positions",
                            c->ix->path, (unsigned long long)c->term);
    while (xg_pos_next(&pc, &p)) {
        if (b->n == b->cap) {
            size_t cap = b->cap ? 2 * b->cap : 256;
            uint32_t *v = realloc(b->v, cap * sizeof *v);
            if (!v) return xg_set_error(XG_ERR_NOMEM, "out of memory");
            b->v = v;
            b->cap = cap;
        }
        b->v[b->n++] = p;
    }
    return XG_OK;
}

/* Filter f of q for the document every one of its leaves is on. */
static inline int filter_passes(const struct xg_qfilter *f, const struct cursor *cur,
                         const uint32_t *leaf_cur, struct pos_buf *b,
                         uint8_t *passed)
{
    size_t start[XG_QUERY_MAX_LEAVES + 1];
    const uint32_t *pos[XG_QUERY_MAX_LEAVES];
    uint32_t count[XG_QUERY_MAX_LEAVES];
    b->n = 0;
    for (uint32_t i = 0; i < f->n; ++i) {
        start[i] = b->n;
        int rc = read_positions(&cur[leaf_cur[f->first + i]], b);
        if (rc) return rc;
    }
    start[f->n] = b->n;
    for (uint32_t i = 0; i < f->n; ++i) {
        pos[i] = b->v + start[i];
        count[i] = (uint32_t)(start[i + 1] - start[i]);
    }
    uint32_t at[XG_QUERY_MAX_LEAVES];
    *passed = (uint8_t)xg_filter_holds(f->kind, pos, count, f->n, f->window,
                                       at);
    return XG_OK;
}

/* Xapian's MSet order: a ranks before b. */
static inline int better(double wa, uint32_t da, double wb, uint32_t db)
{
    return wa > wb || (wa == wb && da < db);
}

struct topk {
    uint32_t k, n;
    struct xg_hit *h;  /* min-heap on "better": h[0] is the worst kept */
};

static inline void topk_push(struct topk *t, uint32_t doc, double w,
                      uint32_t leaves)
{
    struct xg_hit *h = t->h;
    if (t->n < t->k) {
        uint32_t i = t->n++;
        while (i && better(h[(i - 1) / 2].weight, h[(i - 1) / 2].docid, w, doc)) {
            h[i] = h[(i - 1) / 2];
            i = (i - 1) / 2;
        }
        h[i].docid = doc;
        h[i].matched_leaves = leaves;
        h[i].weight = w;
        return;
    }
    if (!t->k || !better(w, doc, h[0].weight, h[0].docid)) return;
    uint32_t i = 0;
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i;
        double mw = w;
        uint32_t md = doc;
        if (l < t->n && better(mw, md, h[l].weight, h[l].docid)) {
            m = l; mw = h[l].weight; md = h[l].docid;
        }
        if (r < t->n && better(mw, md, h[r].weight, h[r].docid)) m = r;
        if (m == i) break;
        h[i] = h[m];
        i = m;
    }
    h[i].docid = doc;
    h[i].matched_leaves = leaves;
    h[i].weight = w;
}

static inline int cmp_hits(const void *a, const void *b)
{
    const struct xg_hit *x = a, *y = b;
    if (better(x->weight, x->docid, y->weight, y->docid)) return -1;
    if (better(y->weight, y->docid, x->weight, x->docid)) return 1;
    return 0;
}

/* The kept documents as the MSet: Xapian's order, Xapian's docids; the
 * heap's array moves to out. */
static inline void topk_to_result(struct topk *t, const struct xg_index *ix,
                                  uint64_t matches, struct xg_result *out)
{
    qsort(t->h, t->n, sizeof *t->h, cmp_hits);
    for (uint32_t i = 0; i < t->n; ++i) t->h[i].docid = ix->docids[t->h[i].docid];
    out->hits = t->h;
    out->n_hits = t->n;
    out->matches_estimated = matches;
    t->h = NULL;
}

/* What both matchers start with: the query's limits, *bq, and each
 * leaf's termweight tw[i] (0 for a leaf not in the index). */
static inline int match_setup(const struct xg_index *ix,
                              const struct xg_query *q,
                              const int64_t *leaf_term,
                              const struct xg_bm25_params *p,
                              const struct xg_weigh_stats *ws,
                              struct xg_bm25_query *bq, double *tw)
{
    if (q->n_leaves > XG_QUERY_MAX_LEAVES)
        return xg_set_error(XG_ERR_UNSUPPORTED, "unsupported: too many leaves");
    if (q->n_filters && !xg_fmt_has_positions(ix))
        return xg_set_error(XG_ERR_UNSUPPORTED, "unsupported: a phrase, and "
                            "%s has no positions", ix->path);
    const uint64_t n_docs = ws ? ws->n_docs : ix->hdr->n_docs;
    xg_bm25_query_init(p, n_docs,
                       ws ? ws->total_length : ix->hdr->total_length,
                       q->query_length, bq);
    for (uint32_t i = 0; i < q->n_leaves; ++i)
        tw[i] = leaf_term[i] < 0 ? 0 : xg_bm25_termweight(
            p, n_docs, ws ? ws->leaf_termfreq[i] : ix->terms[leaf_term[i]].df,
            q->leaves[i].wqf, q->leaves[i].factor);
    return XG_OK;
}

#endif
