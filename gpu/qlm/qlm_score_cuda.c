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

#include <cuda_runtime_api.h>

#include "../runtime/cuda_check.h"
#include "../runtime/error.h"
#include "qlm.h"
#include "qlm_kern.h"
#include "qlm_score.h"

struct xg_qlm_scorer_gpu {
    cudaStream_t stream;
    uint32_t *d_docid;
    double *d_logp;
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
    void **p[] = {(void **)&s->d_c0, (void **)&s->d_c1, (void **)&s->d_cand,
                  (void **)&s->d_rdoc, (void **)&s->d_s0, (void **)&s->d_rscore, &s->d_tmp};
    for (size_t i = 0; i < sizeof p / sizeof *p; ++i) {
        if (*p[i]) cudaFree(*p[i]);
        *p[i] = NULL;
    }
    s->cap = 0;
}

static void free_words(xg_qlm_scorer_gpu *s)
{
    void **p[] = {(void **)&s->d_start, (void **)&s->d_prefix, (void **)&s->d_words};
    for (size_t i = 0; i < sizeof p / sizeof *p; ++i) {
        if (*p[i]) cudaFree(*p[i]);
        *p[i] = NULL;
    }
    s->cap_words = 0;
}

void xg_qlm_score_gpu_close(xg_qlm_scorer_gpu *s)
{
    if (!s) return;
    if (s->stream) cudaStreamSynchronize(s->stream);
    free_query(s);
    free_words(s);
    if (s->d_docid) cudaFree(s->d_docid);
    if (s->d_logp) cudaFree(s->d_logp);
    if (s->d_nd) cudaFree(s->d_nd);
    if (s->stream) cudaStreamDestroy(s->stream);
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
    int rc = XG_OK;
    cudaError_t e = cudaMalloc((void **)&s->d_docid, (n + 1) * 4);
    if (!e) e = cudaMalloc((void **)&s->d_logp, (n + 1) * 8);
    if (!e) e = cudaMemcpy(s->d_docid, t->docid, n * 4, cudaMemcpyHostToDevice);
    if (!e) e = cudaMemcpy(s->d_logp, lp, n * 8, cudaMemcpyHostToDevice);
    if (e) rc = xg_set_error(e == cudaErrorMemoryAllocation ? XG_ERR_NOMEM : XG_ERR_CUDA,
                             "qlm GPU scorer: the table: %s", cudaGetErrorString(e));
    free(lp);
    return rc;
}

int xg_qlm_score_gpu_open(const struct xg_qlm_table *t, xg_qlm_scorer_gpu **out)
{
    *out = NULL;
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count < 1) {
        cudaGetLastError();
        return xg_set_error(XG_ERR_NODEVICE, "qlm-search: no CUDA device (%s)",
                            e != cudaSuccess ? cudaGetErrorString(e) : "none found");
    }
    xg_qlm_scorer_gpu *s = calloc(1, sizeof *s);
    if (!s) return xg_set_error(XG_ERR_NOMEM, "qlm GPU scorer: out of memory");
    int rc = XG_OK;
    e = cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking);
    if (!e) e = cudaMalloc((void **)&s->d_nd, 16);
    if (e) rc = xg_set_error(XG_ERR_CUDA, "qlm GPU scorer: %s", cudaGetErrorString(e));
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
    if (n > s->cap) {
        free_query(s);
        const uint64_t c = n + n / 4 + 1024;
        size_t tmp = 0;
        if (xg_qlm_qtmp_bytes((uint32_t)c, &tmp))
            return xg_set_error(XG_ERR_CUDA, "qlm GPU scorer: CUB workspace size");
        void **p[] = {(void **)&s->d_c0, (void **)&s->d_c1, (void **)&s->d_cand,
                      (void **)&s->d_rdoc};
        for (size_t i = 0; i < sizeof p / sizeof *p; ++i)
            XG_CUDA_CHECK(cudaMalloc(p[i], c * 4), "qlm GPU scorer: candidates");
        XG_CUDA_CHECK(cudaMalloc((void **)&s->d_s0, c * 8), "qlm GPU scorer: scores");
        XG_CUDA_CHECK(cudaMalloc((void **)&s->d_rscore, c * 8), "qlm GPU scorer: scores");
        XG_CUDA_CHECK(cudaMalloc(&s->d_tmp, tmp), "qlm GPU scorer: workspace");
        s->cap = c;
        s->tmp_bytes = tmp;
    }
    if (m > s->cap_words) {
        free_words(s);
        const uint32_t c = m + 64;
        XG_CUDA_CHECK(cudaMalloc((void **)&s->d_start, c * 8), "qlm GPU scorer: words");
        XG_CUDA_CHECK(cudaMalloc((void **)&s->d_prefix, (c + 1) * 8), "qlm GPU scorer: words");
        XG_CUDA_CHECK(cudaMalloc((void **)&s->d_words, c * sizeof *s->d_words),
                      "qlm GPU scorer: words");
        s->cap_words = c;
    }
    return XG_OK;
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
        cudaStream_t st = s->stream;
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
        if (e) rc = xg_set_error(XG_ERR_CUDA, "qlm GPU scorer: %s", cudaGetErrorString(e));
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
