/** @file qlm_score_cuda.c
 *  @brief The GPU scorer of qlm-search (qlm_score.h), host side: the
 *         table's docids and the log of every row's floored probability on
 *         the device, and per query the words' chosen n-grams, the
 *         candidates, the scores and the top k (kernels in qlm_score.cu).
 *         Built only with CUDA.
 *
 *  Exactness: a word's factor for document d is its chosen n-gram's row
 *  for d or, without one, the same back-off value for every d (which
 *  n-gram is chosen depends on the collection, not on d), so the host
 *  takes every log with the C library's log() (rows once at open, the
 *  back-offs per query) and the device only adds them, in the twin's order.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/device.h"
#include "../runtime/error.h"
#include "qlm.h"
#include "qlm_kern.h"
#include "qlm_score.h"

struct xg_qlm_scorer_gpu {
    struct xg_device dev;               /* stream, pool (no budget) */
    uint32_t *d_docid;
    double *d_logp;
    uint64_t n_rows;                    /* the table's */
    uint64_t cap;                       /* per-query arrays */
    uint32_t *d_c0, *d_c1, *d_cand, *d_rdoc, *d_nd;
    double *d_s0, *d_rscore;
    uint64_t *d_start, *d_prefix;
    struct xg_qlm_qword *d_words;
    uint32_t cap_words;
    void *d_tmp;
    size_t tmp_bytes;
};

static void free_query(xg_qlm_scorer_gpu *s)
{
    struct xg_pool *pool = &s->dev.pool;
    void **p4[] = {(void **)&s->d_c0, (void **)&s->d_c1, (void **)&s->d_cand,
                   (void **)&s->d_rdoc};
    for (size_t i = 0; i < sizeof p4 / sizeof *p4; ++i) xg_pool_free(pool, p4[i], s->cap * 4);
    xg_pool_free(pool, (void **)&s->d_s0, s->cap * 8);
    xg_pool_free(pool, (void **)&s->d_rscore, s->cap * 8);
    xg_pool_free(pool, &s->d_tmp, s->tmp_bytes);
    s->cap = 0;
    s->tmp_bytes = 0;
}

static void free_words(xg_qlm_scorer_gpu *s)
{
    const uint64_t c = s->cap_words;
    xg_pool_free(&s->dev.pool, (void **)&s->d_start, c * 8);
    xg_pool_free(&s->dev.pool, (void **)&s->d_prefix, (c + 1) * 8);
    xg_pool_free(&s->dev.pool, (void **)&s->d_words, c * sizeof *s->d_words);
    s->cap_words = 0;
}

void xg_qlm_score_gpu_close(xg_qlm_scorer_gpu *s)
{
    if (!s) return;
    if (s->dev.stream) cudaStreamSynchronize(s->dev.stream);
    free_query(s);
    free_words(s);
    xg_pool_free(&s->dev.pool, (void **)&s->d_docid, (s->n_rows + 1) * 4);
    xg_pool_free(&s->dev.pool, (void **)&s->d_logp, (s->n_rows + 1) * 8);
    xg_pool_free(&s->dev.pool, (void **)&s->d_nd, 16);
    xg_device_close(&s->dev);
    free(s);
}

/* A factor's log as the twin takes it: floored, then log(). */
static double log_factor(double p)
{
    return log(p > XG_QLM_EPSILON ? p : XG_QLM_EPSILON);
}

static int upload_table(xg_qlm_scorer_gpu *s, const struct xg_qlm_table *t)
{
    const size_t n = t->n_rows;
    double *lp = malloc((n + 1) * sizeof *lp);
    if (!lp) return xg_set_error(XG_ERR_NOMEM, "qlm GPU scorer: out of memory");
    for (size_t r = 0; r < n; ++r) lp[r] = log_factor(t->prob[r]);
    s->n_rows = n;
    int rc = xg_pool_alloc(&s->dev.pool, (void **)&s->d_docid, (n + 1) * 4,
                           "qlm GPU scorer: the table");
    if (!rc)
        rc = xg_pool_alloc(&s->dev.pool, (void **)&s->d_logp, (n + 1) * 8,
                           "qlm GPU scorer: the table");
    cudaError_t e = cudaSuccess;
    if (!rc) e = cudaMemcpy(s->d_docid, t->docid, n * 4, cudaMemcpyHostToDevice);
    if (!rc && !e) e = cudaMemcpy(s->d_logp, lp, n * 8, cudaMemcpyHostToDevice);
    if (e) rc = xg_set_error(xg_cuda_status(e), "qlm GPU scorer: the table: %s",
                             cudaGetErrorString(e));
    free(lp);
    return rc;
}

