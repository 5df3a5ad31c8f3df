/** @file wt_int.h
 *  @brief Private to the weight pipeline: the chunk plan and the per-chunk
 *         entry points each engine provides (wt_ref.c,
 *         wt_cuda.c / wt_nocuda.c), called by the driver (wt.c).
 */
#ifndef XG_WT_INT_H
#define XG_WT_INT_H

#include <stddef.h>
#include <stdint.h>

#include "../runtime/clock.h"
#include "../runtime/threads.h"
#include "../text/dict.h"
#include "wt.h"

/* One chunk: whole documents, [doc_base, doc_base + n_docs) internally
 * (the in-core run on the device dictionary learns n_docs from it). */
struct xg_wt_chunk {
    const char *buf;
    size_t len;
    uint64_t words;         /* at least the words in it (device buffers) */
    uint64_t doc_base;
    uint32_t n_docs;
};

/* What a chunk of `bytes` bytes and `words` words may take on the device
 * (wt_cuda.c's xg_wt_reserve allocates 1.125 times 2 bytes per byte, the
 * chunk's text and the next one's, and 48 bytes per word, plus CUB's
 * workspace, a few bytes per word). */
#define XG_WT_PER_BYTE 3
#define XG_WT_PER_WORD 64
#define XG_WT_CHUNK_FIXED 0    /* the device's floor (XG_WT_MIN_BUDGET) has it */
uint64_t xg_wt_chunk_need(size_t bytes, uint64_t words);

/* The chunk plan (wt_plan.c): chunks of whole documents (at most 2^31
 * bytes each) whose cost above is at most `avail` device bytes, their
 * words counted on `threads` threads when one chunk of the worst case
 * (a word per 2 bytes) would not fit; buf, len and words set, and, when
 * the words were counted (*docs_counted), n_docs from the same pass.  A
 * document that fits no chunk is XG_ERR_NOMEM, its message naming the
 * input `name` and the document's byte offset. */
int xg_wt_plan(const char *name, const char *b, size_t len, uint64_t avail,
               uint32_t threads, struct xg_wt_chunk **ch, uint32_t *n,
               int *docs_counted);
/* Documents starting in b[lo, hi) (lo a document start). */
uint32_t xg_wt_count_docs(const char *b, size_t lo, size_t hi, uint32_t threads);

/* What pass 2 needs: the ranked dictionary and the constant tables. */
struct xg_wt_tables {
    const struct xg_text_dict *dict;  /* NULL: the device dictionary's run */
    uint32_t n_terms;
    const double *tw;       /* per term id */
    const double *kd;       /* per internal document */
    const double *extra;    /* per internal document, or NULL */
    int seed;
    double k1p1;
    uint64_t hash_mask;
    uint64_t n_docs;        /* internal documents (kd, extra entries) */
    uint64_t n_tw_df;       /* 0: tw per term id; else (the device
                               dictionary's run) tw per df, this many */
};

/* The CPU twin. */
int xg_wt_ref_pass1(const struct xg_wt_chunk *c, uint32_t threads,
                    uint64_t hash_mask, uint32_t *doclen, struct xg_text_dict_list **lists,
                    uint32_t *n_lists);
/* Pass 2 of one chunk, with xg_wt_gpu_pass2's output (below). */
int xg_wt_ref_pass2(const struct xg_wt_chunk *c, uint32_t threads,
                    const struct xg_wt_tables *t, uint64_t room, uint32_t *doc,
                    double *weight, uint64_t *run, uint64_t *n, uint64_t *nr);

/* The GPU engine (XG_ERR_NODEVICE without CUDA). */
typedef struct xg_wt_gpu xg_wt_gpu;
int xg_wt_gpu_open(uint64_t budget, xg_wt_gpu **g, uint64_t *free_bytes);
void xg_wt_gpu_close(xg_wt_gpu *g);
/* A run in chunks uploads the input twice: page-lock it for the run,
 * chunk by chunk while the device works on the one before (the uploads
 * then skip the staging); failing that, they stage. */
void xg_wt_gpu_pin_input(xg_wt_gpu *g, const char *buf, size_t len);
/* The chunk the engine will be given after the current one (NULL: none):
 * in a run in chunks its text crosses while the current one computes
 * (seed 001's pipeline; from the locked input only). */
void xg_wt_gpu_next(xg_wt_gpu *g, const struct xg_wt_chunk *next);
/* Page-lock pass 2's arena (touched) for the run in chunks, so that each
 * chunk's postings come over by DMA alone; unlock before freeing it. */
void xg_wt_gpu_lock_host(xg_wt_gpu *g, void *p, size_t n);
void xg_wt_gpu_unlock_host(xg_wt_gpu *g);
/* XG_ERR_UNSUPPORTED: two different words of the chunk share a hash. */
int xg_wt_gpu_pass1(xg_wt_gpu *g, const struct xg_wt_chunk *c, uint64_t hash_mask,
                    uint32_t *doclen, struct xg_text_dict_list *list, double *seconds);
int xg_wt_gpu_tables(xg_wt_gpu *g, const struct xg_wt_tables *t);
/* Pass 2 of one chunk: its n postings (sorted by term id, then
 * chunk-local document: each one's document and weight) and its *nr runs
 * of one term (term << 32 | the run's first posting) into the caller's
 * arrays, which have room for `room` of each (more is XG_ERR_FORMAT). */
int xg_wt_gpu_pass2(xg_wt_gpu *g, const struct xg_wt_chunk *c,
                    const struct xg_wt_tables *t, uint64_t room, uint32_t *doc,
                    double *weight, uint64_t *run, uint64_t *n, uint64_t *nr,
                    double *seconds);
