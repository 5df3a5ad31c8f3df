/** @file match_prune.c
 *  @brief The exact top k of a flat OR without scoring every document
 *         (match_ref.h, xg_match_ref_top): MaxScore over the lists' and
 *         the blocks' BM25 upper bounds.
 *
 *  The lists are ordered by their bound (BM25Weight::get_maxpart() with
 *  the list's largest wdf and the index's shortest document, summed over
 *  the leaves on the list).  Once the heap holds k documents, the k-th
 *  weight is a threshold: the weakest lists whose bounds together fall
 *  below it are "non-essential", since a document on them alone cannot
 *  enter.  Only the essential lists are walked; for each of their
 *  documents the non-essential lists are consulted strongest first, each
 *  through its skip entries (a block whose first document lies past the
 *  candidate does not hold it; otherwise the block's own bound, from its
 *  largest wdf, replaces the list's), and a block is decoded only while
 *  the candidate can still enter.  A document that reaches the end is
 *  weighed exactly as xg_match_ref weighs it, in its shard's plan order.
 *
 *  Documents are visited in ascending order, so a later one must weigh
 *  strictly more than the k-th to replace it (Xapian's order: weight,
 *  then docid); a bound is compared with a slack of PRUNE_SLACK, far above
 *  the rounding of a few additions, so nothing that could tie is
 *  skipped.
 */
#include "match_ref.h"

#include "../bm25.h"
#include "match_int.h"
#include "plan_eval.h"

/* Relative slack on every bound: the bounds and the weights round
 * differently (a few ulps); this is ten million times that. */
#define PRUNE_SLACK 1e-9

struct pcur {
    struct cursor c;
    uint32_t n_leaves;
    uint32_t leaves[XG_QUERY_MAX_LEAVES];
    double ub;                  /* the list's bound, its leaves summed */
};

/* b cannot reach the heap's worst weight theta. */
static int below(double b, double theta)
{
    return b + b * PRUNE_SLACK < theta;
}

/* The bound of the leaves on p for a wdf of at most wdf_max. */
static double bound_of(const struct pcur *p, const struct xg_bm25_query *bq,
                       const double *tw, uint32_t wdf_max, uint32_t doclen_lb)
{
    double b = 0;
    for (uint32_t j = 0; j < p->n_leaves; ++j)
        b += xg_bm25_maxpart(bq, tw[p->leaves[j]], wdf_max, doclen_lb);
    return b;
}

/* The block of c's list that would hold target: the first at or after
 * c's own whose last document reaches it (n_blocks: none). */
