/** @file batch.c
 *  @brief Batch work description and MSet assembly (see batch.h).
 *
 *  Query paths: an AND whose every operand is one term goes to the
 *  intersection (seed 003/004: shortest list first, membership tests in the
 *  others), with its phrase and NEAR filters where the positions are
 *  resident (filter_dev.h), and so does a query of one term whose list is
 *  short (batch_path); everything else (OR, AND of OR-groups) accumulates
 *  into a dense row per query: doubles, or, for an OR from an index's
 *  impacts, uint32 integer bounds (impact.h).  DENSE queries and their lists come first so
 *  each kind of kernel covers one contiguous range.
 */
#include "batch.h"

#include <stdlib.h>
#include <string.h>

#include "../runtime/error.h"
#include "../runtime/threads.h"
#include "../index/impact.h"
#include "../runtime/tuning.h"
#include "cand_sort.h"
#include "member.h"
#include "merge.h"

static int grow(void **p, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need <= *cap) return XG_OK;
    uint32_t c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    void *q = realloc(*p, (size_t)c * elem);
    if (!q) return xg_set_error(XG_ERR_NOMEM, "out of memory (batch)");
    *p = q;
    *cap = c;
    return XG_OK;
}

void xg_batch_free(struct xg_batch *b)
{
    free(b->queries);
    free(b->qmap);
    free(b->lists);
    free(b->leaf_list);
    free(b->leaf_tw);
    free(b->plan);
    free(b->filters);
    free(b->iq);
    free(b->iprefix);
    free(b->mlist);
    free(b->mprefix);
    memset(b, 0, sizeof *b);
}

/* Position filters the intersection can decide: over the whole AND (a
 * phrase that is an OR's operand is the CPU matcher's), within the
 * device's limits. */
static int filters_fit(const struct xg_query *q, int positions)
{
    if (!positions || q->n_filters > XG_GPU_MAX_FILTERS) return 0;
    for (uint32_t f = 0; f < q->n_filters; ++f)
        if (q->filters[f].clause || q->filters[f].n > XG_GPU_MAX_FILTER_TERMS)
            return 0;
    return 1;
}

int xg_batch_path(const struct xg_engine_query *eq, int positions)
{
    const struct xg_query *q = eq->q;
    if (q->n_leaves == 0) return -2;
    /* AND_NOT and the general form are the CPU matcher's until the
     * kernels serve them; so are filters but an AND of terms'. */
    if (q->n_leaves > XG_GPU_MAX_LEAVES || q->n_negated ||
        q->op == XG_QOP_TREE || (q->n_filters && !filters_fit(q, positions)))
        return -1;
    int is_and = q->op == XG_QOP_AND && q->n_groups > 1;
    if (!is_and) return q->n_filters ? -1 : XG_DPATH_DENSE;
    if (q->n_groups > XG_GPU_MAX_GROUPS) return -1;
    /* Every operand needs an indexed term, or nothing matches. */
    uint32_t live = 0;
    for (uint32_t i = 0; i < q->n_leaves; ++i)
        if (eq->leaf_term[i] >= 0) live |= 1u << q->leaves[i].group;
    if (live != (q->n_groups == 32 ? 0xFFFFFFFFu : (1u << q->n_groups) - 1u))
        return -2;
    /* Single-term operands: the intersection. */
    int64_t gterm[XG_GPU_MAX_GROUPS];
    for (uint32_t g = 0; g < q->n_groups; ++g) gterm[g] = -3;
    for (uint32_t i = 0; i < q->n_leaves; ++i) {
        int64_t *t = &gterm[q->leaves[i].group];
        if (*t == -3) *t = eq->leaf_term[i];
        else if (*t != eq->leaf_term[i])
            return q->n_filters ? -1 : XG_DPATH_DENSE;
    }
    return XG_DPATH_INTERSECT;
}

/* A DENSE query of one term (every leaf names it, as in "foo" or "foo
 * foo") whose list holds at most 1 / XG_ONE_TERM_SHARE of the documents:
 * it may intersect, its list alone being its matches, weighed exactly,
 * where the dense path resets a row of every document and the selection
 * reads that row two to five times.  Its weights are the dense path's
 * (each document of the list matches every leaf there too). */
