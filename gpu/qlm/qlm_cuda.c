/** @file qlm_cuda.c
 *  @brief The qlm pipeline's GPU engine, device side without the three
 *         entry points: opening the device (the runtime's, device.h, which
 *         also times the steps with events), the chunk's device arrays,
 *         and the steps every pass runs: upload,
 *         the suffix sort (prefix doubling rounds until sigma words are
 *         sorted, or the plain key sort) and one level's groups and rows.
 *         Called by qlm_cuda_pass.c; built only with CUDA.
 *
 *  Device memory: about 170 bytes per word of the chunk (200 with
 *  --counts), sized for the largest chunk and kept between chunks.  The
 *  chunk plan is the twin's (--device-memory / 48 words per chunk), so
 *  both engines see the same chunks and give the same bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "qlm_cuda_int.h"

static int bits_for(uint64_t v)
{
    return v ? 64 - __builtin_clzll(v) : 0;
}

/* Every per-word array with its element size, and per-document ones. */
struct arr {
    void **p;
    size_t size;
};

static size_t word_arrays(struct xg_qlm_gpu *g, struct arr *a)
{
    size_t n = 0;
    uint32_t **u32[] = {&g->d_ids, &g->d_doc, &g->d_sa, &g->d_rank, &g->d_act[0],
                        &g->d_act[1], &g->d_L, &g->d_G[0], &g->d_G[1], &g->d_gstart[0],
                        &g->d_gstart[1], &g->d_rowstart, &g->d_ucnt[0], &g->d_ucnt[1],
                        &g->d_odoc, &g->s.s0, &g->s.s1, &g->s.s2, &g->s.v0, &g->s.v1};
    uint64_t **u64[] = {&g->d_ukey[0], &g->d_ukey[1], &g->d_pos, &g->d_z, &g->d_w,
                        &g->d_off, &g->s.k0, &g->s.k1};
    for (size_t i = 0; i < sizeof u32 / sizeof *u32; ++i) a[n++] = (struct arr){(void **)u32[i], 4};
    for (size_t i = 0; i < sizeof u64 / sizeof *u64; ++i) a[n++] = (struct arr){(void **)u64[i], 8};
    a[n++] = (struct arr){(void **)&g->d_oprob, 8};
    a[n++] = (struct arr){(void **)&g->d_lenv, 1};
    a[n++] = (struct arr){(void **)&g->d_lcp, 1};
    return n;
}

static void free_chunk(struct xg_qlm_gpu *g)
{
    struct arr a[40];
    const size_t na = word_arrays(g, a);
    struct xg_pool *pool = &g->dev.pool;
    for (size_t i = 0; i < na; ++i) xg_pool_free(pool, a[i].p, (g->cap_w + 1) * a[i].size);
    xg_pool_free(pool, (void **)&g->d_ocnt, (g->cap_w + 1) * 32);
    xg_pool_free(pool, (void **)&g->d_doc_end, (g->cap_d + 1) * 4);
    xg_pool_free(pool, (void **)&g->d_docids, (g->cap_d + 1) * 4);
    xg_pool_free(pool, &g->s.tmp, g->s.tmp_bytes);
    g->cap_w = g->cap_d = 0;
    g->cap_counts = 0;
    g->s.tmp_bytes = 0;
}

