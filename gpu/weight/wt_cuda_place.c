/** @file wt_cuda_place.c
 *  @brief Pass 2 of the weight pipeline's run in chunks placed by the
 *         device straight into the result (wt_int.h's xg_wt_gpu_place_*).
 *         The result's docids and weights are page-locked for the run
 *         (the device writes them at the host's addresses); per chunk,
 *         after the weights (wt_cuda_pass.c), each run of one term moves
 *         that term's cursor on the device and the postings cross the bus
 *         once, into their final places (wt.cu's place kernels).  This
 *         replaces copying each chunk into an arena and the host's
 *         gather into term order (wt.c), whose copies,
 *         locking and gather took most of a 2 GB run on the H100
 *         (docs/weight.md).  The result's room is reserved before pass 1
 *         and locked part by part while pass 1 counts its postings.
 *         Built only with CUDA.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/big_alloc.h"
#include "wt_cuda_int.h"
#include "wt_kern.h"

static int declined(const char *why)
{
    return xg_set_error(XG_ERR_UNSUPPORTED, "weight GPU: placing on the device: %s", why);
}

/* ---- The result locked while pass 1 runs ----------------------------
 * Pass 1 tells the postings chunk by chunk; a thread faults each new part
 * of the reserved docids and weights in (on half the cores: the rest
 * drive pass 1) and page-locks it, so that pass 2 starts with the result
 * locked (faulting in and locking it after pass 1 took about 100 ms of a
 * 2 GB run on the H100: docs/weight.md).  Parts
 * start on a multiple of PART entries, page boundaries of both arrays: two
 * registrations may not share a page. */
#define PART ((uint64_t)1024)

struct xg_wt_lock_ahead {
    pthread_t tid;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint32_t *doc;
    double *w;
    uint64_t cap;           /* entries reserved */
    uint32_t threads;       /* for faulting in */
    /* under mu: */
    uint64_t target;        /* entries wanted locked */
    uint64_t locked;        /* entries locked, from 0 */
    int final, stop, done, failed;
    /* the locker's own: the registered ranges */
    void **reg;
    size_t n_reg, reg_cap;
};

static int lock_part(struct xg_wt_lock_ahead *a, uint64_t lo, uint64_t hi)
{
    void *const p[2] = {a->doc + lo, a->w + lo};
    const size_t n[2] = {(hi - lo) * 4, (hi - lo) * 8};
    xg_prefault_wait(xg_prefault_start(p, n, 2, a->threads));
    if (a->n_reg + 2 > a->reg_cap) {
        const size_t c = a->reg_cap ? 2 * a->reg_cap : 64;
        void **q = realloc(a->reg, c * sizeof *q);
        if (!q) return 1;
        a->reg = q;
        a->reg_cap = c;
    }
    for (int i = 0; i < 2; ++i) {
        if (cudaHostRegister(p[i], n[i], cudaHostRegisterMapped)) {
            cudaGetLastError();
            return 1;
        }
        a->reg[a->n_reg++] = p[i];
    }
    return 0;
}

/* The end of the next part (under mu): whole parts until the last. */
static uint64_t part_end(const struct xg_wt_lock_ahead *a)
{
    const uint64_t want = a->final ? a->target : a->target / PART * PART;
    return want < a->cap ? want : a->cap;
}

static void *locker_main(void *arg)
{
    struct xg_wt_lock_ahead *a = arg;
    pthread_mutex_lock(&a->mu);
    for (;;) {
        while (!a->stop && !a->final && part_end(a) <= a->locked)
            pthread_cond_wait(&a->cv, &a->mu);
        if (a->stop) break;
        const uint64_t lo = a->locked, hi = part_end(a);
        const int last = a->final;
        pthread_mutex_unlock(&a->mu);
        const int bad = hi > lo && lock_part(a, lo, hi);
        pthread_mutex_lock(&a->mu);
        if (bad) a->failed = 1;
        else if (hi > lo) a->locked = hi;
        if (bad || last) break;
    }
    a->done = 1;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
    return NULL;
}