static int one_term_short(const struct xg_engine_query *eq,
                          const struct xg_index *ix)
{
    const int64_t t = eq->leaf_term[0];
    if (t < 0) return 0;
    for (uint32_t i = 1; i < eq->q->n_leaves; ++i)
        if (eq->leaf_term[i] != t) return 0;
    return ix->terms[t].df <= ix->hdr->n_docs / XG_ONE_TERM_SHARE;
}

/* The path a query takes in the batch: xg_batch_path's, but a short
 * one-term query intersects, unless `one_term_dense`: a small batch with
 * rows and no other intersection would launch the intersection's kernels
 * for it alone (see xg_batch_build). */
static int batch_path(const struct xg_engine_query *eq,
                      const struct xg_index *ix, int positions,
                      int one_term_dense)
{
    const int path = xg_batch_path(eq, positions);
    return path == XG_DPATH_DENSE && !one_term_dense &&
                   one_term_short(eq, ix)
               ? XG_DPATH_INTERSECT : path;
}

/* xg_dquery.match_bound of a DENSE query's n lists: a document matches
 * an OR through one of its lists, an AND through one list of each group
 * (group_mask: one bit a group; OR's lists all have bit 0). */
static uint64_t dense_match_bound(const struct xg_dlist *l, uint32_t n,
                                  uint64_t n_docs)
{
    uint64_t sum[32] = {0};
    uint32_t seen = 0;
    for (uint32_t j = 0; j < n; ++j)
        for (uint32_t m = l[j].group_mask; m; m &= m - 1) {
            const int g = __builtin_ctz(m);
            sum[g] += l[j].df;
            seen |= 1u << g;
        }
    uint64_t bound = n_docs;
    for (; seen; seen &= seen - 1) {
        const uint64_t s = sum[__builtin_ctz(seen)];
        if (s < bound) bound = s;
    }
    return bound;
}