/* Arrays for w words and d documents (with room to grow by an eighth). */
static int reserve(struct xg_qlm_gpu *g, uint64_t w, uint64_t d, int counts)
{
    if (w <= g->cap_w && d <= g->cap_d && (!counts || g->cap_counts)) return XG_OK;
    if (w < g->cap_w) w = g->cap_w;
    if (d < g->cap_d) d = g->cap_d;
    free_chunk(g);
    const uint64_t cw = w + w / 8 + 16, cd = d + d / 8 + 16;
    g->cap_w = cw;      /* free_chunk frees what was allocated */
    g->cap_d = cd;
    struct arr a[40];
    const size_t na = word_arrays(g, a);
    struct xg_pool *pool = &g->dev.pool;
    int rc = XG_OK;
    for (size_t i = 0; !rc && i < na; ++i)
        rc = xg_pool_alloc(pool, a[i].p, (size_t)(cw + 1) * a[i].size, "qlm GPU: per-word arrays");
    if (!rc && counts)
        rc = xg_pool_alloc(pool, (void **)&g->d_ocnt, (size_t)(cw + 1) * 32, "qlm GPU: counts");
    const size_t per_doc = (size_t)(cd + 1) * 4;
    if (!rc) rc = xg_pool_alloc(pool, (void **)&g->d_doc_end, per_doc, "qlm GPU: documents");
    if (!rc) rc = xg_pool_alloc(pool, (void **)&g->d_docids, per_doc, "qlm GPU: documents");
    size_t tmp = 0;
    if (!rc && xg_qlm_tmp_bytes((uint32_t)(cw > UINT32_MAX ? UINT32_MAX : cw), &tmp))
        rc = xg_set_error(XG_ERR_CUDA, "qlm GPU: CUB workspace size");
    if (!rc) rc = xg_pool_alloc(pool, &g->s.tmp, tmp, "qlm GPU: CUB workspace");
    if (!rc) g->s.tmp_bytes = tmp;
    if (rc) {
        free_chunk(g);
        return rc;
    }
    g->cap_w = cw;
    g->cap_d = cd;
    g->cap_counts = counts;
    return XG_OK;
}

/* The four counters, after the work queued before. */
static int counts(struct xg_qlm_gpu *g)
{
    return xg_staging_dtoh(&g->dev.stage, g->h_count, g->d_count, 16);
}

int xg_qlm_gpu_check(struct xg_qlm_gpu *g)
{
    int rc = counts(g);
    if (!rc && g->h_count[3])
        rc = xg_set_error(XG_ERR_FORMAT, "qlm GPU: internal error: a document's n-gram "
                          "without its history");
    return rc;
}

int xg_qlm_gpu_load(struct xg_qlm_gpu *g, const struct xg_qlm_chunk *c,
                    const struct xg_qlm_gpu_args *a)
{
    int rc = reserve(g, c->n_words, c->n_docs, a->counts);
    if (!rc) rc = xg_staging_htod(&g->dev.stage, g->d_ids, c->ids, (size_t)c->n_words * 4);
    if (!rc) rc = xg_staging_htod(&g->dev.stage, g->d_doc_end, c->doc_end, (size_t)c->n_docs * 4);
    if (!rc && a->docids)
        rc = xg_staging_htod(&g->dev.stage, g->d_docids, a->docids, (size_t)c->n_docs * 4);
    if (rc) return rc;
    XG_CUDA_CHECK(cudaMemsetAsync(g->d_count, 0, 16, g->dev.stream), "qlm GPU: counters");
    XG_CUDA_CHECK(xg_qlm_docs_gpu(g->d_doc_end, c->n_docs, c->n_words, g->d_doc, g->s,
                                  g->dev.stream), "qlm GPU: documents");
    return XG_OK;
}

/* Prefix doubling as the twin runs it (qlm_sort.c): p words sorted, step
 * k doubling and clipped so p ends at sigma; segments of one item drop
 * out of the active list. */
static int doubling(struct xg_qlm_gpu *g, const struct xg_qlm_chunk *c,
                    const struct xg_qlm_gpu_args *a)
{
    const uint32_t n = c->n_words;
    XG_CUDA_CHECK(xg_qlm_dbl_first_gpu(g->d_ids, n, bits_for(a->n_terms), g->d_sa, g->d_rank,
                                       g->d_act[0], g->d_count, g->s, g->dev.stream),
                  "qlm GPU: sort (first word)");
    int rc = counts(g);
    uint32_t na = g->h_count[0], p = 1, k = 1, cur = 0;
    while (!rc && p < a->sigma && na) {
        XG_CUDA_CHECK(xg_qlm_dbl_round_gpu(g->d_doc, g->d_doc_end, k, bits_for(n), g->d_sa,
                                           g->d_rank, g->d_act[cur], na, g->d_act[!cur],
                                           g->d_count, g->s, g->dev.stream),
                      "qlm GPU: sort (doubling round)");
        rc = counts(g);
        na = g->h_count[0];
        cur = !cur;
        p += k;
        k *= 2;
        if (p + k > a->sigma) k = a->sigma - p;
    }
    return rc;
}

