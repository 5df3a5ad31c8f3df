/** @file remote_stats.c
 *  @brief A remote search's statistics and bounds (remote_stats.h).
 */
#include "remote_stats.h"

#include <stdlib.h>
#include <string.h>

#include "../../gpu/query/plan_eval.h"
#include "../../gpu/runtime/error.h"

/* Room for n terms' fields in st (zeroed); -1 out of memory (free st). */
static int alloc_terms(struct xg_query_stats *st, size_t n)
{
    const size_t m = n ? n : 1;
    st->terms = calloc(m, sizeof *st->terms);
    st->term_len = calloc(m, sizeof *st->term_len);
    st->termfreq = calloc(m, sizeof *st->termfreq);
    st->collfreq = calloc(m, sizeof *st->collfreq);
    st->max_part = calloc(m, sizeof *st->max_part);
    return st->terms && st->term_len && st->termfreq && st->collfreq &&
                   st->max_part ? 0 : -1;
}

void xg_remote_stats_free(struct xg_remote_stats *s)
{
    xg_shim_query_stats_free(&s->st);
    memset(s, 0, sizeof *s);
}

int xg_remote_stats_parse(const unsigned char *p, size_t n,
                          struct xg_remote_stats *out)
{
    memset(out, 0, sizeof *out);
    struct xg_wire_reader r = {p, p + n, 0};
    struct xg_query_stats *st = &out->st;
    st->total_length = xg_wire_read_length(&r);
    st->doccount = xg_wire_read_length(&r);
    out->rset_size = xg_wire_read_length(&r);
    (void)xg_wire_read_length(&r);          /* total length again */
    out->have_max_part = xg_wire_read_byte(&r) != 0;
    const uint64_t nt = xg_wire_read_length(&r);
    /* Each term takes at least three bytes: no more can follow. */
    if (r.bad || nt > (uint64_t)(r.end - r.p) / 3) return -1;
    if (alloc_terms(st, (size_t)nt)) {
        xg_remote_stats_free(out);
        return XG_ERR_NOMEM;
    }
    for (uint64_t i = 0; i < nt; ++i) {
        size_t len;
        const unsigned char *t = xg_wire_read_string(&r, &len);
        st->termfreq[i] = xg_wire_read_length(&r);
        if (out->rset_size) (void)xg_wire_read_length(&r);
        st->collfreq[i] = xg_wire_read_length(&r);
        if (out->have_max_part) st->max_part[i] = xg_wire_read_double(&r);
        if (r.bad || len > UINT32_MAX) break;
        if (!(st->terms[i] = malloc(len + 1))) {
            xg_remote_stats_free(out);
            return XG_ERR_NOMEM;
        }
        memcpy(st->terms[i], t, len);
        st->terms[i][len] = '\0';
        st->term_len[i] = (uint32_t)len;
        st->n_terms = (uint32_t)i + 1;
        /* The map they came from is in byte order, without repeats. */
        if (i && xg_remote_stats_find(st, st->terms[i],
                                      st->term_len[i]) != (int64_t)i)
            r.bad = 1;
    }
    if (r.bad || r.p != r.end) {
        xg_remote_stats_free(out);
        return -1;
    }
    return 0;
}

/* Byte order, as std::string compares. */
static int term_cmp(const char *a, uint32_t an, const char *b, uint32_t bn)
{
    int c = memcmp(a, b, an < bn ? an : bn);
    return c ? c : (an > bn) - (an < bn);
}