static int add_query(struct xg_batch *b, const struct xg_index *ix,
                     const struct xg_engine_query *eq, uint32_t caller,
                     int path, const struct xg_bm25_params *p,
                     uint32_t member, int bloom)
{
    const struct xg_query *q = eq->q;
    const struct xg_fmt_header *h = ix->hdr;
    int rc;
    if ((rc = grow((void **)&b->queries, &b->cap_queries, b->n_queries + 1,
                   sizeof *b->queries)))
        return rc;
    /* qmap (and leaf_tw below) share their partner's capacity. */
    uint32_t *qm = realloc(b->qmap, (size_t)b->cap_queries * sizeof *qm);
    if (!qm) return xg_set_error(XG_ERR_NOMEM, "out of memory (batch)");
    b->qmap = qm;
    struct xg_dquery *dq = &b->queries[b->n_queries];
    memset(dq, 0, sizeof *dq);
    dq->path = (uint32_t)path;
    dq->k = eq->k;
    dq->list_first = b->n_lists;
    dq->leaf_first = b->n_leaves;
    dq->n_leaves = q->n_leaves;
    dq->n_groups = q->op == XG_QOP_AND ? q->n_groups : 1;
    int is_and = q->op == XG_QOP_AND && q->n_groups > 1;
    dq->all_groups = is_and ? (q->n_groups == 32 ? 0xFFFFFFFFu
                                                 : (1u << q->n_groups) - 1u)
                            : 0;
    if ((rc = grow((void **)&b->leaf_list, &b->cap_leaves,
                   b->n_leaves + q->n_leaves, sizeof *b->leaf_list)))
        return rc;
    double *tw = realloc(b->leaf_tw, (size_t)b->cap_leaves * sizeof *tw);
    if (!tw) return xg_set_error(XG_ERR_NOMEM, "out of memory (batch)");
    b->leaf_tw = tw;
    /* Distinct indexed terms become lists. */
    uint32_t n_lists = 0, shortest_df = UINT32_MAX;
    for (uint32_t i = 0; i < q->n_leaves; ++i) {
        uint32_t li = UINT32_MAX;
        double leaf_tw = 0;
        int64_t t = eq->leaf_term[i];
        if (t >= 0) {
            const struct xg_weigh_stats *ws = eq->stats;
            leaf_tw = xg_bm25_termweight(
                p, ws ? ws->n_docs : h->n_docs,
                ws ? ws->leaf_termfreq[i] : ix->terms[t].df,
                q->leaves[i].wqf, q->leaves[i].factor);
            for (uint32_t j = 0; j < n_lists; ++j)
                if (b->lists[dq->list_first + j].term == (uint32_t)t) li = j;
            if (li == UINT32_MAX) {
                if ((rc = grow((void **)&b->lists, &b->cap_lists,
                               b->n_lists + n_lists + 1, sizeof *b->lists)))
                    return rc;
                struct xg_dlist *l = &b->lists[dq->list_first + n_lists];
                memset(l, 0, sizeof *l);
                l->query = b->n_queries;
                l->term = (uint32_t)t;
                l->df = ix->terms[t].df;
                l->n_blocks = xg_fmt_n_blocks(ix, (uint64_t)t);
                l->decoded = UINT64_MAX;
                l->mpos = UINT64_MAX;
                if (l->df < shortest_df) {
                    shortest_df = l->df;
                    dq->shortest = n_lists;
                }
                li = n_lists++;
            }
            struct xg_dlist *l = &b->lists[dq->list_first + li];
            l->weight += leaf_tw;
            l->group_mask |= is_and ? 1u << q->leaves[i].group : 1u;
        }
        b->leaf_list[b->n_leaves + i] = li == UINT32_MAX ? XG_GPU_MAX_LEAVES
                                                         : li;
        b->leaf_tw[b->n_leaves + i] = leaf_tw;
    }
    dq->n_lists = n_lists;
    for (uint32_t j = 0; j < n_lists; ++j) {
        struct xg_dlist *l = &b->lists[dq->list_first + j];
        l->block_start = b->total_blocks;
        b->total_blocks += l->n_blocks;
        if (path != XG_DPATH_INTERSECT) continue;
        l->decoded = b->decoded_total;
        b->decoded_total += l->df;
        if (j == dq->shortest) continue; /* the probes: decoded whole */
        /* Every other list is probed by the shortest one's postings. */
        uint32_t m = member;
        if (m == XG_MEMBER_AUTO)
            m = xg_member_choose(&ix->terms[l->term], &ix->terms_lr[l->term],
                                 (uint32_t)h->n_docs, shortest_df);
        /* Bloom only when asked for (--bloom on): see member.h. */
        if (bloom == 1 && ix->terms[l->term].bloom_words &&
            m != XG_MEMBER_MERGE)
            m |= XG_MEMBER_BLOOM;
        l->method = m;
        ++b->member_lists[m & 7u];
        b->bloom_lists += (m & XG_MEMBER_BLOOM) != 0;
        if (m == XG_MEMBER_MERGE) {
            l->mpos = b->mpos_total;
            b->mpos_total += shortest_df;
            if ((rc = grow((void **)&b->mlist, &b->cap_mlist, b->n_ml + 1,
                           sizeof *b->mlist)))
                return rc;
            b->mlist[b->n_ml++] = dq->list_first + j;
        }
    }
    if (path == XG_DPATH_DENSE) {
        b->dense_blocks = b->total_blocks;
        dq->match_bound = dense_match_bound(b->lists + dq->list_first,
                                            n_lists, h->n_docs);
    }
    if (path == XG_DPATH_DENSE && b->impacts && !is_and) {
        /* OR from impacts: integer bounds in the uint32 row (impact.h). */
        double w[XG_GPU_MAX_LEAVES], s[XG_GPU_MAX_LEAVES];
        uint32_t m[XG_GPU_MAX_LEAVES];
        for (uint32_t j = 0; j < n_lists; ++j) {
            const struct xg_dlist *l = &b->lists[dq->list_first + j];
            w[j] = l->weight;
            s[j] = ix->impacts[l->term].scale;
        }
        double unit;
        xg_impact_units(w, s, n_lists, m, &dq->margin, &unit);
        dq->margin *= b->impact_slack;
        for (uint32_t j = 0; j < n_lists; ++j)
            b->lists[dq->list_first + j].imp_mult = m[j];
        dq->impact_row = 1;
        if (b->all_sparse ||
            (b->sparse && dq->match_bound * XG_SPARSE_SHARE <= h->n_docs)) {
            dq->sparse = 1;
            dq->touch_first = b->touch_total;
            b->touch_total += dq->match_bound;
        }
    } else if (path == XG_DPATH_DENSE) {
        ++b->exact_rows;
    }
    b->n_lists += n_lists;
    b->n_leaves += q->n_leaves;

    /* Plans, one per shard, all of one length. */
    uint32_t n_shards = h->n_shards, len = eq->plans[0].n_ops;
    if ((rc = grow((void **)&b->plan, &b->cap_plan,
                   b->n_plan + len * n_shards, sizeof *b->plan)))
        return rc;
    dq->plan_first = b->n_plan;
    dq->plan_stride = len;
    dq->plan_len = len;
    for (uint32_t s = 0; s < n_shards; ++s) {
        if (eq->plans[s].n_ops != len)
            return xg_set_error(XG_ERR_ARG, "plans differ in length");
        memcpy(b->plan + b->n_plan + s * len, eq->plans[s].ops,
               len * sizeof *b->plan);
    }
    b->n_plan += len * n_shards;

    if (q->n_filters) {
        if ((rc = grow((void **)&b->filters, &b->cap_filters,
                       b->n_filters + q->n_filters, sizeof *b->filters)))
            return rc;
        dq->filter_first = b->n_filters;
        dq->n_filters = q->n_filters;
        for (uint32_t f = 0; f < q->n_filters; ++f) {
            const struct xg_qfilter *qf = &q->filters[f];
            b->filters[b->n_filters++] =
                (struct xg_dfilter){qf->kind, qf->window, qf->first, qf->n};
        }
    }

    if (path == XG_DPATH_DENSE) dq->slot = b->n_rows++;
    dq->cand_cap = eq->k * 4 > b->cand_min ? eq->k * 4 : b->cand_min;
    if (path == XG_DPATH_INTERSECT && shortest_df < dq->cand_cap)
        dq->cand_cap = shortest_df;
    dq->cand_first = b->cand_total;
    b->cand_total += dq->cand_cap;
    if (path == XG_DPATH_DENSE) {
        dq->wdf_first = b->wdf_total;
        b->wdf_total += (uint64_t)dq->cand_cap * n_lists;
    }
    if (path == XG_DPATH_INTERSECT) {
        dq->icand_first = b->icand_total;
        b->icand_total += shortest_df;
    }
    b->qmap[b->n_queries++] = caller;
    return XG_OK;
}

