/** @file wt_cuda.c
 *  @brief The weight pipeline's GPU engine, device side without the
 *         per-chunk sequences: opening the device, device memory under the
 *         --device-memory budget, the chunk buffers, pinned staging for
 *         transfers, step timing with events, and the pass-2 tables (the
 *         ranked dictionary as a device hash table, tw, kd, extra).
 *         Called by wt.c through wt_int.h; pass 1 and 2 are in
 *         wt_cuda_pass.c.  Built only with CUDA.
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

int xg_wt_dalloc(struct xg_wt_gpu *g, void **p, size_t n, const char *what)
{
    *p = NULL;
    if (g->used + n > g->budget)
        return xg_set_error(XG_ERR_NOMEM, "weight GPU: %s needs %zu bytes, over the "
                            "device memory budget (%llu of %llu used)", what, n,
                            (unsigned long long)g->used,
                            (unsigned long long)g->budget);
    /* Stream-ordered, from the device's pool: after a first run, the
     * process's next ones allocate without the driver (open_dev). */
    XG_CUDA_CHECK(cudaMallocAsync(p, n ? n : 1, g->stream), what);
    g->used += n;
    return XG_OK;
}

void xg_wt_dfree(struct xg_wt_gpu *g, void **p, size_t n)
{
    if (!*p) return;
    cudaFreeAsync(*p, g->stream);
    *p = NULL;
    g->used -= n;
}

void xg_wt_release_chunk(struct xg_wt_gpu *g)
{
    const uint64_t w = g->cap_w;
    xg_staging_drop(&g->stage);   /* a copy ahead may be writing d_text_alt */
    xg_wt_dfree(g, (void **)&g->d_text, g->cap_len);
    xg_wt_dfree(g, (void **)&g->d_text_alt, g->cap_len);
    uint32_t **u[] = {&g->d_start, &g->d_len, &g->d_doc, &g->d_aux, &g->d_aux2,
                      &g->d_aux3};
    for (size_t i = 0; i < sizeof u / sizeof *u; ++i)
        xg_wt_dfree(g, (void **)u[i], w * 4);
    xg_wt_dfree(g, (void **)&g->d_v, w * 8);
    xg_wt_dfree(g, (void **)&g->d_k0, w * 8);
    xg_wt_dfree(g, (void **)&g->d_k1, w * 8);
    xg_wt_dfree(g, &g->d_tmp, g->tmp_bytes);
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
    int rc = xg_wt_dalloc(g, (void **)&g->d_text, cl, "chunk text");
    if (!rc && g->ahead) rc = xg_wt_dalloc(g, (void **)&g->d_text_alt, cl, "chunk text");
    uint32_t **u[] = {&g->d_start, &g->d_len, &g->d_doc, &g->d_aux, &g->d_aux2,
                      &g->d_aux3};
    for (size_t i = 0; !rc && i < sizeof u / sizeof *u; ++i)
        rc = xg_wt_dalloc(g, (void **)u[i], cw * 4, "per-word arrays");
    if (!rc) rc = xg_wt_dalloc(g, (void **)&g->d_v, cw * 8, "sort values");
    if (!rc) rc = xg_wt_dalloc(g, (void **)&g->d_k0, cw * 8, "sort keys");
    if (!rc) rc = xg_wt_dalloc(g, (void **)&g->d_k1, cw * 8, "sort keys");
    if (!rc) rc = xg_wt_dalloc(g, &g->d_tmp, tmp, "CUB workspace");
    if (rc) xg_wt_release_chunk(g);
    return rc;
}

int xg_wt_mark(struct xg_wt_gpu *g, int step)
{
    if (g->n_marks >= XG_WT_MAX_MARKS) return XG_OK;
    g->mark_step[g->n_marks] = step;
    XG_CUDA_CHECK(cudaEventRecord(g->mark[g->n_marks], g->stream), "timing event");
    ++g->n_marks;
    return XG_OK;
}

