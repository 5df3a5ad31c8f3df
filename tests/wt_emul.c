/** @file wt_emul.c
 *  @brief The launchers of gpu/weight/wt_kern.h on the host, as plain loops that
 *         do what each kernel and CUB call of gpu/weight/wt.cu does (selects,
 *         scans, stable radix sorts on a bit range, run-length encoding).
 *         With tests/fakecuda and tests/qlm_emul.c (the GPU dictionary)
 *         it lets the weight engine's host side (gpu/weight/wt_cuda*.c: both the
 *         two-pass and the device-dictionary run, their buffers, swaps and
 *         checks) run against the CPU twin where there is no device
 *         (test_weigh_emul).  The kernels themselves are checked on the
 *         device (test_weigh).
 *
 *  The sorts leave their result in alternating buffers, as the device's
 *  may, so that the callers' buffer selection is exercised.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../gpu/weight/wt_formula.h"
#include "../gpu/text/hash.h"
#include "../gpu/weight/wt_kern.h"

struct kv {
    uint64_t key, sub;      /* sub: the bits sorted on */
    uint32_t val, at;
};

static int by_sub(const void *x, const void *y)
{
    const struct kv *a = x, *b = y;
    if (a->sub != b->sub) return a->sub < b->sub ? -1 : 1;
    return (a->at > b->at) - (a->at < b->at);
}

/* Stable sort of n keys (and values, if v) on bits [lo, hi); the result
 * goes to the first or the second buffer in turn (*sel). */
static int sort_bits(uint64_t *k0, uint64_t *k1, uint32_t *v0, uint32_t *v1, uint32_t n,
                     int lo, int hi, int *sel)
{
    static int flip;
    struct kv *t = malloc(((size_t)n + 1) * sizeof *t);
    if (!t) return 2;
    const uint64_t mask = hi - lo >= 64 ? UINT64_MAX : ((1ull << (hi - lo)) - 1);
    for (uint32_t i = 0; i < n; ++i)
        t[i] = (struct kv){k0[i], (k0[i] >> lo) & mask, v0 ? v0[i] : 0, i};
    qsort(t, n, sizeof *t, by_sub);
    *sel = flip ^= 1;
    uint64_t *k = *sel ? k1 : k0;
    uint32_t *v = *sel ? v1 : v0;
    if (*sel) {
        memset(k0, 0xab, (size_t)n * 8);
        if (v0) memset(v0, 0xab, (size_t)n * 4);
    }
    for (uint32_t i = 0; i < n; ++i) {
        k[i] = t[i].key;
        if (v) v[i] = t[i].val;
    }
    free(t);
    return 0;
}

static uint32_t word_len(const unsigned char *t, uint32_t s)
{
    uint32_t e = s;
    while (t[e] != '\n') ++e;
    return e - s;
}

static uint32_t doc_flag(const unsigned char *t, uint32_t i, uint32_t s)
{
    return i == 0 || (s >= 2 && t[s - 1] == '\n' && t[s - 2] == '\n');
}

int xg_wt_tmp_bytes(uint32_t len, uint32_t words, size_t *bytes)
{
    (void)len, (void)words;
    *bytes = 8;
    return 0;
}

int xg_wt_starts_gpu(const char *d_text, uint32_t len, uint32_t *d_start, uint32_t *d_n,
                     void *d_tmp, size_t tmp_bytes, struct CUstream_st *stream)
{
    (void)d_tmp, (void)tmp_bytes, (void)stream;
    const unsigned char *t = (const unsigned char *)d_text;
    uint32_t c = 0;
    for (uint32_t p = 0; p < len; ++p)
        if (t[p] != '\n' && (p == 0 || t[p - 1] == '\n')) d_start[c++] = p;
    *d_n = c;
    return 0;
}

int xg_wt_words_gpu(const char *d_text, const uint32_t *d_start, uint32_t n, uint64_t mask,
                    uint32_t *d_len, uint64_t *d_hash, uint32_t *d_idx, uint32_t *d_flag,
                    struct CUstream_st *stream)
{
    (void)stream;
    const unsigned char *t = (const unsigned char *)d_text;
    for (uint32_t i = 0; i < n; ++i) {
        const uint32_t s = d_start[i], l = word_len(t, s);
        d_len[i] = l;
        d_hash[i] = xg_text_hash(t + s, l, mask);
        d_idx[i] = i;
        d_flag[i] = doc_flag(t, i, s);
    }
    return 0;
}

