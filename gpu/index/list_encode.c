/** @file list_encode.c
 *  @brief One posting list into the index sections (see list_encode.h).
 */
#include "list_encode.h"

#include <string.h>

#include "bloom.h"
#include "../runtime/error.h"
#include "listmeta.h"
#include "pfor.h"

int xg_list_encode(const uint32_t *dense, const uint32_t *wdfs, uint32_t n,
                   const struct xg_list_params *p, struct xg_list_sink *s,
                   struct xg_fmt_term *e, struct xg_fmt_term_lr *lr)
{
    int rc;
    memset(e, 0, sizeof *e);
    e->df = n;
    e->postings_offset = s->postings->len;
    e->skip_first = s->skip->len / sizeof(struct xg_fmt_skip);
    for (uint32_t i = 0; i < n; ++i) {
        e->cf += wdfs[i];
        if (wdfs[i] > e->wdf_max) e->wdf_max = wdfs[i];
    }
    uint32_t gaps[XG_FMT_BLOCK], words[XG_PFOR_MAX_WORDS];
    for (uint32_t b0 = 0; b0 < n; b0 += XG_FMT_BLOCK) {
        uint32_t cnt = n - b0 < XG_FMT_BLOCK ? n - b0 : XG_FMT_BLOCK;
        const uint32_t *d = dense + b0;
        struct xg_fmt_skip sk;
        memset(&sk, 0, sizeof sk);
        sk.first = d[0];
        sk.last = d[cnt - 1];
        sk.offset = (uint32_t)(s->postings->len - e->postings_offset);
        uint32_t len_lb = UINT32_MAX;
        gaps[0] = 0;
        for (uint32_t i = 0; i < cnt; ++i) {
            if (i) gaps[i] = d[i] - d[i - 1];
            if (wdfs[b0 + i] > sk.max_wdf) sk.max_wdf = wdfs[b0 + i];
            if (p->doclens && p->doclens[d[i]] < len_lb)
                len_lb = p->doclens[d[i]];
        }
        /* get_maxpart(): an upper bound of the block's contributions. */
        sk.ub = p->doclens && p->bm25
                    ? xg_bm25_maxpart(p->bm25, p->termweight, sk.max_wdf, len_lb)
                    : 0.0;
        uint32_t nw = xg_pfor_encode_auto(gaps, cnt, words);
        if ((rc = xg_buf_append(s->postings, words, nw * 4u))) return rc;
        nw = xg_pfor_encode_auto(wdfs + b0, cnt, words);
        if ((rc = xg_buf_append(s->postings, words, nw * 4u))) return rc;
        if ((rc = xg_buf_append(s->skip, &sk, sizeof sk))) return rc;
    }
    if (s->postings->len - e->postings_offset > UINT32_MAX)
        return xg_set_error(XG_ERR_FORMAT, "term list over 4 GiB");

    /* Seed 004 search metadata. */
    e->bloom_offset = s->bloom->len / 8;
    e->bloom_words = xg_bloom_words(n, p->bloom_bits);
    if (e->bloom_words) {
        if ((rc = xg_buf_reserve(s->bloom, e->bloom_words * 8u))) return rc;
        xg_bloom_build(dense, n, p->bloom_hashes,
                       (uint64_t *)(s->bloom->data + s->bloom->len),
                       e->bloom_words);
        s->bloom->len += e->bloom_words * 8u;
    }
    e->hashseg_shift = xg_hashseg_shift(p->n_docs, n, p->hashseg_target);
    uint32_t nseg = xg_hashseg_count(p->n_docs, e->hashseg_shift);
    e->hashseg_offset = s->hashseg->len / 4;
    if ((rc = xg_buf_reserve(s->hashseg, (nseg + 1u) * 4u))) return rc;
    xg_hashseg_build(dense, n, e->hashseg_shift, nseg,
                     (uint32_t *)(s->hashseg->data + s->hashseg->len));
    s->hashseg->len += (nseg + 1u) * 4u;
    xg_lr_fit(dense, n, &e->lr_slope, &e->lr_intercept, &lr->max_left,
              &lr->max_right);
    return XG_OK;
}