int xg_remote_stats_of_index(const struct xg_index *ix,
                             const struct xg_query *q,
                             const int64_t *term,
                             struct xg_query_stats *out)
{
    memset(out, 0, sizeof *out);
    if (ix->hdr->n_shards != 1)
        return xg_set_error(XG_ERR_UNSUPPORTED, "stats: several shards");
    /* The unique terms in byte order: an insertion sort of leaf indexes
     * (a query has a few leaves). */
    uint32_t order[XG_QUERY_MAX_LEAVES], n = 0;
    for (uint32_t i = 0; i < q->n_leaves; ++i) {
        const struct xg_qleaf *l = &q->leaves[i];
        /* A value range registers no term; a wildcard's terms are
         * registered by the match (xg_remote_stats_add_expansions). */
        if (l->range || l->expanded) continue;
        if (!l->term_len)
            return xg_set_error(XG_ERR_UNSUPPORTED, "stats: an empty term");
        uint32_t at = n;
        int dup = 0;
        while (at > 0) {
            const struct xg_qleaf *o = &q->leaves[order[at - 1]];
            int c = term_cmp(o->term, o->term_len, l->term, l->term_len);
            if (c == 0) dup = 1;
            if (c <= 0) break;
            --at;
        }
        if (dup) continue;
        memmove(order + at + 1, order + at, (n - at) * sizeof *order);
        order[at] = i;
        ++n;
    }
    if (alloc_terms(out, n)) {
        xg_shim_query_stats_free(out);
        return xg_set_error(XG_ERR_NOMEM, "out of memory");
    }
    out->total_length = ix->hdr->total_length;
    out->doccount = ix->hdr->n_docs;
    for (uint32_t j = 0; j < n; ++j) {
        const struct xg_qleaf *l = &q->leaves[order[j]];
        if (!(out->terms[j] = malloc(l->term_len + 1))) {
            xg_shim_query_stats_free(out);
            return xg_set_error(XG_ERR_NOMEM, "out of memory");
        }
        memcpy(out->terms[j], l->term, l->term_len);
        out->terms[j][l->term_len] = '\0';
        out->term_len[j] = l->term_len;
        out->n_terms = j + 1;
        const int64_t t = term[order[j]];
        out->termfreq[j] = t < 0 ? 0 : ix->terms[t].df;
        out->collfreq[j] = t < 0 ? 0 : ix->terms[t].cf;
    }
    return XG_OK;
}

int xg_remote_stats_put(struct xg_sbuf *b, const struct xg_query_stats *st,
                        int have_max_part)
{
    int e = xg_sbuf_put_length(b, st->total_length) ||
            xg_sbuf_put_length(b, st->doccount) ||
            xg_sbuf_put_length(b, 0) ||                 /* rset_size */
            xg_sbuf_put_length(b, st->total_length) ||
            xg_sbuf_append(b, have_max_part ? "\1" : "\0", 1) ||
            xg_sbuf_put_length(b, st->n_terms);
    for (uint32_t i = 0; !e && i < st->n_terms; ++i) {
        e = xg_sbuf_put_string(b, st->terms[i], st->term_len[i]) ||
            xg_sbuf_put_length(b, st->termfreq[i]) ||
            xg_sbuf_put_length(b, st->collfreq[i]) ||
            (have_max_part && xg_sbuf_put_double(b, st->max_part[i]));
    }
    return e ? -1 : 0;
}

int64_t xg_remote_stats_find(const struct xg_query_stats *st,
                             const char *term, uint32_t len)
{
    uint32_t lo = 0, hi = st->n_terms;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int c = term_cmp(st->terms[mid], st->term_len[mid], term, len);
        if (c == 0) return mid;
        if (c < 0) lo = mid + 1; else hi = mid;
    }
    return -1;
}

/* A term a wildcard's expansion registers that the statistics lack. */
struct new_term {
    char *term;
    uint32_t len;
    uint64_t tf, cf;
};

struct expansion_terms {
    const struct xg_query_stats *st;
    const struct xg_index *ix;
    struct new_term *t;
    uint32_t n, cap;
    uint32_t left;              /* terms still registered (LIMIT_FIRST) */
    int rc;
};

static int note_expansion(void *ctx, uint64_t id, const char *t, size_t n)
{
    struct expansion_terms *e = ctx;
    if (e->left == 0) return 1;
    --e->left;
    if (xg_remote_stats_find(e->st, t, (uint32_t)n) >= 0) return 0;
    if (e->n == e->cap) {
        const uint32_t cap = e->cap ? 2 * e->cap : 64;
        struct new_term *nt = realloc(e->t, cap * sizeof *nt);
        if (!nt) {
            e->rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
            return 1;
        }
        e->t = nt;
        e->cap = cap;
    }
    struct new_term *x = &e->t[e->n];
    if (!(x->term = malloc(n + 1))) {
        e->rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
        return 1;
    }
    memcpy(x->term, t, n);
    x->term[n] = '\0';
    x->len = (uint32_t)n;
    x->tf = e->ix->terms[id].df;
    x->cf = e->ix->terms[id].cf;
    ++e->n;
    return 0;
}

static int new_term_order(const void *a, const void *b)
{
    const struct new_term *x = a, *y = b;
    return term_cmp(x->term, x->len, y->term, y->len);
}

