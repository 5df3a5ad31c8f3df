/** @file wt_cuda_dict.c
 *  @brief Pass 1 of the weight pipeline's run in chunks with the
 *         dictionary on the device (wt_int.h's xg_wt_gpu_dd_*): per chunk,
 *         each word's hash goes into a table that stays on the device
 *         (wt.cu's dd kernels), new terms get a copy of their bytes there,
 *         every word is checked against its term's bytes, and each
 *         distinct (term, document) adds one to the term's df; after the
 *         last chunk the terms are ranked in byte order on the device
 *         (text/dict_gpu.h).  The host only reads a few counters per chunk, where
 *         the host dictionary merged every chunk's terms.  Built only with
 *         CUDA.
 *
 *  Buffers per chunk (the two-pass run's, wt_cuda_pass.c): d_k0 hashes
 *  then sort keys, d_v0 new slots then distinct keys, d_aux flags then
 *  each word's term, d_aux2/d_aux3 scan scratch.
 */
#include <stdlib.h>
#include <string.h>

#include "../text/dict_gpu.h"
#include "wt_cuda_int.h"

#define MAX_LOAD_NUM 3      /* the table grows beyond 3/4 full */
#define MAX_LOAD_DEN 4
#define MIN_CAP ((uint64_t)1 << 10)

static int declined(const char *why)
{
    return xg_set_error(XG_ERR_UNSUPPORTED, "weight GPU: device dictionary: %s", why);
}

/* Device memory for the dictionary; over the budget it declines (the
 * host dictionary answers), any other failure is an error. */
static int dd_alloc(struct xg_wt_gpu *g, void **p, size_t n)
{
    if (!xg_pool_fits(&g->dev.pool, n)) return declined("over the device memory budget");
    return xg_pool_alloc_async(&g->dev.pool, p, n, "device dictionary");
}

void xg_wt_dd_release(struct xg_wt_gpu *g)
{
    xg_pool_free_async(&g->dev.pool, (void **)&g->dd.key, g->dd.cap * 8);
    xg_pool_free_async(&g->dev.pool, (void **)&g->dd.val, g->dd.cap * 4);
    xg_pool_free_async(&g->dev.pool, (void **)&g->dd.t.goff, g->dd.tcap * 8);
    xg_pool_free_async(&g->dev.pool, (void **)&g->dd.t.len, g->dd.tcap * 4);
    xg_pool_free_async(&g->dev.pool, (void **)&g->dd.t.aoff, g->dd.tcap * 4);
    xg_pool_free_async(&g->dev.pool, (void **)&g->dd.t.df, g->dd.tcap * 4);
    xg_pool_free_async(&g->dev.pool, (void **)&g->dd.t.arena, g->dd.arena_cap);
    memset(&g->dd, 0, sizeof g->dd);
}

void xg_wt_gpu_dd_drop(xg_wt_gpu *g)
{
    xg_wt_dd_release(g);
}

/* An empty table of cap slots (the old one's keys moved in). */
static int grow_table(struct xg_wt_gpu *g, uint64_t cap)
{
    uint64_t *key = NULL;
    uint32_t *val = NULL;
    int rc = dd_alloc(g, (void **)&key, cap * 8);
    if (!rc) rc = dd_alloc(g, (void **)&val, cap * 4);
    if (!rc) XG_CUDA_CHECK(cudaMemsetAsync(key, 0xff, cap * 8, g->dev.stream), "dictionary");
    if (!rc && g->dd.cap)
        XG_CUDA_CHECK(xg_wt_dd_rehash_gpu(g->dd.key, g->dd.val, g->dd.cap, key, val, cap,
                                          g->dev.stream), "dictionary rehash");
    if (rc) {
        xg_pool_free_async(&g->dev.pool, (void **)&key, cap * 8);
        xg_pool_free_async(&g->dev.pool, (void **)&val, cap * 4);
        return rc;
    }
    xg_pool_free_async(&g->dev.pool, (void **)&g->dd.key, g->dd.cap * 8);
    xg_pool_free_async(&g->dev.pool, (void **)&g->dd.val, g->dd.cap * 4);
    g->dd.key = key;
    g->dd.val = val;
    g->dd.cap = cap;
    return XG_OK;
}