static uint32_t block_for(const struct cursor *c, uint32_t target)
{
    const struct xg_fmt_skip *sk = c->ix->skip + c->ix->terms[c->term].skip_first;
    uint32_t lo = c->blk, hi = c->n_blocks;
    if (lo < hi && sk[lo].last >= target) return lo;
    while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if (sk[mid].last < target) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Sort pc[0..n) by ascending bound (insertion: a handful of lists). */
static void sort_by_bound(struct pcur **pc, uint32_t n)
{
    for (uint32_t i = 1; i < n; ++i) {
        struct pcur *x = pc[i];
        uint32_t j = i;
        while (j && pc[j - 1]->ub > x->ub) {
            pc[j] = pc[j - 1];
            --j;
        }
        pc[j] = x;
    }
}

/* One list (a one-word query, or its word repeated): the classic
 * block-max walk.  A block whose bound cannot reach the heap's worst is
 * never decoded; a document is weighed as the main walk weighs it. */
static int top_of_one_list(const struct xg_index *ix,
                           const struct xg_query *q, struct pcur *pc,
                           const struct xg_plan *plans,
                           const struct xg_bm25_query *bq, const double *tw,
                           struct topk *top, uint64_t *n_scored)
{
    const uint32_t nl = q->n_leaves, doclen_lb = ix->hdr->doclen_min;
    struct cursor *c = &pc->c;
    const struct xg_fmt_skip *sk = ix->skip + ix->terms[c->term].skip_first;
    double w[XG_QUERY_MAX_LEAVES], stack_w[XG_QUERY_MAX_LEAVES];
    uint8_t matched[XG_QUERY_MAX_LEAVES], stack_m[XG_QUERY_MAX_LEAVES];
    memset(matched, 0, nl);
    for (uint32_t i = 0; i < nl; ++i) w[i] = 0.0;
    for (uint32_t l = 0; l < pc->n_leaves; ++l) matched[pc->leaves[l]] = 1;
    double theta = -1.0 / 0.0;
    for (uint32_t blk = 0; blk < c->n_blocks; ++blk) {
        if (top->n == top->k &&
            below(bound_of(pc, bq, tw, sk[blk].max_wdf, doclen_lb), theta))
            continue;
        int rc = blk == c->blk && !c->at_end ? XG_OK : cursor_load(c, blk);
        if (rc) return rc;
        for (uint32_t pos = 0; pos < c->n; ++pos) {
            const uint32_t d = c->docs[pos], doclen = ix->doclens[d];
            double b = 0;
            for (uint32_t l = 0; l < pc->n_leaves; ++l) {
                const uint32_t i = pc->leaves[l];
                w[i] = xg_bm25_sumpart(bq, tw[i], c->wdfs[pos], doclen);
                b += w[i];
            }
            if (below(b, theta)) continue;
            const uint32_t shard = (ix->docids[d] - 1) % ix->hdr->n_shards;
            double wt;
            if (!xg_plan_eval(plans[shard].ops, plans[shard].n_ops, matched,
                              w, NULL, stack_m, stack_w, &wt))
                continue;
            ++*n_scored;
            topk_push(top, d, wt, pc->n_leaves);
            if (top->n == top->k && top->h[0].weight > theta)
                theta = top->h[0].weight;
        }
    }
    return XG_OK;
}

int xg_match_ref_top(const struct xg_index *ix, const struct xg_query *q,
                     const int64_t *leaf_term, const struct xg_plan *plans,
                     const struct xg_bm25_params *p,
                     const struct xg_weigh_stats *ws, uint32_t k,
                     struct xg_result *out)
{
    if (!k || !xg_match_top_prunes(q, p))
        return xg_match_ref(ix, q, leaf_term, plans, p, ws, k, out);
    const struct xg_fmt_header *h = ix->hdr;
    const uint32_t nl = q->n_leaves, doclen_lb = h->doclen_min;
    double tw[XG_QUERY_MAX_LEAVES], w[XG_QUERY_MAX_LEAVES];
    uint8_t matched[XG_QUERY_MAX_LEAVES], stack_m[XG_QUERY_MAX_LEAVES];
    double stack_w[XG_QUERY_MAX_LEAVES];
    uint32_t leaf_pc[XG_QUERY_MAX_LEAVES];
    struct pcur *pcs = NULL, *ord[XG_QUERY_MAX_LEAVES];
    struct cursor *cur = NULL;
    struct topk top = {k, 0, NULL};
    struct xg_bm25_query bq = {0};
    uint32_t n_pc = 0;
    uint64_t n_scored = 0;
    int rc;

    memset(out, 0, sizeof *out);
    if ((rc = match_setup(ix, q, leaf_term, p, ws, &bq, tw))) return rc;
    pcs = calloc(nl ? nl : 1, sizeof *pcs);
    cur = calloc(nl ? nl : 1, sizeof *cur);
    top.h = malloc(k * sizeof *top.h);
    if (!pcs || !cur || !top.h) {
        rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
        goto done;
    }
    if ((rc = open_leaf_cursors(ix, q, leaf_term, cur, leaf_pc, &n_pc)))
        goto done;
    for (uint32_t c = 0; c < n_pc; ++c) pcs[c].c = cur[c];
    for (uint32_t i = 0; i < nl; ++i)
        if (leaf_pc[i] != UINT32_MAX) {
            struct pcur *pc = &pcs[leaf_pc[i]];
            pc->leaves[pc->n_leaves++] = i;
        }
    for (uint32_t c = 0; c < n_pc; ++c) {
        pcs[c].ub = bound_of(&pcs[c], &bq, tw, ix->terms[pcs[c].c.term].wdf_max,
                             doclen_lb);
        ord[c] = &pcs[c];
    }
    if (n_pc == 1) {
        if ((rc = top_of_one_list(ix, q, &pcs[0], plans, &bq, tw, &top,
                                  &n_scored)))
            goto done;
        topk_to_result(&top, ix, n_scored, out);
        goto done;
    }
    sort_by_bound(ord, n_pc);
    /* below_ub[j]: the bounds of ord[0..j) summed; ord[0..n_ne) are the
     * non-essential lists. */
    double below_ub[XG_QUERY_MAX_LEAVES + 1];
    below_ub[0] = 0;
    for (uint32_t j = 0; j < n_pc; ++j) below_ub[j + 1] = below_ub[j] + ord[j]->ub;
    uint32_t n_ne = 0;
    double theta = -1.0 / 0.0;

    for (;;) {
        uint32_t d = UINT32_MAX;
        for (uint32_t j = n_ne; j < n_pc; ++j)
            if (!ord[j]->c.at_end && cursor_doc(&ord[j]->c) < d)
                d = cursor_doc(&ord[j]->c);
        if (d == UINT32_MAX) break;
        const uint32_t doclen = ix->doclens[d];
        memset(matched, 0, nl);
        /* The essential lists on d, weighed; the rest at their bounds. */
        double b = below_ub[n_ne];
        for (uint32_t j = n_ne; j < n_pc; ++j) {
            struct pcur *pc = ord[j];
            if (pc->c.at_end || cursor_doc(&pc->c) != d) continue;
            for (uint32_t l = 0; l < pc->n_leaves; ++l) {
                const uint32_t i = pc->leaves[l];
                matched[i] = 1;
                w[i] = xg_bm25_sumpart(&bq, tw[i], pc->c.wdfs[pc->c.pos], doclen);
                b += w[i];
            }
        }
        /* Each list resolved lowers the bound or replaces its part with
         * the weight: the candidate is dropped as soon as it falls
         * below, whichever way the last list went. */
        int drop = 0;
        for (uint32_t j = n_ne; j-- > 0;) {
            if ((drop = below(b, theta))) break;
            struct pcur *pc = ord[j];
            struct cursor *c = &pc->c;
            b -= pc->ub;
            if (c->at_end) continue;
            if (c->docs[c->pos] < d) {
                const uint32_t blk = block_for(c, d);
                if (blk >= c->n_blocks) {
                    c->at_end = 1;  /* nothing at or past d */
                    continue;
                }
                const struct xg_fmt_skip *sk =
                    ix->skip + ix->terms[c->term].skip_first + blk;
                if (sk->first > d) continue;    /* not on this list */
                if (blk != c->blk) {
                    if ((drop = below(b + bound_of(pc, &bq, tw, sk->max_wdf,
                                                   doclen_lb), theta)))
                        break;
                    if ((rc = cursor_load(c, blk))) goto done;
                }
                while (c->docs[c->pos] < d) ++c->pos;
            }
            if (c->docs[c->pos] != d) continue;
            for (uint32_t l = 0; l < pc->n_leaves; ++l) {
                const uint32_t i = pc->leaves[l];
                matched[i] = 1;
                w[i] = xg_bm25_sumpart(&bq, tw[i], c->wdfs[c->pos], doclen);
                b += w[i];
            }
        }
        if (!drop && !below(b, theta)) {
            uint32_t n_leaves_matched = 0;
            for (uint32_t i = 0; i < nl; ++i) {
                if (!matched[i]) w[i] = 0.0;
                n_leaves_matched += matched[i];
            }
            const uint32_t shard = (ix->docids[d] - 1) % h->n_shards;
            double wt;
            if (xg_plan_eval(plans[shard].ops, plans[shard].n_ops, matched, w,
                             NULL, stack_m, stack_w, &wt)) {
                ++n_scored;
                topk_push(&top, d, wt, n_leaves_matched);
                if (top.n == k && top.h[0].weight > theta) {
                    theta = top.h[0].weight;
                    while (n_ne < n_pc && below(below_ub[n_ne + 1], theta))
                        ++n_ne;
                }
            }
        }
        for (uint32_t j = n_ne; j < n_pc; ++j) {
            struct cursor *c = &ord[j]->c;
            if (!c->at_end && cursor_doc(c) == d && (rc = cursor_next(c)))
                goto done;
        }
    }
    topk_to_result(&top, ix, n_scored, out);
done:
    free(top.h);
    free(cur);
    free(pcs);
    return rc;
}

/* The documents a flat OR matches: the union of its lists, marked in a
 * bitmap over the index's documents (a list alone: its length). */
static int or_count(const struct xg_index *ix, const struct xg_query *q,
                    const int64_t *leaf_term, uint64_t *count)
{
    uint64_t terms[XG_QUERY_MAX_LEAVES];
    uint32_t n = 0;
    for (uint32_t i = 0; i < q->n_leaves; ++i) {
        if (leaf_term[i] < 0) continue;
        uint32_t j = 0;
        while (j < n && terms[j] != (uint64_t)leaf_term[i]) ++j;
        if (j == n) terms[n++] = (uint64_t)leaf_term[i];
    }
    *count = 0;
    if (n == 1) {
        *count = ix->terms[terms[0]].df;
        return XG_OK;
    }
    if (!n) return XG_OK;
    const uint64_t words = (ix->hdr->n_docs + 63) / 64;
    uint64_t *bits = calloc(words ? words : 1, sizeof *bits);
    uint32_t docs[XG_FMT_BLOCK];
    int rc = bits ? XG_OK : xg_set_error(XG_ERR_NOMEM, "out of memory");
    for (uint32_t t = 0; !rc && t < n; ++t) {
        const uint32_t nb = xg_fmt_n_blocks(ix, terms[t]);
        for (uint32_t blk = 0; !rc && blk < nb; ++blk) {
            uint32_t m;
            rc = xg_fmt_block_docs(ix, terms[t], blk, docs, &m);
            for (uint32_t i = 0; !rc && i < m; ++i)
                bits[docs[i] >> 6] |= (uint64_t)1 << (docs[i] & 63);
        }
    }
    for (uint64_t w = 0; !rc && w < words; ++w)
        *count += (uint64_t)__builtin_popcountll(bits[w]);
    free(bits);
    return rc;
}

int xg_match_ref_top_counted(const struct xg_index *ix,
                             const struct xg_query *q,
                             const int64_t *leaf_term,
                             const struct xg_plan *plans,
                             const struct xg_bm25_params *p,
                             const struct xg_weigh_stats *ws, uint32_t k,
                             struct xg_result *out)
{
    /* A flat OR holds no value range (those come only in the general
     * form), so its lists are all it matches. */
    if (!k || !xg_match_top_prunes(q, p))
        return xg_match_ref(ix, q, leaf_term, plans, p, ws, k, out);
    uint64_t count;
    int rc = xg_match_ref_top(ix, q, leaf_term, plans, p, ws, k, out);
    if (!rc && (rc = or_count(ix, q, leaf_term, &count))) xg_result_free(out);
    if (!rc) out->matches_estimated = count;
    return rc;
}
