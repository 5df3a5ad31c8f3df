/** @file searcher.c
 *  @brief The public searcher: database + GPU index + engine dispatch.
 *
 *  Opens the database through the shim and the index through the format
 *  reader, refuses an index that is corrupt or stale (it then only serves
 *  the stock matcher), and answers a query with the engine asked for.  The
 *  CPU engine path: QueryParser (shim) -> engine shapes -> term ids and
 *  per-shard frequencies -> one plan per shard -> xg_match_ref.
 */
#include "searcher.h"

#include <stdlib.h>
#include <string.h>

#include "../gpu/runtime/error.h"
#include "../gpu/query/match_ref.h"
#include "../gpu/query/engine.h"

struct xg_searcher {
    xg_db *db;
    struct xg_index *ix;        /* NULL if unusable */
    int ix_borrowed;            /* a clone's: owned by its base */
    char *index_error;          /* why ix is NULL */
    int index_rc;               /* and its status code */
    uint32_t n_shards;
    uint32_t *shard_doccount;
    xg_gpu *gpu;                /* opened on first use */
    int gpu_tried, gpu_rc;
    uint64_t gpu_fallbacks;     /* batches the CPU matcher took over */
    char *gpu_error;
    struct xg_engine_opts gpu_opts;
};

int xg_searcher_open(const char *const *db_paths, size_t n_paths,
                     const char *index_path, xg_searcher **out)
{
    int rc;
    struct xg_db_stats st;
    xg_searcher *s = calloc(1, sizeof *s);
    struct xg_engine_opts eo = XG_ENGINE_DEFAULTS;
    *out = NULL;
    if (!s) return xg_set_error(XG_ERR_NOMEM, "out of memory");
    s->gpu_opts = eo;
    if (n_paths == 0) {
        free(s);
        return xg_set_error(XG_ERR_ARG, "no database given");
    }
    if ((rc = xg_shim_db_open(db_paths, n_paths, &s->db))) goto fail;
    if ((rc = xg_shim_db_stats(s->db, &st))) goto fail;
    s->n_shards = st.n_shards;
    s->shard_doccount = calloc(st.n_shards, sizeof *s->shard_doccount);
    char **uuids = calloc(st.n_shards, sizeof *uuids);
    uint64_t *revs = calloc(st.n_shards, sizeof *revs);
    struct xg_shard_info *si = calloc(st.n_shards, sizeof *si);
    if (!s->shard_doccount || !uuids || !revs || !si) {
        free(uuids); free(revs); free(si);
        rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
        goto fail;
    }
    for (uint32_t i = 0; i < st.n_shards && !rc; ++i) {
        rc = xg_shim_db_shard(s->db, i, &si[i]);
        uuids[i] = si[i].uuid;
        revs[i] = si[i].revision;
        s->shard_doccount[i] = si[i].doccount;
    }
    if (!rc) {
        char *path = index_path ? strdup(index_path)
                                : xg_fmt_default_path(db_paths[0]);
        int irc = path ? xg_fmt_open(path, &s->ix)
                       : xg_set_error(XG_ERR_NOMEM, "out of memory");
        if (!irc) {
            irc = xg_fmt_check_shards(s->ix, st.n_shards,
                                      (const char *const *)uuids, revs);
            if (!irc && s->ix->hdr->n_docs != st.n_docs)
                irc = xg_set_error(XG_ERR_STALE, "%s: stale index: %llu "
                                   "documents, the database has %llu",
                                   path, (unsigned long long)s->ix->hdr->n_docs,
                                   (unsigned long long)st.n_docs);
            if (irc) {
                xg_fmt_close(s->ix);
                s->ix = NULL;
            }
        }
        if (irc) {
            s->index_rc = irc;
            s->index_error = strdup(xg_last_error());
        }
        free(path);
    }
    free(uuids); free(revs); free(si);
    if (rc) goto fail;
    *out = s;
    return XG_OK;
fail:
    xg_searcher_close(s);
    return rc;
}

void xg_searcher_close(xg_searcher *s)
{
    if (!s) return;
    xg_engine_close(s->gpu);
    free(s->gpu_error);
    if (!s->ix_borrowed) xg_fmt_close(s->ix);
    if (s->db) xg_shim_db_close(s->db);
    free(s->index_error);
    free(s->shard_doccount);
    free(s);
}

