/** @file match_ref.c
 *  @brief Exact document-at-a-time matcher (see match_ref.h).
 *
 *  OR walks the union of the lists; AND leapfrogs: the candidate is the
 *  largest of the operands' current documents and every list skips to it
 *  through its skip array, decoding only the blocks it lands in.  Each
 *  match is scored by evaluating the shard's plan, which fixes the order of
 *  the floating-point additions to Xapian's.  A phrase's filter reads its
 *  terms' positions only for documents holding all of them.
 */
#include "match_ref.h"

#include <stdlib.h>
#include <string.h>

#include "../bm25.h"
#include "../index/positions.h"
#include "../runtime/error.h"
#include "phrase.h"
#include "plan_eval.h"

struct cursor {
    const struct xg_index *ix;
    uint64_t term;
    uint32_t n_blocks, blk, pos, n;
    int at_end;
    uint32_t docs[XG_FMT_BLOCK], wdfs[XG_FMT_BLOCK];
};

static int cursor_load(struct cursor *c, uint32_t blk)
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

static int cursor_next(struct cursor *c)
{
    if (++c->pos < c->n) return XG_OK;
    return cursor_load(c, c->blk + 1);
}

/* Move to the first posting >= target. */
static int cursor_skip_to(struct cursor *c, uint32_t target)
{
    if (c->at_end || cursor_doc(c) >= target) return XG_OK;
    const struct xg_fmt_skip *sk = c->ix->skip + c->ix->terms[c->term].skip_first;
    if (sk[c->blk].last < target) {
        uint32_t b = c->blk + 1;
        while (b < c->n_blocks && sk[b].last < target) ++b;
        int rc = cursor_load(c, b);
        if (rc || c->at_end) return rc;
    }
    while (c->docs[c->pos] < target) ++c->pos; /* block's last >= target */
    return XG_OK;
}

/* Positions read for one document's filters, reused from one to the next. */
struct pos_buf {
    uint32_t *v;
    size_t n, cap;
};

/* Append the positions of the posting c is on to b. */
static int read_positions(const struct cursor *c, struct pos_buf *b)
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
static int filter_passes(const struct xg_qfilter *f, const struct cursor *cur,
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
    *passed = (uint8_t)xg_phrase_holds(pos, count, f->n, f->window);
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

static void topk_push(struct topk *t, uint32_t dense, double w,
                      uint32_t leaves)
{
    struct xg_hit *h = t->h;
    if (t->n < t->k) {
        uint32_t i = t->n++;
        while (i && better(h[(i - 1) / 2].weight, h[(i - 1) / 2].docid, w, dense)) {
            h[i] = h[(i - 1) / 2];
            i = (i - 1) / 2;
        }
        h[i].docid = dense;
        h[i].matched_leaves = leaves;
        h[i].weight = w;
        return;
    }
    if (!t->k || !better(w, dense, h[0].weight, h[0].docid)) return;
    uint32_t i = 0;
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i;
        double mw = w;
        uint32_t md = dense;
        if (l < t->n && better(mw, md, h[l].weight, h[l].docid)) {
            m = l; mw = h[l].weight; md = h[l].docid;
        }
        if (r < t->n && better(mw, md, h[r].weight, h[r].docid)) m = r;
        if (m == i) break;
        h[i] = h[m];
        i = m;
    }
    h[i].docid = dense;
    h[i].matched_leaves = leaves;
    h[i].weight = w;
}

static int cmp_hits(const void *a, const void *b)
{
    const struct xg_hit *x = a, *y = b;
    if (better(x->weight, x->docid, y->weight, y->docid)) return -1;
    if (better(y->weight, y->docid, x->weight, x->docid)) return 1;
    return 0;
}