int xg_batch_build(struct xg_batch *b, const struct xg_index *ix,
                   const struct xg_engine_query *qs, uint32_t first,
                   uint32_t n, const struct xg_bm25_params *p,
                   const struct xg_batch_opts *o, struct xg_result *out,
                   int *status)
{
    int rc;
    b->impacts = o->impacts;
    b->cand_min = o->cand_min;
    b->impact_slack = o->impact_slack;
    b->all_sparse = o->all_sparse;
    b->sparse = o->all_sparse || n >= XG_SPARSE_MIN_QUERIES;
    b->n_queries = b->n_lists = b->n_dense_lists = b->n_leaves = 0;
    b->n_plan = b->n_iq = b->n_rows = b->n_filters = 0;
    b->dense_blocks = b->total_blocks = b->decoded_total = 0;
    b->icand_total = b->cand_total = b->mpos_total = 0;
    b->touch_total = 0;
    b->wdf_total = 0;
    b->n_ml = 0;
    b->exact_rows = 0;
    memset(b->member_lists, 0, sizeof b->member_lists);
    b->bloom_lists = 0;
    xg_bm25_query_init(p, o->n_docs, o->total_length, 0, &b->bm25);
    /* In a small batch, where each launch costs more than its work, the
     * one-term queries join the dense rows when other queries take them
     * and none intersects anyway: the intersection's four launches for
     * them alone cost a batch of 16 ORs 8-10 us (docs/benchmarks.md).  A
     * batch of one-term queries alone keeps the intersection. */
    int one_term_dense = 0;
    if (n < XG_ONE_TERM_DENSE_BELOW) {
        int dense = 0, intersect = 0;
        for (uint32_t i = first; i < first + n; ++i) {
            const int path = xg_batch_path(&qs[i], o->positions);
            dense |= path == XG_DPATH_DENSE && !one_term_short(&qs[i], ix);
            intersect |= path == XG_DPATH_INTERSECT;
        }
        one_term_dense = dense && !intersect;
    }
    /* Two passes: DENSE queries, then INTERSECT ones. */
    for (int pass = 0; pass < 2; ++pass) {
        for (uint32_t i = first; i < first + n; ++i) {
            int path = batch_path(&qs[i], ix, o->positions, one_term_dense);
            if (pass == 0 && (path == -1 || path == -2 || p->k2 != 0)) {
                memset(&out[i], 0, sizeof out[i]);
                status[i] = path == -2 && p->k2 == 0 ? XG_OK
                                                     : XG_ERR_UNSUPPORTED;
                continue;
            }
            if (path != (pass == 0 ? XG_DPATH_DENSE : XG_DPATH_INTERSECT) ||
                p->k2 != 0)
                continue;
            status[i] = XG_OK;
            if ((rc = add_query(b, ix, &qs[i], i, path, p, o->member,
                                o->bloom)))
                return rc;
        }
        if (pass == 0) b->n_dense_lists = b->n_lists;
    }
    /* The intersection's work list: shortest-list postings per query. */
    uint32_t n_iq = 0;
    for (uint32_t i = 0; i < b->n_queries; ++i)
        n_iq += b->queries[i].path == XG_DPATH_INTERSECT;
    free(b->iq);
    free(b->iprefix);
    free(b->mprefix);
    b->iq = malloc((n_iq + 1) * sizeof *b->iq);
    b->iprefix = malloc((n_iq + 1) * sizeof *b->iprefix);
    b->mprefix = malloc((b->n_ml + 1) * sizeof *b->mprefix);
    if (!b->iq || !b->iprefix || !b->mprefix)
        return xg_set_error(XG_ERR_NOMEM, "out of memory (batch)");
    /* The merge paths' work list: tiles per MERGE list. */
    b->mprefix[0] = 0;
    for (uint32_t m = 0; m < b->n_ml; ++m) {
        const struct xg_dlist *l = &b->lists[b->mlist[m]];
        const struct xg_dquery *q = &b->queries[l->query];
        b->mprefix[m + 1] =
            b->mprefix[m] +
            xg_merge_tiles(b->lists[q->list_first + q->shortest].df, l->df);
    }
    b->iprefix[0] = 0;
    for (uint32_t i = 0; i < b->n_queries; ++i) {
        const struct xg_dquery *q = &b->queries[i];
        if (q->path != XG_DPATH_INTERSECT) continue;
        b->iq[b->n_iq] = i;
        b->iprefix[b->n_iq + 1] =
            b->iprefix[b->n_iq] + b->lists[q->list_first + q->shortest].df;
        ++b->n_iq;
    }
    return XG_OK;
}