int xg_searcher_clone(const xg_searcher *base,
                      const char *const *db_paths, size_t n_paths,
                      xg_searcher **out)
{
    int rc;
    struct xg_db_stats st;
    xg_searcher *s = calloc(1, sizeof *s);
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
    if (base->index_error && !(s->index_error = strdup(base->index_error))) {
        rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
        goto fail;
    }
    *out = s;
    return XG_OK;
fail:
    xg_searcher_close(s);
    return rc;
}

const char *xg_searcher_index_error(const xg_searcher *s)
{
    return s->ix ? NULL : s->index_error ? s->index_error : "no index";
}

xg_db *xg_searcher_db(xg_searcher *s) { return s->db; }

const struct xg_index *xg_searcher_index(const xg_searcher *s) { return s->ix; }

int xg_searcher_parse(xg_searcher *s, const char *text,
                      const struct xg_search_opts *o, xg_xquery **out)
{
    struct xg_parse_opts po;
    po.stem_english = o->stem_english;
    po.default_and = o->default_and;
    po.stopper = o->stopper;
    po.flags = o->parser_flags;
    po.omega = o->omega;
    return xg_shim_parse(s->db, text, &po, out);
}

void xg_searcher_set_engine_opts(xg_searcher *s,
                                 const struct xg_engine_opts *o)
{
    s->gpu_opts = *o;
}

/* Open the GPU engine once; XG_OK or why not (kept for later calls). */
static int gpu_ready(xg_searcher *s)
{
    if (s->gpu_tried) {
        if (s->gpu_rc)
            return xg_set_error(s->gpu_rc, "%s", s->gpu_error);
        return XG_OK;
    }
    s->gpu_tried = 1;
    if (!s->ix) {
        s->gpu_rc = s->index_rc ? s->index_rc : XG_ERR_IO;
        s->gpu_error = strdup(xg_searcher_index_error(s));
        return xg_set_error(s->gpu_rc, "%s", s->gpu_error);
    }
    /* XG_GPU_TWINS=1 runs the engine's pipeline with the kernels' CPU
     * twins: how CI, which has no GPU, tests the batching, selection and
     * exact finish (docs/gpu.md). */
    const char *twins = getenv("XG_GPU_TWINS");
    if (twins && !strcmp(twins, "1")) s->gpu_opts.use_device = 0;
    s->gpu_rc = xg_engine_open(s->ix, &s->gpu_opts, &s->gpu);
    if (s->gpu_rc) s->gpu_error = strdup(xg_last_error());
    return s->gpu_rc;
}

int xg_searcher_gpu_status(xg_searcher *s, const char **why)
{
    int rc = gpu_ready(s);
    *why = rc ? s->gpu_error : NULL;
    return rc;
}

uint64_t xg_searcher_gpu_fallbacks(const xg_searcher *s)
{
    return s->gpu_fallbacks;
}

const struct xg_engine_stats *xg_searcher_gpu_stats(const xg_searcher *s)
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

int xg_searcher_prepare(xg_searcher *s, const xg_xquery *xq,
                        struct xg_prepared **out)
{
    int rc = xg_searcher_prepare_terms(s, xq, out);
    if (!rc && (rc = xg_searcher_prepare_plans(s, *out))) {
        xg_prepared_free(*out);
        *out = NULL;
    }
    return rc;
}

int xg_searcher_prepare_terms(xg_searcher *s, const xg_xquery *xq,
                              struct xg_prepared **out)
{
    *out = NULL;
    if (!s->ix)
        return xg_set_error(s->index_rc ? s->index_rc : XG_ERR_IO, "%s",
                            xg_searcher_index_error(s));
    /* Not calloc: the leaf and term arrays are only read up to n_leaves,
     * and clearing 40 KB per query is most of the planner's work. */
    struct xg_prepared *pq = malloc(sizeof *pq);
    if (!pq) return xg_set_error(XG_ERR_NOMEM, "out of memory");
    pq->plans = NULL;
    int rc = xg_shim_xquery_convert(xq, &pq->q);
    if (rc) {
        free(pq);
        return rc;
    }
    for (uint32_t i = 0; i < pq->q.n_leaves; ++i)
        pq->term[i] = xg_fmt_lookup(s->ix, pq->q.leaves[i].term,
                                    pq->q.leaves[i].term_len);
    *out = pq;
    return XG_OK;
}

