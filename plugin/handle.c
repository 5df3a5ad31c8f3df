/** @file handle.c
 *  @brief A handle on a database and its GPU index (see handle.h): open and
 *         verify, parse, prepare, and run the stock matcher, the CPU
 *         matcher or a GPU batch.  No routing and no fallback: the router
 *         (router.c) decides those.
 *
 *  The index is refused (kept NULL, with why) when it is corrupt or stale.
 *  The CPU path: QueryParser (shim) -> engine shapes -> term ids and
 *  per-shard frequencies -> one plan per shard -> xg_match_ref.
 */
#include "handle.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../gpu/query/batch.h"
#include "../gpu/runtime/error.h"
#include "../gpu/runtime/knobs.h"
#include "../gpu/query/match_ref.h"
#include "../gpu/query/engine.h"
#include "../gpu/query/value_range.h"
#include "../gpu/query/wildcard.h"

struct xg_handle {
    xg_db *db;
    struct xg_index *ix;        /* NULL if unusable */
    int ix_borrowed;            /* a clone's: owned by its base */
    char *index_error;          /* why ix is NULL */
    int index_rc;               /* and its status code */
    uint32_t n_shards;
    uint32_t *shard_doccount;
    xg_gpu *gpu;                /* opened on first use */
    int gpu_tried, gpu_rc;
    _Atomic int gpu_up;         /* opened and not closed: the status
                                   without gpu_mu, which every query's
                                   route would otherwise take */
    char *gpu_error;
    /* Several threads may run GPU batches at once (the engine has a slot
     * for each of two); the engine opens once under gpu_mu, and closes
     * only when no search holds gpu_rw. */
    pthread_mutex_t gpu_mu;
    pthread_rwlock_t gpu_rw;
    struct xg_engine_opts gpu_opts;
};

/* XG_OK when every shard of s->db is at the uuid and revision, and the
 * database has the documents, that s->ix (read from path) was exported
 * from; else XG_ERR_STALE (or XG_ERR_NOMEM) with the reason. */
static int same_revisions(xg_handle *s, uint64_t n_docs, const char *path)
{
    char **uuids = calloc(s->n_shards, sizeof *uuids);
    uint64_t *revs = calloc(s->n_shards, sizeof *revs);
    struct xg_shard_info *si = calloc(s->n_shards, sizeof *si);
    int rc = uuids && revs && si ? XG_OK
                                 : xg_set_error(XG_ERR_NOMEM, "out of memory");
    for (uint32_t i = 0; i < s->n_shards && !rc; ++i) {
        rc = xg_shim_db_shard(s->db, i, &si[i]);
        uuids[i] = si[i].uuid;
        revs[i] = si[i].revision;
    }
    if (!rc)
        rc = xg_fmt_check_shards(s->ix, s->n_shards,
                                 (const char *const *)uuids, revs);
    if (!rc && s->ix->hdr->n_docs != n_docs)
        rc = xg_set_error(XG_ERR_STALE, "%s: stale index: %llu documents, "
                          "the database has %llu", path,
                          (unsigned long long)s->ix->hdr->n_docs,
                          (unsigned long long)n_docs);
    if (rc && rc != XG_ERR_NOMEM) rc = XG_ERR_STALE;
    free(uuids);
    free(revs);
    free(si);
    return rc;
}

static xg_handle *new_handle(void)
{
    xg_handle *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    pthread_mutex_init(&s->gpu_mu, NULL);
    pthread_rwlock_init(&s->gpu_rw, NULL);
    return s;
}

int xg_handle_open(const char *const *db_paths, size_t n_paths,
                   const char *index_path, xg_handle **out)
{
    int rc;
    struct xg_db_stats st;
    xg_handle *s = new_handle();
    struct xg_engine_opts eo = XG_ENGINE_DEFAULTS;
    *out = NULL;
    if (!s) return xg_set_error(XG_ERR_NOMEM, "out of memory");
    s->gpu_opts = eo;
    if (n_paths == 0) {
        xg_handle_close(s);
        return xg_set_error(XG_ERR_ARG, "no database given");
    }
    if ((rc = xg_shim_db_open(db_paths, n_paths, &s->db))) goto fail;
    if ((rc = xg_shim_db_stats(s->db, &st))) goto fail;
    s->n_shards = st.n_shards;
    s->shard_doccount = calloc(st.n_shards, sizeof *s->shard_doccount);
    if (!s->shard_doccount) {
        rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
        goto fail;
    }
    for (uint32_t i = 0; i < st.n_shards && !rc; ++i) {
        struct xg_shard_info si;
        rc = xg_shim_db_shard(s->db, i, &si);
        s->shard_doccount[i] = si.doccount;
    }
    if (!rc) {
        char *path = index_path ? strdup(index_path)
                                : xg_fmt_default_path(db_paths[0]);
        int irc = path ? xg_fmt_open(path, &s->ix)
                       : xg_set_error(XG_ERR_NOMEM, "out of memory");
        if (!irc && (irc = same_revisions(s, st.n_docs, path))) {
            xg_fmt_close(s->ix);
            s->ix = NULL;
        }
        if (irc) {
            s->index_rc = irc;
            s->index_error = strdup(xg_last_error());
        }
        free(path);
    }
    if (rc) goto fail;
    *out = s;
    return XG_OK;
fail:
    xg_handle_close(s);
    return rc;
}