int xg_match_ref(const struct xg_index *ix, const struct xg_query *q,
                 const int64_t *leaf_term, const struct xg_plan *plans,
                 const struct xg_bm25_params *p,
                 const struct xg_weigh_stats *ws, uint32_t k,
                 struct xg_result *out)
{
    const struct xg_fmt_header *h = ix->hdr;
    uint32_t nl = q->n_leaves, n_cur = 0;
    uint32_t leaf_cur[XG_QUERY_MAX_LEAVES];   /* cursor of each leaf, or ~0 */
    double tw[XG_QUERY_MAX_LEAVES], w[XG_QUERY_MAX_LEAVES];
    uint8_t matched[XG_QUERY_MAX_LEAVES], stack_m[XG_QUERY_MAX_LEAVES];
    double stack_w[XG_QUERY_MAX_LEAVES];
    struct cursor *cur = NULL;
    struct topk top = {k, 0, NULL};
    struct pos_buf pbuf = {NULL, 0, 0};
    uint8_t passed[XG_QUERY_MAX_FILTERS];
    struct xg_bm25_query bq;
    uint64_t n_matched = 0;
    int rc = XG_OK;

    memset(out, 0, sizeof *out);
    if (nl > XG_QUERY_MAX_LEAVES)
        return xg_set_error(XG_ERR_UNSUPPORTED, "unsupported: too many leaves");
    if (q->n_filters && !xg_fmt_has_positions(ix))
        return xg_set_error(XG_ERR_UNSUPPORTED, "unsupported: a phrase, and "
                            "%s has no positions", ix->path);
    const uint64_t n_docs = ws ? ws->n_docs : h->n_docs;
    xg_bm25_query_init(p, n_docs, ws ? ws->total_length : h->total_length,
                       q->query_length, &bq);
    cur = calloc(nl ? nl : 1, sizeof *cur);
    top.h = malloc((k ? k : 1) * sizeof *top.h);
    if (!cur || !top.h) {
        rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
        goto done;
    }
    /* One cursor per distinct term; repeated words share it. */
    for (uint32_t i = 0; i < nl; ++i) {
        leaf_cur[i] = UINT32_MAX;
        tw[i] = 0;
        if (leaf_term[i] < 0) continue;
        tw[i] = xg_bm25_termweight(
            p, n_docs, ws ? ws->leaf_termfreq[i] : ix->terms[leaf_term[i]].df,
            q->leaves[i].wqf, q->leaves[i].factor);
        for (uint32_t c = 0; c < n_cur; ++c)
            if (cur[c].term == (uint64_t)leaf_term[i]) leaf_cur[i] = c;
        if (leaf_cur[i] != UINT32_MAX) continue;
        struct cursor *c = &cur[n_cur];
        c->ix = ix;
        c->term = (uint64_t)leaf_term[i];
        c->n_blocks = xg_fmt_n_blocks(ix, c->term);
        if ((rc = cursor_load(c, 0))) goto done;
        leaf_cur[i] = n_cur++;
    }
    /* AND: a group none of whose terms is indexed matches nothing. */
    uint32_t n_groups = q->op == XG_QOP_AND ? q->n_groups : 1;
    uint8_t group_live[XG_QUERY_MAX_LEAVES] = {0};
    for (uint32_t i = 0; i < nl; ++i)
        if (leaf_cur[i] != UINT32_MAX && !q->leaves[i].negated)
            group_live[q->leaves[i].group] = 1;
    int is_and = q->op == XG_QOP_AND && n_groups > 1;
    if (is_and)
        for (uint32_t g = 0; g < n_groups; ++g)
            if (!group_live[g]) goto finish;

