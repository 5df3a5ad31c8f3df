/** @file search.c
 *  @brief A client's search answered by the engines (search.h).
 *
 *  The reply layouts are Xapian 1.4.22's (net/serialise.cc): the stats
 *  are total length, document count, relevance set size, total length
 *  again, a have-max-part byte, then per term (byte order) its name,
 *  termfreq, collection frequency and, with the byte set, its max_part;
 *  the MSet is the first item, three match counts, the same three
 *  uncollapsed, max_possible, max_attained, the percent factor, the items
 *  (weight, docid, sort key, collapse key, collapse count), then the
 *  stats the match used.
 */
#include "search.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../../gpu/query/value_range.h"
#include "../../gpu/query_shape.h"
#include "../../gpu/runtime/clock.h"
#include "../../gpu/runtime/knobs.h"
#include "../../shim/xg_shim.h"
#include "../context.h"
#include "../router.h"
#include "intercept.h"
#include "remote_stats.h"

struct xg_serve_search {
    xg_context *ctx;
    xg_handle *h;               /* this connection's Xapian handles, at
                                   its first search's revision */
    int pending;
    int reopened;               /* the client reopened: its child may see a
                                   newer revision than the index */
    struct xg_sbuf query_msg;   /* the MSG_QUERY's payload, for a replay */
    xg_xquery *xq;
    struct xg_prepared *pq;     /* xq converted, its term ids: the router
                                   takes it as it is */
    struct xg_query_stats st;
    struct xg_sbuf stats;       /* the REPLY_STATS payload sent */
    /* The last MSG_GETMSET's top k, valid where it weighed with this
     * database's own statistics: the next search is answered ahead of
     * its request for the same (xg_serve_search_ahead). */
    struct {
        int valid;
        uint64_t first, maxitems, cal;
    } guess;
    struct xg_sbuf ahead;       /* the REPLY_RESULTS frame answered ahead */
    int ahead_route;            /* its route; -1: none */
    int no_ahead;               /* XG_SERVE_NO_AHEAD */
};

struct xg_serve_search *xg_serve_search_open(xg_context *ctx)
{
    struct xg_serve_search *s = calloc(1, sizeof *s);
    if (s) {
        s->ctx = ctx;
        s->ahead_route = -1;
        s->no_ahead = xg_knob_serve_no_ahead();
    }
    return s;
}

static void forget(struct xg_serve_search *s)
{
    s->pending = 0;
    s->ahead_route = -1;
    s->ahead.off = s->ahead.len = 0;
    s->query_msg.off = s->query_msg.len = 0;
    s->stats.off = s->stats.len = 0;
    if (s->xq) xg_shim_xquery_free(s->xq);
    s->xq = NULL;
    xg_prepared_free(s->pq);
    s->pq = NULL;
    xg_shim_query_stats_free(&s->st);
}

void xg_serve_search_close(struct xg_serve_search *s)
{
    if (!s) return;
    forget(s);
    xg_sbuf_free(&s->query_msg);
    xg_sbuf_free(&s->stats);
    xg_sbuf_free(&s->ahead);
    xg_handle_close(s->h);
    free(s);
}

void xg_serve_search_reopened(struct xg_serve_search *s)
{
    s->reopened = 1;
}

int xg_serve_search_pending(const struct xg_serve_search *s)
{
    return s->pending;
}

/* The MSG_QUERY fields (remoteserver.cc's msg_query); 1 when the engines
 * serve these settings, with the query's bytes in *qp, *qn. */
