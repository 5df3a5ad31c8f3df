/** @file wt_cuda_pass.c
 *  @brief The weight pipeline's two passes on the GPU with the host
 *         dictionary, one chunk each call (seed 000 §4 steps; wt.cu has
 *         the kernels, wt_cuda.c the device state, wt_cuda_dict.c pass 1
 *         with the device dictionary), and the steps every pass starts
 *         with.  Pass 1 returns the chunk's document lengths and its
 *         distinct terms with df; two different words with one hash give
 *         XG_ERR_UNSUPPORTED, and the driver (wt.c) runs the CPU twin
 *         instead.  Pass 2 returns the postings sorted by term id then
 *         document (documents, weights bit-identical to the twin's, and
 *         the runs of one term).  Built only with CUDA.
 *
 *  Buffer uses (per word unless said; cap_w entries each):
 *    pass 1: d_start starts, d_len lengths, d_k0/k1 hashes, d_v halves word
 *            indexes, d_aux doc-start flags then new-document flags then
 *            term lengths, d_doc doc1 then the flags' scan, d_aux2 first
 *            word per document then run starts, d_aux3 doc lengths then
 *            df; term hashes and starts in the sort's spare halves.
 *    pass 2: d_start starts then posting terms, d_len term ids then the
 *            runs' terms, d_aux flags then tf, d_doc doc1 then the runs'
 *            lengths, d_k0/k1 keys then weights, d_v (as 64-bit) distinct
 *            keys then the packed runs, d_aux2 posting documents, d_aux3
 *            the runs' first postings.
 */
#include <stdlib.h>
#include <string.h>

#include "wt_cuda_int.h"
#include "wt_kern.h"

/* Upload the chunk text (with a guard '\n') and find the word starts;
 * *n = the number of words. */
int xg_wt_upload_starts(struct xg_wt_gpu *g, const struct xg_wt_chunk *c, uint32_t *n)
{
    int rc = xg_wt_reserve(g, c->len, c->words);
    if (rc) return rc;
    if ((rc = xg_device_timer_start(&g->dev))) return rc;
    /* The text came ahead while the chunk before computed, or comes now. */
    char *ahead = g->d_text_alt ? xg_staging_claim(&g->dev.stage, c->buf, c->len) : NULL;
    if (ahead && ahead == g->d_text_alt) {
        g->d_text_alt = g->d_text;
        g->d_text = ahead;
    } else if ((rc = xg_staging_htod(&g->dev.stage, g->d_text, c->buf, c->len))) {
        return rc;
    }
    XG_CUDA_CHECK(cudaMemsetAsync(g->d_text + c->len, '\n', 1, g->dev.stream), "guard");
    XG_CUDA_CHECK(cudaMemsetAsync(g->d_small, 0, 64, g->dev.stream), "counters");
    if ((rc = xg_device_mark(&g->dev, XG_WT_STEP_HTOD, NULL))) return rc;
    xg_wt_count(XG_WT_STEP_HTOD, (double)c->len);
    XG_CUDA_CHECK(xg_wt_starts_gpu(g->d_text, (uint32_t)c->len, g->d_start, g->d_small,
                                   g->d_tmp, g->tmp_bytes, g->dev.stream), "word starts");
    if ((rc = xg_device_mark(&g->dev, XG_WT_STEP_STARTS, NULL))) return rc;
    XG_CUDA_CHECK(cudaMemcpyAsync(g->h_small, g->d_small, 4, cudaMemcpyDeviceToHost,
                                  g->dev.stream), "word count");
    /* The next chunk's text crosses while this one computes (a run in
     * chunks, once a thread has locked it: xg_wt_gpu_pin_input). */
    if (g->d_text_alt && g->next && g->next->len < g->cap_len)
        xg_staging_prefetch(&g->dev.stage, g->d_text_alt, g->next->buf, g->next->len);
    XG_CUDA_CHECK(cudaStreamSynchronize(g->dev.stream), "word starts");
    *n = g->h_small[0];
    xg_wt_count(XG_WT_STEP_STARTS, (double)c->len + 4.0 * *n);
    if (*n > g->cap_w || (c->n_docs && !*n))
        return xg_set_error(XG_ERR_FORMAT, "weight GPU: chunk of %zu bytes has %u words",
                            c->len, *n);
    return XG_OK;
}

/* Read back counters d_small[1..3] (after the stream's work so far). */
int xg_wt_read_small(struct xg_wt_gpu *g)
{
    XG_CUDA_CHECK(cudaMemcpyAsync(g->h_small + 1, g->d_small + 1, 12,
                                  cudaMemcpyDeviceToHost, g->dev.stream), "counters");
    XG_CUDA_CHECK(cudaStreamSynchronize(g->dev.stream), "counters");
    return XG_OK;
}