int xg_remote_stats_add_expansions(struct xg_query_stats *st,
                                   const struct xg_index *ix,
                                   const struct xg_query *u)
{
    if (u->n_wildcards == 0) return XG_OK;
    struct expansion_terms e = {st, ix, NULL, 0, 0, 0, 0};
    int rc = XG_OK;
    /* QueryWildcard::postlist registers every term it reads: the first
     * max_expansion under WILDCARD_LIMIT_FIRST, else all of them (a
     * MOST_FREQUENT choice registers those it drops too). */
    for (uint32_t w = 0; w < u->n_wildcards && !rc; ++w) {
        const struct xg_qwild *x = &u->wildcards[w];
        const struct xg_qleaf *pat = &u->leaves[x->leaf];
        e.left = x->max_type == XG_WILDCARD_LIMIT_FIRST && x->max_expansion
                     ? x->max_expansion : UINT32_MAX;
        rc = xg_fmt_prefix(ix, pat->term, pat->term_len, note_expansion, &e);
        if (!rc) rc = e.rc;
    }
    /* Merge st's terms and the new ones (each wildcard's in byte order,
     * maybe repeated across wildcards, sorted together: a client's query
     * may hold several wildcards of 2^17 terms) into one byte-ordered
     * set. */
    struct xg_query_stats m = *st;
    if (!rc && e.n) {
        m.n_terms = 0;
        if (alloc_terms(&m, (size_t)st->n_terms + e.n)) {
            free(m.terms);
            free(m.term_len);
            free(m.termfreq);
            free(m.collfreq);
            free(m.max_part);
            rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
        }
    }
    if (!rc && e.n) {
        qsort(e.t, e.n, sizeof *e.t, new_term_order);
        uint32_t a = 0, b = 0, n = 0;
        while (a < st->n_terms || b < e.n) {
            int c = a == st->n_terms ? 1 : b == e.n ? -1
                    : term_cmp(st->terms[a], st->term_len[a], e.t[b].term,
                               e.t[b].len);
            if (c <= 0) {
                m.terms[n] = st->terms[a];
                m.term_len[n] = st->term_len[a];
                m.termfreq[n] = st->termfreq[a];
                m.collfreq[n] = st->collfreq[a];
                m.max_part[n++] = st->max_part[a++];
                continue;
            }
            struct new_term *x = &e.t[b++];
            if (n && term_cmp(m.terms[n - 1], m.term_len[n - 1], x->term,
                              x->len) == 0)
                continue;               /* two wildcards' term */
            m.terms[n] = x->term;
            x->term = NULL;
            m.term_len[n] = x->len;
            m.termfreq[n] = x->tf;
            m.collfreq[n] = x->cf;
            m.max_part[n++] = 0.0;
        }
        m.n_terms = n;
        free(st->terms);
        free(st->term_len);
        free(st->termfreq);
        free(st->collfreq);
        free(st->max_part);
        *st = m;
    }
    for (uint32_t i = 0; i < e.n; ++i) free(e.t[i].term);
    free(e.t);
    return rc;
}

/* The wdf upper bound of term t's postlist as Xapian's glass backend
 * gives it (what the shim read from Xapian): the larger of its first
 * posting's wdf and the rest of its collection frequency; 0 for a term
 * the database lacks.  From the index, which holds both. */
static int wdf_upper_bound(const struct xg_index *ix, int64_t t, uint32_t *ub)
{
    *ub = 0;
    if (t < 0) return XG_OK;
    uint32_t first;
    int rc = xg_fmt_first_wdf(ix, (uint64_t)t, &first);
    if (rc) return rc;
    const uint64_t rest = ix->terms[t].cf - first;
    *ub = rest > first ? (uint32_t)rest : first;
    return XG_OK;
}

