/** @file qlm_kern.h
 *  @brief The qlm pipeline's kernels and CUB calls (qlm.cu), called one
 *         chunk at a time by the GPU engine's host side (qlm_cuda.c).
 *
 *  The same steps as the CPU twin (qlm_sort.c, qlm_count.c), on arrays:
 *  positions p of the chunk (0 <= p < n words), doc[p] its chunk-local
 *  document, doc_end[d] the end of document d, len(p) = doc_end[doc[p]] -
 *  p.  Every launcher is a thin extern "C" entry point: device pointers
 *  in, the stream last, no allocation; scratch arrays (s0, s1, s2: n u32
 *  each; k0, k1: n u64 each; v0, v1: n u32 each) and the CUB workspace
 *  come from the caller, the workspace sized once by xg_qlm_tmp_bytes.
 *  Counts a launcher produces are left on the device (d_count) for the
 *  caller to read.  Each returns a cudaError_t (0: success).
 */
#ifndef XG_QLM_KERN_H
#define XG_QLM_KERN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct CUstream_st;

/* The largest CUB workspace any launcher below needs for n items. */
int xg_qlm_tmp_bytes(uint32_t n, size_t *bytes);

/* Scratch the sorts and levels share. */
struct xg_qlm_scratch {
    uint32_t *s0, *s1, *s2;     /* n each */
    uint64_t *k0, *k1;          /* n each: sort keys, double buffer */
    uint32_t *v0, *v1;          /* n each: sort values, double buffer */
    void *tmp;                  /* CUB workspace */
    size_t tmp_bytes;
};

/* doc[p] for every position from the documents' ends (n_docs of them,
 * the last equal to n; empty documents allowed). */
int xg_qlm_docs_gpu(const uint32_t *d_doc_end, uint32_t n_docs, uint32_t n,
                    uint32_t *d_doc, struct xg_qlm_scratch s,
                    struct CUstream_st *stream);

/* Prefix doubling (seed 002 Algorithm 1), round 0: sa sorted by the first
 * word (term id + 1), ties by position; rank[p] = index + 1 of the head of
 * p's run; d_act[0, *d_count) the sa indices of runs of more than one
 * item (ascending).  id_bits: bits of the largest term id + 1. */
int xg_qlm_dbl_first_gpu(const uint32_t *d_ids, uint32_t n, int id_bits,
                         uint32_t *d_sa, uint32_t *d_rank, uint32_t *d_act,
                         uint32_t *d_count, struct xg_qlm_scratch s,
                         struct CUstream_st *stream);

/* One doubling round with step k over the n_act active sa indices d_act:
 * inside each segment of equal rank, sort by (rank of the suffix k words
 * on, or 0 when len(p) <= k; position), re-rank by run heads, and write
 * the next round's active indices to d_act_out (*d_count of them).
 * pos_bits: bits of n + 1. */
int xg_qlm_dbl_round_gpu(const uint32_t *d_doc, const uint32_t *d_doc_end,
                         uint32_t k, int pos_bits, uint32_t *d_sa,
                         uint32_t *d_rank, const uint32_t *d_act,
                         uint32_t n_act, uint32_t *d_act_out,
                         uint32_t *d_count, struct xg_qlm_scratch s,
                         struct CUstream_st *stream);

/* The plain sort of sigma-word keys (the benchmark's alternative to
 * doubling): stable LSD radix sorts, one per word from the last to the
 * first (a word past the document's end is 0, others term id + 1), so
 * equal keys stay in position order. */
int xg_qlm_key_sort_gpu(const uint32_t *d_ids, const uint32_t *d_doc,
                        const uint32_t *d_doc_end, uint32_t n, uint32_t sigma,
                        int id_bits, uint32_t *d_sa, struct xg_qlm_scratch s,
                        struct CUstream_st *stream);

/* After either sort: lenv[i] = min(len(sa[i]), sigma) and lcp[i] the
 * leading words sa[i] shares with sa[i - 1] (capped at sigma and both
 * documents' ends; lcp[0] = 0). */
int xg_qlm_lcp_gpu(const uint32_t *d_ids, const uint32_t *d_doc,
                   const uint32_t *d_doc_end, const uint32_t *d_sa, uint32_t n,
                   uint32_t sigma, uint8_t *d_lenv, uint8_t *d_lcp,
                   struct CUstream_st *stream);

/* The n-groups of one level n (a maximal run of sa sharing n words):
 * d_L[0, nL) the sa indices with len >= n (ascending), d_count[0] = nL. */
int xg_qlm_level_items_gpu(const uint8_t *d_lenv, uint32_t n_words, uint32_t n,
                           uint32_t *d_L, uint32_t *d_count,
                           struct xg_qlm_scratch s, struct CUstream_st *stream);

/* For the nL items of the level: group heads (lcp < n), gstart[g] (the
 * index in L of group g's first item; gstart[ng] = nL), G[L[j]] = the
 * group of item j, and the keys (group << dbits | document) in s.k0;
 * d_count[1] = ng. */
