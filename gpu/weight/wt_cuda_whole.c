/** @file wt_cuda_whole.c
 *  @brief The weight pipeline's in-core GPU run on the device dictionary
 *         (wt_int.h's xg_wt_gpu_whole_*): one upload of the text, the
 *         dictionary built and ranked on the device (text/dict_gpu.h), then seed
 *         000 §4's steps 4-8 without the host in between but for the
 *         per-term and per-document constants (glibc log, wt.c).  The
 *         two-pass run (wt_cuda_pass.c) does the same work with the host
 *         dictionary, one chunk at a time; the CPU twin is wt_ref.c.
 *         Built only with CUDA.
 *
 *  Buffers: d_pairs (text/dict_gpu.h's, per word, sorted) run-length encoded
 *  into d_uniq (the postings) and d_tf; each term's first posting in
 *  d_first, from which, with d_toff (text/dict_gpu.h's term offsets), the
 *  result's per-term arrays d_tout and d_tptr.  The weights then go into
 *  d_pairs, free by then, and the docids into d_docs.
 */
#include <stdlib.h>
#include <string.h>

#include "../runtime/big_alloc.h"
#include "../text/dict_gpu.h"
#include "../runtime/knobs.h"
#include "wt_cuda_int.h"
#include "wt_kern.h"

void xg_wt_whole_release(struct xg_wt_gpu *g)
{
    if (g->d_pairs) cudaFreeAsync(g->d_pairs, g->dev.stream);
    if (g->d_toff) cudaFreeAsync(g->d_toff, g->dev.stream);
    g->d_pairs = NULL;
    g->d_toff = NULL;
    const uint64_t n = g->whole_words;
    xg_pool_free_async(&g->dev.pool, (void **)&g->d_uniq, n * 8 + 8);
    xg_pool_free_async(&g->dev.pool, (void **)&g->d_tf, n * 4 + 4);
    xg_pool_free_async(&g->dev.pool, (void **)&g->d_docs, n * 4 + 4);
    xg_pool_free_async(&g->dev.pool, (void **)&g->d_first, g->whole_terms * 4 + 4);
    xg_pool_free_async(&g->dev.pool, (void **)&g->d_tout, g->whole_terms * 8 + 8);
    xg_pool_free_async(&g->dev.pool, (void **)&g->d_tptr, g->whole_terms * 8 + 8);
    xg_pool_free_async(&g->dev.pool, (void **)&g->d_map, g->whole_docs * 4 + 4);
    xg_pool_free_async(&g->dev.pool, &g->d_wtmp, g->wtmp_bytes);
    g->whole_words = g->whole_terms = g->whole_docs = g->whole_np = 0;
    g->wtmp_bytes = 0;
}

static int alloc_postings(struct xg_wt_gpu *g, uint32_t n, uint32_t nt)
{
    size_t tmp = 0;
    XG_CUDA_CHECK(xg_wt_tmp_bytes(n, n, &tmp), "CUB workspace size");
    g->whole_words = n;
    g->whole_terms = nt;
    struct xg_pool *pool = &g->dev.pool;
    int rc = xg_pool_alloc_async(pool, (void **)&g->d_uniq, (size_t)n * 8 + 8, "postings");
    if (!rc) rc = xg_pool_alloc_async(pool, (void **)&g->d_tf, (size_t)n * 4 + 4, "postings");
    if (!rc) rc = xg_pool_alloc_async(pool, (void **)&g->d_docs, (size_t)n * 4 + 4, "docids");
    const size_t per_term = (size_t)nt * 8 + 8;
    if (!rc) rc = xg_pool_alloc_async(pool, (void **)&g->d_first, per_term / 2, "term starts");
    if (!rc) rc = xg_pool_alloc_async(pool, (void **)&g->d_tout, per_term, "term offsets");
    if (!rc) rc = xg_pool_alloc_async(pool, (void **)&g->d_tptr, (size_t)nt * 8 + 8, "terms");
    if (!rc) rc = xg_pool_alloc_async(pool, &g->d_wtmp, tmp, "CUB workspace");
    if (!rc) g->wtmp_bytes = tmp;
    return rc;
}

/* Steps 5-6 on the device (step 4's sort came with the dictionary's
 * sorted pairs): tf by run-length encoding, each term's first posting;
 * then the result's per-term arrays for the chunk at text
 * (xg_wt_terms_out_gpu), the largest df in h_small[4] and the flag of a
 * term without postings in h_small[5]. */