int xg_qlm_score_gpu_open(const struct xg_qlm_table *t, xg_qlm_scorer_gpu **out)
{
    *out = NULL;
    int rc = xg_device_present("qlm-search");
    if (rc) return rc;
    xg_qlm_scorer_gpu *s = calloc(1, sizeof *s);
    if (!s) return xg_set_error(XG_ERR_NOMEM, "qlm GPU scorer: out of memory");
    const struct xg_device_opts o = {.who = "qlm GPU scorer", .ordinal = -1,
                                     .budget = UINT64_MAX, .staging_threads = 1};
    rc = xg_device_open(&s->dev, &o);
    if (!rc) rc = xg_pool_alloc(&s->dev.pool, (void **)&s->d_nd, 16, "qlm GPU scorer");
    if (!rc) rc = upload_table(s, t);
    if (rc) {
        xg_qlm_score_gpu_close(s);
        return rc;
    }
    *out = s;
    return XG_OK;
}

static int reserve(xg_qlm_scorer_gpu *s, uint64_t n, uint32_t m)
{
    struct xg_pool *pool = &s->dev.pool;
    int rc = XG_OK;
    if (n > s->cap) {
        free_query(s);
        const uint64_t c = n + n / 4 + 1024;
        size_t tmp = 0;
        if (xg_qlm_qtmp_bytes((uint32_t)c, &tmp))
            return xg_set_error(XG_ERR_CUDA, "qlm GPU scorer: CUB workspace size");
        s->cap = c;         /* free_query frees what was allocated */
        s->tmp_bytes = tmp;
        void **p[] = {(void **)&s->d_c0, (void **)&s->d_c1, (void **)&s->d_cand,
                      (void **)&s->d_rdoc};
        for (size_t i = 0; !rc && i < sizeof p / sizeof *p; ++i)
            rc = xg_pool_alloc(pool, p[i], c * 4, "qlm GPU scorer: candidates");
        if (!rc) rc = xg_pool_alloc(pool, (void **)&s->d_s0, c * 8, "qlm GPU scorer: scores");
        if (!rc)
            rc = xg_pool_alloc(pool, (void **)&s->d_rscore, c * 8, "qlm GPU scorer: scores");
        if (!rc) rc = xg_pool_alloc(pool, &s->d_tmp, tmp, "qlm GPU scorer: workspace");
        if (rc) {
            free_query(s);
            return rc;
        }
    }
    if (m > s->cap_words) {
        free_words(s);
        const uint32_t c = m + 64;
        s->cap_words = c;
        rc = xg_pool_alloc(pool, (void **)&s->d_start, (size_t)c * 8, "qlm GPU scorer: words");
        if (!rc)
            rc = xg_pool_alloc(pool, (void **)&s->d_prefix, ((size_t)c + 1) * 8,
                               "qlm GPU scorer: words");
        if (!rc)
            rc = xg_pool_alloc(pool, (void **)&s->d_words, c * sizeof *s->d_words,
                               "qlm GPU scorer: words");
        if (rc) free_words(s);
    }
    return rc;
}

/* Each word's chosen n-gram and back-off log (xg_qlm_word_prob's walk),
 * and the unigram ranges of the candidates. */
static uint32_t plan(const struct xg_qlm_table *t, const struct xg_qlm_query *q,
                     struct xg_qlm_qword *w, uint64_t *start, uint64_t *prefix)
{
    const uint32_t s = t->sigma;
    uint32_t nr = 0;
    prefix[0] = 0;
    for (uint32_t i = 0; i < q->m; ++i) {
        const struct xg_qlm_gram *const *chain = q->chain + (size_t)i * s;
        const uint32_t n_max = i + 1 < s ? i + 1 : s;
        w[i] = (struct xg_qlm_qword){0, 0, log_factor(XG_QLM_EPSILON)};
        for (uint32_t n = n_max; n >= 1; --n) {
            const struct xg_qlm_gram *g = chain[n - 1];
            if (!g) continue;
            w[i] = (struct xg_qlm_qword){g->row, g->n_rows,
                                         log_factor(xg_qlm_backoff_prob(t->lambda, g->fxc,
                                                                        g->fhc))};
            break;
        }
        if (chain[0]) {
            start[nr] = chain[0]->row;
            prefix[nr + 1] = prefix[nr] + chain[0]->n_rows;
            ++nr;
        }
    }
    return nr;
}