void xg_handle_close(xg_handle *s)
{
    if (!s) return;
    xg_engine_close(s->gpu);
    free(s->gpu_error);
    if (!s->ix_borrowed) xg_fmt_close(s->ix);
    if (s->db) xg_shim_db_close(s->db);
    free(s->index_error);
    free(s->shard_doccount);
    pthread_mutex_destroy(&s->gpu_mu);
    pthread_rwlock_destroy(&s->gpu_rw);
    free(s);
}

int xg_handle_clone(const xg_handle *base, const char *const *db_paths,
                    size_t n_paths, xg_handle **out)
{
    int rc;
    struct xg_db_stats st;
    xg_handle *s = new_handle();
    *out = NULL;
    if (!s) return xg_set_error(XG_ERR_NOMEM, "out of memory");
    s->gpu_opts = base->gpu_opts;
    if ((rc = xg_shim_db_open(db_paths, n_paths, &s->db)) ||
        (rc = xg_shim_db_stats(s->db, &st)))
        goto fail;
    if (st.n_shards != base->n_shards) {
        rc = xg_set_error(XG_ERR_STALE, "database changed while cloning");
        goto fail;
    }
    s->n_shards = base->n_shards;
    s->shard_doccount = malloc(s->n_shards * sizeof *s->shard_doccount);
    if (!s->shard_doccount) {
        rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
        goto fail;
    }
    memcpy(s->shard_doccount, base->shard_doccount,
           s->n_shards * sizeof *s->shard_doccount);
    s->ix = base->ix;
    s->ix_borrowed = 1;
    s->index_rc = base->index_rc;
    /* The database may have moved on since the base opened it: then this
     * handle's Xapian reads and the index disagree, and it has none. */
    if (s->ix && (rc = same_revisions(s, st.n_docs, "index"))) {
        if (rc == XG_ERR_NOMEM) goto fail;
        s->ix = NULL;
        s->index_rc = rc;
        rc = XG_OK;
        if (!(s->index_error = strdup(xg_last_error()))) {
            rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
            goto fail;
        }
    }
    if (!s->index_error && base->index_error &&
        !(s->index_error = strdup(base->index_error))) {
        rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
        goto fail;
    }
    *out = s;
    return XG_OK;
fail:
    xg_handle_close(s);
    return rc;
}

const char *xg_handle_index_error(const xg_handle *s)
{
    return s->ix ? NULL : s->index_error ? s->index_error : "no index";
}

int xg_handle_index_rc(const xg_handle *s)
{
    return s->ix ? XG_OK : s->index_rc ? s->index_rc : XG_ERR_IO;
}

xg_db *xg_handle_db(xg_handle *s) { return s->db; }

const struct xg_index *xg_handle_index(const xg_handle *s) { return s->ix; }

void xg_handle_parse_opts(const struct xg_search_opts *o,
                          struct xg_parse_opts *po)
{
    po->stem_english = o->stem_english;
    po->default_and = o->default_and;
    po->stopper = o->stopper;
    po->flags = o->parser_flags;
    po->omega = o->omega;
    po->filters = o->filters;
    po->n_filters = o->n_filters;
    po->excludes = o->excludes;
    po->n_excludes = o->n_excludes;
}

int xg_handle_parse(xg_handle *s, const char *text,
                    const struct xg_search_opts *o, xg_xquery **out)
{
    struct xg_parse_opts po;
    xg_handle_parse_opts(o, &po);
    return xg_shim_parse(s->db, text, &po, out);
}

void xg_handle_set_engine_opts(xg_handle *s, const struct xg_engine_opts *o)
{
    s->gpu_opts = *o;
}

/* Open the GPU engine once; XG_OK or why not (kept for later calls). */
static int gpu_ready_locked(xg_handle *s)
{
    if (s->gpu_tried) {
        if (s->gpu_rc)
            return xg_set_error(s->gpu_rc, "%s", s->gpu_error);
        return XG_OK;
    }
    s->gpu_tried = 1;
    if (!s->ix) {
        s->gpu_rc = xg_handle_index_rc(s);
        s->gpu_error = strdup(xg_handle_index_error(s));
        return xg_set_error(s->gpu_rc, "%s", s->gpu_error);
    }
    /* XG_GPU_TWINS=1 runs the engine's pipeline with the kernels' CPU
     * twins: how CI, which has no GPU, tests the batching, selection and
     * exact finish (docs/gpu.md). */
    if (xg_knob_gpu_twins()) s->gpu_opts.use_device = 0;
    s->gpu_rc = xg_engine_open(s->ix, &s->gpu_opts, &s->gpu);
    if (s->gpu_rc) s->gpu_error = strdup(xg_last_error());
    else atomic_store(&s->gpu_up, 1);
    return s->gpu_rc;
}