int xg_wt_ids_gpu(const char *d_text, const uint32_t *d_start, uint32_t n, uint64_t mask,
                  struct xg_wt_dtable tab, uint32_t *d_id, uint32_t *d_flag, uint32_t *d_err,
                  struct CUstream_st *stream)
{
    (void)stream;
    const unsigned char *t = (const unsigned char *)d_text;
    for (uint32_t i = 0; i < n; ++i) {
        const uint32_t s = d_start[i];
        const uint64_t h = xg_text_hash(t + s, word_len(t, s), mask);
        uint32_t found = UINT32_MAX;
        for (uint64_t j = h & (tab.cap - 1);; j = (j + 1) & (tab.cap - 1)) {
            if (tab.id[j] == UINT32_MAX) break;
            if (tab.key[j] == h) {
                found = tab.id[j];
                break;
            }
        }
        if (found == UINT32_MAX) {
            *d_err = 1;
            found = 0;
        }
        d_id[i] = found;
        d_flag[i] = doc_flag(t, i, s);
    }
    return 0;
}

int xg_wt_docids_gpu(const uint32_t *d_flag, uint32_t *d_doc1, uint32_t n, void *d_tmp,
                     size_t tmp_bytes, struct CUstream_st *stream)
{
    (void)d_tmp, (void)tmp_bytes, (void)stream;
    uint32_t s = 0;
    for (uint32_t i = 0; i < n; ++i) d_doc1[i] = s += d_flag[i];
    return 0;
}

int xg_wt_doclen_gpu(const uint32_t *d_doc1, uint32_t n, uint32_t n_docs, uint32_t *d_first,
                     uint32_t *d_doclen, struct CUstream_st *stream)
{
    (void)stream;
    for (uint32_t i = 0; i < n; ++i)
        if (i == 0 || d_doc1[i] != d_doc1[i - 1]) d_first[d_doc1[i] - 1] = i;
    for (uint32_t d = 0; d < n_docs && n; ++d)
        d_doclen[d] = (d + 1 < n_docs ? d_first[d + 1] : n) - d_first[d];
    return 0;
}

int xg_wt_sort_hash_gpu(uint64_t *d_k0, uint64_t *d_k1, uint32_t *d_v0, uint32_t *d_v1,
                        uint32_t n, int lo, int hi, int *sel, void *d_tmp, size_t tmp_bytes,
                        struct CUstream_st *stream)
{
    (void)d_tmp, (void)tmp_bytes, (void)stream;
    return sort_bits(d_k0, d_k1, d_v0, d_v1, n, lo, hi, sel);
}

int xg_wt_mark_gpu(const char *d_text, const uint32_t *d_start, const uint32_t *d_len,
                   const uint64_t *d_hash, const uint32_t *d_idx, const uint32_t *d_doc1,
                   uint32_t n, uint32_t *d_newdoc, uint32_t *d_tfirst, uint32_t *d_nt,
                   uint32_t *d_err, void *d_tmp, size_t tmp_bytes, struct CUstream_st *stream)
{
    (void)d_tmp, (void)tmp_bytes, (void)stream;
    const unsigned char *t = (const unsigned char *)d_text;
    uint32_t nt = 0;
    for (uint32_t j = 0; j < n; ++j) {
        const uint32_t w = d_idx[j];
        if (j == 0 || d_hash[j] != d_hash[j - 1]) {
            d_newdoc[j] = 1;
            d_tfirst[nt++] = j;
            continue;
        }
        const uint32_t v = d_idx[j - 1];
        d_newdoc[j] = d_doc1[w] != d_doc1[v];
        if (d_len[w] != d_len[v] || memcmp(t + d_start[w], t + d_start[v], d_len[w]))
            *d_err = 1;
    }
    *d_nt = nt;
    return 0;
}

int xg_wt_terms_gpu(const uint32_t *d_newdoc, uint32_t *d_cum, uint32_t n,
                    const uint32_t *d_tfirst, uint32_t nt, const uint64_t *d_hash,
                    const uint32_t *d_idx, const uint32_t *d_start, const uint32_t *d_len,
                    uint64_t *d_ohash, uint32_t *d_ostart, uint32_t *d_olen, uint32_t *d_odf,
                    void *d_tmp, size_t tmp_bytes, struct CUstream_st *stream)
{
    (void)d_tmp, (void)tmp_bytes, (void)stream;
    uint32_t s = 0;
    for (uint32_t i = 0; i < n; ++i) d_cum[i] = s += d_newdoc[i];
    for (uint32_t k = 0; k < nt; ++k) {
        const uint32_t first = d_tfirst[k], last = (k + 1 < nt ? d_tfirst[k + 1] : n) - 1;
        const uint32_t w = d_idx[first];
        d_ohash[k] = d_hash[first];
        d_ostart[k] = d_start[w];
        d_olen[k] = d_len[w];
        d_odf[k] = d_cum[last] - (first ? d_cum[first - 1] : 0);
    }
    return 0;
}

