/** @file list_check.c
 *  @brief The values the engines trust, checked at open (list_check.h).
 */
#include "list_check.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bm25.h"
#include "../runtime/error.h"
#include "../runtime/threads.h"
#include "bloom.h"
#include "listmeta.h"

struct share {
    const struct xg_index *ix;
    struct xg_bm25_query bq;        /* the header's, for the impacts */
    _Atomic uint64_t *next;         /* the next term to check */
    _Atomic int *failed;
    int rc;
    char msg[256];
};

/* 0, or the fault (in sh->msg) of term t; docs/wdfs/starts have room for
 * its list. */
static int check_term(struct share *sh, uint64_t t, uint32_t *docs,
                      uint32_t *wdfs, uint32_t *starts)
{
    const struct xg_index *ix = sh->ix;
    const struct xg_fmt_header *h = ix->hdr;
    const struct xg_fmt_term *e = &ix->terms[t];
    const uint32_t df = e->df, nb = xg_fmt_n_blocks(ix, t);
    for (uint32_t b = 0, n; b < nb; ++b)
        if (xg_fmt_block_decode(ix, t, b, docs + (uint64_t)b * XG_FMT_BLOCK,
                                wdfs + (uint64_t)b * XG_FMT_BLOCK, &n)) {
            snprintf(sh->msg, sizeof sh->msg, "%s", xg_last_error());
            return XG_ERR_FORMAT;
        }
    const char *fault = NULL;
    /* The wdfs: the term's and blocks' sums and maxima, and no posting
     * holding more of a term than its document has words. */
    uint64_t cf = 0;
    uint32_t wdf_max = 0;
    for (uint32_t b = 0; b < nb; ++b) {
        const uint32_t from = b * XG_FMT_BLOCK;
        const uint32_t to = df - from < XG_FMT_BLOCK ? df : from + XG_FMT_BLOCK;
        uint32_t m = 0;
        for (uint32_t i = from; i < to; ++i) {
            cf += wdfs[i];
            if (wdfs[i] > m) m = wdfs[i];
            if (wdfs[i] > ix->doclens[docs[i]])
                fault = "a posting's wdf exceeds its document's length";
        }
        if (m != ix->skip[e->skip_first + b].max_wdf)
            fault = "a block's largest wdf disagrees with its skip entry";
        if (m > wdf_max) wdf_max = m;
    }
    if (!fault && (cf != e->cf || wdf_max != e->wdf_max))
        fault = "its wdfs do not add up to its collection frequency";
    /* Hash segments: exactly the starts of these postings. */
    if (fault) goto out;
    const uint32_t nseg = xg_hashseg_count((uint32_t)h->n_docs,
                                           e->hashseg_shift);
    xg_hashseg_build(docs, df, e->hashseg_shift, nseg, starts);
    if (memcmp(starts, ix->hashseg + e->hashseg_offset,
               ((size_t)nseg + 1) * sizeof *starts))
        fault = "hash-segment starts do not match its postings";
    /* The regression's window holds every posting. */
    const struct xg_fmt_term_lr *lr = &ix->terms_lr[t];
    for (uint32_t i = 0; !fault && i < df; ++i) {
        uint32_t lo, hi;
        xg_lr_range(e->lr_slope, e->lr_intercept, lr->max_left, lr->max_right,
                    df, docs[i], &lo, &hi);
        if (i < lo || i >= hi)
            fault = "a posting lies outside its regression window";
    }
    /* The Bloom filter passes every posting. */
    if (!fault && e->bloom_words && e->bloom_words > XG_BLOOM_MAX_WORDS)
        fault = "Bloom filter too large";
    for (uint32_t i = 0; !fault && e->bloom_words && i < df; ++i)
        if (!xg_bloom_test(ix->bloom + e->bloom_offset, e->bloom_words,
                           h->bloom_hashes, docs[i]))
            fault = "its Bloom filter misses a posting";
    /* Each impact code bounds its posting's BM25 part. */
    if (!fault && ix->impacts) {
        const uint8_t *c = ix->impact_codes + ix->impacts[t].code_offset;
        const double scale = ix->impacts[t].scale;
        for (uint32_t i = 0; !fault && i < df; ++i) {
            const double g = xg_bm25_wdf_part(
                xg_bm25_kd(&sh->bq, ix->doclens[docs[i]]), wdfs[i]);
            if (!(g <= c[i] * scale))
                fault = "an impact code below its posting's BM25 part";
        }
    }
out:
    if (!fault) return XG_OK;
    snprintf(sh->msg, sizeof sh->msg, "%s: term %llu: %s", ix->path,
             (unsigned long long)t, fault);
    return XG_ERR_FORMAT;
}

static void *check_share(void *arg)
{
    struct share *sh = arg;
    const struct xg_index *ix = sh->ix;
    uint32_t cap = 0, seg_cap = 0;
    uint32_t *docs = NULL, *wdfs = NULL, *starts = NULL;
    for (;;) {
        if (atomic_load(sh->failed)) break;
        const uint64_t t = atomic_fetch_add(sh->next, 1);
        if (t >= ix->hdr->n_terms) break;
        const struct xg_fmt_term *e = &ix->terms[t];
        const uint32_t room = xg_fmt_n_blocks(ix, t) * XG_FMT_BLOCK;
        const uint32_t nseg = xg_hashseg_count((uint32_t)ix->hdr->n_docs,
                                               e->hashseg_shift);
        if (room > cap) {
            free(docs);
            free(wdfs);
            docs = malloc((size_t)room * sizeof *docs);
            wdfs = malloc((size_t)room * sizeof *wdfs);
            cap = room;
        }
        if (nseg + 1 > seg_cap) {
            free(starts);
            starts = malloc(((size_t)nseg + 1) * sizeof *starts);
            seg_cap = nseg + 1;
        }
        if (!docs || !wdfs || !starts) {
            sh->rc = XG_ERR_NOMEM;
            snprintf(sh->msg, sizeof sh->msg, "out of memory");
        } else {
            sh->rc = check_term(sh, t, docs, wdfs, starts);
        }
        if (sh->rc) {
            atomic_store(sh->failed, 1);
            break;
        }
    }
    free(docs);
    free(wdfs);
    free(starts);
    return NULL;
}

int xg_fmt_check_lists(const struct xg_index *ix)
{
    const struct xg_fmt_header *h = ix->hdr;
    if (ix->bloom_words && (h->bloom_hashes == 0 ||
                            h->bloom_hashes > XG_BLOOM_MAX_K))
        return xg_set_error(XG_ERR_FORMAT, "%s: Bloom hash count %u out of "
                            "range", ix->path, h->bloom_hashes);
    _Atomic uint64_t next = 0;
    _Atomic int failed = 0;
    const uint32_t n = xg_threads_shares(xg_threads_cores(), h->n_postings, 16);
    struct share *sh = calloc(n, sizeof *sh);
    if (!sh) return xg_set_error(XG_ERR_NOMEM, "out of memory");
    const struct xg_bm25_params p = {h->bm25_k1, 0, 1, h->bm25_b,
                                     h->bm25_min_normlen};
    for (uint32_t i = 0; i < n; ++i) {
        sh[i].ix = ix;
        sh[i].next = &next;
        sh[i].failed = &failed;
        xg_bm25_query_init(&p, h->n_docs, h->total_length, 0, &sh[i].bq);
    }
    xg_threads_run(n, check_share, sh, sizeof *sh);
    int rc = XG_OK;
    for (uint32_t i = 0; i < n && !rc; ++i)
        if (sh[i].rc) rc = xg_set_error(sh[i].rc, "%s", sh[i].msg);
    free(sh);
    return rc;
}
