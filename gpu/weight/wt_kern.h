/** @file wt_kern.h
 *  @brief The weight pipeline's kernels and CUB calls (wt.cu), called by
 *         the GPU engine's host side (wt_cuda_pass.c) one chunk at a time.
 *
 *  Every launcher is a thin extern "C" entry point: device pointers in,
 *  the stream last, no allocation; the CUB workspace comes from the caller,
 *  sized once by xg_wt_tmp_bytes (CUB's two-phase query).  Each returns a
 *  cudaError_t (0: success).  The chunk text holds whole documents in the
 *  seed format: every word ends with '\n', documents are separated by one
 *  or more empty lines, the text begins with a word.  Word i starts a
 *  document when it is the first word or follows an empty line; doc1 is
 *  the 1-based chunk-local document of each word (a scan of those flags).
 */
#ifndef XG_WT_KERN_H
#define XG_WT_KERN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct CUstream_st;

/* The largest CUB workspace any launcher below needs for a chunk of
 * `len` bytes and at most `words` words. */
int xg_wt_tmp_bytes(uint32_t len, uint32_t words, size_t *bytes);

/* Step 1, word starts by compact: d_start[0, *d_n) = the positions where
 * a word begins, ascending (*d_n on the device). */
int xg_wt_starts_gpu(const char *d_text, uint32_t len, uint32_t *d_start,
                     uint32_t *d_n, void *d_tmp, size_t tmp_bytes,
                     struct CUstream_st *stream);

/* Pass 1, per word: its length, its masked hash (gpu/text/hash.h), its
 * index (the sort's values) and its document-start flag (0/1). */
int xg_wt_words_gpu(const char *d_text, const uint32_t *d_start, uint32_t n,
                    uint64_t mask, uint32_t *d_len, uint64_t *d_hash,
                    uint32_t *d_idx, uint32_t *d_flag,
                    struct CUstream_st *stream);

/* Pass 2, per word: its term id from the device hash table (the host
 * dictionary's own open-addressing layout: slot = hash & (cap - 1), then
 * linear probing; d_tid UINT32_MAX marks an empty slot) and its
 * document-start flag.  A word not in the table sets *d_err to 1. */
struct xg_wt_dtable {
    const uint64_t *key;    /* per slot: the term's hash */
    const uint32_t *id;     /* per slot: term id, UINT32_MAX = empty */
    uint64_t cap;           /* a power of two */
};
int xg_wt_ids_gpu(const char *d_text, const uint32_t *d_start, uint32_t n,
                  uint64_t mask, struct xg_wt_dtable t, uint32_t *d_id,
                  uint32_t *d_flag, uint32_t *d_err,
                  struct CUstream_st *stream);

/* Step 2, doc ids by scan: d_doc1 = inclusive sum of d_flag. */
int xg_wt_docids_gpu(const uint32_t *d_flag, uint32_t *d_doc1, uint32_t n,
                     void *d_tmp, size_t tmp_bytes, struct CUstream_st *stream);

/* Step 3, document lengths by count: d_first gets each document's first
 * word (scratch, n entries), d_doclen the n_docs lengths. */
int xg_wt_doclen_gpu(const uint32_t *d_doc1, uint32_t n, uint32_t n_docs,
                     uint32_t *d_first, uint32_t *d_doclen,
                     struct CUstream_st *stream);

/* Pass 1 sort: (hash, word index) pairs by hash on bits [lo, hi), stable
 * (equal hashes keep text order, hence document order).  On return *sel
 * says which half of each double buffer holds the result. */
int xg_wt_sort_hash_gpu(uint64_t *d_k0, uint64_t *d_k1, uint32_t *d_v0,
                        uint32_t *d_v1, uint32_t n, int lo, int hi, int *sel,
                        void *d_tmp, size_t tmp_bytes,
                        struct CUstream_st *stream);

/* Pass 1, per distinct hash: the first sorted position of each run of
 * equal hashes (d_tfirst, *d_nt on the device), the new-document flags
 * (d_newdoc), and exact collision detection: two adjacent equal hashes
 * whose words differ in bytes set *d_err to 1. */
int xg_wt_mark_gpu(const char *d_text, const uint32_t *d_start,
                   const uint32_t *d_len, const uint64_t *d_hash,
                   const uint32_t *d_idx, const uint32_t *d_doc1, uint32_t n,
                   uint32_t *d_newdoc, uint32_t *d_tfirst, uint32_t *d_nt,
                   uint32_t *d_err, void *d_tmp, size_t tmp_bytes,
                   struct CUstream_st *stream);

/* Pass 1, step 6 (df by count): d_cum = inclusive sum of d_newdoc, then
 * per distinct term its hash, one occurrence (start, len) and its df. */
int xg_wt_terms_gpu(const uint32_t *d_newdoc, uint32_t *d_cum, uint32_t n,
                    const uint32_t *d_tfirst, uint32_t nt,
                    const uint64_t *d_hash, const uint32_t *d_idx,
                    const uint32_t *d_start, const uint32_t *d_len,
                    uint64_t *d_ohash, uint32_t *d_ostart, uint32_t *d_olen,
                    uint32_t *d_odf, void *d_tmp, size_t tmp_bytes,
                    struct CUstream_st *stream);