static int count(struct xg_wt_gpu *g, const char *text, uint32_t n, uint32_t nt, int dbits,
                 double *seconds)
{
    int rc = alloc_postings(g, n, nt);
    if (rc) return rc;
    if ((rc = xg_device_timer_start(&g->dev))) return rc;
    XG_CUDA_CHECK(xg_wt_tf_gpu(g->d_pairs, n, g->d_uniq, g->d_tf, g->d_small + 1,
                               g->d_wtmp, g->wtmp_bytes, g->dev.stream), "tf");
    if ((rc = xg_device_mark(&g->dev, XG_WT_STEP_TF, NULL))) return rc;
    XG_CUDA_CHECK(cudaMemcpyAsync(g->h_small + 1, g->d_small + 1, 4, cudaMemcpyDeviceToHost,
                                  g->dev.stream), "posting count");
    XG_CUDA_CHECK(cudaStreamSynchronize(g->dev.stream), "tf");
    const uint32_t np = g->h_small[1];
    xg_wt_count(XG_WT_STEP_TF, 8.0 * n + 12.0 * np);
    /* A term without postings would keep this mark (the host checks). */
    XG_CUDA_CHECK(cudaMemsetAsync(g->d_first, 0xff, (size_t)nt * 4, g->dev.stream), "df");
    XG_CUDA_CHECK(xg_wt_term_first_gpu(g->d_uniq, np, dbits, g->d_first, g->dev.stream), "df");
    XG_CUDA_CHECK(cudaMemsetAsync(g->d_small + 4, 0, 8, g->dev.stream), "df");
    XG_CUDA_CHECK(xg_wt_terms_out_gpu(g->d_first, nt, np, g->d_toff, (uint64_t)(uintptr_t)text,
                                      g->d_tout, g->d_tptr, g->d_small + 4, g->dev.stream),
                  "df");
    xg_wt_count(XG_WT_STEP_DF, 8.0 * np + 28.0 * nt);    /* first, then term_off, term */
    if ((rc = xg_device_mark(&g->dev, XG_WT_STEP_DF, NULL))) return rc;
    XG_CUDA_CHECK(cudaMemcpyAsync(g->h_small + 4, g->d_small + 4, 8, cudaMemcpyDeviceToHost,
                                  g->dev.stream), "df");
    if ((rc = xg_device_marks_done(&g->dev, seconds))) return rc;
    g->whole_np = np;
    g->whole_dbits = dbits;
    return XG_OK;
}

/* The output's room for every word (at least the postings, known only
 * after the sort) faulted in while the device builds the dictionary and
 * sorts: the copies back then write resident pages, which took about a
 * third of their time at 100 MB on the H100 (docs/benchmarks-archive.md).
 * All cores but one, which the dictionary's rounds need: on the H100 host
 * at 100 MB, 15 threads were done after 4.0-4.9 ms, 8 after 5.5-9.2 ms
 * (docs/benchmarks-archive.md). */
struct out_room {
    struct xg_wt_whole *w;
    uint32_t threads;
};

static void prepare_output(void *arg, uint32_t n_words)
{
    struct out_room *o = arg;
    struct xg_wt_whole *w = o->w;
    /* XG_WT_NO_PREFAULT=1: fresh output after the sort, as before, to
     * measure what this buys (docs/benchmarks.md). */
    if (xg_knob_wt_no_prefault()) return;
    const size_t n[2] = {((size_t)n_words + 1) * 4, ((size_t)n_words + 1) * 8};
    w->docids = xg_big_alloc(n[0]);
    w->weights = xg_big_alloc(n[1]);
    if (!w->docids || !w->weights) {
        free(w->docids);
        free(w->weights);
        w->docids = NULL;
        w->weights = NULL;
        return;
    }
    void *const p[2] = {w->docids, w->weights};
    w->prefault = xg_prefault_start(p, n, 2, o->threads > 1 ? o->threads - 1 : 1);
}

