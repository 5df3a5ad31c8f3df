/** @file qlm_emul.c
 *  @brief The launchers of gpu/qlm/qlm_kern.h on the host: the same sequence
 *         of steps as gpu/qlm/qlm.cu and gpu/qlm/qlm_score.cu, each kernel run as a
 *         loop over its items through the very item functions the kernels
 *         call (gpu/qlm/qlm_items.h), and each CUB primitive (stable radix
 *         sort, scans, select, run-length encoding, unique) as a plain
 *         sequential loop.  With tests/fakecuda it lets the GPU engine's
 *         host side run and be compared with the CPU twin where there is
 *         no device (test_qlm_emul: tests/gpu/test_qlm.c built that way).
 *
 *  Stability matters as on the device: the sorts keep equal keys in
 *  input order (an index tie-break).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../gpu/qlm/qlm_items.h"
#include "../gpu/qlm/qlm_kern.h"

/* ---- the primitives ------------------------------------------------- */

struct kv {
    uint64_t key;
    uint32_t val, at;
};

static int by_key(const void *x, const void *y)
{
    const struct kv *a = x, *b = y;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return (a->at > b->at) - (a->at < b->at);
}

/* Stable sort of n (key, value) pairs by key; vals may be NULL. */
static int sort_pairs(uint64_t *keys, uint32_t *vals, uint32_t n)
{
    struct kv *t = malloc(((size_t)n + 1) * sizeof *t);
    if (!t) return 2;
    for (uint32_t i = 0; i < n; ++i) t[i] = (struct kv){keys[i], vals ? vals[i] : 0, i};
    qsort(t, n, sizeof *t, by_key);
    for (uint32_t i = 0; i < n; ++i) {
        keys[i] = t[i].key;
        if (vals) vals[i] = t[i].val;
    }
    free(t);
    return 0;
}

static int sort_pairs32(uint32_t *keys, uint32_t *vals, uint32_t n)
{
    uint64_t *k = malloc(((size_t)n + 1) * sizeof *k);
    if (!k) return 2;
    for (uint32_t i = 0; i < n; ++i) k[i] = keys[i];
    int rc = sort_pairs(k, vals, n);
    for (uint32_t i = 0; i < n; ++i) keys[i] = (uint32_t)k[i];
    free(k);
    return rc;
}

static void inclusive_sum(const uint32_t *in, uint32_t *out, uint32_t n)
{
    uint32_t s = 0;
    for (uint32_t i = 0; i < n; ++i) out[i] = s += in[i];
}

static void inclusive_max(const uint32_t *in, uint32_t *out, uint32_t n)
{
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; ++i) out[i] = m = in[i] > m ? in[i] : m;
}

int xg_qlm_tmp_bytes(uint32_t n, size_t *bytes)
{
    (void)n;
    *bytes = 0;
    return 0;
}

/* ---- the launchers, as in qlm.cu ------------------------------------- */

int xg_qlm_docs_gpu(const uint32_t *d_doc_end, uint32_t n_docs, uint32_t n, uint32_t *d_doc,
                    struct xg_qlm_scratch s, struct CUstream_st *stream)
{
    (void)stream;
    memset(s.s0, 0, (size_t)n * 4);
    for (uint32_t d = 0; d < n_docs; ++d) xg_qlm_i_doc_mark(d_doc_end, n, s.s0, d);
    inclusive_sum(s.s0, d_doc, n);
    return 0;
}

static int finish_round(const uint32_t *act, uint32_t na, const uint64_t *sk,
                        const uint32_t *sv, uint32_t *sa, uint32_t *rank, uint32_t *act_out,
                        uint32_t *count, struct xg_qlm_scratch s)
{
    for (uint32_t j = 0; j < na; ++j) xg_qlm_i_place(act, sk, sv, sa, s.s1, j);
    inclusive_max(s.s1, s.s2, na);
    for (uint32_t j = 0; j < na; ++j) xg_qlm_i_rerank(na, sk, sv, s.s2, rank, s.s1, j);
    uint32_t c = 0;
    for (uint32_t j = 0; j < na; ++j)
        if (s.s1[j]) act_out[c++] = act ? act[j] : j;
    count[0] = c;
    return 0;
}