int xg_wt_sort_keys_gpu(const uint32_t *d_id, const uint32_t *d_doc1, uint32_t n, int dbits,
                        int bits, uint64_t *d_k0, uint64_t *d_k1, int *sel, void *d_tmp,
                        size_t tmp_bytes, struct CUstream_st *stream)
{
    (void)d_tmp, (void)tmp_bytes, (void)stream;
    *sel = 0;
    if (!n) return 0;
    for (uint32_t i = 0; i < n; ++i)
        d_k0[i] = ((uint64_t)d_id[i] << dbits) | (uint64_t)(d_doc1[i] - 1);
    return sort_bits(d_k0, d_k1, NULL, NULL, n, 0, bits, sel);
}

int xg_wt_tf_gpu(const uint64_t *d_keys, uint32_t n, uint64_t *d_uniq, uint32_t *d_tf,
                 uint32_t *d_np, void *d_tmp, size_t tmp_bytes, struct CUstream_st *stream)
{
    (void)d_tmp, (void)tmp_bytes, (void)stream;
    uint32_t np = 0;
    for (uint32_t i = 0; i < n; ++i) {
        if (i == 0 || d_keys[i] != d_keys[i - 1]) {
            d_uniq[np] = d_keys[i];
            d_tf[np++] = 0;
        }
        ++d_tf[np - 1];
    }
    *d_np = np;
    return 0;
}

int xg_wt_weights_gpu(const uint64_t *d_uniq, const uint32_t *d_tf, uint32_t np, int dbits,
                      struct xg_wt_dconst c, uint32_t *d_term, uint32_t *d_doc, double *d_w,
                      struct CUstream_st *stream)
{
    (void)stream;
    for (uint32_t r = 0; r < np; ++r) {
        const uint64_t k = d_uniq[r];
        const uint32_t t = (uint32_t)(k >> dbits);
        const uint32_t d = (uint32_t)(k & ((1ull << dbits) - 1));
        const uint64_t g = c.doc_base + d;
        if (d_term) d_term[r] = t;
        d_doc[r] = d;
        const double tw = c.first ? c.tw[c.first[t + 1] - c.first[t]] : c.tw[t];
        d_w[r] = xg_wt_weight(c.seed, c.k1p1, tw, c.kd[g], c.extra ? c.extra[g] : 0.0,
                              d_tf[r]);
    }
    return 0;
}

int xg_wt_term_first_gpu(const uint64_t *d_uniq, uint32_t np, int dbits, uint32_t *d_first,
                         struct CUstream_st *stream)
{
    (void)stream;
    for (uint32_t r = 0; r < np; ++r) {
        const uint64_t t = d_uniq[r] >> dbits;
        if (r == 0 || (d_uniq[r - 1] >> dbits) != t) d_first[t] = r;
    }
    return 0;
}

int xg_wt_terms_out_gpu(uint32_t *d_first, uint32_t nt, uint32_t np, const uint32_t *d_toff,
                        uint64_t base, uint64_t *d_off, uint64_t *d_ptr, uint32_t *d_stat,
                        struct CUstream_st *stream)
{
    (void)stream;
    for (uint32_t t = 0; t < nt; ++t) {
        const uint32_t lo = d_first[t], hi = t + 1 < nt ? d_first[t + 1] : np;
        const uint32_t df = hi > lo ? hi - lo : 0;
        if (df > d_stat[0]) d_stat[0] = df;
        if (!df) d_stat[1] = 1;
        d_off[t] = lo;
        d_ptr[t] = base + d_toff[t];
    }
    d_off[nt] = np;
    d_first[nt] = np;
    return 0;
}

int xg_wt_docids_out_gpu(uint32_t *d_doc, uint32_t np, const uint32_t *d_map,
                         struct CUstream_st *stream)
{
    (void)stream;
    for (uint32_t r = 0; r < np; ++r) d_doc[r] = d_map ? d_map[d_doc[r]] : d_doc[r] + 1;
    return 0;
}