/* Doc ids by scan and, in pass 1, doc lengths; d_aux holds the flags. */
int xg_wt_chunk_docs(struct xg_wt_gpu *g, const struct xg_wt_chunk *c, uint32_t n, int lengths)
{
    XG_CUDA_CHECK(xg_wt_docids_gpu(g->d_aux, g->d_doc, n, g->d_tmp, g->tmp_bytes,
                                   g->dev.stream), "doc ids");
    int rc = xg_device_mark(&g->dev, XG_WT_STEP_DOCIDS, NULL);
    xg_wt_count(XG_WT_STEP_DOCIDS, 8.0 * n);
    /* The last word's document: the chunk's document count. */
    if (!rc && n)
        XG_CUDA_CHECK(cudaMemcpyAsync(g->d_small + 3, g->d_doc + n - 1, 4,
                                      cudaMemcpyDeviceToDevice, g->dev.stream), "doc count");
    if (rc || !lengths) return rc;
    XG_CUDA_CHECK(xg_wt_doclen_gpu(g->d_doc, n, c->n_docs, g->d_aux2, g->d_aux3,
                                   g->dev.stream), "doc lengths");
    xg_wt_count(XG_WT_STEP_DOCLEN, 8.0 * n + 12.0 * c->n_docs);
    return xg_device_mark(&g->dev, XG_WT_STEP_DOCLEN, NULL);
}

int xg_wt_check_docs(struct xg_wt_gpu *g, const struct xg_wt_chunk *c)
{
    if (g->h_small[3] != c->n_docs)
        return xg_set_error(XG_ERR_FORMAT, "weight GPU: chunk of %u documents has %u",
                            c->n_docs, g->h_small[3]);
    return XG_OK;
}

/* The distinct terms back to the host, as entries pointing into c->buf. */
static int terms_out(struct xg_wt_gpu *g, const struct xg_wt_chunk *c, uint32_t nt,
                     const uint64_t *d_hash, const uint32_t *d_start,
                     struct xg_text_dict_list *list)
{
    uint64_t *hash = malloc((nt + 1) * sizeof *hash);
    uint32_t *u = malloc((3 * (size_t)nt + 1) * sizeof *u);
    list->terms = calloc(nt + 1, sizeof *list->terms);
    int rc = hash && u && list->terms ? XG_OK
                                      : xg_set_error(XG_ERR_NOMEM, "weight: out of memory");
    if (!rc) rc = xg_staging_dtoh(&g->dev.stage, hash, d_hash, nt * 8);
    if (!rc) rc = xg_staging_dtoh(&g->dev.stage, u, d_start, nt * 4);
    if (!rc) rc = xg_staging_dtoh(&g->dev.stage, u + nt, g->d_aux, nt * 4);
    if (!rc) rc = xg_staging_dtoh(&g->dev.stage, u + 2 * (size_t)nt, g->d_aux3, nt * 4);
    for (uint32_t k = 0; !rc && k < nt; ++k) {
        struct xg_text_dict_ent *e = &list->terms[k];
        e->s = c->buf + u[k];
        e->len = u[nt + k];
        e->hash = hash[k];
        e->df = u[2 * (size_t)nt + k];
        e->last = UINT64_MAX;
    }
    list->n = rc ? 0 : nt;
    free(hash);
    free(u);
    return rc;
}