/* Pass 2, step 4 (sort): key = term id << dbits | chunk-local document,
 * sorted on bits [0, bits); *sel as above. */
int xg_wt_sort_keys_gpu(const uint32_t *d_id, const uint32_t *d_doc1,
                        uint32_t n, int dbits, int bits, uint64_t *d_k0,
                        uint64_t *d_k1, int *sel, void *d_tmp,
                        size_t tmp_bytes, struct CUstream_st *stream);

/* Pass 2, step 5 (tf by count): run-length encoding of the sorted keys:
 * d_uniq the distinct (term, doc) keys, d_tf their counts, *d_np on the
 * device the number of postings. */
int xg_wt_tf_gpu(const uint64_t *d_keys, uint32_t n, uint64_t *d_uniq,
                 uint32_t *d_tf, uint32_t *d_np, void *d_tmp,
                 size_t tmp_bytes, struct CUstream_st *stream);

/* Pass 2, step 8: each posting's term (unless d_term is NULL), document
 * and weight (xg_wt_weight of gpu/weight/wt_formula.h, the twin's operation
 * order). */
struct xg_wt_dconst {
    const double *tw;       /* per term id; per df with first */
    const double *kd;       /* per internal document (whole collection) */
    const double *extra;    /* per internal document, or NULL */
    uint64_t doc_base;      /* the chunk's first internal document */
    double k1p1;
    int seed;
    const uint32_t *first;  /* NULL, or (the in-core run) each term's
                               first posting and then np: tw is indexed by
                               the df first[t + 1] - first[t] */
};
int xg_wt_weights_gpu(const uint64_t *d_uniq, const uint32_t *d_tf,
                      uint32_t np, int dbits, struct xg_wt_dconst c,
                      uint32_t *d_term, uint32_t *d_doc, double *d_w,
                      struct CUstream_st *stream);

/* A chunk's postings' terms (sorted) as *d_nr runs, each term << 32 |
 * its first posting in d_run (the host gathers them into term order: a
 * run per term and chunk instead of a term per posting); d_run_term,
 * d_run_len, d_run_start are scratch of np entries. */
int xg_wt_term_runs_gpu(const uint32_t *d_term, uint32_t np, uint32_t *d_run_term,
                        uint32_t *d_run_len, uint32_t *d_run_start, uint64_t *d_run,
                        uint32_t *d_nr, void *d_tmp, size_t tmp_bytes,
                        struct CUstream_st *stream);

/* The in-core run on the device dictionary (wt_cuda_whole.c), step 6 (df
 * by the postings' term boundaries): d_first[t] = the first posting of
 * term t in the sorted distinct keys; a term without postings keeps what
 * d_first held. */
int xg_wt_term_first_gpu(const uint64_t *d_uniq, uint32_t np, int dbits,
                         uint32_t *d_first, struct CUstream_st *stream);

/* The in-core run's per-term output, so that the host computes nothing
 * per term: d_off[t] = d_first[t] and d_off[nt] = np (the result's
 * 64-bit posting offsets); d_ptr[t] = base + d_toff[t] (the term's first
 * occurrence as an address in the caller's text, base the chunk's);
 * d_stat[0] gets the largest df, d_stat[1] 1 if a term has no postings
 * (both zeroed by the caller).  d_first[nt] becomes np, for the weights'
 * df lookup (xg_wt_dconst.first). */
int xg_wt_terms_out_gpu(uint32_t *d_first, uint32_t nt, uint32_t np, const uint32_t *d_toff,
                        uint64_t base, uint64_t *d_off, uint64_t *d_ptr, uint32_t *d_stat,
                        struct CUstream_st *stream);

/* Chunk-local 0-based documents to external docids, in place: d_map[d]
 * (d_map: the input's docids on the device), or d + 1 without one. */
int xg_wt_docids_out_gpu(uint32_t *d_doc, uint32_t np, const uint32_t *d_map,
                         struct CUstream_st *stream);

/* ---- Placement of a run in chunks (wt_cuda_pass.c) -------------------
 * Pass 2's postings go straight into the result in host memory (page-
 * locked and mapped): each term's next free posting in cur, starting at
 * its term_off (toff, nt + 1 entries); no write leaves a term's own
 * [toff[t], toff[t + 1]). */
struct xg_wt_place {
    uint64_t *cur;          /* per term: the next posting to write */
    uint64_t *shift;        /* per term: this chunk's cur - run start */
    const uint64_t *toff;   /* the result's term_off, on the device */
    const uint32_t *map;    /* the input's docids, or NULL for d + 1 */
    uint64_t doc_base;      /* the chunk's first internal document */
    uint32_t nt;
    uint32_t *out_doc;      /* the result's docids (mapped host memory) */
    double *out_w;          /* the result's weights (mapped host memory) */
    uint32_t *err;          /* bit 1: a chunk has more postings of a term
                               than pass 1 counted, or a bad term id */
};
/* One chunk's np postings (term, chunk-local document and weight each,
 * sorted by term then document) and their *d_nr runs (xg_wt_term_runs_gpu's
 * scratch: each run's term, length and first posting): every run moves
 * its term's cursor, then every posting is written at its place. */