int xg_qlm_dbl_first_gpu(const uint32_t *d_ids, uint32_t n, int id_bits, uint32_t *d_sa,
                         uint32_t *d_rank, uint32_t *d_act, uint32_t *d_count,
                         struct xg_qlm_scratch s, struct CUstream_st *stream)
{
    (void)id_bits;
    (void)stream;
    for (uint32_t i = 0; i < n; ++i) xg_qlm_i_first_keys(d_ids, s.k0, s.v0, i);
    if (sort_pairs(s.k0, s.v0, n)) return 2;
    return finish_round(NULL, n, s.k0, s.v0, d_sa, d_rank, d_act, d_count, s);
}

int xg_qlm_dbl_round_gpu(const uint32_t *d_doc, const uint32_t *d_doc_end, uint32_t k,
                         int pos_bits, uint32_t *d_sa, uint32_t *d_rank, const uint32_t *d_act,
                         uint32_t n_act, uint32_t *d_act_out, uint32_t *d_count,
                         struct xg_qlm_scratch s, struct CUstream_st *stream)
{
    (void)stream;
    for (uint32_t j = 0; j < n_act; ++j)
        xg_qlm_i_round_keys(d_doc, d_doc_end, k, pos_bits, d_sa, d_rank, d_act, s.k0, s.v0, j);
    if (sort_pairs(s.k0, s.v0, n_act)) return 2;
    return finish_round(d_act, n_act, s.k0, s.v0, d_sa, d_rank, d_act_out, d_count, s);
}

int xg_qlm_key_sort_gpu(const uint32_t *d_ids, const uint32_t *d_doc,
                        const uint32_t *d_doc_end, uint32_t n, uint32_t sigma, int id_bits,
                        uint32_t *d_sa, struct xg_qlm_scratch s, struct CUstream_st *stream)
{
    (void)id_bits;
    (void)stream;
    uint32_t *key = (uint32_t *)s.k0;
    for (uint32_t i = 0; i < n; ++i) d_sa[i] = i;
    for (uint32_t w = sigma; w-- > 0;) {
        for (uint32_t i = 0; i < n; ++i)
            xg_qlm_i_word_keys(d_ids, d_doc, d_doc_end, d_sa, w, key, s.v0, i);
        if (sort_pairs32(key, s.v0, n)) return 2;
        memcpy(d_sa, s.v0, (size_t)n * 4);
    }
    return 0;
}

int xg_qlm_lcp_gpu(const uint32_t *d_ids, const uint32_t *d_doc, const uint32_t *d_doc_end,
                   const uint32_t *d_sa, uint32_t n, uint32_t sigma, uint8_t *d_lenv,
                   uint8_t *d_lcp, struct CUstream_st *stream)
{
    (void)stream;
    for (uint32_t i = 0; i < n; ++i)
        xg_qlm_i_lcp(d_ids, d_doc, d_doc_end, d_sa, sigma, d_lenv, d_lcp, i);
    return 0;
}

int xg_qlm_level_items_gpu(const uint8_t *d_lenv, uint32_t n_words, uint32_t n, uint32_t *d_L,
                           uint32_t *d_count, struct xg_qlm_scratch s,
                           struct CUstream_st *stream)
{
    (void)s;
    (void)stream;
    uint32_t c = 0;
    for (uint32_t i = 0; i < n_words; ++i)
        if (d_lenv[i] >= n) d_L[c++] = i;
    d_count[0] = c;
    return 0;
}

int xg_qlm_level_groups_gpu(const uint32_t *d_L, uint32_t nL, uint32_t n, const uint8_t *d_lcp,
                            const uint32_t *d_sa, const uint32_t *d_doc, int dbits,
                            uint32_t *d_gstart, uint32_t *d_G, uint32_t *d_count,
                            struct xg_qlm_scratch s, struct CUstream_st *stream)
{
    (void)stream;
    for (uint32_t j = 0; j < nL; ++j) xg_qlm_i_head(d_L, n, d_lcp, s.s0, j);
    inclusive_sum(s.s0, s.s1, nL);
    for (uint32_t j = 0; j < nL; ++j)
        xg_qlm_i_group(d_L, nL, s.s0, s.s1, d_sa, d_doc, dbits, d_gstart, d_G, d_count, s.k0,
                       j);
    return 0;
}