/* ---- placement of a run in chunks ---- */

int xg_wt_place_gpu(const uint32_t *d_term, const uint32_t *d_doc, const double *d_w,
                    uint32_t np, const uint32_t *d_run_term, const uint32_t *d_run_len,
                    const uint32_t *d_run_start, const uint32_t *d_nr, struct xg_wt_place p,
                    struct CUstream_st *stream)
{
    (void)stream;
    if (!np) return 0;
    for (uint32_t k = 0; k < *d_nr; ++k) {
        const uint32_t t = d_run_term[k];
        if (t >= p.nt) {
            *p.err |= 1;
            continue;
        }
        const uint64_t at = p.cur[t];
        p.shift[t] = at - d_run_start[k];
        p.cur[t] = at + d_run_len[k];
        if (at + d_run_len[k] > p.toff[t + 1]) *p.err |= 1;
    }
    for (uint32_t i = 0; i < np; ++i) {
        const uint32_t t = d_term[i];
        if (t >= p.nt || p.shift[t] + i >= p.toff[t + 1]) continue;
        const uint64_t at = p.shift[t] + i, d = p.doc_base + d_doc[i];
        p.out_doc[at] = p.map ? p.map[d] : (uint32_t)(d + 1);
        p.out_w[at] = d_w[i];
    }
    return 0;
}

int xg_wt_place_check_gpu(struct xg_wt_place p, struct CUstream_st *stream)
{
    (void)stream;
    for (uint32_t t = 0; t < p.nt; ++t)
        if (p.cur[t] != p.toff[t + 1]) *p.err |= 2;
    return 0;
}

/* ---- the device dictionary of a run in chunks ---- */

/* The emulation gives up after EMUL_PROBES probes, not XG_WT_MAX_PROBES,
 * so that the host's grow-and-insert-again path runs in the tests. */
#define EMUL_PROBES 3

int xg_wt_dd_insert_gpu(const uint64_t *d_hash, uint32_t n, uint64_t *d_key, uint32_t *d_val,
                        uint64_t cap, uint32_t *d_err, struct CUstream_st *stream)
{
    (void)stream;
    for (uint32_t i = 0; i < n; ++i) {
        const uint64_t h = d_hash[i];
        if (h == XG_WT_EMPTY) {
            *d_err |= 2;
            continue;
        }
        uint64_t j = h & (cap - 1);
        uint32_t probes = 0;
        while (d_key[j] != h && d_key[j] != XG_WT_EMPTY && ++probes < EMUL_PROBES)
            j = (j + 1) & (cap - 1);
        if (d_key[j] == h) continue;
        if (d_key[j] != XG_WT_EMPTY) {
            *d_err |= 1;
            continue;
        }
        d_key[j] = h;
        d_val[j] = i | XG_WT_FRESH;
    }
    return 0;
}

/* Slots in descending order, unlike the table's, as the device's atomic
 * appends may give any order. */
int xg_wt_dd_fresh_gpu(const uint64_t *d_key, const uint32_t *d_val, uint64_t cap,
                       uint32_t *d_new, uint32_t *d_n_new, struct CUstream_st *stream)
{
    (void)stream;
    for (uint64_t j = cap; j-- > 0;)
        if (d_key[j] != XG_WT_EMPTY && (d_val[j] & XG_WT_FRESH)) d_new[(*d_n_new)++] = (uint32_t)j;
    return 0;
}

int xg_wt_dd_new_lens_gpu(const uint32_t *d_new, uint32_t m, const uint32_t *d_val,
                          const uint32_t *d_len, uint32_t *d_lens, void *d_tmp, size_t tmp_bytes,
                          uint32_t *d_offs, struct CUstream_st *stream)
{
    (void)d_tmp, (void)tmp_bytes, (void)stream;
    uint32_t s = 0;
    for (uint32_t p = 0; p < m; ++p) {
        d_lens[p] = d_len[d_val[d_new[p]] & ~XG_WT_FRESH];
        d_offs[p] = s;
        s += d_lens[p];
    }
    return 0;
}

