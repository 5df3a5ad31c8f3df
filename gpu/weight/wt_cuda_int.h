/** @file wt_cuda_int.h
 *  @brief Private to the weight pipeline's GPU engine: its state on the
 *         device runtime (runtime/device.h: stream, pool under the budget,
 *         pinned staging, step timing), shared by the core (wt_cuda.c:
 *         chunk buffers, the pass-2 tables), its satellites
 *         (wt_cuda_pass.c, wt_cuda_place.c, wt_cuda_dict.c,
 *         wt_cuda_whole.c) and wt_cuda_open.c on top.  Calls point one
 *         way: open -> place, dict, whole -> pass -> core -> runtime.
 *         Built only with CUDA.
 */
#ifndef XG_WT_CUDA_INT_H
#define XG_WT_CUDA_INT_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#include "../runtime/device.h"
#include "../runtime/error.h"
#include "wt_int.h"
#include "wt_kern.h"

#define XG_WT_MIN_BUDGET ((uint64_t)64 << 20)  /* fixed overheads allowed */
#define XG_WT_MAX_MARKS 16

struct xg_wt_lock_ahead;

struct xg_wt_gpu {
    struct xg_device dev;               /* stream, pool, staging, timing
                                           (XG_WT_MAX_MARKS per pass) */
    uint32_t *h_small;                  /* dev's pinned counters: counts,
                                           error flags */
    /* Chunk buffers (wt_cuda_pass.c names their uses per pass). */
    uint64_t cap_len, cap_w;            /* text bytes, words */
    char *d_text;
    char *d_text_alt;                   /* runs in chunks: the next chunk's
                                           text comes in here meanwhile */
    const struct xg_wt_chunk *next;     /* xg_wt_gpu_next */
    int ahead;                          /* a run in chunks: copy ahead */
    uint32_t *d_start, *d_len, *d_doc, *d_aux, *d_aux2, *d_aux3;
    uint32_t *d_v;                      /* 2 * cap_w: sort values, halves */
    uint64_t *d_k0, *d_k1;              /* sort keys, double buffer */
    uint32_t *d_small;                  /* 8 counters */
    void *d_tmp;                        /* CUB workspace */
    size_t tmp_bytes;
    /* Pass-2 tables (xg_wt_gpu_tables). */
    uint64_t *d_tkey;
    uint32_t *d_tid;
    uint64_t tcap, n_terms, n_tw, n_docs;  /* n_tw: d_tw's entries */
    double *d_tw, *d_kd, *d_extra;
    /* The dictionary of a run in chunks on the device (wt_cuda_dict.c). */
    struct {
        uint64_t *key;                  /* the table: cap slots */
        uint32_t *val;                  /* term, then term id (ready) */
        uint64_t cap;
        struct xg_wt_dd_terms t;        /* tcap terms, arena_cap bytes */
        uint64_t tcap, arena_cap, arena_used;
        uint32_t n_terms;
        int ready;                      /* ranked: pass 2 looks words up */
    } dd;
    /* The in-core run on the device dictionary (wt_cuda_whole.c), between
     * its count and its weights. */
    uint64_t *d_pairs;                  /* from text/dict_gpu.h: cudaFree */
    uint32_t *d_toff;                   /* from text/dict_gpu.h: cudaFree */
    uint64_t *d_uniq;                   /* distinct pairs */
    uint64_t *d_tout, *d_tptr;          /* the result's term_off, term */
    uint32_t *d_tf, *d_first, *d_map, *d_docs;
    void *d_wtmp;
    uint64_t whole_words, whole_terms, whole_docs, whole_np;
    size_t wtmp_bytes;
    int whole_dbits;
    /* Pass 2 of a run in chunks placed into the result (wt_cuda_place.c):
     * the kernels' state, its device arrays' sizes, and the thread that
     * page-locks the result (xg_wt_gpu_place_reserve). */
    struct xg_wt_place place;
    uint64_t place_nt, place_docs;
    struct xg_wt_lock_ahead *lock_ahead;
};

/* The bits needed to hold x. */
static inline int xg_wt_bits(uint64_t x)
{
    int b = 0;
    while (x) { ++b; x >>= 1; }
    return b;
}

/* The chunk buffers for a chunk of len bytes and at most `words` words
 * (grown when needed), and their release. */
int xg_wt_reserve(struct xg_wt_gpu *g, size_t len, uint64_t words);
void xg_wt_release_chunk(struct xg_wt_gpu *g);
/* The steps every pass starts with (wt_cuda_pass.c): the chunk's text up
 * (with a guard '\n') and its *n word starts in d_start; then, with the
 * document-start flags in d_aux, 1-based documents in d_doc and (with
 * `lengths`) document lengths in d_aux3; the check of the document count
 * (after xg_wt_read_small, which reads counters d_small[1..3]). */
int xg_wt_upload_starts(struct xg_wt_gpu *g, const struct xg_wt_chunk *c, uint32_t *n);
int xg_wt_chunk_docs(struct xg_wt_gpu *g, const struct xg_wt_chunk *c, uint32_t n,
                     int lengths);
int xg_wt_read_small(struct xg_wt_gpu *g);
int xg_wt_check_docs(struct xg_wt_gpu *g, const struct xg_wt_chunk *c);
/* Pass 2 of one chunk on the device (wt_cuda_pass.c): *np postings
 * sorted by term then document, their terms in d_start, documents in
 * d_aux2 and weights in *d_w, and their runs (xg_wt_term_runs_gpu) in
 * d_len (terms), d_doc (lengths), d_aux3 (first postings), d_v (packed)
 * and d_small[6] (count), all on the stream; the runs after a step mark
 * (xg_device_timer_start), so that the caller's next step's time includes them. */
int xg_wt_pass2_device(struct xg_wt_gpu *g, const struct xg_wt_chunk *c,
                       const struct xg_wt_tables *t, uint32_t *np, double **d_w,
                       double *seconds);
/* Frees the pass-2 tables (wt_cuda.c). */
void xg_wt_free_tables(struct xg_wt_gpu *g);
/* Frees the placement's device arrays and unlocks the result (after a
 * stream sync; wt_cuda_place.c). */
void xg_wt_place_release(struct xg_wt_gpu *g);
/* Frees the device dictionary run's buffers (wt_cuda_whole.c). */
void xg_wt_whole_release(struct xg_wt_gpu *g);
/* Frees the chunked run's device dictionary (wt_cuda_dict.c). */
void xg_wt_dd_release(struct xg_wt_gpu *g);
/* Estimated traffic per step (xg_wt_gpu_traffic). */
void xg_wt_count(int step, double bytes);

#endif