static int settings_served(const unsigned char *p, size_t n,
                           const struct xg_bm25_params *server_bm25,
                           const unsigned char **qp, size_t *qn,
                           uint64_t *qlen)
{
    struct xg_wire_reader r = {p, p + n, 0};
    *qp = xg_wire_read_string(&r, qn);
    *qlen = xg_wire_read_length(&r);
    if (xg_wire_read_length(&r) != 0) return 0;         /* collapse_max */
    if (xg_wire_read_byte(&r) != '1') return 0;         /* ASCENDING docids */
    (void)xg_wire_read_length(&r);                      /* sort_key */
    if (xg_wire_read_byte(&r) != '0') return 0;         /* sort_by REL */
    const unsigned fwd = xg_wire_read_byte(&r);         /* sort direction */
    if (fwd != '0' && fwd != '1') return 0;
    if (xg_wire_read_double(&r) != 0.0) return 0;       /* time_limit */
    if (xg_wire_read_byte(&r) != 0) return 0;           /* percent_cutoff */
    if (xg_wire_read_double(&r) != 0.0) return 0;       /* weight_cutoff */
    size_t wn, pn, rn;
    const unsigned char *w = xg_wire_read_string(&r, &wn);
    const unsigned char *params = xg_wire_read_string(&r, &pn);
    if (r.bad || !xg_shim_weighting_is_bm25((const char *)w, wn, params, pn,
                                            server_bm25))
        return 0;
    (void)xg_wire_read_string(&r, &rn);                 /* the RSet */
    if (rn != 0) return 0;
    /* Nothing may follow: a match spy would. */
    return !r.bad && r.p == r.end;
}

int xg_serve_search_query(struct xg_serve_search *s, const unsigned char *p,
                          size_t n, struct xg_sbuf *reply)
{
    forget(s);
    if (!s->ctx) return 0;
    xg_router *router = xg_context_router(s->ctx);
    if (!xg_context_index(s->ctx)) {
        xg_router_count(router, xg_context_index_rc(s->ctx) == XG_ERR_STALE
                                    ? XG_ROUTE_STOCK_STALE
                                    : XG_ROUTE_STOCK_DAMAGED);
        return 0;
    }
    /* This connection's Xapian handles, opened at its first search: the
     * database may have changed since the index was exported (the handle
     * then has no index), or since the client's reopen. */
    if (!s->h && xg_context_open_handle(s->ctx, &s->h)) return -1;
    if (!xg_handle_index(s->h) || s->reopened) {
        xg_router_count(router, XG_ROUTE_STOCK_STALE);
        return 0;
    }
    const unsigned char *qp;
    size_t qn;
    uint64_t qlen;
    int served = settings_served(p, n, &xg_context_options(s->ctx)->bm25,
                                 &qp, &qn, &qlen);
    const char *why = "weighting or match settings";
    /* A query Xapian cannot read goes to the child, which reports it. */
    if (served && xg_shim_query_unserialise(qp, qn, &s->xq)) {
        served = 0;
        why = "a query the shim cannot read";
    }
    if (served) {
        const int prc = xg_handle_prepare_terms(s->h, s->xq, &s->pq);
        if (prc == XG_ERR_NOMEM) return -1;
        if (prc) {
            served = 0;
            why = xg_last_error();
        } else if (s->pq->q.n_leaves == 0 || s->pq->q.query_length != qlen) {
            served = 0;
            why = "an empty query or another query length";
        } else if (xg_query_weighted_subqs(&s->pq->q) == 0) {
            served = 0;
            why = "no weighted subquery";
        }
    }
    if (!served) {
        forget(s);
        xg_router_note_unserved(router, why);
        xg_router_count(router, XG_ROUTE_STOCK_UNSUPPORTED);
        return 0;
    }
    /* The statistics from the index (of this handle's revision), else
     * from Xapian.  Xapian failing here (a database error, typically the
     * revision recycled under a writer: counted as stale) is the child's
     * to report, as the stock server reports it. */
    int src = xg_remote_stats_of_index(xg_handle_index(s->h), &s->pq->q,
                                       s->pq->term, &s->st);
    if (src == XG_ERR_UNSUPPORTED)
        src = xg_shim_query_stats(xg_handle_db(s->h), s->xq, &s->st);
    if (src) {
        forget(s);
        if (src == XG_ERR_NOMEM) return -1;
        xg_router_count(router, XG_ROUTE_STOCK_STALE);
        return 0;
    }
    if (xg_remote_stats_put(&s->stats, &s->st, 0) ||
        xg_sbuf_append(&s->query_msg, p, n) ||
        xg_sbuf_frame(reply, XG_REPLY_STATS, s->stats.p + s->stats.off,
                      s->stats.len - s->stats.off))
        return -1;
    s->pending = 1;
    return 1;
}

