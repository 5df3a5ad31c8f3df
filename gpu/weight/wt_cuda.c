/** @file wt_cuda.c
 *  @brief The weight pipeline's GPU engine, its core: the chunk buffers,
 *         the pass-2 tables (the ranked dictionary as a device hash table,
 *         tw, kd, extra) and the traffic counts, over the device runtime
 *         (runtime/device.h: the stream, the pool under the
 *         --device-memory budget, pinned staging, step timing).  The
 *         satellites call it, never the other way round: wt_cuda_pass.c
 *         (the steps every pass starts with, pass 1 and 2),
 *         wt_cuda_place.c, wt_cuda_dict.c, wt_cuda_whole.c, and on top
 *         wt_cuda_open.c (open and close).  Built only with CUDA.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "wt_cuda_int.h"
#include "wt_kern.h"

static double traffic[XG_WT_N_STEPS];

void xg_wt_count(int step, double bytes) { traffic[step] += bytes; }

void xg_wt_gpu_traffic(double bytes[XG_WT_N_STEPS], int reset)
{
    for (int i = 0; i < XG_WT_N_STEPS; ++i) {
        bytes[i] = traffic[i];
        if (reset) traffic[i] = 0;
    }
}

void xg_wt_release_chunk(struct xg_wt_gpu *g)
{
    const uint64_t w = g->cap_w;
    xg_staging_drop(&g->dev.stage);   /* a copy ahead may be writing d_text_alt */
    xg_pool_free_async(&g->dev.pool, (void **)&g->d_text, g->cap_len);
    xg_pool_free_async(&g->dev.pool, (void **)&g->d_text_alt, g->cap_len);
    uint32_t **u[] = {&g->d_start, &g->d_len, &g->d_doc, &g->d_aux, &g->d_aux2,
                      &g->d_aux3};
    for (size_t i = 0; i < sizeof u / sizeof *u; ++i)
        xg_pool_free_async(&g->dev.pool, (void **)u[i], w * 4);
    xg_pool_free_async(&g->dev.pool, (void **)&g->d_v, w * 8);
    xg_pool_free_async(&g->dev.pool, (void **)&g->d_k0, w * 8);
    xg_pool_free_async(&g->dev.pool, (void **)&g->d_k1, w * 8);
    xg_pool_free_async(&g->dev.pool, &g->d_tmp, g->tmp_bytes);
    g->cap_len = g->cap_w = 0;
    g->tmp_bytes = 0;
}

int xg_wt_reserve(struct xg_wt_gpu *g, size_t len, uint64_t words)
{
    /* +1 byte of text for a guard '\n'; a word takes at least 2 bytes
     * (itself and its '\n'). */
    const uint64_t need_len = len + 1;
    const uint64_t need_w = (words < len / 2 + 1 ? words : len / 2 + 1) + 1;
    if (need_len <= g->cap_len && need_w <= g->cap_w) return XG_OK;
    xg_wt_release_chunk(g);
    const uint64_t cl = need_len + need_len / 8, cw = need_w + need_w / 8;
    if (cw > UINT32_MAX) return xg_set_error(XG_ERR_FORMAT, "weight GPU: chunk too large");
    size_t tmp = 0;
    XG_CUDA_CHECK(xg_wt_tmp_bytes((uint32_t)cl, (uint32_t)cw, &tmp), "CUB workspace size");
    g->cap_len = cl;    /* xg_wt_release_chunk frees what was allocated */
    g->cap_w = cw;
    g->tmp_bytes = tmp;
    struct xg_pool *pool = &g->dev.pool;
    int rc = xg_pool_alloc_async(pool, (void **)&g->d_text, cl, "chunk text");
    if (!rc && g->ahead) rc = xg_pool_alloc_async(pool, (void **)&g->d_text_alt, cl, "chunk text");
    uint32_t **u[] = {&g->d_start, &g->d_len, &g->d_doc, &g->d_aux, &g->d_aux2,
                      &g->d_aux3};
    for (size_t i = 0; !rc && i < sizeof u / sizeof *u; ++i)
        rc = xg_pool_alloc_async(pool, (void **)u[i], cw * 4, "per-word arrays");
    if (!rc) rc = xg_pool_alloc_async(pool, (void **)&g->d_v, cw * 8, "sort values");
    if (!rc) rc = xg_pool_alloc_async(pool, (void **)&g->d_k0, cw * 8, "sort keys");
    if (!rc) rc = xg_pool_alloc_async(pool, (void **)&g->d_k1, cw * 8, "sort keys");
    if (!rc) rc = xg_pool_alloc_async(pool, &g->d_tmp, tmp, "CUB workspace");
    if (rc) xg_wt_release_chunk(g);
    return rc;
}