int xg_qlm_level_rows_gpu(uint32_t nL, uint32_t ng, int bits, int dbits, uint64_t *d_ukey,
                          uint32_t *d_ucnt, uint32_t *d_rowstart, uint32_t *d_count,
                          struct xg_qlm_scratch s, struct CUstream_st *stream)
{
    (void)bits;
    (void)stream;
    if (sort_pairs(s.k0, NULL, nL)) return 2;
    uint32_t R = 0;
    for (uint32_t i = 0; i < nL; ++i) {
        if (i == 0 || s.k0[i] != s.k0[i - 1]) {
            d_ukey[R] = s.k0[i];
            d_ucnt[R++] = 0;
        }
        ++d_ucnt[R - 1];
    }
    d_count[2] = R;
    for (uint32_t r = 0; r < nL; ++r) xg_qlm_i_row_start(d_count, ng, d_ukey, dbits, d_rowstart, r);
    return 0;
}

int xg_qlm_grams_gpu(uint32_t ng, const uint32_t *d_gstart, const uint32_t *d_rowstart,
                     const uint32_t *d_L, const uint32_t *d_sa, uint64_t word_base,
                     uint64_t row_base, uint64_t *d_pos, uint64_t *d_z, uint64_t *d_df,
                     uint64_t *d_off, struct CUstream_st *stream)
{
    (void)stream;
    for (uint32_t g = 0; g < ng; ++g)
        xg_qlm_i_gram(d_gstart, d_rowstart, d_L, d_sa, word_base, row_base, d_pos, d_z, d_df,
                      d_off, g);
    return 0;
}

int xg_qlm_probs_gpu(struct xg_qlm_level cur, struct xg_qlm_level prev,
                     struct xg_qlm_rowargs a, uint32_t *d_odoc, double *d_oprob,
                     uint64_t *d_ocounts, uint32_t *d_count, struct CUstream_st *stream)
{
    (void)stream;
    for (uint32_t r = 0; r < cur.R; ++r)
        xg_qlm_i_prob(cur, prev, a, d_odoc, d_oprob, d_ocounts, d_count, r);
    return 0;
}

/* ---- query time, as in qlm_score.cu ---------------------------------- */

int xg_qlm_qtmp_bytes(uint32_t n, size_t *bytes)
{
    (void)n;
    *bytes = 0;
    return 0;
}

int xg_qlm_cands_gpu(const uint32_t *d_docid, const uint64_t *d_start, const uint64_t *d_prefix,
                     uint32_t n_ranges, uint32_t total, uint32_t *d_c0, uint32_t *d_c1,
                     uint32_t *d_out, uint32_t *d_nd, void *d_tmp, size_t tmp_bytes,
                     struct CUstream_st *stream)
{
    (void)d_c1;
    (void)d_tmp;
    (void)tmp_bytes;
    (void)stream;
    for (uint32_t t = 0; t < total; ++t)
        xg_qlm_i_gather(d_docid, d_start, d_prefix, n_ranges, d_c0, t);
    if (sort_pairs32(d_c0, NULL, total)) return 2;
    uint32_t nd = 0;
    for (uint32_t t = 0; t < total; ++t)
        if (t == 0 || d_c0[t] != d_c0[t - 1]) d_out[nd++] = d_c0[t];
    *d_nd = nd;
    return 0;
}

struct sc {
    double score;
    uint32_t doc, at;
};

/* Descending by score, stable. */
static int by_score(const void *x, const void *y)
{
    const struct sc *a = x, *b = y;
    if (a->score != b->score) return a->score > b->score ? -1 : 1;
    return (a->at > b->at) - (a->at < b->at);
}

int xg_qlm_qscore_gpu(const uint32_t *d_cand, uint32_t nd, const struct xg_qlm_qword *d_words,
                      uint32_t m, const uint32_t *d_docid, const double *d_logp, double *d_s0,
                      uint32_t *d_rank_doc, double *d_rank_score, void *d_tmp,
                      size_t tmp_bytes, struct CUstream_st *stream)
{
    (void)d_tmp;
    (void)tmp_bytes;
    (void)stream;
    for (uint32_t j = 0; j < nd; ++j) xg_qlm_i_score(d_cand, d_words, m, d_docid, d_logp, d_s0, j);
    struct sc *t = malloc(((size_t)nd + 1) * sizeof *t);
    if (!t) return 2;
    for (uint32_t j = 0; j < nd; ++j) t[j] = (struct sc){d_s0[j], d_cand[j], j};
    qsort(t, nd, sizeof *t, by_score);
    for (uint32_t j = 0; j < nd; ++j) {
        d_rank_doc[j] = t[j].doc;
        d_rank_score[j] = t[j].score;
    }
    free(t);
    return 0;
}