/* Whether a weighted leaf's term indexes a document here (local_tf[i]:
 * leaf i's termfreq here): Xapian sets a max_part (and sends them) only
 * then (LocalSubMatch::open_post_list). */
static int weighted_leaf_present(const struct xg_query *q,
                                 const uint64_t *local_tf)
{
    for (uint32_t i = 0; i < q->n_leaves; ++i)
        if (local_tf[i] && !q->leaves[i].range && q->leaves[i].factor != 0)
            return 1;
    return 0;
}

/* The MSet a reply carries: the top first + maxitems and the match's
 * figures. */
struct answer {
    struct xg_result res;
    uint64_t lower, estimated, upper;   /* collapsed = uncollapsed here */
    double max_attained;
    int top_percent;                    /* stock's percent for the first
                                           item (-1: not asked) */
    struct xg_query_stats *stats;       /* the stats the match weighed
                                           with, its max_possible and
                                           max_parts */
    int have_max_part;
};

static int put_results(struct xg_sbuf *b, uint64_t first,
                       const struct answer *a, double percent_factor)
{
    const struct xg_result *res = &a->res;
    int e = xg_sbuf_put_length(b, first);
    for (int i = 0; !e && i < 2; ++i)
        e = xg_sbuf_put_length(b, a->lower) ||
            xg_sbuf_put_length(b, a->estimated) ||
            xg_sbuf_put_length(b, a->upper);
    e = e || xg_sbuf_put_double(b, a->stats->max_possible) ||
        xg_sbuf_put_double(b, a->max_attained) ||
        xg_sbuf_put_double(b, percent_factor);
    const uint32_t from = first < res->n_hits ? (uint32_t)first : res->n_hits;
    e = e || xg_sbuf_put_length(b, res->n_hits - from);
    for (uint32_t i = from; !e && i < res->n_hits; ++i)
        e = xg_sbuf_put_double(b, res->hits[i].weight) ||
            xg_sbuf_put_length(b, res->hits[i].docid) ||
            xg_sbuf_put_length(b, 0) ||                 /* sort key */
            xg_sbuf_put_length(b, 0) ||                 /* collapse key */
            xg_sbuf_put_length(b, 0);                   /* collapse count */
    return e || xg_remote_stats_put(b, a->stats, a->have_max_part) ? -1 : 0;
}

/* The search goes to the child after all: its MSG_QUERY to *replay. */
static int replay_to_child(struct xg_serve_search *s, struct xg_sbuf *replay)
{
    int rc = xg_sbuf_frame(replay, XG_MSG_QUERY,
                           s->query_msg.p + s->query_msg.off,
                           s->query_msg.len - s->query_msg.off) ? -1 : 0;
    forget(s);
    return rc;
}

/* A MSG_GETMSET: the top first + maxitems with check_at_least cal,
 * weighed with the client's statistics (their bytes). */
struct request {
    uint64_t first, maxitems, cal;
    const unsigned char *stats;
    size_t stats_n;
};

/* Whether the client's statistics are this database's own: those of
 * REPLY_STATS, byte for byte. */
static int own_stats(const struct xg_serve_search *s,
                     const struct request *q)
{
    const size_t own_n = s->stats.len - s->stats.off;
    return q->stats_n == own_n &&
           !memcmp(q->stats, s->stats.p + s->stats.off, own_n);
}