int xg_wt_gpu_place_reserve(xg_wt_gpu *g, uint32_t *doc, double *w, uint64_t cap)
{
    xg_wt_gpu_place_drop(g);
    int dev = 0, host_addr = 0;
    if (cudaGetDevice(&dev) ||
        cudaDeviceGetAttribute(&host_addr, cudaDevAttrCanUseHostPointerForRegisteredMem,
                               dev) || !host_addr) {
        cudaGetLastError();
        return 1;
    }
    struct xg_wt_lock_ahead *a = calloc(1, sizeof *a);
    if (!a) return 1;
    a->doc = doc;
    a->w = w;
    a->cap = cap;
    a->threads = g->dev.stage.threads > 3 ? g->dev.stage.threads / 2 : 1;
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->cv, NULL);
    if (pthread_create(&a->tid, NULL, locker_main, a)) {
        pthread_mutex_destroy(&a->mu);
        pthread_cond_destroy(&a->cv);
        free(a);
        return 1;
    }
    g->lock_ahead = a;
    return 0;
}

void xg_wt_gpu_place_grow(xg_wt_gpu *g, uint64_t n)
{
    struct xg_wt_lock_ahead *a = g->lock_ahead;
    if (!a) return;
    pthread_mutex_lock(&a->mu);
    if (n > a->target) a->target = n;
    pthread_cond_signal(&a->cv);
    pthread_mutex_unlock(&a->mu);
}

/* The last part up to n entries, waited for: 1 if [0, n) is locked. */
static int lock_ahead_finish(struct xg_wt_lock_ahead *a, uint64_t n)
{
    pthread_mutex_lock(&a->mu);
    if (n > a->target) a->target = n;
    a->final = 1;
    pthread_cond_signal(&a->cv);
    while (!a->done) pthread_cond_wait(&a->cv, &a->mu);
    const int ok = !a->failed && a->locked >= n;
    pthread_mutex_unlock(&a->mu);
    return ok;
}

void xg_wt_gpu_place_drop(xg_wt_gpu *g)
{
    struct xg_wt_lock_ahead *a = g->lock_ahead;
    if (!a) return;
    pthread_mutex_lock(&a->mu);
    a->stop = 1;
    pthread_cond_signal(&a->cv);
    pthread_mutex_unlock(&a->mu);
    pthread_join(a->tid, NULL);
    if (a->n_reg) {
        if (g->dev.stream) cudaStreamSynchronize(g->dev.stream);  /* the kernels write them */
        for (size_t i = 0; i < a->n_reg; ++i) cudaHostUnregister(a->reg[i]);
        cudaGetLastError();
    }
    pthread_mutex_destroy(&a->mu);
    pthread_cond_destroy(&a->cv);
    free(a->reg);
    free(a);
    g->lock_ahead = NULL;
}

/* ---- Placement ------------------------------------------------------ */

/* The placement's device arrays. */
static void free_arrays(struct xg_wt_gpu *g)
{
    struct xg_wt_place *p = &g->place;
    const uint64_t nt = g->place_nt;
    xg_pool_free_async(&g->dev.pool, (void **)&p->cur, nt * 8 + 8);
    xg_pool_free_async(&g->dev.pool, (void **)&p->shift, nt * 8 + 8);
    xg_pool_free_async(&g->dev.pool, (void **)&p->toff, nt * 8 + 8);
    xg_pool_free_async(&g->dev.pool, (void **)&p->map, g->place_docs * 4 + 4);
    xg_pool_free_async(&g->dev.pool, (void **)&p->err, 8);
    memset(p, 0, sizeof *p);
    g->place_nt = g->place_docs = 0;
}

void xg_wt_place_release(struct xg_wt_gpu *g)
{
    xg_wt_gpu_place_drop(g);
    free_arrays(g);
}