/* ---- the GPU dictionary (text/dict_gpu.cu's launchers) ----------------------- */

#include "../gpu/text/dict_gpu_items.h"

int xg_gdict_tmp_bytes(uint32_t n, size_t *bytes)
{
    (void)n;
    *bytes = 8;
    return 0;
}

uint32_t xg_gdict_start_tiles(uint32_t n)
{
    return n ? 1 : 0;   /* no scratch used: one byte at a time here */
}

int xg_gdict_starts_gpu(const unsigned char *t, uint32_t n, uint32_t *tiles, uint32_t *d_start,
                        uint32_t *d_count, void *tmp, size_t tmp_bytes,
                        struct CUstream_st *st)
{
    (void)tiles, (void)tmp, (void)tmp_bytes, (void)st;
    uint32_t c = 0;
    for (uint32_t p = 0; p < n; ++p)
        if (xg_gdict_i_start(t, p)) d_start[c++] = p;
    *d_count = c;
    return 0;
}

int xg_gdict_words_gpu(const unsigned char *t, uint32_t n, const uint32_t *start, uint32_t nw,
                       uint64_t mask, uint32_t *len, uint64_t *key, uint32_t *idx,
                       uint8_t *docflag, uint32_t *d_dstart, uint32_t *d_count, void *tmp,
                       size_t tmp_bytes, struct CUstream_st *st)
{
    (void)tmp, (void)tmp_bytes, (void)st;
    uint32_t c = 0;
    for (uint32_t i = 0; i < nw; ++i) {
        xg_gdict_i_word(t, n, start, mask, len, key, idx, docflag, i);
        if (docflag[i]) d_dstart[c++] = i;
    }
    *d_count = c;
    return 0;
}

int xg_gdict_doclen_gpu(const uint32_t *dstart, uint32_t nd, uint32_t nw, uint32_t *doclen,
                        struct CUstream_st *st)
{
    (void)st;
    for (uint32_t d = 0; d < nd; ++d) xg_gdict_i_doclen(dstart, nd, nw, doclen, d);
    return 0;
}

/* The device's radix sort leaves its result in either buffer: the
 * emulation alternates, so that the caller's swap is exercised. */
int xg_gdict_sort_gpu(uint64_t *k0, uint64_t *k1, uint32_t *v0, uint32_t *v1, uint32_t n,
                      int bits, int *in_second, void *tmp, size_t tmp_bytes,
                      struct CUstream_st *st)
{
    (void)tmp, (void)tmp_bytes, (void)st;
    static int flip;
    const uint64_t mask = bits >= 64 ? UINT64_MAX : (1ull << bits) - 1;
    for (uint32_t i = 0; i < n; ++i)
        if (k0[i] & ~mask) return 1; /* a key wider than the bits sorted */
    if (sort_pairs(k0, v0, n)) return 2;
    *in_second = flip ^= 1;
    if (*in_second) {
        memcpy(k1, k0, (size_t)n * 8);
        memcpy(v1, v0, (size_t)n * 4);
        memset(k0, 0xab, (size_t)n * 8);
        memset(v0, 0xab, (size_t)n * 4);
    }
    return 0;
}

int xg_gdict_groups_gpu(const uint64_t *key, const uint32_t *val, uint32_t n, uint32_t *head,
                        uint32_t *gid, uint32_t *rep, uint32_t *d_count, void *tmp,
                        size_t tmp_bytes, struct CUstream_st *st)
{
    (void)tmp, (void)tmp_bytes, (void)st;
    uint32_t c = 0;
    for (uint32_t i = 0; i < n; ++i)
        if ((head[i] = xg_gdict_i_head(key, i)) && rep) rep[c++] = val[i];
    if (rep) *d_count = c;
    inclusive_sum(head, gid, n);
    return 0;
}