/* One device array from `old` bytes to `bigger` bytes, contents kept. */
static int grow_array(struct xg_wt_gpu *g, void **p, size_t old, size_t bigger)
{
    void *q = NULL;
    int rc = dd_alloc(g, &q, bigger);
    if (rc) return rc;
    if (old) XG_CUDA_CHECK(cudaMemcpyAsync(q, *p, old, cudaMemcpyDeviceToDevice, g->dev.stream),
                           "dictionary");
    xg_pool_free_async(&g->dev.pool, p, old);
    *p = q;
    return XG_OK;
}

/* Room for `terms` terms, one array at a time (the peak is one array's
 * old and new copies). */
static int grow_terms(struct xg_wt_gpu *g, uint64_t terms)
{
    if (terms <= g->dd.tcap) return XG_OK;
    uint64_t cap = g->dd.tcap ? g->dd.tcap : g->dd.cap / 2;
    while (cap < terms) cap += cap / 2;
    struct xg_wt_dd_terms *t = &g->dd.t;
    const uint64_t o = g->dd.tcap;
    int rc = grow_array(g, (void **)&t->goff, o * 8, cap * 8);
    if (!rc) rc = grow_array(g, (void **)&t->len, o * 4, cap * 4);
    if (!rc) rc = grow_array(g, (void **)&t->aoff, o * 4, cap * 4);
    if (!rc) rc = grow_array(g, (void **)&t->df, o * 4, cap * 4);
    /* A failure leaves the arrays at mixed sizes: release frees each at
     * the smaller, so nothing leaks from the budget's count beyond them. */
    if (!rc) g->dd.tcap = cap;
    return rc;
}

static int grow_arena(struct xg_wt_gpu *g, uint64_t bytes)
{
    if (bytes <= g->dd.arena_cap) return XG_OK;
    if (bytes > UINT32_MAX) return declined("more than 4 GB of distinct words");
    uint64_t cap = g->dd.arena_cap ? g->dd.arena_cap : g->dd.cap * 4;
    while (cap < bytes) cap += cap / 2;
    if (cap > UINT32_MAX) cap = UINT32_MAX;
    int rc = grow_array(g, (void **)&g->dd.t.arena, g->dd.arena_cap, cap);
    if (!rc) g->dd.arena_cap = cap;
    return rc;
}

static int get(struct xg_wt_gpu *g, uint32_t *h, const uint32_t *d, size_t n)
{
    XG_CUDA_CHECK(cudaMemcpyAsync(h, d, n * 4, cudaMemcpyDeviceToHost, g->dev.stream), "counters");
    XG_CUDA_CHECK(cudaStreamSynchronize(g->dev.stream), "counters");
    return XG_OK;
}

/* The chunk's n word hashes (d_k0) into the table, grown until they fit
 * (the slots a failed insert filled keep their tagged word, the rehash
 * moves them, and the table is searched for them afterwards); then its
 * new terms, their bytes copied.  d_small[4] counts new slots, d_small[5]
 * holds errors. */
static int insert(struct xg_wt_gpu *g, uint64_t base, uint32_t n)
{
    uint32_t *fresh = g->d_v, *cnt = g->d_small + 4;
    uint32_t h[2];
    int rc = XG_OK;
    for (;;) {
        XG_CUDA_CHECK(cudaMemsetAsync(cnt, 0, 8, g->dev.stream), "counters");
        XG_CUDA_CHECK(xg_wt_dd_insert_gpu(g->d_k0, n, g->dd.key, g->dd.val, g->dd.cap, cnt + 1,
                                          g->dev.stream), "dictionary insert");
        if ((rc = get(g, h, cnt, 2))) return rc;
        if (h[1] & 2) return declined("a word's hash is the empty key");
        if (!(h[1] & 1)) break;
        if ((rc = grow_table(g, g->dd.cap * 2))) return rc;
    }
    XG_CUDA_CHECK(xg_wt_dd_fresh_gpu(g->dd.key, g->dd.val, g->dd.cap, fresh, cnt, g->dev.stream),
                  "dictionary");
    if ((rc = get(g, h, cnt, 1))) return rc;
    const uint32_t m = h[0];
    if (!m) return XG_OK;
    if ((rc = grow_terms(g, (uint64_t)g->dd.n_terms + m))) return rc;
    /* Arena offsets: an exclusive scan of the new terms' lengths. */
    uint32_t *lens = g->d_aux2, *offs = g->d_aux3;
    XG_CUDA_CHECK(xg_wt_dd_new_lens_gpu(fresh, m, g->dd.val, g->d_len, lens, g->d_tmp,
                                        g->tmp_bytes, offs, g->dev.stream), "dictionary");
    uint32_t last[2];
    if ((rc = get(g, &last[0], offs + m - 1, 1)) || (rc = get(g, &last[1], lens + m - 1, 1)))
        return rc;
    const uint64_t bytes = (uint64_t)last[0] + last[1];
    if ((rc = grow_arena(g, g->dd.arena_used + bytes))) return rc;
    XG_CUDA_CHECK(xg_wt_dd_assign_gpu(g->d_text, g->d_start, g->d_len, base, fresh, m,
                                      g->dd.n_terms, offs, g->dd.arena_used, g->dd.val,
                                      g->dd.t, g->dev.stream), "dictionary");
    g->dd.n_terms += m;
    g->dd.arena_used += bytes;
    return XG_OK;
}