/* Pass 2 of a run in chunks placed by the device straight into the
 * result (wt_cuda_place.c), instead of xg_wt_gpu_pass2's arena and the
 * host's gather.  r has n_terms, n_postings, term_off and its docids and
 * weights allocated; docids is the input's map (NULL: d + 1); keep, the
 * device bytes the chunk buffers will take beside the tables.  _open
 * has r's docids and weights page-locked (by _reserve's thread; r's own
 * when they are not the reserved arrays) and puts term_off on the device;
 * XG_ERR_UNSUPPORTED where the host memory cannot be locked, the device
 * cannot use the host's addresses or has no room (nothing is left locked:
 * the arena answers).
 * _chunk per chunk in order, after xg_wt_gpu_tables.  _close, after a
 * successful _open whatever followed: with `check`, an error unless
 * every term got exactly its pass-1 postings; it unlocks the result. */
int xg_wt_gpu_place_open(xg_wt_gpu *g, struct xg_wt_result *r, const uint32_t *docids,
                         uint64_t n_docs, uint64_t keep);
/* Before pass 1: the result's docids and weights reserved for `cap`
 * postings (untouched), to be faulted in and locked part by part by a
 * thread while pass 1 counts: _grow(n) after each chunk, n the postings
 * so far plus one.  _open then waits for the last part.  0 if the
 * thread started; 1 (nothing to undo) where the device cannot use the
 * host's addresses. */
int xg_wt_gpu_place_reserve(xg_wt_gpu *g, uint32_t *doc, double *w, uint64_t cap);
void xg_wt_gpu_place_grow(xg_wt_gpu *g, uint64_t n);
/* Stops the thread and unlocks what it locked (before the reserved
 * arrays are freed; _close and xg_wt_gpu_close do it too). */
void xg_wt_gpu_place_drop(xg_wt_gpu *g);
int xg_wt_gpu_place_chunk(xg_wt_gpu *g, const struct xg_wt_chunk *c,
                          const struct xg_wt_tables *t, double *seconds);
int xg_wt_gpu_place_close(xg_wt_gpu *g, int check);
/* The in-core GPU run on the device dictionary (wt_cuda_whole.c): the
 * text crosses once, and the dictionary (text/dict_gpu.h), the sorted (term,
 * document) pairs, tf and df stay on the device.  After _count the host
 * has the counts, the terms' lengths and the document lengths, and
 * computes nothing per term (the term weights go per df, n_tw_df
 * entries); _weights then writes the result's (wt.h) term addresses,
 * term offsets, docids and weights, all made on the device, straight
 * into its arrays.  XG_ERR_UNSUPPORTED from _count (the device dictionary
 * declined: a hash shared by two words, ...): the two-pass run answers. */
struct xg_prefault;
struct xg_wt_whole {
    uint32_t n_words, n_docs, n_terms;
    uint64_t n_postings;
    uint32_t max_df;                /* the largest df */
    uint32_t *term_len;             /* [n_terms]: the result's, to take */
    uint32_t *doclen;               /* [n_docs] */
    /* The output, room for n_words + 1 postings (n_postings at most),
     * allocated as soon as the device has counted the words and faulted
     * in on background threads while it goes on (big_alloc.h); the caller
     * takes both after xg_prefault_wait(prefault).  NULL: none. */
    uint32_t *docids;
    double *weights;
    struct xg_prefault *prefault;
};
int xg_wt_gpu_whole_count(xg_wt_gpu *g, const struct xg_wt_chunk *c,
                          struct xg_wt_whole *w, double *seconds);
/* t->dict is NULL here; docids: the input's map, or NULL for d + 1.
 * Into r's term, term_off, docids and weights (allocated), and its
 * seconds. */
int xg_wt_gpu_whole_weights(xg_wt_gpu *g, const struct xg_wt_tables *t,
                            const uint32_t *docids, struct xg_wt_result *r);
void xg_wt_whole_free(struct xg_wt_whole *w);

/* Pass 1 of a run in chunks with the dictionary on the device
 * (wt_cuda_dict.c): the table of word hashes, each term's df, first
 * occurrence and a copy of its bytes stay on the device, and each word is
 * checked byte for byte against its term.  _pass1 per chunk (`base`: its
 * offset in the input; document lengths into doclen, its postings, the
 * distinct (term, document) pairs, into *postings); _finish ranks the
 * terms on the device (text/dict_gpu.h) and gives per term id its first
 * occurrence, length and df; pass 2 (xg_wt_gpu_pass2, tables without a
 * host dictionary) then looks words up in the device table.
 * XG_ERR_UNSUPPORTED: two words share a hash, or the dictionary does not
 * fit the budget beside the chunk buffers: the host dictionary answers. */
struct xg_wt_dd_out {
    uint32_t n_terms;
    uint64_t *goff;         /* [n_terms]: offset in the input */
    uint32_t *len, *df;
};
int xg_wt_gpu_dd_pass1(xg_wt_gpu *g, const struct xg_wt_chunk *c, uint64_t base,
                       uint64_t hash_mask, uint32_t *doclen, uint64_t *postings,
                       double *seconds);
int xg_wt_gpu_dd_finish(xg_wt_gpu *g, struct xg_wt_dd_out *out, double *seconds);
void xg_wt_dd_out_free(struct xg_wt_dd_out *o);
/* Forget the device dictionary (after it declined). */
void xg_wt_gpu_dd_drop(xg_wt_gpu *g);

/* Estimated bytes the GPU steps moved (the least each step's kernels must
 * read and write), summed per step since the last reset, process-wide;
 * benchmarks divide them by the step times.  Zeros without CUDA. */
void xg_wt_gpu_traffic(double bytes[XG_WT_N_STEPS], int reset);

#endif