int xg_gdict_check_gpu(const unsigned char *t, const uint32_t *start, const uint32_t *len,
                       const uint64_t *key, const uint32_t *sidx, const uint32_t *gid,
                       const uint32_t *rep, uint32_t n, uint32_t *err, struct CUstream_st *st)
{
    (void)st;
    for (uint32_t i = 0; i < n; ++i)
        if (xg_gdict_i_collides(t, start, len, key, sidx, gid, rep, i)) *err = 1;
    return 0;
}

int xg_gdict_iota_gpu(uint32_t *a, uint32_t n, struct CUstream_st *st)
{
    (void)st;
    for (uint32_t i = 0; i < n; ++i) a[i] = i;
    return 0;
}

int xg_gdict_round_keys_gpu(const unsigned char *t, const uint32_t *start, const uint32_t *len,
                            const uint32_t *rep, const uint32_t *perm, const uint32_t *group,
                            uint32_t nt, uint32_t r, int by_length, uint64_t *key,
                            struct CUstream_st *st)
{
    (void)st;
    for (uint32_t j = 0; j < nt; ++j)
        key[j] = xg_gdict_i_round_key(t, start, len, rep, perm, group, r, by_length, j);
    return 0;
}

int xg_gdict_regroup_gpu(const uint64_t *key, const uint32_t *len, const uint32_t *rep,
                         const uint32_t *perm, uint32_t nt, uint32_t compared, uint32_t *head,
                         uint32_t *group, uint32_t *d_count, void *tmp, size_t tmp_bytes,
                         struct CUstream_st *st)
{
    (void)tmp, (void)tmp_bytes, (void)st;
    for (uint32_t j = 0; j < nt; ++j) head[j] = xg_gdict_i_head(key, j);
    inclusive_sum(head, group, nt);
    uint32_t c[2] = {0, 0};
    for (uint32_t j = 0; j < nt; ++j) {
        group[j] -= 1;
        const int f = xg_gdict_i_unresolved(key, len, rep, perm, nt, compared, j);
        c[0] += (uint32_t)(f & 1);
        c[1] += (uint32_t)(f >> 1);
    }
    d_count[0] = c[0];
    d_count[1] = c[1];
    return 0;
}

int xg_gdict_ranks_gpu(const uint32_t *perm, const uint32_t *rep, const uint32_t *start,
                       const uint32_t *len, uint32_t nt, uint32_t *rank, uint32_t *term_off,
                       uint32_t *term_len, struct CUstream_st *st)
{
    (void)st;
    for (uint32_t j = 0; j < nt; ++j)
        xg_gdict_i_rank(perm, rep, start, len, rank, term_off, term_len, j);
    return 0;
}

int xg_gdict_ids_gpu(const uint32_t *sidx, const uint32_t *gid, const uint32_t *rank,
                     uint32_t nw, uint32_t *ids, struct CUstream_st *st)
{
    (void)st;
    for (uint32_t i = 0; i < nw; ++i) xg_gdict_i_id(sidx, gid, rank, ids, i);
    return 0;
}

int xg_gdict_sorted_pairs_gpu(const uint32_t *sidx, const uint32_t *gid, const uint32_t *rank,
                              const uint32_t *dstart, uint32_t nd, uint32_t nw, uint32_t nt,
                              int dbits, uint32_t *run_start, uint32_t *count,
                              uint32_t *out_start, uint64_t *key, void *tmp, size_t tmp_bytes,
                              struct CUstream_st *st)
{
    (void)tmp, (void)tmp_bytes, (void)st;
    for (uint32_t i = 0; i < nw; ++i) xg_gdict_i_run_start(gid, run_start, i);
    for (uint32_t g = 0; g < nt; ++g) xg_gdict_i_rank_count(run_start, rank, nt, nw, count, g);
    uint32_t sum = 0;
    for (uint32_t t = 0; t < nt; ++t) {
        out_start[t] = sum;
        sum += count[t];
    }
    for (uint32_t i = 0; i < nw; ++i)
        xg_gdict_i_sorted_pair(sidx, gid, rank, run_start, out_start, dstart, nd, dbits, key, i);
    return 0;
}

int xg_gdict_invert_gpu(const uint32_t *perm, uint32_t nt, uint32_t *rank,
                        struct CUstream_st *st)
{
    (void)st;
    for (uint32_t j = 0; j < nt; ++j) xg_gdict_i_invert(perm, rank, j);
    return 0;
}