int xg_wt_gpu_dd_pass1(xg_wt_gpu *g, const struct xg_wt_chunk *c, uint64_t base,
                       uint64_t hash_mask, uint32_t *doclen, uint64_t *postings,
                       double *seconds)
{
    uint32_t n = 0;
    int rc = xg_wt_upload_starts(g, c, &n);
    if (rc) return rc;
    /* The table starts at a quarter of the first chunk's words and grows
     * (small chunks in the tests grow it many times). */
    uint64_t first = MIN_CAP;
    while (first < n / 4) first *= 2;
    if (!g->dd.cap && (rc = grow_table(g, first))) return rc;
    if (!hash_mask) hash_mask = UINT64_MAX;
    XG_CUDA_CHECK(xg_wt_words_gpu(g->d_text, g->d_start, n, hash_mask, g->d_len, g->d_k0,
                                  g->d_v, g->d_aux, g->dev.stream), "word hashes");
    xg_wt_count(XG_WT_STEP_DICT, (double)c->len + 24.0 * n);
    if ((rc = xg_device_mark(&g->dev, XG_WT_STEP_DICT, NULL))) return rc;
    if ((rc = xg_wt_chunk_docs(g, c, n, 1))) return rc;
    if ((rc = xg_wt_read_small(g)) || (rc = xg_wt_check_docs(g, c))) return rc;
    /* Document lengths leave before d_aux3 is scratch. */
    if ((rc = xg_staging_dtoh(&g->dev.stage, doclen, g->d_aux3, (size_t)c->n_docs * 4))) return rc;
    if ((rc = xg_device_mark(&g->dev, XG_WT_STEP_DTOH, NULL))) return rc;
    if ((rc = insert(g, base, n))) return rc;
    XG_CUDA_CHECK(cudaMemsetAsync(g->d_small + 5, 0, 4, g->dev.stream), "counters");
    XG_CUDA_CHECK(xg_wt_dd_lookup_gpu(g->d_text, g->d_start, g->d_len, g->d_k0, n, g->dd.key,
                                      g->dd.val, g->dd.cap, g->dd.t, g->d_aux,
                                      g->d_small + 5, g->dev.stream), "dictionary lookup");
    xg_wt_count(XG_WT_STEP_DICT, (double)c->len + 40.0 * n);
    if ((rc = xg_device_mark(&g->dev, XG_WT_STEP_DICT, NULL))) return rc;
    /* df: one per distinct (term, document). */
    const int dbits = xg_wt_bits(c->n_docs ? c->n_docs - 1 : 0);
    int kbits = dbits + xg_wt_bits(g->dd.n_terms ? g->dd.n_terms - 1 : 0);
    if (kbits < 1) kbits = 1;
    int sel = 0;
    XG_CUDA_CHECK(xg_wt_sort_keys_gpu(g->d_aux, g->d_doc, n, dbits, kbits, g->d_k0, g->d_k1,
                                      &sel, g->d_tmp, g->tmp_bytes, g->dev.stream), "sort");
    xg_wt_count(XG_WT_STEP_SORT, 16.0 * n + 16.0 * n * ((kbits + 7) / 8));
    if ((rc = xg_device_mark(&g->dev, XG_WT_STEP_SORT, NULL))) return rc;
    uint64_t *uniq = (uint64_t *)g->d_v;
    XG_CUDA_CHECK(xg_wt_tf_gpu(sel ? g->d_k1 : g->d_k0, n, uniq, g->d_aux3, g->d_small + 1,
                               g->d_tmp, g->tmp_bytes, g->dev.stream), "df");
    uint32_t h[5];
    if ((rc = get(g, h, g->d_small + 1, 5))) return rc;
    if (h[4] & 4) return declined("two words of the collection share a hash");
    *postings = h[0];
    XG_CUDA_CHECK(xg_wt_dd_df_gpu(uniq, h[0], dbits, g->dd.t.df, g->dev.stream), "df");
    xg_wt_count(XG_WT_STEP_DF, 8.0 * n + 12.0 * h[0]);
    if ((rc = xg_device_mark(&g->dev, XG_WT_STEP_DF, NULL))) return rc;
    /* Room for the next chunk's new words before the table fills. */
    if ((uint64_t)g->dd.n_terms * MAX_LOAD_DEN > g->dd.cap * MAX_LOAD_NUM)
        rc = grow_table(g, g->dd.cap * 2);
    if (!rc) rc = xg_device_marks_done(&g->dev, seconds);
    return rc;
}