int xg_wt_dd_assign_gpu(const char *d_text, const uint32_t *d_start, const uint32_t *d_len,
                        uint64_t base, const uint32_t *d_new, uint32_t m, uint32_t n_terms,
                        const uint32_t *d_offs, uint64_t arena_used, uint32_t *d_val,
                        struct xg_wt_dd_terms t, struct CUstream_st *stream)
{
    (void)stream;
    for (uint32_t p = 0; p < m; ++p) {
        const uint32_t slot = d_new[p], w = d_val[slot] & ~XG_WT_FRESH, term = n_terms + p;
        const uint64_t at = arena_used + d_offs[p];
        t.goff[term] = base + d_start[w];
        t.len[term] = d_len[w];
        t.aoff[term] = (uint32_t)at;
        t.df[term] = 0;
        memcpy(t.arena + at, d_text + d_start[w], d_len[w]);
        d_val[slot] = term;
    }
    return 0;
}

int xg_wt_dd_lookup_gpu(const char *d_text, const uint32_t *d_start, const uint32_t *d_len,
                        const uint64_t *d_hash, uint32_t n, const uint64_t *d_key,
                        const uint32_t *d_val, uint64_t cap, struct xg_wt_dd_terms t,
                        uint32_t *d_term, uint32_t *d_err, struct CUstream_st *stream)
{
    (void)stream;
    for (uint32_t i = 0; i < n; ++i) {
        const uint64_t h = d_hash[i];
        uint64_t j = h & (cap - 1), probes = 0;
        while (d_key[j] != h && probes++ < cap) j = (j + 1) & (cap - 1);
        if (d_key[j] != h) {
            *d_err |= 4;
            d_term[i] = 0;
            continue;
        }
        const uint32_t v = d_val[j];
        d_term[i] = v;
        if (t.len[v] != d_len[i] || memcmp(d_text + d_start[i], t.arena + t.aoff[v], d_len[i]))
            *d_err |= 4;
    }
    return 0;
}

int xg_wt_dd_df_gpu(const uint64_t *d_uniq, uint32_t np, int dbits, uint32_t *d_df,
                    struct CUstream_st *stream)
{
    (void)stream;
    for (uint32_t r = 0; r < np; ++r) ++d_df[d_uniq[r] >> dbits];
    return 0;
}

int xg_wt_dd_rehash_gpu(const uint64_t *d_key, const uint32_t *d_val, uint64_t cap,
                        uint64_t *d_nkey, uint32_t *d_nval, uint64_t new_cap,
                        struct CUstream_st *stream)
{
    (void)stream;
    for (uint64_t j = 0; j < cap; ++j) {
        if (d_key[j] == XG_WT_EMPTY) continue;
        uint64_t q = d_key[j] & (new_cap - 1);
        while (d_nkey[q] != XG_WT_EMPTY) q = (q + 1) & (new_cap - 1);
        d_nkey[q] = d_key[j];
        d_nval[q] = d_val[j];
    }
    return 0;
}

int xg_wt_dd_ids_gpu(const uint64_t *d_key, uint32_t *d_val, uint64_t cap,
                     const uint32_t *d_rank, uint32_t nt, struct xg_wt_dd_terms t,
                     uint64_t *d_id_goff, uint32_t *d_id_len, uint32_t *d_id_df,
                     struct CUstream_st *stream)
{
    (void)stream;
    for (uint64_t j = 0; j < cap; ++j)
        d_val[j] = d_key[j] == XG_WT_EMPTY ? UINT32_MAX : d_rank[d_val[j]];
    for (uint32_t k = 0; k < nt; ++k) {
        const uint32_t id = d_rank[k];
        d_id_goff[id] = t.goff[k];
        d_id_len[id] = t.len[k];
        d_id_df[id] = t.df[k];
    }
    return 0;
}

int xg_wt_term_runs_gpu(const uint32_t *d_term, uint32_t np, uint32_t *d_run_term,
                        uint32_t *d_run_len, uint32_t *d_run_start, uint64_t *d_run,
                        uint32_t *d_nr, void *d_tmp, size_t tmp_bytes, struct CUstream_st *stream)
{
    (void)d_tmp, (void)tmp_bytes, (void)stream;
    uint32_t nr = 0;
    for (uint32_t i = 0; i < np; ++i) {
        if (i == 0 || d_term[i] != d_term[i - 1]) {
            d_run_term[nr] = d_term[i];
            d_run_start[nr] = i;
            d_run_len[nr++] = 0;
        }
        ++d_run_len[nr - 1];
    }
    for (uint32_t r = 0; r < nr; ++r) d_run[r] = (uint64_t)d_run_term[r] << 32 | d_run_start[r];
    *d_nr = nr;
    return 0;
}