static int gpu_ready(xg_handle *s)
{
    pthread_mutex_lock(&s->gpu_mu);
    int rc = gpu_ready_locked(s);
    pthread_mutex_unlock(&s->gpu_mu);
    return rc;
}

int xg_handle_gpu_status(xg_handle *s, const char **why)
{
    if (atomic_load_explicit(&s->gpu_up, memory_order_acquire)) {
        *why = NULL;
        return XG_OK;
    }
    int rc = gpu_ready(s);
    *why = rc ? s->gpu_error : NULL;
    return rc;
}

/* Close the engine once no search uses it; rc and why (taken) say why. */
static void gpu_close(xg_handle *s, int rc, char *why)
{
    pthread_rwlock_wrlock(&s->gpu_rw);
    pthread_mutex_lock(&s->gpu_mu);
    atomic_store(&s->gpu_up, 0);
    xg_engine_close(s->gpu);
    s->gpu = NULL;
    s->gpu_tried = 1;
    if (!s->gpu_rc) {
        s->gpu_rc = rc;
        free(s->gpu_error);
        s->gpu_error = why;
        why = NULL;
    }
    pthread_mutex_unlock(&s->gpu_mu);
    pthread_rwlock_unlock(&s->gpu_rw);
    free(why);
}

uint32_t xg_handle_gpu_slots(xg_handle *s)
{
    return gpu_ready(s) ? 0 : xg_engine_slots(s->gpu);
}

const struct xg_engine_stats *xg_handle_gpu_stats(const xg_handle *s)
{
    return s->gpu ? xg_engine_stats(s->gpu) : NULL;
}

void xg_prepared_free(struct xg_prepared *pq)
{
    if (!pq) return;
    xg_query_free(&pq->q);
    free(pq->plans);
    free(pq);
}

int xg_handle_prepare(xg_handle *s, const xg_xquery *xq,
                      struct xg_prepared **out)
{
    int rc = xg_handle_prepare_terms(s, xq, out);
    if (!rc && (rc = xg_handle_prepare_plans(s, *out))) {
        xg_prepared_free(*out);
        *out = NULL;
    }
    return rc;
}

int xg_handle_prepare_terms(xg_handle *s, const xg_xquery *xq,
                            struct xg_prepared **out)
{
    *out = NULL;
    if (!s->ix)
        return xg_set_error(xg_handle_index_rc(s), "%s",
                            xg_handle_index_error(s));
    /* Not calloc: the leaf and term arrays are only read up to n_leaves,
     * and clearing 40 KB per query is most of the planner's work. */
    struct xg_prepared *pq = malloc(sizeof *pq);
    if (!pq) return xg_set_error(XG_ERR_NOMEM, "out of memory");
    pq->plans = NULL;
    pq->stats = NULL;
    int rc = xg_shim_xquery_convert(xq, &pq->q);
    if (!rc && (rc = xg_query_expand_wildcards(&pq->q, s->ix,
                                                   xg_shim_most_frequent)))
        xg_query_free(&pq->q);
    if (rc) {
        free(pq);
        return rc;
    }
    for (uint32_t i = 0; i < pq->q.n_leaves; ++i)
        pq->term[i] = pq->q.leaves[i].range ? -1
            : xg_fmt_lookup(s->ix, pq->q.leaves[i].term,
                            pq->q.leaves[i].term_len);
    *out = pq;
    return XG_OK;
}