int xg_wt_marks_done(struct xg_wt_gpu *g, double *seconds)
{
    XG_CUDA_CHECK(cudaStreamSynchronize(g->stream), "stream");
    for (int i = 1; i < g->n_marks; ++i) {
        float ms = 0;
        XG_CUDA_CHECK(cudaEventElapsedTime(&ms, g->mark[i - 1], g->mark[i]), "timing");
        seconds[g->mark_step[i]] += ms * 1e-3;
    }
    g->n_marks = 0;
    return XG_OK;
}

static void free_tables(struct xg_wt_gpu *g)
{
    xg_wt_dfree(g, (void **)&g->d_tkey, g->tcap * 8);
    xg_wt_dfree(g, (void **)&g->d_tid, g->tcap * 4);
    xg_wt_dfree(g, (void **)&g->d_tw, g->n_tw * 8 + 8);
    xg_wt_dfree(g, (void **)&g->d_kd, g->n_docs * 8 + 8);
    xg_wt_dfree(g, (void **)&g->d_extra, g->n_docs * 8 + 8);
    g->tcap = g->n_terms = g->n_tw = g->n_docs = 0;
}

/* One engine's stream, events and pinned counters outlive it, for the
 * process's next run (creating and destroying them took about 1.5 ms of
 * a 20 ms run at 100 MB on the H100). */
static pthread_mutex_t kept_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    cudaStream_t stream;
    cudaEvent_t mark[XG_WT_MAX_MARKS];
    uint32_t *h_small;
} kept;

static int take_kept(struct xg_wt_gpu *g)
{
    pthread_mutex_lock(&kept_mu);
    const int ok = kept.stream != NULL;
    if (ok) {
        g->stream = kept.stream;
        memcpy(g->mark, kept.mark, sizeof g->mark);
        g->h_small = kept.h_small;
        memset(&kept, 0, sizeof kept);
    }
    pthread_mutex_unlock(&kept_mu);
    return ok;
}

static int park(struct xg_wt_gpu *g)
{
    if (!g->stream || !g->h_small) return 0;
    for (int i = 0; i < XG_WT_MAX_MARKS; ++i)
        if (!g->mark[i]) return 0;
    pthread_mutex_lock(&kept_mu);
    const int ok = kept.stream == NULL;
    if (ok) {
        kept.stream = g->stream;
        memcpy(kept.mark, g->mark, sizeof kept.mark);
        kept.h_small = g->h_small;
    }
    pthread_mutex_unlock(&kept_mu);
    return ok;
}

void xg_wt_gpu_close(xg_wt_gpu *g)
{
    if (!g) return;
    if (g->stream) cudaStreamSynchronize(g->stream);
    xg_wt_release_chunk(g);
    free_tables(g);
    xg_wt_whole_release(g);
    xg_wt_dd_release(g);
    xg_wt_place_release(g);
    xg_wt_dfree(g, (void **)&g->d_small, 64);
    xg_staging_free(&g->stage);
    if (!park(g)) {
        if (g->h_small) cudaFreeHost(g->h_small);
        for (int i = 0; i < XG_WT_MAX_MARKS; ++i)
            if (g->mark[i]) cudaEventDestroy(g->mark[i]);
        if (g->stream) cudaStreamDestroy(g->stream);
    }
    free(g);
}

static int open_dev(struct xg_wt_gpu *g, uint64_t budget, uint64_t *free_bytes)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count < 1) {
        cudaGetLastError();
        return xg_set_error(XG_ERR_NODEVICE, "weight GPU: no CUDA device (%s)",
                            e != cudaSuccess ? cudaGetErrorString(e) : "none found");
    }
    size_t fr = 0, total = 0;
    XG_CUDA_CHECK(cudaMemGetInfo(&fr, &total), "device memory");
    *free_bytes = fr;
    g->budget = budget ? budget : fr / 10 * 9;
    if (g->budget < XG_WT_MIN_BUDGET) g->budget = XG_WT_MIN_BUDGET;
    if (!take_kept(g)) {
        XG_CUDA_CHECK(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking),
                      "stream");
        /* The pool keeps what runs free for the process's next run. */
        int dev = 0;
        cudaMemPool_t mp;
        uint64_t keep = UINT64_MAX;
        XG_CUDA_CHECK(cudaGetDevice(&dev), "device");
        XG_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&mp, dev), "memory pool");
        XG_CUDA_CHECK(cudaMemPoolSetAttribute(mp, cudaMemPoolAttrReleaseThreshold, &keep),
                      "memory pool");
        for (int i = 0; i < XG_WT_MAX_MARKS; ++i)
            XG_CUDA_CHECK(cudaEventCreate(&g->mark[i]), "event");
        XG_CUDA_CHECK(cudaHostAlloc((void **)&g->h_small, 64, cudaHostAllocDefault),
                      "pinned staging");
    }
    xg_staging_init(&g->stage, g->stream, xg_threads_cores());
    return xg_wt_dalloc(g, (void **)&g->d_small, 64, "counters");
}