int xg_wt_place_gpu(const uint32_t *d_term, const uint32_t *d_doc, const double *d_w,
                    uint32_t np, const uint32_t *d_run_term, const uint32_t *d_run_len,
                    const uint32_t *d_run_start, const uint32_t *d_nr, struct xg_wt_place p,
                    struct CUstream_st *stream);
/* After the last chunk: bit 2 of *p.err if a term's cursor stopped short
 * of its end (fewer postings than pass 1 counted). */
int xg_wt_place_check_gpu(struct xg_wt_place p, struct CUstream_st *stream);

/* ---- The device dictionary of a run in chunks (wt_cuda_dict.c) ------
 * An open-addressing table of 64-bit word hashes (slot = hash & (cap -
 * 1), linear probing, key XG_WT_EMPTY: free) kept on the device across
 * the chunks, each slot's value its term, and per term: its first
 * occurrence (global byte offset), length, df and a copy of its bytes in
 * an arena, so that later chunks' words are checked byte for byte. */
#define XG_WT_EMPTY UINT64_MAX

#define XG_WT_FRESH 0x80000000u     /* a value not yet a term */
#define XG_WT_MAX_PROBES 4096

/* Insert the n words' hashes; a slot this call fills gets the word's
 * index | XG_WT_FRESH as its value.  Bits of *d_err: 1 a probe met
 * XG_WT_MAX_PROBES full slots (the caller grows the table and inserts
 * again), 2 a hash equal to XG_WT_EMPTY. */
int xg_wt_dd_insert_gpu(const uint64_t *d_hash, uint32_t n, uint64_t *d_key,
                        uint32_t *d_val, uint64_t cap, uint32_t *d_err,
                        struct CUstream_st *stream);

/* The slots whose value is XG_WT_FRESH-tagged, in any order, into d_new
 * (*d_n_new of them). */
int xg_wt_dd_fresh_gpu(const uint64_t *d_key, const uint32_t *d_val, uint64_t cap,
                       uint32_t *d_new, uint32_t *d_n_new, struct CUstream_st *stream);

/* The m new slots' word lengths, for their bytes' offsets in the arena
 * (an exclusive scan of d_lens into d_offs follows). */
int xg_wt_dd_new_lens_gpu(const uint32_t *d_new, uint32_t m, const uint32_t *d_val,
                          const uint32_t *d_len, uint32_t *d_lens,
                          void *d_tmp, size_t tmp_bytes, uint32_t *d_offs,
                          struct CUstream_st *stream);

/* New slot p becomes term n_terms + p: its value, first occurrence
 * (base + start of the word), length, arena offset (arena_used +
 * d_offs[p]) and bytes; df starts at 0. */
struct xg_wt_dd_terms {
    uint64_t *goff;         /* per term */
    uint32_t *len, *aoff, *df;
    unsigned char *arena;
};
int xg_wt_dd_assign_gpu(const char *d_text, const uint32_t *d_start,
                        const uint32_t *d_len, uint64_t base, const uint32_t *d_new,
                        uint32_t m, uint32_t n_terms, const uint32_t *d_offs,
                        uint64_t arena_used, uint32_t *d_val,
                        struct xg_wt_dd_terms t, struct CUstream_st *stream);

/* Each word's term (its hash's slot's value) into d_term; a word whose
 * bytes differ from its term's sets bit 4 of *d_err (two words, one
 * hash). */
int xg_wt_dd_lookup_gpu(const char *d_text, const uint32_t *d_start,
                        const uint32_t *d_len, const uint64_t *d_hash, uint32_t n,
                        const uint64_t *d_key, const uint32_t *d_val, uint64_t cap,
                        struct xg_wt_dd_terms t, uint32_t *d_term, uint32_t *d_err,
                        struct CUstream_st *stream);

/* df[term] += 1 for each distinct (term, document) key of d_uniq. */
int xg_wt_dd_df_gpu(const uint64_t *d_uniq, uint32_t np, int dbits, uint32_t *d_df,
                    struct CUstream_st *stream);

/* The table again at new_cap (emptied by the caller): every key and its
 * value. */
int xg_wt_dd_rehash_gpu(const uint64_t *d_key, const uint32_t *d_val, uint64_t cap,
                        uint64_t *d_nkey, uint32_t *d_nval, uint64_t new_cap,
                        struct CUstream_st *stream);

/* After the ranking: each slot's value from term to term id (rank), free
 * slots UINT32_MAX (xg_wt_ids_gpu's table), and per id its first
 * occurrence, length and df. */
int xg_wt_dd_ids_gpu(const uint64_t *d_key, uint32_t *d_val, uint64_t cap,
                     const uint32_t *d_rank, uint32_t nt, struct xg_wt_dd_terms t,
                     uint64_t *d_id_goff, uint32_t *d_id_len, uint32_t *d_id_df,
                     struct CUstream_st *stream);

#ifdef __cplusplus
}
#endif
#endif