int xg_qlm_level_groups_gpu(const uint32_t *d_L, uint32_t nL, uint32_t n,
                            const uint8_t *d_lcp, const uint32_t *d_sa,
                            const uint32_t *d_doc, int dbits,
                            uint32_t *d_gstart, uint32_t *d_G,
                            uint32_t *d_count, struct xg_qlm_scratch s,
                            struct CUstream_st *stream);

/* Sort the keys in s.k0 on bits [0, bits) (the seed's per-segment sort of
 * documents) and run-length encode them: d_ukey[0, R) the distinct
 * (group, document) keys, d_ucnt their counts f(x, d), rowstart[g] the
 * first row of group g (rowstart[ng] = R); d_count[2] = R. */
int xg_qlm_level_rows_gpu(uint32_t nL, uint32_t ng, int bits, int dbits,
                          uint64_t *d_ukey, uint32_t *d_ucnt,
                          uint32_t *d_rowstart, uint32_t *d_count,
                          struct xg_qlm_scratch s, struct CUstream_st *stream);

/* Per group: one occurrence (word_base + sa of its first item), f(x, C)
 * in the chunk (its size) and the number of documents; gram_base +
 * rowstart as a global row offset in d_off (NULL: not written).  d_df
 * may be NULL. */
int xg_qlm_grams_gpu(uint32_t ng, const uint32_t *d_gstart,
                     const uint32_t *d_rowstart, const uint32_t *d_L,
                     const uint32_t *d_sa, uint64_t word_base,
                     uint64_t row_base, uint64_t *d_pos, uint64_t *d_z,
                     uint64_t *d_df, uint64_t *d_off,
                     struct CUstream_st *stream);

/* Eq. 2 for every row of level n (Algorithm 2).  The previous level's
 * arrays give f(h, d) by a search for (parent group, document) among its
 * rows (the seed's load-balancing search); for n = 1 it is the
 * document's length.  f(x, C) and f(h, C): d_z and d_w per group when
 * given (chunked runs: the global counts of pass 1), else the group's
 * size and its parent's (in core: the chunk is the collection; n = 1:
 * total words).  docid = d_docids[d] when given, else doc_base + d + 1.
 * A row whose history is missing sets d_count[3]. */
struct xg_qlm_level {
    const uint32_t *L, *gstart, *G;     /* G: group of each sa index */
    const uint64_t *ukey;
    const uint32_t *ucnt;
    uint32_t nL, ng, R;
};
struct xg_qlm_rowargs {
    uint32_t n, dbits, n_words;
    const uint32_t *doc_end;
    const uint64_t *z, *w;              /* per group, or NULL */
    const uint32_t *docids;             /* per chunk document, or NULL */
    uint64_t doc_base;
    double lambda;
};
int xg_qlm_probs_gpu(struct xg_qlm_level cur, struct xg_qlm_level prev,
                     struct xg_qlm_rowargs a, uint32_t *d_odoc,
                     double *d_oprob, uint64_t *d_ocounts, uint32_t *d_count,
                     struct CUstream_st *stream);

/* ---- query time (qlm_score.cu; host side qlm_score_cuda.c) ---------- */

/* One query word: the rows [row, row + n_rows) of the longest n-gram
 * ending at it that the collection holds (n_rows 0: none), and lb, the log
 * of its factor for a document without that n-gram. */
struct xg_qlm_qword {
    uint64_t row, n_rows;
    double lb;
};

/* The largest CUB workspace the two launchers below need for n items. */
int xg_qlm_qtmp_bytes(uint32_t n, size_t *bytes);

/* Candidates: the docids of n_ranges row ranges (range r starts at row
 * d_start[r]; d_prefix[n_ranges + 1] their offsets, total items), sorted
 * and made unique: d_out[0, *d_nd). */
int xg_qlm_cands_gpu(const uint32_t *d_docid, const uint64_t *d_start,
                     const uint64_t *d_prefix, uint32_t n_ranges,
                     uint32_t total, uint32_t *d_c0, uint32_t *d_c1,
                     uint32_t *d_out, uint32_t *d_nd, void *d_tmp,
                     size_t tmp_bytes, struct CUstream_st *stream);

/* Score every candidate (sum over the m words, in order, from 0.0, of
 * d_logp at its row or lb) and rank them: d_rank_doc / d_rank_score by
 * score descending, then docid ascending (a stable sort of candidates
 * already in docid order). */
int xg_qlm_qscore_gpu(const uint32_t *d_cand, uint32_t nd,
                      const struct xg_qlm_qword *d_words, uint32_t m,
                      const uint32_t *d_docid, const double *d_logp,
                      double *d_s0, uint32_t *d_rank_doc, double *d_rank_score,
                      void *d_tmp, size_t tmp_bytes, struct CUstream_st *stream);

#ifdef __cplusplus
}
#endif
#endif