/* One host thread's part of xg_batch_finish: queries [q0, q1), whose
 * candidates start at `at` where packed. */
struct finish_share {
    const struct xg_batch *b;
    const struct xg_index *ix;
    const struct xg_dqresult *res;
    const struct xg_dcand *cand;
    int packed;
    struct xg_result *out;
    struct xg_later *later;
    int *status;
    uint32_t q0, q1;
    uint64_t at;
    int rc;
};

void xg_later_free(struct xg_later *l)
{
    free(l->c);
    memset(l, 0, sizeof *l);
}

int xg_later_finish(struct xg_later *l, struct xg_result *out)
{
    if (!l->docids) return XG_OK;
    memset(out, 0, sizeof *out);
    const uint32_t m = l->m, k = m < l->k ? m : l->k;
    struct xg_dcand *c = l->c;
    if (k < m) xg_cand_top(c, m, k);
    else xg_cand_sort(c, m);
    out->hits = malloc((k ? k : 1) * sizeof *out->hits);
    if (!out->hits) {
        xg_later_free(l);
        return xg_set_error(XG_ERR_NOMEM, "out of memory");
    }
    for (uint32_t j = 0; j < k; ++j) {
        out->hits[j].docid = l->docids[c[j].doc];
        /* An intersection's candidates match every leaf (one term per
         * operand); the finish counted the others'. */
        out->hits[j].matched_leaves = l->leaves ? l->leaves
                                                : c[j].matched - 1u;
        out->hits[j].weight = c[j].weight;
    }
    out->n_hits = k;
    out->matches_estimated = l->matched;
    xg_later_free(l);
    return XG_OK;
}