int xg_wt_gpu_pass1(xg_wt_gpu *g, const struct xg_wt_chunk *c, uint64_t hash_mask,
                    uint32_t *doclen, struct xg_text_dict_list *list, double *seconds)
{
    memset(list, 0, sizeof *list);
    uint32_t n = 0;
    int rc = xg_wt_upload_starts(g, c, &n);
    if (rc) return rc;
    uint32_t *v0 = g->d_v, *v1 = g->d_v + g->cap_w;
    if (!hash_mask) hash_mask = UINT64_MAX;
    XG_CUDA_CHECK(xg_wt_words_gpu(g->d_text, g->d_start, n, hash_mask, g->d_len, g->d_k0,
                                  v0, g->d_aux, g->dev.stream), "word hashes");
    xg_wt_count(XG_WT_STEP_DICT, (double)c->len + 24.0 * n);
    if ((rc = xg_device_mark(&g->dev, XG_WT_STEP_DICT, NULL))) return rc;
    if ((rc = xg_wt_chunk_docs(g, c, n, 1))) return rc;
    /* Step 4: sort by hash, only the bits the mask keeps. */
    const int lo = __builtin_ctzll(hash_mask), hi = 64 - __builtin_clzll(hash_mask);
    int sel = 0;
    XG_CUDA_CHECK(xg_wt_sort_hash_gpu(g->d_k0, g->d_k1, v0, v1, n, lo, hi, &sel,
                                      g->d_tmp, g->tmp_bytes, g->dev.stream), "sort");
    xg_wt_count(XG_WT_STEP_SORT, 8.0 * n + 24.0 * n * ((hi - lo + 7) / 8));
    if ((rc = xg_device_mark(&g->dev, XG_WT_STEP_SORT, NULL))) return rc;
    uint64_t *k = sel ? g->d_k1 : g->d_k0, *k_alt = sel ? g->d_k0 : g->d_k1;
    uint32_t *v = sel ? v1 : v0, *v_alt = sel ? v0 : v1;
    /* Step 6: df by count, with the exact collision check. */
    XG_CUDA_CHECK(xg_wt_mark_gpu(g->d_text, g->d_start, g->d_len, k, v, g->d_doc, n,
                                 g->d_aux, g->d_aux2, g->d_small + 1, g->d_small + 2,
                                 g->d_tmp, g->tmp_bytes, g->dev.stream), "term runs");
    if ((rc = xg_device_mark(&g->dev, XG_WT_STEP_DF, NULL))) return rc;
    if ((rc = xg_wt_read_small(g))) return rc;
    const uint32_t nt = g->h_small[1];
    if ((rc = xg_wt_check_docs(g, c))) return rc;
    if (g->h_small[2])
        return xg_set_error(XG_ERR_UNSUPPORTED, "weight GPU: two words of a chunk "
                            "share a hash");
    /* Document lengths leave before d_aux3 takes the df. */
    if ((rc = xg_staging_dtoh(&g->dev.stage, doclen, g->d_aux3, (size_t)c->n_docs * 4))) return rc;
    if ((rc = xg_device_mark(&g->dev, XG_WT_STEP_DTOH, NULL))) return rc;
    XG_CUDA_CHECK(xg_wt_terms_gpu(g->d_aux, g->d_doc, n, g->d_aux2, nt, k, v,
                                  g->d_start, g->d_len, k_alt, v_alt, g->d_aux, g->d_aux3,
                                  g->d_tmp, g->tmp_bytes, g->dev.stream), "df");
    xg_wt_count(XG_WT_STEP_DF, 44.0 * n + 24.0 * nt);
    if ((rc = xg_device_mark(&g->dev, XG_WT_STEP_DF, NULL))) return rc;
    if ((rc = xg_device_marks_done(&g->dev, seconds))) return rc;
    const double t0 = xg_now();
    rc = terms_out(g, c, nt, k_alt, v_alt, list);
    seconds[XG_WT_STEP_DTOH] += xg_now() - t0;
    return rc;
}

/* Pass 2 on the device up to the weights: *np postings, sorted by term
 * then document, with their terms in d_start, documents in d_aux2 and
 * weights in *d_w. */