/* What one MSG_GETMSET weighs with: the database's own statistics, or
 * (global) the client's for the whole collection. */
struct weighing {
    int global;
    struct xg_remote_stats client;
    struct xg_weigh_stats ws;           /* the totals and per-leaf termfreqs
                                           BM25 uses */
    uint64_t *leaf_tf;                  /* ws.leaf_termfreq's storage */
    uint64_t *local_tf;                 /* each leaf's termfreq here */
};

static void weighing_free(struct weighing *w)
{
    xg_remote_stats_free(&w->client);
    free(w->leaf_tf);
    free(w->local_tf);
}

/* Each leaf's termfreq in st, or -1 when a leaf's term is missing; a
 * value range's is its estimate on the index's first shard (the plan's
 * shapes use it; serve's own bounds are for one shard).  A wildcard's
 * term that st lacks has its termfreq here (term[i]: its id in ix, or
 * -1), as the match registers it (xg_remote_stats_add_expansions). */
static int leaf_termfreqs(const struct xg_query *q,
                          const struct xg_query_stats *st,
                          const struct xg_index *ix, const int64_t *term,
                          uint64_t *tf)
{
    for (uint32_t i = 0; i < q->n_leaves; ++i) {
        if (q->leaves[i].range) {
            int list;
            uint32_t est;
            if (!ix || xg_value_range_open(ix,
                                           &q->ranges[q->leaves[i].range - 1],
                                           0, ix->shards[0].doccount, &list,
                                           &est))
                return -1;
            tf[i] = est;
            continue;
        }
        int64_t t = xg_remote_stats_find(st, q->leaves[i].term,
                                         q->leaves[i].term_len);
        if (t >= 0) tf[i] = st->termfreq[t];
        else if (q->leaves[i].expanded && ix)
            tf[i] = term[i] < 0 ? 0 : ix->terms[term[i]].df;
        else return -1;
    }
    return 0;
}

/* Set w up for the client's statistics (p, n).  0, 1 when the engines
 * cannot weigh with them (the child answers), -1 out of memory. */
static int weighing_init(struct xg_serve_search *s, const struct request *q,
                         struct weighing *w)
{
    const uint32_t nl = s->pq->q.n_leaves;
    memset(w, 0, sizeof *w);
    w->local_tf = malloc((nl ? nl : 1) * sizeof *w->local_tf);
    if (!w->local_tf) return -1;
    if (leaf_termfreqs(&s->pq->q, &s->st, xg_handle_index(s->h),
                       s->pq->term, w->local_tf))
        return 1;
    if (own_stats(s, q)) {
        w->ws.n_docs = s->st.doccount;
        w->ws.total_length = s->st.total_length;
        w->ws.leaf_termfreq = w->local_tf;
        return 0;
    }
    /* Several shards' statistics: the bounds come from this database's
     * one postlist tree (xg_remote_bounds), so one shard only. */
    w->global = 1;
    const struct xg_index *ix = xg_handle_index(s->h);
    if (!ix || ix->hdr->n_shards != 1) return 1;
    int rc = xg_remote_stats_parse(q->stats, q->stats_n, &w->client);
    if (rc == XG_ERR_NOMEM) return -1;
    if (rc || w->client.rset_size) return 1;
    if (!(w->leaf_tf = malloc((nl ? nl : 1) * sizeof *w->leaf_tf))) return -1;
    if (leaf_termfreqs(&s->pq->q, &w->client.st, ix, s->pq->term,
                       w->leaf_tf))
        return 1;
    w->ws.n_docs = w->client.st.doccount;
    w->ws.total_length = w->client.st.total_length;
    w->ws.leaf_termfreq = w->leaf_tf;
    return 0;
}

/* The engine's exact answer: counts exact, the bounds stock's matcher
 * computes for this query and statistics. */