static void *finish_queries(void *arg)
{
    struct finish_share *f = arg;
    const struct xg_batch *b = f->b;
    const struct xg_dqresult *res = f->res;
    uint64_t at = f->at;
    f->rc = XG_OK;
    for (uint32_t i = f->q0; i < f->q1; ++i) {
        const struct xg_dquery *q = &b->queries[i];
        uint32_t caller = b->qmap[i];
        uint64_t first = f->packed ? at : q->cand_first;
        at += res[i].n_cand;
        if (!f->later) memset(&f->out[caller], 0, sizeof f->out[caller]);
        if (res[i].overflow) {
            f->status[caller] = XG_ERR_UNSUPPORTED;
            continue;
        }
        uint32_t n = res[i].n_cand;
        struct xg_later l = {malloc((n ? n : 1) * sizeof *l.c),
                             f->ix->docids, res[i].matched, 0, q->k,
                             q->path == XG_DPATH_INTERSECT ? q->n_leaves : 0};
        if (!l.c) {
            f->rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
            return NULL;
        }
        for (uint32_t j = 0; j < n; ++j)
            if (f->cand[first + j].matched) l.c[l.m++] = f->cand[first + j];
        f->status[caller] = XG_OK;
        if (f->later) f->later[caller] = l;
        else if ((f->rc = xg_later_finish(&l, &f->out[caller])))
            return NULL;
    }
    return NULL;
}

int xg_batch_finish(const struct xg_batch *b, const struct xg_index *ix,
                    const struct xg_dqresult *res,
                    const struct xg_dcand *cand, int packed,
                    struct xg_result *out, struct xg_later *later,
                    int *status)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < b->n_queries; ++i) total += res[i].n_cand;
    /* Putting a long top k in order is most of the host's work on a batch
     * (66 us a top-1000 OR query of real text on one thread): such a
     * batch is split over the pool, a share per XG_FINISH_SHARE_CANDS
     * candidates.  Taking the candidates for `later` is a copy. */
    struct finish_share sh[XG_THREADS_MAX_SHARES];
    const uint32_t n_sh =
        later || total < 2 * (uint64_t)XG_FINISH_SHARE_CANDS ||
                b->n_queries < 2
            ? 1
            : xg_threads_shares(xg_threads_cores(), total,
                                XG_FINISH_SHARE_SHIFT);
    const uint64_t per = (total + n_sh - 1) / n_sh;
    uint64_t at = 0;
    uint32_t q = 0, used = 0;
    while (used < n_sh && q < b->n_queries) {
        struct finish_share *f = &sh[used++];
        *f = (struct finish_share){b, ix, res, cand, packed, out, later,
                                   status, q, q, at, XG_OK};
        uint64_t got = 0;
        while (q < b->n_queries && (got < per || used == n_sh))
            got += res[q++].n_cand;
        f->q1 = q;
        at += got;
    }
    xg_threads_run(used, finish_queries, sh, sizeof *sh);
    /* A share's only failure is an allocation; its message was set on
     * its own thread. */
    for (uint32_t s = 0; s < used; ++s)
        if (sh[s].rc)
            return xg_set_error(sh[s].rc, "out of memory (batch finish)");
    return XG_OK;
}