static int compute2(xg_wt_gpu *g, const struct xg_wt_chunk *c, const struct xg_wt_tables *t,
                    uint32_t *np_out, double **d_w_out, double *seconds)
{
    uint32_t n = 0;
    int rc = xg_wt_upload_starts(g, c, &n);
    if (rc) return rc;
    /* Term ids through the device hash table. */
    const struct xg_wt_dtable tab = g->dd.ready
                                        ? (struct xg_wt_dtable){g->dd.key, g->dd.val, g->dd.cap}
                                        : (struct xg_wt_dtable){g->d_tkey, g->d_tid, g->tcap};
    const uint64_t mask = t->hash_mask ? t->hash_mask : UINT64_MAX;
    XG_CUDA_CHECK(xg_wt_ids_gpu(g->d_text, g->d_start, n, mask, tab, g->d_len, g->d_aux,
                                g->d_small + 2, g->dev.stream), "term ids");
    xg_wt_count(XG_WT_STEP_DICT, (double)c->len + 28.0 * n);
    if ((rc = xg_device_mark(&g->dev, XG_WT_STEP_DICT, NULL))) return rc;
    if ((rc = xg_wt_chunk_docs(g, c, n, 0))) return rc;
    /* Step 4: sort (term, document) keys on the bits they use. */
    const int dbits = xg_wt_bits(c->n_docs ? c->n_docs - 1 : 0);
    int kbits = dbits + xg_wt_bits(t->n_terms ? t->n_terms - 1 : 0);
    if (kbits < 1) kbits = 1;
    int sel = 0;
    XG_CUDA_CHECK(xg_wt_sort_keys_gpu(g->d_len, g->d_doc, n, dbits, kbits, g->d_k0,
                                      g->d_k1, &sel, g->d_tmp, g->tmp_bytes, g->dev.stream),
                  "sort");
    xg_wt_count(XG_WT_STEP_SORT, 16.0 * n + 16.0 * n * ((kbits + 7) / 8));
    if ((rc = xg_device_mark(&g->dev, XG_WT_STEP_SORT, NULL))) return rc;
    const uint64_t *k = sel ? g->d_k1 : g->d_k0;
    double *d_w = (double *)(sel ? g->d_k0 : g->d_k1);
    uint64_t *d_uniq = (uint64_t *)g->d_v;
    /* Step 5: tf by run-length encoding. */
    XG_CUDA_CHECK(xg_wt_tf_gpu(k, n, d_uniq, g->d_aux, g->d_small + 1, g->d_tmp,
                               g->tmp_bytes, g->dev.stream), "tf");
    if ((rc = xg_device_mark(&g->dev, XG_WT_STEP_TF, NULL))) return rc;
    if ((rc = xg_wt_read_small(g))) return rc;
    const uint32_t np = g->h_small[1];
    xg_wt_count(XG_WT_STEP_TF, 8.0 * n + 12.0 * np);
    if ((rc = xg_wt_check_docs(g, c))) return rc;
    if (g->h_small[2])
        return xg_set_error(XG_ERR_FORMAT, "weight GPU: a word missing from pass 1");
    /* Step 8: weights from the tables. */
    const struct xg_wt_dconst dc = {g->d_tw, g->d_kd, g->d_extra, c->doc_base,
                                    t->k1p1, t->seed, NULL};
    XG_CUDA_CHECK(xg_wt_weights_gpu(d_uniq, g->d_aux, np, dbits, dc, g->d_start,
                                    g->d_aux2, d_w, g->dev.stream), "weights");
    xg_wt_count(XG_WT_STEP_WEIGHT, (12.0 + 16.0 + 16.0 + (g->d_extra ? 8 : 0)) * np);
    if ((rc = xg_device_mark(&g->dev, XG_WT_STEP_WEIGHT, NULL))) return rc;
    if ((rc = xg_device_marks_done(&g->dev, seconds))) return rc;
    *np_out = np;
    *d_w_out = d_w;
    return XG_OK;
}

int xg_wt_pass2_device(struct xg_wt_gpu *g, const struct xg_wt_chunk *c,
                       const struct xg_wt_tables *t, uint32_t *np, double **d_w,
                       double *seconds)
{
    int rc = compute2(g, c, t, np, d_w, seconds);
    if (rc) return rc;
    /* The runs open the next timed interval (a caller that marks a step
     * next counts them in it). */
    if ((rc = xg_device_timer_start(&g->dev))) return rc;
    /* The words' term ids and documents, tf and the distinct keys are
     * spent: runs there. */
    XG_CUDA_CHECK(xg_wt_term_runs_gpu(g->d_start, *np, g->d_len, g->d_doc, g->d_aux3,
                                      (uint64_t *)g->d_v, g->d_small + 6, g->d_tmp,
                                      g->tmp_bytes, g->dev.stream), "term runs");
    return XG_OK;
}

int xg_wt_gpu_pass2(xg_wt_gpu *g, const struct xg_wt_chunk *c,
                    const struct xg_wt_tables *t, uint64_t room, uint32_t *doc,
                    double *weight, uint64_t *run, uint64_t *n, uint64_t *nr,
                    double *seconds)
{
    uint32_t np = 0;
    double *d_w = NULL;
    int rc = xg_wt_pass2_device(g, c, t, &np, &d_w, seconds);
    if (rc) return rc;
    if (np > room)
        return xg_set_error(XG_ERR_FORMAT, "weight GPU: a chunk has %u postings, more than "
                            "the %llu pass 1 left", np, (unsigned long long)room);
    const uint64_t *d_run = (uint64_t *)g->d_v;
    XG_CUDA_CHECK(cudaMemcpyAsync(g->h_small + 6, g->d_small + 6, 4, cudaMemcpyDeviceToHost,
                                  g->dev.stream), "term runs");
    XG_CUDA_CHECK(cudaStreamSynchronize(g->dev.stream), "term runs");
    const uint32_t runs = g->h_small[6];
    const double t0 = xg_now();
    rc = xg_staging_dtoh(&g->dev.stage, run, d_run, (size_t)runs * 8);
    if (!rc) rc = xg_staging_dtoh(&g->dev.stage, doc, g->d_aux2, (size_t)np * 4);
    if (!rc) rc = xg_staging_dtoh(&g->dev.stage, weight, d_w, (size_t)np * 8);
    seconds[XG_WT_STEP_DTOH] += xg_now() - t0;
    *n = np;
    *nr = runs;
    return rc;
}