int xg_qlm_gpu_sort(struct xg_qlm_gpu *g, const struct xg_qlm_chunk *c,
                    const struct xg_qlm_gpu_args *a)
{
    int rc = XG_OK;
    if (a->sort == XG_QLM_SORT_COMPARE)
        XG_CUDA_CHECK(xg_qlm_key_sort_gpu(g->d_ids, g->d_doc, g->d_doc_end, c->n_words,
                                          a->sigma, bits_for(a->n_terms), g->d_sa, g->s,
                                          g->dev.stream), "qlm GPU: sort (keys)");
    else
        rc = doubling(g, c, a);
    if (rc) return rc;
    XG_CUDA_CHECK(xg_qlm_lcp_gpu(g->d_ids, g->d_doc, g->d_doc_end, g->d_sa, c->n_words,
                                 a->sigma, g->d_lenv, g->d_lcp, g->dev.stream),
                  "qlm GPU: shared words");
    return XG_OK;
}

int xg_qlm_gpu_level(struct xg_qlm_gpu *g, const struct xg_qlm_chunk *c, uint32_t n,
                     struct xg_qlm_lv *lv)
{
    const int h = (int)(n & 1);     /* levels n and n - 1 use both halves */
    memset(lv, 0, sizeof *lv);
    lv->dbits = bits_for(c->n_docs - 1);
    XG_CUDA_CHECK(xg_qlm_level_items_gpu(g->d_lenv, c->n_words, n, g->d_L, g->d_count, g->s,
                                         g->dev.stream), "qlm GPU: level items");
    int rc = counts(g);
    const uint32_t nL = g->h_count[0];
    if (rc || !nL) return rc;
    XG_CUDA_CHECK(xg_qlm_level_groups_gpu(g->d_L, nL, n, g->d_lcp, g->d_sa, g->d_doc,
                                          lv->dbits, g->d_gstart[h], g->d_G[h],
                                          g->d_count, g->s, g->dev.stream),
                  "qlm GPU: level groups");
    if ((rc = counts(g))) return rc;
    const uint32_t ng = g->h_count[1];
    XG_CUDA_CHECK(xg_qlm_level_rows_gpu(nL, ng, bits_for(ng - 1) + lv->dbits, lv->dbits,
                                        g->d_ukey[h], g->d_ucnt[h], g->d_rowstart,
                                        g->d_count, g->s, g->dev.stream),
                  "qlm GPU: level documents");
    if ((rc = counts(g))) return rc;
    lv->d = (struct xg_qlm_level){g->d_L, g->d_gstart[h], g->d_G[h], g->d_ukey[h],
                                  g->d_ucnt[h], nL, ng, g->h_count[2]};
    return XG_OK;
}

void xg_qlm_gpu_close(xg_qlm_gpu *g)
{
    if (!g) return;
    if (g->dev.stream) cudaStreamSynchronize(g->dev.stream);
    free_chunk(g);
    xg_pool_free(&g->dev.pool, (void **)&g->d_count, 16);
    xg_device_close(&g->dev);
    free(g);
}

static int open_dev(struct xg_qlm_gpu *g, uint32_t threads)
{
    const struct xg_device_opts o = {.who = "qlm", .ordinal = -1, .budget = UINT64_MAX,
                                     .marks = XG_QLM_MAX_MARKS, .small_bytes = 16,
                                     .staging_threads = threads};
    int rc = xg_device_open(&g->dev, &o);
    if (rc) return rc;
    g->h_count = g->dev.h_small;
    return xg_pool_alloc(&g->dev.pool, (void **)&g->d_count, 16, "qlm GPU: counters");
}

struct xg_device *xg_qlm_gpu_device(xg_qlm_gpu *g)
{
    return &g->dev;
}

int xg_qlm_gpu_open(uint32_t threads, xg_qlm_gpu **out)
{
    *out = NULL;
    struct xg_qlm_gpu *g = calloc(1, sizeof *g);
    if (!g) return xg_set_error(XG_ERR_NOMEM, "qlm: out of memory");
    int rc = open_dev(g, threads);
    if (rc) {
        xg_qlm_gpu_close(g);
        return rc;
    }
    *out = g;
    return XG_OK;
}