static int engine_answer(struct xg_serve_search *s, struct weighing *w,
                         struct answer *a)
{
    a->lower = a->estimated = a->upper = a->res.matches_estimated;
    a->max_attained = a->res.n_hits ? a->res.hits[0].weight : 0.0;
    struct xg_query_stats *out = w->global ? &w->client.st : &s->st;
    a->stats = out;
    const struct xg_bm25_params *p = &xg_context_options(s->ctx)->bm25;
    const struct xg_index *ix = xg_handle_index(s->h);
    if (ix->hdr->n_shards != 1) {
        /* A server over several databases (own statistics only): its
         * bounds are Xapian's over every shard's tree. */
        a->have_max_part = weighted_leaf_present(&s->pq->q, w->local_tf);
        return xg_shim_query_bounds(xg_handle_db(s->h), s->xq, p, &s->st);
    }
    int present;
    int rc = xg_remote_bounds(xg_handle_db(s->h), ix, &s->pq->q, s->pq->term,
                              p, &w->ws, w->local_tf, s->st.doccount, out,
                              &out->max_possible, &present);
    a->have_max_part = present || (w->global && w->client.have_max_part);
    return rc;
}

/* The same count from stock's answer, without reading postlists: its
 * percent for the best document is floor(100 m / n + tiny), m of n
 * leaves, so pct n / 100 lies in (m - n / 100 - tiny, m] and rounds to
 * m while n < 50.  -1 when it cannot tell. */
static int64_t leaves_from_percent(int pct, uint32_t n)
{
    if (pct < 0 || n >= 50) return -1;
    return (int64_t)((double)pct * n / 100.0 + 0.5);
}

/* The terms the match registers as it expands the query's wildcards,
 * added to the stats the reply carries: those of the query as the client
 * sent it, before expansion. */
static int add_expansions(struct xg_serve_search *s,
                          struct xg_query_stats *st)
{
    const struct xg_query *q = &s->pq->q;
    uint32_t i = 0;
    while (i < q->n_leaves && !q->leaves[i].expanded) ++i;
    if (i == q->n_leaves) return XG_OK;
    struct xg_query *u = malloc(sizeof *u);
    if (!u) return xg_set_error(XG_ERR_NOMEM, "out of memory");
    int rc = xg_shim_xquery_convert(s->xq, u);
    if (!rc) {
        rc = xg_remote_stats_add_expansions(st, xg_handle_index(s->h), u);
        xg_query_free(u);
    }
    free(u);
    return rc;
}

/* Stock's answer, computed here as xapian-progsrv would. */
static int stock_answer(struct xg_serve_search *s, uint32_t k, uint32_t cal,
                        const struct weighing *w, struct answer *a)
{
    struct xg_stock_mset m;
    xg_router *router = xg_context_router(s->ctx);
    /* The planner prices stock's plain top k (calibrate's k 10, no
     * forced count): a search it could have sent elsewhere teaches it. */
    const int timed = s->pq && cal <= k && k <= 100 && xg_router_learn_due();
    xg_router_cpu_enter(router);
    const double t0 = timed ? xg_thread_cpu_now() : 0;
    int rc = xg_shim_stock_mset(xg_handle_db(s->h), s->xq,
                                &xg_context_options(s->ctx)->bm25, k, cal,
                                &s->st, &m);
    const double t1 = timed ? xg_thread_cpu_now() : 0;
    xg_router_cpu_leave(router);
    if (timed && !rc) xg_router_learn_stock(router, s->pq, t1 - t0);
    a->res = m.res;
    a->lower = m.lower;
    a->estimated = m.estimated;
    a->upper = m.upper;
    a->max_attained = m.max_attained;
    a->top_percent = m.top_percent;
    a->stats = &s->st;
    a->have_max_part = weighted_leaf_present(&s->pq->q, w->local_tf);
    return rc;
}