void xg_wt_free_tables(struct xg_wt_gpu *g)
{
    xg_pool_free_async(&g->dev.pool, (void **)&g->d_tkey, g->tcap * 8);
    xg_pool_free_async(&g->dev.pool, (void **)&g->d_tid, g->tcap * 4);
    xg_pool_free_async(&g->dev.pool, (void **)&g->d_tw, g->n_tw * 8 + 8);
    xg_pool_free_async(&g->dev.pool, (void **)&g->d_kd, g->n_docs * 8 + 8);
    xg_pool_free_async(&g->dev.pool, (void **)&g->d_extra, g->n_docs * 8 + 8);
    g->tcap = g->n_terms = g->n_tw = g->n_docs = 0;
}

/* The host dictionary's slots, as they are: key = hash, id (or empty). */
static int upload_dict(struct xg_wt_gpu *g, const struct xg_text_dict *d)
{
    uint64_t *key = malloc(d->cap * sizeof *key);
    uint32_t *id = malloc(d->cap * sizeof *id);
    int rc = key && id ? XG_OK : xg_set_error(XG_ERR_NOMEM, "weight: out of memory");
    for (uint64_t i = 0; !rc && i < d->cap; ++i) {
        key[i] = d->e[i].s ? d->e[i].hash : 0;
        id[i] = d->e[i].s ? d->e[i].id : UINT32_MAX;
    }
    if (!rc) rc = xg_pool_alloc_async(&g->dev.pool, (void **)&g->d_tkey, d->cap * 8, "term table");
    if (!rc) rc = xg_pool_alloc_async(&g->dev.pool, (void **)&g->d_tid, d->cap * 4, "term table");
    if (!rc) {
        g->tcap = d->cap;
        rc = xg_staging_htod(&g->dev.stage, g->d_tkey, key, d->cap * 8);
    }
    if (!rc) rc = xg_staging_htod(&g->dev.stage, g->d_tid, id, d->cap * 4);
    /* The staging buffers must be drained before key and id go. */
    if (!rc) XG_CUDA_CHECK(cudaStreamSynchronize(g->dev.stream), "tables");
    free(key);
    free(id);
    return rc;
}

int xg_wt_gpu_tables(xg_wt_gpu *g, const struct xg_wt_tables *t)
{
    struct xg_pool *pool = &g->dev.pool;
    xg_wt_free_tables(g);
    if (t->dict && (t->dict->cap & (t->dict->cap - 1)))
        return xg_set_error(XG_ERR_FORMAT, "weight GPU: dictionary size not a power of 2");
    int rc = t->dict ? upload_dict(g, t->dict) : XG_OK;
    g->n_terms = t->n_terms;
    g->n_tw = t->n_tw_df ? t->n_tw_df : t->n_terms;
    g->n_docs = t->n_docs;
    if (!rc) rc = xg_pool_alloc_async(pool, (void **)&g->d_tw, g->n_tw * 8 + 8, "term weights");
    const size_t per_doc = g->n_docs * 8 + 8;
    if (!rc) rc = xg_pool_alloc_async(pool, (void **)&g->d_kd, per_doc, "document constants");
    if (!rc && t->extra)
        rc = xg_pool_alloc_async(pool, (void **)&g->d_extra, per_doc, "document constants");
    if (!rc) rc = xg_staging_htod(&g->dev.stage, g->d_tw, t->tw, g->n_tw * 8);
    if (!rc) rc = xg_staging_htod(&g->dev.stage, g->d_kd, t->kd, g->n_docs * 8);
    if (!rc && t->extra) rc = xg_staging_htod(&g->dev.stage, g->d_extra, t->extra, g->n_docs * 8);
    if (!rc) XG_CUDA_CHECK(cudaStreamSynchronize(g->dev.stream), "tables");
    return rc;
}