int xg_wt_gpu_dd_finish(xg_wt_gpu *g, struct xg_wt_dd_out *out, double *seconds)
{
    memset(out, 0, sizeof *out);
    const uint32_t nt = g->dd.n_terms;
    /* The chunk buffers make room for the ranking's workspace. */
    xg_wt_release_chunk(g);
    const double t0 = xg_now();
    uint32_t *rank = NULL, *id_len = NULL, *id_df = NULL;
    uint64_t *id_goff = NULL;
    int rc = dd_alloc(g, (void **)&rank, (size_t)nt * 4 + 4);
    if (!rc && !xg_pool_fits(&g->dev.pool, 40 * (uint64_t)nt))
        rc = declined("no room to rank the terms");
    if (!rc) {
        rc = xg_gdict_rank(&g->dev, g->dd.t.arena, g->dd.t.aoff, g->dd.t.len, nt, rank);
        if (rc == XG_ERR_UNSUPPORTED) rc = declined("terms share too many bytes to rank");
    }
    if (!rc) rc = dd_alloc(g, (void **)&id_goff, (size_t)nt * 8 + 8);
    if (!rc) rc = dd_alloc(g, (void **)&id_len, (size_t)nt * 4 + 4);
    if (!rc) rc = dd_alloc(g, (void **)&id_df, (size_t)nt * 4 + 4);
    if (!rc)
        XG_CUDA_CHECK(xg_wt_dd_ids_gpu(g->dd.key, g->dd.val, g->dd.cap, rank, nt, g->dd.t,
                                       id_goff, id_len, id_df, g->dev.stream), "term ids");
    seconds[XG_WT_STEP_RANK] += xg_now() - t0;
    const double t1 = xg_now();
    if (!rc) {
        out->goff = malloc((size_t)nt * 8 + 8);
        out->len = malloc((size_t)nt * 4 + 4);
        out->df = malloc((size_t)nt * 4 + 4);
        if (!out->goff || !out->len || !out->df)
            rc = xg_set_error(XG_ERR_NOMEM, "weight: out of memory");
    }
    if (!rc) rc = xg_staging_dtoh(&g->dev.stage, out->goff, id_goff, (size_t)nt * 8);
    if (!rc) rc = xg_staging_dtoh(&g->dev.stage, out->len, id_len, (size_t)nt * 4);
    if (!rc) rc = xg_staging_dtoh(&g->dev.stage, out->df, id_df, (size_t)nt * 4);
    seconds[XG_WT_STEP_DTOH] += xg_now() - t1;
    xg_pool_free_async(&g->dev.pool, (void **)&rank, (size_t)nt * 4 + 4);
    xg_pool_free_async(&g->dev.pool, (void **)&id_goff, (size_t)nt * 8 + 8);
    xg_pool_free_async(&g->dev.pool, (void **)&id_len, (size_t)nt * 4 + 4);
    xg_pool_free_async(&g->dev.pool, (void **)&id_df, (size_t)nt * 4 + 4);
    if (rc) {
        xg_wt_dd_out_free(out);
        return rc;
    }
    out->n_terms = nt;
    /* Pass 2 needs the table only (its values are now term ids). */
    xg_pool_free_async(&g->dev.pool, (void **)&g->dd.t.goff, g->dd.tcap * 8);
    xg_pool_free_async(&g->dev.pool, (void **)&g->dd.t.len, g->dd.tcap * 4);
    xg_pool_free_async(&g->dev.pool, (void **)&g->dd.t.aoff, g->dd.tcap * 4);
    xg_pool_free_async(&g->dev.pool, (void **)&g->dd.t.df, g->dd.tcap * 4);
    xg_pool_free_async(&g->dev.pool, (void **)&g->dd.t.arena, g->dd.arena_cap);
    g->dd.tcap = g->dd.arena_cap = 0;
    g->dd.ready = 1;
    return XG_OK;
}