/* REPLY_RESULTS for q appended to *reply: 1; 0: the child answers (the
 * caller replays); -1 out of memory.  ahead: q is a guess, answered
 * before the client asks (xg_serve_search_ahead): nothing is counted,
 * *route is the router's, and 0 also where the router gives the search
 * to stock (stock answers when the request comes). */
static int results(struct xg_serve_search *s, const struct request *q,
                   int ahead, int *route_out, struct xg_sbuf *reply)
{
    const uint64_t first = q->first, cal = q->cal;
    const uint64_t k = first + q->maxitems;
    struct answer a;
    memset(&a, 0, sizeof a);
    a.top_percent = -1;
    struct weighing w;
    memset(&w, 0, sizeof w);
    xg_router *router = xg_context_router(s->ctx);
    int route = XG_ROUTE_STOCK_UNSUPPORTED, rc = 0;
    /* The engines weigh with this database's own statistics or, on one
     * shard, with a client's for several.  Anything else, or no document
     * asked for, the child answers. */
    int wi = k == 0 || k < first || k > UINT32_MAX
                 ? 1 : weighing_init(s, q, &w);
    if (wi) {
        weighing_free(&w);
        if (wi < 0) return -1;
        if (!ahead) xg_router_count(router, route);
        return 0;
    }
    /* The bounds add each leaf's max_part into its term's, as the match
     * does: the database's own statistics start from none each time (a
     * search answered ahead for another top k filled them). */
    if (!w.global) {
        if (s->st.max_part)
            memset(s->st.max_part, 0, s->st.n_terms * sizeof *s->st.max_part);
        s->st.max_possible = 0;
    }
    /* No more than every document can match: a raw client's huge
     * maxitems must not size the engines' arrays (the MSet is the same). */
    uint64_t kk = k < s->st.doccount ? k : s->st.doccount;
    if (!kk) kk = 1;
    const struct xg_weigh_stats *ws = w.global ? &w.ws : NULL;
    if (ahead ? xg_router_answer_ahead(router, s->xq, s->pq, kk, ws, &a.res,
                                       &route)
              : xg_router_answer(router, s->xq, s->pq, kk, 1, ws, &a.res,
                                 &route))
        rc = XG_ERR_NOMEM;
    else if (route == XG_ROUTE_GPU || route == XG_ROUTE_CPU)
        rc = engine_answer(s, &w, &a);
    else if (w.global || ahead)  /* stock weighs with these only in the
                                    child; ahead, stock waits its turn */
        rc = XG_ERR_UNSUPPORTED;
    else    /* the router's reason is counted; stock answers here */
        rc = stock_answer(s, (uint32_t)k,
                          cal < k ? (uint32_t)k
                                  : cal > UINT32_MAX ? UINT32_MAX : (uint32_t)cal,
                          &w, &a);  /* Enquire clamps k to the size itself */
    if (!rc) rc = add_expansions(s, a.stats);
    uint32_t matched = 0;
    const uint32_t n_subqs = xg_query_weighted_subqs(&s->pq->q);
    /* A value range counts itself even unweighted, so the count can
     * pass n_subqs, where stock's percent (capped at 100) cannot tell. */
    int64_t from_pct = leaves_from_percent(a.top_percent, n_subqs);
    if (s->pq->q.n_ranges && from_pct >= n_subqs) from_pct = -1;
    if (!rc && a.res.n_hits && a.max_attained > 0) {
        if (from_pct >= 0) matched = (uint32_t)from_pct;
        else {
            const struct xg_index *ix = xg_handle_index(s->h);
            rc = xg_handle_doc_leaves(
                s->h, s->pq,
                xg_result_greatest(&a.res, ix ? ix->hdr->n_shards : 1),
                &matched);
        }
    }
    if (rc) {
        /* Xapian failed here (a database error), or stock's answer to
         * the general form has no subquery count to read: the child
         * answers, as the stock server does, error and all. */
        xg_result_free(&a.res);
        weighing_free(&w);
        return rc == XG_ERR_NOMEM ? -1 : 0;
    }
    /* multimatch.cc: the share of subqueries the best document matches,
     * over its weight, as a percentage factor. */
    double percent = 0.0;
    if (a.res.n_hits && a.max_attained > 0) {
        double scale = matched / (double)n_subqs;
        scale /= a.max_attained;
        percent = scale * 100.0;
    }
    struct xg_sbuf body = {0};
    rc = put_results(&body, first, &a, percent) ||
         xg_sbuf_frame(reply, XG_REPLY_RESULTS, body.p + body.off,
                       body.len - body.off) ? -1 : 1;
    xg_sbuf_free(&body);
    xg_result_free(&a.res);
    weighing_free(&w);
    *route_out = route;
    return rc;
}