int xg_wt_gpu_whole_count(xg_wt_gpu *g, const struct xg_wt_chunk *c, struct xg_wt_whole *w,
                          double *seconds)
{
    memset(w, 0, sizeof *w);
    xg_wt_whole_release(g);
    double t0 = xg_now();
    struct xg_gdict d;
    struct out_room room = {w, g->dev.stage.threads};
    struct xg_gdict_device dev = {NULL, 0, NULL, prepare_output, &room};
    int rc = xg_gdict_build_on_device(c->buf, c->len, &g->dev, &d, &dev);
    if (rc) {
        xg_wt_whole_free(w);    /* the output room it may have made */
        return rc;
    }
    /* The text's upload is its own step, as in the two-pass run. */
    seconds[XG_WT_STEP_DICT] += xg_now() - t0 - d.upload_seconds;
    seconds[XG_WT_STEP_HTOD] += d.upload_seconds;
    xg_wt_count(XG_WT_STEP_HTOD, (double)c->len);
    g->d_pairs = dev.pairs;
    g->d_toff = dev.term_off;
    w->n_words = d.n_words;
    w->n_docs = d.n_docs;
    w->n_terms = d.n_terms;
    w->term_len = d.term_len;
    w->doclen = d.doclen;
    xg_wt_count(XG_WT_STEP_DICT, 2.0 * c->len + 48.0 * d.n_words);
    rc = count(g, c->buf, d.n_words, d.n_terms, dev.dbits, seconds);
    if (!rc && g->h_small[5])
        rc = xg_set_error(XG_ERR_FORMAT, "weight GPU: a term of the device dictionary has no "
                          "postings");
    if (!rc) {
        w->n_postings = g->whole_np;
        w->max_df = g->h_small[4];
    }
    if (rc) {
        xg_wt_whole_free(w);
        xg_wt_whole_release(g);
    }
    return rc;
}

int xg_wt_gpu_whole_weights(xg_wt_gpu *g, const struct xg_wt_tables *t,
                            const uint32_t *docids, struct xg_wt_result *r)
{
    double *seconds = r->seconds;
    const size_t nt = g->whole_terms;
    const uint32_t np = (uint32_t)g->whole_np;
    int rc = xg_wt_gpu_tables(g, t);
    if (!rc && docids) {
        g->whole_docs = t->n_docs;
        rc = xg_pool_alloc_async(&g->dev.pool, (void **)&g->d_map, t->n_docs * 4 + 4, "docids");
        if (!rc) rc = xg_staging_htod(&g->dev.stage, g->d_map, docids, t->n_docs * 4);
    }
    if (rc) return rc;
    if ((rc = xg_device_timer_start(&g->dev))) return rc;
    /* The pairs are run-length encoded into d_uniq: their buffer is
     * free for the weights. */
    double *d_w = (double *)g->d_pairs;
    uint32_t *d_doc = g->d_docs;
    const struct xg_wt_dconst dc = {g->d_tw, g->d_kd, g->d_extra, 0, t->k1p1, t->seed,
                                    t->n_tw_df ? g->d_first : NULL};
    XG_CUDA_CHECK(xg_wt_weights_gpu(g->d_uniq, g->d_tf, np, g->whole_dbits, dc, NULL, d_doc,
                                    d_w, g->dev.stream), "weights");
    XG_CUDA_CHECK(xg_wt_docids_out_gpu(d_doc, np, g->d_map, g->dev.stream), "docids");
    xg_wt_count(XG_WT_STEP_WEIGHT, (12.0 + 16.0 + 12.0 + (g->d_extra ? 8 : 0)) * np);
    if ((rc = xg_device_mark(&g->dev, XG_WT_STEP_WEIGHT, NULL))) return rc;
    if ((rc = xg_device_marks_done(&g->dev, seconds))) return rc;
    const double t0 = xg_now();
    _Static_assert(sizeof *r->term == 8, "term addresses are made on the device as 64 bits");
    rc = xg_staging_dtoh(&g->dev.stage, r->term, g->d_tptr, nt * 8);
    if (!rc) rc = xg_staging_dtoh(&g->dev.stage, r->term_off, g->d_tout, (nt + 1) * 8);
    if (!rc) rc = xg_staging_dtoh(&g->dev.stage, r->docids, d_doc, (size_t)np * 4);
    if (!rc) rc = xg_staging_dtoh(&g->dev.stage, r->weights, d_w, (size_t)np * 8);
    seconds[XG_WT_STEP_DTOH] += xg_now() - t0;
    xg_wt_whole_release(g);
    return rc;
}