static int run(xg_qlm_scorer_gpu *s, const struct xg_qlm_table *t,
               const struct xg_qlm_query *q, uint32_t k, struct xg_qlm_hit *h,
               uint32_t *n_hits)
{
    const uint32_t m = q->m;
    struct xg_qlm_qword *w = malloc((m + 1) * sizeof *w);
    uint64_t *start = malloc((m + 1) * 8), *prefix = malloc((m + 2) * 8);
    uint32_t *doc = malloc(((size_t)k + 1) * 4);
    double *sc = malloc(((size_t)k + 1) * 8);
    int rc = w && start && prefix && doc && sc ? XG_OK
             : xg_set_error(XG_ERR_NOMEM, "qlm GPU scorer: out of memory");
    uint32_t nr = 0, nd = 0;
    if (!rc) {
        nr = plan(t, q, w, start, prefix);
        rc = reserve(s, q->n_cand, m);
    }
    if (!rc && nr) {
        cudaStream_t st = s->dev.stream;
        cudaError_t e = cudaMemcpyAsync(s->d_start, start, nr * 8, cudaMemcpyHostToDevice, st);
        if (!e) e = cudaMemcpyAsync(s->d_prefix, prefix, (nr + 1) * 8, cudaMemcpyHostToDevice, st);
        if (!e) e = cudaMemcpyAsync(s->d_words, w, m * sizeof *w, cudaMemcpyHostToDevice, st);
        if (!e) e = (cudaError_t)xg_qlm_cands_gpu(s->d_docid, s->d_start, s->d_prefix, nr,
                                                  (uint32_t)q->n_cand, s->d_c0, s->d_c1,
                                                  s->d_cand, s->d_nd, s->d_tmp, s->tmp_bytes, st);
        if (!e) e = cudaMemcpyAsync(&nd, s->d_nd, 4, cudaMemcpyDeviceToHost, st);
        if (!e) e = cudaStreamSynchronize(st);
        if (!e && nd)
            e = (cudaError_t)xg_qlm_qscore_gpu(s->d_cand, nd, s->d_words, m, s->d_docid,
                                               s->d_logp, s->d_s0, s->d_rdoc, s->d_rscore,
                                               s->d_tmp, s->tmp_bytes, st);
        *n_hits = nd < k ? nd : k;
        if (!e) e = cudaMemcpyAsync(doc, s->d_rdoc, (size_t)*n_hits * 4,
                                    cudaMemcpyDeviceToHost, st);
        if (!e) e = cudaMemcpyAsync(sc, s->d_rscore, (size_t)*n_hits * 8,
                                    cudaMemcpyDeviceToHost, st);
        if (!e) e = cudaStreamSynchronize(st);
        if (e) rc = xg_set_error(xg_cuda_status(e), "qlm GPU scorer: %s", cudaGetErrorString(e));
        for (uint32_t i = 0; !rc && i < *n_hits; ++i) h[i] = (struct xg_qlm_hit){doc[i], sc[i]};
    }
    free(w);
    free(start);
    free(prefix);
    free(doc);
    free(sc);
    return rc;
}

int xg_qlm_score_gpu(xg_qlm_scorer_gpu *s, const struct xg_qlm_table *t,
                     const char *text, uint32_t k, struct xg_qlm_hit **hits,
                     uint32_t *n_hits)
{
    *hits = NULL;
    *n_hits = 0;
    struct xg_qlm_query q;
    int rc = xg_qlm_query_prepare(t, text, &q);
    if (rc) return rc;
    if (q.n_cand >= INT32_MAX) {
        xg_qlm_query_free(&q);
        return xg_set_error(XG_ERR_UNSUPPORTED, "qlm GPU scorer: more than 2^31 candidate rows");
    }
    struct xg_qlm_hit *h = malloc(((size_t)k + 1) * sizeof *h);
    rc = h ? run(s, t, &q, k, h, n_hits)
           : xg_set_error(XG_ERR_NOMEM, "qlm GPU scorer: out of memory");
    xg_qlm_query_free(&q);
    if (rc) {
        free(h);
        *n_hits = 0;
        return rc;
    }
    *hits = h;
    return XG_OK;
}