int xg_handle_prepare_plans(xg_handle *s, struct xg_prepared *pq)
{
    int rc = XG_OK;
    uint32_t n_sh = s->n_shards, nl = pq->q.n_leaves;
    uint32_t *sdf = calloc((size_t)n_sh * (nl ? nl : 1), 4);
    /* Not calloc: a plan is read only up to n_ops, so zeroing its 12 KB
     * is wasted work on every query. */
    pq->plans = malloc(n_sh * sizeof *pq->plans);
    if (!sdf || !pq->plans) {
        free(sdf);
        return xg_set_error(XG_ERR_NOMEM, "out of memory");
    }
    for (uint32_t sh = 0; sh < n_sh; ++sh) pq->plans[sh].n_ops = 0;
    for (uint32_t i = 0; i < nl; ++i)
        for (uint32_t sh = 0; sh < n_sh; ++sh)
            sdf[sh * nl + i] = pq->term[i] < 0
                ? 0 : s->ix->shard_df[(uint64_t)pq->term[i] * n_sh + sh];
    /* A value range's estimate is its postlist's (value_range.h). */
    for (uint32_t r = 0; r < pq->q.n_ranges && !rc; ++r)
        for (uint32_t sh = 0; sh < n_sh && !rc; ++sh) {
            int list;
            rc = xg_value_range_open(s->ix, &pq->q.ranges[r], sh,
                                     s->shard_doccount[sh], &list,
                                     &sdf[sh * nl + pq->q.ranges[r].leaf]);
        }
    for (uint32_t sh = 0; sh < n_sh && !rc; ++sh)
        rc = xg_shim_plan(&pq->q, sdf + (size_t)sh * nl, s->shard_doccount[sh],
                          &pq->plans[sh]);
    free(sdf);
    return rc;
}

int xg_handle_run_stock(xg_handle *s, const xg_xquery *xq,
                        const struct xg_bm25_params *p, uint32_t k,
                        struct xg_result *out)
{
    return xg_shim_search(s->db, xq, p, k, out);
}

int xg_handle_run_stock_unpruned(xg_handle *s, const xg_xquery *xq,
                                 const struct xg_bm25_params *p, uint32_t k,
                                 struct xg_result *out)
{
    return xg_shim_search_unpruned(s->db, xq, p, k, out);
}

int xg_handle_doc_leaves(xg_handle *h, const struct xg_prepared *pq,
                         const struct xg_hit *hit, uint32_t *matched)
{
    const struct xg_query *q = &pq->q;
    /* The tree matcher counts as Xapian does, phantoms included (the
     * general form's count from elsewhere: XG_ERR_UNSUPPORTED). */
    if (hit->matched_leaves) {
        *matched = hit->matched_leaves;
        return XG_OK;
    }
    if ((q->op == XG_QOP_AND && q->n_groups == q->n_leaves) ||
        q->n_leaves == 1) {
        *matched = q->n_leaves;
        return XG_OK;
    }
    return xg_shim_doc_leaves(h->db, q, hit->docid, matched);
}

const struct xg_hit *xg_result_greatest(const struct xg_result *r,
                                        uint32_t n_shards)
{
    const struct xg_hit *best = &r->hits[0];
    for (uint32_t i = 1; i < r->n_hits; ++i) {
        const struct xg_hit *h = &r->hits[i];
        if (h->weight != best->weight) break;   /* weight order */
        if ((h->docid - 1) % n_shards < (best->docid - 1) % n_shards)
            best = h;
    }
    return best;
}

int xg_handle_run_cpu(xg_handle *s, const struct xg_prepared *pq,
                      const struct xg_bm25_params *p, uint32_t k,
                      struct xg_result *out)
{
    return xg_match_ref_top_counted(s->ix, &pq->q, pq->term, pq->plans, p,
                                    pq->stats, k, out);
}

int xg_handle_run_cpu_top(xg_handle *s, const struct xg_prepared *pq,
                          const struct xg_bm25_params *p, uint32_t k,
                          struct xg_result *out)
{
    return xg_match_ref_top(s->ix, &pq->q, pq->term, pq->plans, p, pq->stats,
                            k, out);
}

int xg_handle_run_gpu(xg_handle *s, struct xg_prepared *const *pqs,
                      const uint32_t *ks, uint32_t k, uint32_t n,
                      const struct xg_bm25_params *p, struct xg_result *out,
                      struct xg_later *later, int *status)
{
    pthread_rwlock_rdlock(&s->gpu_rw);
    int rc = gpu_ready(s);
    struct xg_engine_query *eq = NULL;
    if (!rc && !(eq = calloc(n ? n : 1, sizeof *eq)))
        rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
    if (!rc) {
        for (uint32_t i = 0; i < n; ++i) {
            eq[i].q = &pqs[i]->q;
            eq[i].leaf_term = pqs[i]->term;
            eq[i].plans = pqs[i]->plans;
            eq[i].k = ks ? ks[i] : k;
            eq[i].stats = pqs[i]->stats;
        }
        rc = xg_engine_search(s->gpu, eq, n, p, out, later, status);
        free(eq);
    }
    pthread_rwlock_unlock(&s->gpu_rw);
    /* A device in an unknown state is not used again (a no-op where
     * there was none, or another thread closed it first). */
    if (rc == XG_ERR_CUDA || rc == XG_ERR_NODEVICE)
        gpu_close(s, rc, strdup(xg_last_error()));
    if (rc)
        for (uint32_t i = 0; i < n; ++i) {
            memset(&out[i], 0, sizeof out[i]);
            if (later) memset(&later[i], 0, sizeof later[i]);
            status[i] = rc;
        }
    return rc;
}