static _Atomic uint64_t ahead_sent, ahead_dropped;

void xg_serve_search_ahead_counts(uint64_t *sent, uint64_t *dropped)
{
    *sent = atomic_load(&ahead_sent);
    *dropped = atomic_load(&ahead_dropped);
}

/* Drop a search answered ahead. */
static void ahead_clear(struct xg_serve_search *s)
{
    s->ahead_route = -1;
    s->ahead.off = s->ahead.len = 0;
}

int xg_serve_search_ahead(struct xg_serve_search *s)
{
    if (!s->pending || !s->guess.valid || s->ahead_route >= 0 || s->no_ahead)
        return 0;
    /* A wildcard's expansion adds its terms to the reply's statistics
     * as it answers: once, when the request comes. */
    for (uint32_t i = 0; i < s->pq->q.n_leaves; ++i)
        if (s->pq->q.leaves[i].expanded) return 0;
    const struct request q = {s->guess.first, s->guess.maxitems,
                              s->guess.cal, s->stats.p + s->stats.off,
                              s->stats.len - s->stats.off};
    int route = -1;
    int rc = results(s, &q, 1, &route, &s->ahead);
    if (rc < 0) return -1;
    if (rc == 1) s->ahead_route = route;
    else ahead_clear(s);
    return 0;
}

int xg_serve_search_getmset(struct xg_serve_search *s, const unsigned char *p,
                            size_t n, struct xg_sbuf *reply,
                            struct xg_sbuf *replay)
{
    struct xg_wire_reader r = {p, p + n, 0};
    struct request q;
    q.first = xg_wire_read_length(&r);
    q.maxitems = xg_wire_read_length(&r);
    q.cal = xg_wire_read_length(&r);
    q.stats = r.p;
    q.stats_n = (size_t)(r.end - r.p);
    const int own = !r.bad && own_stats(s, &q);
    int rc, route = -1;
    if (s->ahead_route >= 0 && own && q.first == s->guess.first &&
        q.maxitems == s->guess.maxitems && q.cal == s->guess.cal) {
        /* Answered ahead, for this very request. */
        xg_router_count(xg_context_router(s->ctx), s->ahead_route);
        rc = xg_sbuf_append(reply, s->ahead.p + s->ahead.off,
                            s->ahead.len - s->ahead.off) ? -1 : 1;
        atomic_fetch_add(&ahead_sent, 1);
    } else {
        if (s->ahead_route >= 0) atomic_fetch_add(&ahead_dropped, 1);
        if (!r.bad) {
            rc = results(s, &q, 0, &route, reply);
        } else {
            xg_router_count(xg_context_router(s->ctx),
                            XG_ROUTE_STOCK_UNSUPPORTED);
            rc = 0;
        }
    }
    ahead_clear(s);
    /* A client that sends this database's own statistics (one remote
     * database) most likely asks the next search for the same top k. */
    s->guess.valid = own;
    s->guess.first = q.first;
    s->guess.maxitems = q.maxitems;
    s->guess.cal = q.cal;
    if (rc == 0) return replay_to_child(s, replay);
    forget(s);
    return rc;
}