static int open_place(struct xg_wt_gpu *g, struct xg_wt_result *r, const uint32_t *docids,
                      uint64_t n_docs, uint64_t keep)
{
    const uint64_t nt = r->n_terms, np = r->n_postings;
    const uint64_t need = 3 * (nt * 8 + 8) + (docids ? n_docs * 4 + 4 : 0) + 8;
    /* The chunks must still fit: placing is not worth a run that fails. */
    if (!xg_pool_fits(&g->dev.pool, need + keep)) return declined("no room on the device");
    struct xg_wt_place *p = &g->place;
    struct xg_pool *pool = &g->dev.pool;
    g->place_nt = nt;
    g->place_docs = docids ? n_docs : 0;
    int rc = xg_pool_alloc_async(pool, (void **)&p->cur, nt * 8 + 8, "placement");
    if (!rc) rc = xg_pool_alloc_async(pool, (void **)&p->shift, nt * 8 + 8, "placement");
    if (!rc) rc = xg_pool_alloc_async(pool, (void **)&p->toff, nt * 8 + 8, "placement");
    if (!rc) rc = xg_pool_alloc_async(pool, (void **)&p->err, 8, "placement");
    if (!rc && docids)
        rc = xg_pool_alloc_async(pool, (void **)&p->map, n_docs * 4 + 4, "placement");
    if (!rc) rc = xg_staging_htod(&g->dev.stage, (void *)p->toff, r->term_off, (nt + 1) * 8);
    if (!rc && docids) rc = xg_staging_htod(&g->dev.stage, (void *)p->map, docids, n_docs * 4);
    if (!rc) {
        XG_CUDA_CHECK(cudaMemcpyAsync(p->cur, p->toff, nt * 8, cudaMemcpyDeviceToDevice,
                                      g->dev.stream), "placement");
        XG_CUDA_CHECK(cudaMemsetAsync(p->err, 0, 8, g->dev.stream), "placement");
    }
    if (rc) return rc;
    p->nt = (uint32_t)nt;
    /* The result locked while pass 1 ran, or now (allocated after it). */
    const struct xg_wt_lock_ahead *a = g->lock_ahead;
    if (!a || a->doc != r->docids || a->w != r->weights) {
        if (xg_wt_gpu_place_reserve(g, r->docids, r->weights, np + 1))
            return declined("the device cannot use the host's addresses");
        xg_wt_gpu_place_grow(g, np + 1);
    }
    if (!lock_ahead_finish(g->lock_ahead, np + 1))
        return declined("the result's host memory cannot be page-locked");
    p->out_doc = r->docids;       /* the device uses the host's addresses */
    p->out_w = r->weights;
    return XG_OK;
}

int xg_wt_gpu_place_open(xg_wt_gpu *g, struct xg_wt_result *r, const uint32_t *docids,
                         uint64_t n_docs, uint64_t keep)
{
    free_arrays(g);                     /* a run before; the lock-ahead stays */
    if (r->n_terms > UINT32_MAX - 1) return declined("too many terms");
    const int rc = open_place(g, r, docids, n_docs, keep);
    if (rc) xg_wt_place_release(g);
    return rc;
}

int xg_wt_gpu_place_chunk(xg_wt_gpu *g, const struct xg_wt_chunk *c,
                          const struct xg_wt_tables *t, double *seconds)
{
    uint32_t np = 0;
    double *d_w = NULL;
    int rc = xg_wt_pass2_device(g, c, t, &np, &d_w, seconds);
    if (rc) return rc;
    struct xg_wt_place p = g->place;
    p.doc_base = c->doc_base;
    XG_CUDA_CHECK(xg_wt_place_gpu(g->d_start, g->d_aux2, d_w, np, g->d_len, g->d_doc,
                                  g->d_aux3, g->d_small + 6, p, g->dev.stream), "placement");
    /* Runs: at most 24 bytes per posting read; postings: 16 read and 28
     * with their cursors, 12 written over the bus. */
    xg_wt_count(XG_WT_STEP_PLACE, 52.0 * np);
    if ((rc = xg_device_mark(&g->dev, XG_WT_STEP_PLACE, NULL))) return rc;
    return xg_device_marks_done(&g->dev, seconds);
}

/* Every term's cursor at its end, no chunk past it. */
static int check_place(struct xg_wt_gpu *g)
{
    const struct xg_wt_place *p = &g->place;
    uint32_t *h = g->h_small + 15;
    XG_CUDA_CHECK(xg_wt_place_check_gpu(*p, g->dev.stream), "placement");
    XG_CUDA_CHECK(cudaMemcpyAsync(h, p->err, 4, cudaMemcpyDeviceToHost, g->dev.stream),
                  "placement");
    XG_CUDA_CHECK(cudaStreamSynchronize(g->dev.stream), "placement");
    if (*h & 1)
        return xg_set_error(XG_ERR_FORMAT, "weight GPU: a chunk has more postings of a term "
                            "than pass 1 counted");
    if (*h)
        return xg_set_error(XG_ERR_FORMAT, "weight: pass 2's postings of a term do not "
                            "match its df from pass 1");
    return XG_OK;
}

int xg_wt_gpu_place_close(xg_wt_gpu *g, int check)
{
    const int rc = check ? check_place(g) : XG_OK;
    xg_wt_place_release(g);
    return rc;
}