int xg_searcher_prepare_plans(xg_searcher *s, struct xg_prepared *pq)
{
    int rc = XG_OK;
    uint32_t n_sh = s->n_shards, nl = pq->q.n_leaves;
    uint32_t *sdf = calloc((size_t)n_sh * (nl ? nl : 1), 4);
    pq->plans = calloc(n_sh, sizeof *pq->plans);
    if (!sdf || !pq->plans) {
        free(sdf);
        return xg_set_error(XG_ERR_NOMEM, "out of memory");
    }
    for (uint32_t i = 0; i < nl; ++i)
        for (uint32_t sh = 0; sh < n_sh; ++sh)
            sdf[sh * nl + i] = pq->term[i] < 0
                ? 0 : s->ix->shard_df[(uint64_t)pq->term[i] * n_sh + sh];
    for (uint32_t sh = 0; sh < n_sh && !rc; ++sh)
        rc = xg_shim_plan(&pq->q, sdf + (size_t)sh * nl, s->shard_doccount[sh],
                          &pq->plans[sh]);
    free(sdf);
    return rc;
}

int xg_searcher_run_cpu(xg_searcher *s, const struct xg_prepared *pq,
                        const struct xg_search_opts *o, struct xg_result *out)
{
    return xg_match_ref(s->ix, &pq->q, pq->term, pq->plans, &o->bm25, o->k,
                        out);
}

int xg_searcher_run_prepared(xg_searcher *s, struct xg_prepared *const *pqs,
                             uint32_t n, const struct xg_search_opts *o,
                             struct xg_result *out, int *status)
{
    return xg_searcher_run_prepared_ex(s, pqs, NULL, n, o, out, status, NULL);
}

int xg_searcher_run_prepared_ex(xg_searcher *s,
                                struct xg_prepared *const *pqs,
                                const uint32_t *ks, uint32_t n,
                                const struct xg_search_opts *o,
                                struct xg_result *out, int *status,
                                uint8_t *on_gpu)
{
    int use_gpu = o->engine == XG_ENGINE_GPU || o->engine == XG_ENGINE_AUTO;
    int rc = XG_OK;
    if (use_gpu && (rc = gpu_ready(s))) {
        /* Asked for the GPU and there never was one: say so.  A GPU that
         * failed mid-run (fallbacks > 0) hands over to the CPU matcher. */
        if (o->engine == XG_ENGINE_GPU && !s->gpu_fallbacks) return rc;
        use_gpu = 0; /* auto: no usable device, the CPU matcher serves */
    }
    if (use_gpu) {
        struct xg_engine_query *eq = calloc(n ? n : 1, sizeof *eq);
        if (!eq) return xg_set_error(XG_ERR_NOMEM, "out of memory");
        for (uint32_t i = 0; i < n; ++i) {
            eq[i].q = &pqs[i]->q;
            eq[i].leaf_term = pqs[i]->term;
            eq[i].plans = pqs[i]->plans;
            eq[i].k = ks ? ks[i] : o->k;
        }
        rc = xg_engine_search(s->gpu, eq, n, &o->bm25, out, status);
        free(eq);
        if (rc) {
            /* A GPU fault: the CPU matcher answers this batch (DESIGN.md:
             * any GPU error means fallback); a device in an unknown state
             * is not used again. */
            ++s->gpu_fallbacks;
            for (uint32_t i = 0; i < n; ++i) status[i] = XG_ERR_UNSUPPORTED;
            if (rc == XG_ERR_CUDA || rc == XG_ERR_NODEVICE) {
                s->gpu_rc = rc;
                free(s->gpu_error);
                s->gpu_error = strdup(xg_last_error());
                xg_engine_close(s->gpu);
                s->gpu = NULL;
            }
            rc = XG_OK;
        }
    } else {
        for (uint32_t i = 0; i < n; ++i) status[i] = XG_ERR_UNSUPPORTED;
    }
    /* What the GPU did not serve, the exact CPU matcher does. */
    for (uint32_t i = 0; i < n; ++i) {
        if (on_gpu) on_gpu[i] = status[i] == XG_OK;
        if (status[i] == XG_OK) continue;
        struct xg_search_opts oi = *o;
        if (ks) oi.k = ks[i];
        status[i] = xg_searcher_run_cpu(s, pqs[i], &oi, &out[i]);
        if (status[i] != XG_OK && status[i] != XG_ERR_UNSUPPORTED) {
            for (uint32_t j = 0; j < n; ++j) xg_result_free(&out[j]);
            return status[i];
        }
    }
    return XG_OK;
}

