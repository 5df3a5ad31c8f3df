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

#include "../bm25.h"
#include "match_int.h"
#include "phrase.h"
#include "plan_eval.h"

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
    struct xg_bm25_query bq = {0};
    uint64_t n_matched = 0;
    int rc = XG_OK;

    if (xg_match_needs_tree(q))
        return xg_match_tree(ix, q, leaf_term, plans, p, ws, k, out);
    memset(out, 0, sizeof *out);
    if ((rc = match_setup(ix, q, leaf_term, p, ws, &bq, tw))) return rc;
    cur = calloc(nl ? nl : 1, sizeof *cur);
    top.h = malloc((k ? k : 1) * sizeof *top.h);
    if (!cur || !top.h) {
        rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
        goto done;
    }
    if ((rc = open_leaf_cursors(ix, q, leaf_term, cur, leaf_cur, &n_cur)))
        goto done;
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
    topk_to_result(&top, ix, n_matched, out);
done:
    free(pbuf.v);
    free(top.h);
    free(cur);
    return rc;
}