int xg_remote_bounds(xg_db *db, const struct xg_index *ix,
                     const struct xg_query *q, const int64_t *term,
                     const struct xg_bm25_params *p,
                     const struct xg_weigh_stats *weigh,
                     const uint64_t *local_tf, uint64_t local_doccount,
                     struct xg_query_stats *out, double *max_possible,
                     int *any_present)
{
    const uint32_t nl = q->n_leaves, ns = q->n_syns;
    const size_t n = nl ? nl : 1, m = ns ? ns : 1;
    /* One allocation for the arrays, widest first (a search's dozen
     * mallocs and frees had cost about 2,900 instructions). */
    char *arena = malloc(8 * (3 * n + 2 * m) + 4 * (2 * n) + 3 * n + m);
    struct xg_plan *plan = malloc(sizeof *plan);
    if (!arena || !plan) {
        free(arena);
        free(plan);
        *any_present = 0;
        return xg_set_error(XG_ERR_NOMEM, "out of memory");
    }
    double *maxpart = (double *)arena, *stack_w = maxpart + n;
    double *syn_w = stack_w + n;
    int64_t *syn_est = (int64_t *)(syn_w + m), *stack_e = syn_est + m;
    uint32_t *wdf_ub = (uint32_t *)(stack_e + n), *df = wdf_ub + n;
    uint8_t *all = (uint8_t *)(df + n);       /* every filter passes */
    uint8_t *can = all + n;                   /* the leaves a match holds */
    uint8_t *stack_m = can + n, *syn_live = stack_m + n;
    uint32_t doclen_lb = 0, doclen_ub = 0;
    int rc = XG_OK;
    /* The maximum is the tree's with every leaf matching but those an
     * AND_NOT excludes (AndNotPostList's maximum is its left side's). */
    if (!rc && xg_query_negated_leaves(q, can))
        rc = xg_set_error(XG_ERR_UNSUPPORTED, "bounds: a malformed tree");
    for (uint32_t i = 0; !rc && i < nl; ++i) can[i] = !can[i];
    if (!rc && ix->hdr->n_shards != 1)
        rc = xg_set_error(XG_ERR_UNSUPPORTED, "bounds: several shards");
    if (!rc) rc = xg_shim_doclen_bounds(db, &doclen_lb, &doclen_ub);
    for (uint32_t i = 0; !rc && i < nl; ++i)
        rc = wdf_upper_bound(ix, term[i], &wdf_ub[i]);
    for (uint32_t i = 0; !rc && i < nl; ++i)
        df[i] = local_tf[i] > UINT32_MAX ? UINT32_MAX : (uint32_t)local_tf[i];
    if (!rc)
        rc = xg_shim_plan(q, df, local_doccount > UINT32_MAX
                                     ? UINT32_MAX : (uint32_t)local_doccount,
                          plan);
    *any_present = 0;
    if (!rc) {
        struct xg_bm25_query bq;
        xg_bm25_query_init(p, weigh->n_docs, weigh->total_length,
                           q->query_length, &bq);
        for (uint32_t i = 0; i < nl; ++i) {
            const double tw = xg_bm25_termweight(
                p, weigh->n_docs, weigh->leaf_termfreq[i], q->leaves[i].wqf,
                q->leaves[i].factor);
            /* A value range weighs 0 (ValueRangePostList). */
            maxpart[i] = q->leaves[i].range
                ? 0.0 : xg_bm25_maxpart(&bq, tw, wdf_ub[i], doclen_lb);
            all[i] = 1;
            /* LocalSubMatch::open_post_list: only a weighted term with
             * postings here sets its max_part (a synonym's terms are
             * unweighted). */
            if (!local_tf[i] || q->leaves[i].range ||
                q->leaves[i].factor == 0)
                continue;
            *any_present = 1;
            int64_t t = xg_remote_stats_find(out, q->leaves[i].term,
                                             q->leaves[i].term_len);
            if (t >= 0) out->max_part[t] += maxpart[i];
        }
        /* A synonym's maximum (LocalSubMatch::make_synonym_postlist and
         * Weight::init_'s synonym case): BM25 of wqf 1 for its OR tree's
         * termfreq estimate, its wdf bounded by the database's longest
         * document; none where no term below it has a posting here. */
        xg_plan_syn_termfreqs(plan->ops, plan->n_ops, weigh->leaf_termfreq,
                              local_tf, (double)weigh->n_docs, syn_est,
                              syn_live, stack_e, stack_m);
        for (uint32_t s = 0; s < ns && !rc; ++s) {
            syn_w[s] = 0.0;
            if (!syn_live[s] || q->syns[s].factor == 0) continue;
            if (syn_est[s] < 0) {
                rc = xg_set_error(XG_ERR_UNSUPPORTED, "bounds: a synonym "
                                  "over more than terms");
                break;
            }
            const double tw = xg_bm25_termweight(
                p, weigh->n_docs,
                weigh->n_docs ? (uint64_t)syn_est[s] : 0, 1,
                q->syns[s].factor);
            syn_w[s] = xg_bm25_maxpart(&bq, tw, doclen_ub, doclen_lb);
        }
        /* A position filter's bound is its AND's (SelectPostList), so
         * every filter counts as passed ("all" has room: n_leaves >= 2
         * per filter). */
        if (!rc && !xg_plan_eval_syn(plan->ops, plan->n_ops, can, maxpart,
                                     all, syn_w, stack_m, stack_w,
                                     max_possible))
            *max_possible = 0;
    }
    free(arena);
    free(plan);
    return rc;
}