    for (;;) {
        uint32_t d = UINT32_MAX;
        if (!is_and) {
            for (uint32_t c = 0; c < n_cur; ++c)
                if (!cur[c].at_end && cursor_doc(&cur[c]) < d)
                    d = cursor_doc(&cur[c]);
            if (d == UINT32_MAX) break;
        } else {
            /* Leapfrog: candidate = max over groups of the group's min. */
            uint32_t gmin[XG_QUERY_MAX_LEAVES];
            int agree = 0, ended = 0;
            for (int round = 0; !agree && !ended; ++round) {
                for (uint32_t g = 0; g < n_groups; ++g) gmin[g] = UINT32_MAX;
                for (uint32_t i = 0; i < nl; ++i) {
                    uint32_t c = leaf_cur[i];
                    if (c == UINT32_MAX || cur[c].at_end ||
                        q->leaves[i].negated)
                        continue;
                    uint32_t g = q->leaves[i].group;
                    if (cursor_doc(&cur[c]) < gmin[g]) gmin[g] = cursor_doc(&cur[c]);
                }
                uint32_t target = 0;
                for (uint32_t g = 0; g < n_groups; ++g) {
                    if (gmin[g] == UINT32_MAX) ended = 1;
                    if (gmin[g] > target) target = gmin[g];
                }
                if (ended) break;
                agree = 1;
                for (uint32_t g = 0; g < n_groups; ++g)
                    if (gmin[g] != target) agree = 0;
                if (agree) {
                    d = target;
                    break;
                }
                for (uint32_t c = 0; c < n_cur; ++c)
                    if ((rc = cursor_skip_to(&cur[c], target))) goto done;
            }
            if (ended) break;
        }
        /* The leapfrog moves negated cursors only when the groups
         * disagree: bring them up to d. */
        for (uint32_t i = 0; is_and && q->n_negated && i < nl; ++i)
            if (q->leaves[i].negated && leaf_cur[i] != UINT32_MAX &&
                (rc = cursor_skip_to(&cur[leaf_cur[i]], d)))
                goto done;
        uint32_t doclen = ix->doclens[d], n_leaves_matched = 0;
        int excluded = 0;   /* AndNotPostList: a negated leaf matches */
        for (uint32_t i = 0; i < nl; ++i) {
            uint32_t c = leaf_cur[i];
            matched[i] = c != UINT32_MAX && !cur[c].at_end &&
                         cursor_doc(&cur[c]) == d;
            if (q->leaves[i].negated) {
                excluded |= matched[i];
                matched[i] = 0;
            }
            n_leaves_matched += matched[i];
            w[i] = matched[i] ? xg_bm25_sumpart(&bq, tw[i],
                                                cur[c].wdfs[cur[c].pos], doclen)
                              : 0.0;
        }
        /* Each filter whose terms are all here; Xapian counts a phrase
         * clause's leaves only where the clause matches. */
        for (uint32_t f = 0; f < q->n_filters; ++f) {
            const struct xg_qfilter *qf = &q->filters[f];
            uint32_t here = 0;
            for (uint32_t i = qf->first; i < qf->first + qf->n; ++i)
                here += matched[i];
            passed[f] = 0;
            if (here == qf->n &&
                (rc = filter_passes(qf, cur, leaf_cur, &pbuf, &passed[f])))
                goto done;
            if (qf->clause && !passed[f]) n_leaves_matched -= here;
        }
        uint32_t shard = (ix->docids[d] - 1) % h->n_shards;
        double wt;
        if (!excluded &&
            xg_plan_eval(plans[shard].ops, plans[shard].n_ops, matched, w,
                         passed, stack_m, stack_w, &wt)) {
            if (bq.k2 != 0) wt = wt + xg_bm25_sumextra(&bq, doclen);
            ++n_matched;
            topk_push(&top, d, wt, n_leaves_matched);
        }
        for (uint32_t c = 0; c < n_cur; ++c)
            if (!cur[c].at_end && cursor_doc(&cur[c]) == d)
                if ((rc = cursor_next(&cur[c]))) goto done;
    }
finish:
    qsort(top.h, top.n, sizeof *top.h, cmp_hits);
    for (uint32_t i = 0; i < top.n; ++i) top.h[i].docid = ix->docids[top.h[i].docid];
    out->hits = top.h;
    out->n_hits = top.n;
    out->matches_estimated = n_matched;
    top.h = NULL;
done:
    free(pbuf.v);
    free(top.h);
    free(cur);
    return rc;
}