int xg_searcher_run(xg_searcher *s, const xg_xquery *xq,
                    const struct xg_search_opts *o, struct xg_result *out)
{
    memset(out, 0, sizeof *out);
    if (o->engine == XG_ENGINE_XAPIAN)
        return xg_shim_search(s->db, xq, &o->bm25, o->k, out);
    if (o->engine < XG_ENGINE_CPU || o->engine > XG_ENGINE_AUTO)
        return xg_set_error(XG_ERR_ARG, "unknown engine %d", o->engine);
    struct xg_prepared *pq;
    int rc = xg_searcher_prepare(s, xq, &pq);
    if (rc) return rc;
    if (o->engine == XG_ENGINE_CPU) {
        rc = xg_searcher_run_cpu(s, pq, o, out);
    } else {
        int status;
        rc = xg_searcher_run_prepared(s, &pq, 1, o, out, &status);
        if (!rc) rc = status;
    }
    xg_prepared_free(pq);
    return rc;
}

static int search_one(xg_searcher *s, const char *query,
                      const struct xg_search_opts *o, struct xg_result *out)
{
    xg_xquery *xq = NULL;
    memset(out, 0, sizeof *out);
    int rc = xg_searcher_parse(s, query, o, &xq);
    if (!rc) rc = xg_searcher_run(s, xq, o, out);
    if (xq) xg_shim_xquery_free(xq);
    return rc;
}

int xg_searcher_search(xg_searcher *s, const char *query,
                       const struct xg_search_opts *o, struct xg_result *out)
{
    if (o->default_and != 2) return search_one(s, query, o, out);
    /* AND+OR: the OR query only when the AND one finds fewer than k. */
    struct xg_search_opts and_o = *o, or_o = *o;
    and_o.default_and = 1;
    or_o.default_and = 0;
    int rc = search_one(s, query, &and_o, out);
    if (rc || out->n_hits >= o->k) return rc;
    xg_result_free(out);
    return search_one(s, query, &or_o, out);
}

int xg_searcher_andor_finish(xg_searcher *s, const char *const *texts,
                             uint32_t n, const struct xg_search_opts *o,
                             struct xg_result *res, int *status)
{
    if (o->default_and != 2) return XG_OK;
    struct xg_search_opts or_o = *o;
    or_o.default_and = 0;
    struct xg_prepared **pq = calloc(n ? n : 1, sizeof *pq);
    uint32_t *idx = calloc(n ? n : 1, sizeof *idx);
    struct xg_result *r2 = calloc(n ? n : 1, sizeof *r2);
    int *st2 = calloc(n ? n : 1, sizeof *st2);
    uint32_t m = 0;
    int rc = XG_OK;
    if (!pq || !idx || !r2 || !st2) {
        rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (uint32_t i = 0; i < n; ++i) {
        if (status[i] != XG_OK || res[i].n_hits >= o->k) continue;
        xg_xquery *xq = NULL;
        int prc = xg_searcher_parse(s, texts[i], &or_o, &xq);
        if (!prc) prc = xg_searcher_prepare(s, xq, &pq[m]);
        if (xq) xg_shim_xquery_free(xq);
        if (prc) {
            /* The OR form cannot be served: report that, not a short AND. */
            xg_result_free(&res[i]);
            status[i] = prc;
            continue;
        }
        idx[m++] = i;
    }
    if (m && !(rc = xg_searcher_run_prepared(s, pq, m, &or_o, r2, st2)))
        for (uint32_t j = 0; j < m; ++j) {
            xg_result_free(&res[idx[j]]);
            res[idx[j]] = r2[j];
            status[idx[j]] = st2[j];
        }
done:
    for (uint32_t j = 0; j < m; ++j) xg_prepared_free(pq[j]);
    free(pq);
    free(idx);
    free(r2);
    free(st2);
    return rc;
}