void xg_wt_gpu_pin_input(xg_wt_gpu *g, const char *buf, size_t len)
{
    xg_staging_pin(&g->stage, buf, len);
    /* XG_WT_NO_AHEAD=1: one stream only, to measure what the overlap buys
     * (docs/benchmarks.md). */
    const char *off = getenv("XG_WT_NO_AHEAD");
    g->ahead = !(off && off[0] == '1');
}

void xg_wt_gpu_next(xg_wt_gpu *g, const struct xg_wt_chunk *next)
{
    g->next = next;
}

void xg_wt_gpu_lock_host(xg_wt_gpu *g, void *p, size_t n)
{
    xg_staging_lock(&g->stage, p, n);
}

void xg_wt_gpu_unlock_host(xg_wt_gpu *g)
{
    xg_staging_unlock(&g->stage);
}

int xg_wt_gpu_open(uint64_t budget, xg_wt_gpu **out, uint64_t *free_bytes)
{
    *out = NULL;
    *free_bytes = 0;
    struct xg_wt_gpu *g = calloc(1, sizeof *g);
    if (!g) return xg_set_error(XG_ERR_NOMEM, "weight: out of memory");
    int rc = open_dev(g, budget, free_bytes);
    if (rc) {
        xg_wt_gpu_close(g);
        return rc;
    }
    *out = g;
    return XG_OK;
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
    if (!rc) rc = xg_wt_dalloc(g, (void **)&g->d_tkey, d->cap * 8, "term table");
    if (!rc) rc = xg_wt_dalloc(g, (void **)&g->d_tid, d->cap * 4, "term table");
    if (!rc) {
        g->tcap = d->cap;
        rc = xg_staging_htod(&g->stage, g->d_tkey, key, d->cap * 8);
    }
    if (!rc) rc = xg_staging_htod(&g->stage, g->d_tid, id, d->cap * 4);
    /* The staging buffers must be drained before key and id go. */
    if (!rc) XG_CUDA_CHECK(cudaStreamSynchronize(g->stream), "tables");
    free(key);
    free(id);
    return rc;
}

int xg_wt_gpu_tables(xg_wt_gpu *g, const struct xg_wt_tables *t)
{
    free_tables(g);
    if (t->dict && (t->dict->cap & (t->dict->cap - 1)))
        return xg_set_error(XG_ERR_FORMAT, "weight GPU: dictionary size not a power of 2");
    int rc = t->dict ? upload_dict(g, t->dict) : XG_OK;
    g->n_terms = t->n_terms;
    g->n_tw = t->n_tw_df ? t->n_tw_df : t->n_terms;
    g->n_docs = t->n_docs;
    if (!rc) rc = xg_wt_dalloc(g, (void **)&g->d_tw, g->n_tw * 8 + 8, "term weights");
    if (!rc) rc = xg_wt_dalloc(g, (void **)&g->d_kd, g->n_docs * 8 + 8, "document constants");
    if (!rc && t->extra)
        rc = xg_wt_dalloc(g, (void **)&g->d_extra, g->n_docs * 8 + 8, "document constants");
    if (!rc) rc = xg_staging_htod(&g->stage, g->d_tw, t->tw, g->n_tw * 8);
    if (!rc) rc = xg_staging_htod(&g->stage, g->d_kd, t->kd, g->n_docs * 8);
    if (!rc && t->extra) rc = xg_staging_htod(&g->stage, g->d_extra, t->extra, g->n_docs * 8);
    if (!rc) XG_CUDA_CHECK(cudaStreamSynchronize(g->stream), "tables");
    return rc;
}
