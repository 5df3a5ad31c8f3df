/** @file qlm_int.h
 *  @brief Private to the qlm pipeline: a chunk of documents as term ids,
 *         the suffix sorts (qlm_sort.c), the group walk that counts
 *         (qlm_count.c), and the small shared helpers (qlm_util.c), called
 *         by the driver (qlm.c).
 *
 *  Positions inside a chunk are 32-bit (a chunk holds fewer than 2^32 - 2
 *  words); an n-gram starting at position p exists when len(p) >= n, where
 *  len(p) = doc_end[doc[p]] - p is the number of words from p to the end
 *  of its document.
 */
#ifndef XG_QLM_INT_H
#define XG_QLM_INT_H

#include <stddef.h>
#include <stdint.h>

#include "qlm.h"
#include "../runtime/clock.h"
#include "../runtime/threads.h"
#include "../text/dict.h"

/* One chunk: whole documents, their words' term ids. */
struct xg_qlm_chunk {
    const uint32_t *ids;        /* n_words term ids (into the whole input) */
    uint64_t word_base;         /* index of ids[0] in the whole input */
    uint32_t n_words;
    const uint32_t *doc;        /* per word: chunk-local document (NULL
                                   for the GPU engine: on the device) */
    const uint32_t *doc_end;    /* per chunk-local document: end position */
    uint32_t n_docs;
    uint64_t doc_base;          /* internal number of the first document */
};

/* Words from p to the end of its document. */
static inline uint32_t xg_qlm_len(const struct xg_qlm_chunk *c, uint32_t p)
{
    return c->doc_end[c->doc[p]] - p;
}

/* Sort the chunk's positions by their sigma-word keys (words past the end
 * of the document compare below every word), ties by position: sa gets
 * the order, lcp[i] the number of leading words (at most sigma, never past
 * either document's end) that sa[i] shares with sa[i - 1] (lcp[0] = 0).
 * Returns XG_OK or XG_ERR_NOMEM. */
int xg_qlm_sort_ref(const struct xg_qlm_chunk *c, uint32_t sigma, int how,
                    uint32_t threads, uint32_t *sa, uint8_t *lcp);

/* A chunk's distinct n-grams of one n, in order. */
struct xg_qlm_grams {
    uint64_t *pos;              /* an occurrence, index into the whole ids */
    uint64_t *z;                /* f(x, C) within the chunk */
    uint64_t *df;               /* documents (of the chunk) holding x */
    uint64_t n, cap;
};

/* The global tables after pass 1, and where pass 2 puts rows. */
struct xg_qlm_tables {
    const uint32_t *ids;        /* the whole input's term ids */
    struct xg_qlm_grams g[XG_QLM_MAX_SIGMA + 1];   /* per n (1..sigma) */
    uint64_t *w[XG_QLM_MAX_SIGMA + 1];  /* per n-gram: f(t_1^{n-1}, C) */
    uint64_t base[XG_QLM_MAX_SIGMA + 2];/* first global n-gram id per n */
    double lambda;
    uint64_t *cursor;           /* per global n-gram: next row */
    struct xg_qlm_result *r;    /* rows land here */
    const uint32_t *docids;     /* external docids, or NULL (1, 2, ...) */
};

/* Pass 1: the chunk's distinct n-grams for n = 1..sigma (out[n]).
 * Pass 2 (t != NULL): the chunk's rows, placed through t->cursor.
 * Returns XG_OK or XG_ERR_NOMEM. */
int xg_qlm_count_ref(const struct xg_qlm_chunk *c, const uint32_t *sa,
                     const uint8_t *lcp, uint32_t sigma, uint32_t threads,
                     struct xg_qlm_grams *out, const struct xg_qlm_tables *t);

/* ---- the GPU engine (qlm_cuda.c, qlm_cuda_pass.c; qlm_nocuda.c without
 * CUDA).  Every call sorts the chunk again on the device and gives what
 * the twin's xg_qlm_sort_ref + xg_qlm_count_ref give, bit for bit.  Each
 * returns XG_OK, XG_ERR_NODEVICE, XG_ERR_NOMEM (device memory), XG_ERR_CUDA
 * or XG_ERR_FORMAT (an internal inconsistency), with the message set;
 * seconds[] gets the steps' cudaEvent times (and host wall time for pass
 * 2's placing, as XG_QLM_STEP_MERGE). */
typedef struct xg_qlm_gpu xg_qlm_gpu;

struct xg_qlm_gpu_args {
    uint32_t sigma;
    int sort;                   /* enum xg_qlm_sort */
    uint32_t n_terms;           /* term ids are below this */
    const uint32_t *docids;     /* the chunk's external docids, or NULL */
    double lambda;
    int counts;                 /* keep the four counts of each row */
};

/* threads: host threads for copying results out. */
int xg_qlm_gpu_open(uint32_t threads, xg_qlm_gpu **g);
void xg_qlm_gpu_close(xg_qlm_gpu *g);
/* Its device (runtime/device.h: stream, pinned staging), which the
 * device dictionary shares; NULL without CUDA. */
struct xg_device;
struct xg_device *xg_qlm_gpu_device(xg_qlm_gpu *g);
/* Pass 1 of a chunk: out[n] as xg_qlm_count_ref fills it. */
int xg_qlm_gpu_pass1(xg_qlm_gpu *g, const struct xg_qlm_chunk *c,
                     const struct xg_qlm_gpu_args *a, struct xg_qlm_grams *out,
                     double *seconds);
/* Pass 2 of a chunk: its rows placed through t->cursor. */
int xg_qlm_gpu_pass2(xg_qlm_gpu *g, const struct xg_qlm_chunk *c,
                     const struct xg_qlm_gpu_args *a, const struct xg_qlm_tables *t,
                     double *seconds);
/* In core (the chunk is the collection): one pass fills r's n-grams and
 * rows (n_grams, gram_n, gram_pos, gram_off, n_rows, docids, prob,
 * counts) directly, in the output order. */
int xg_qlm_gpu_whole(xg_qlm_gpu *g, const struct xg_qlm_chunk *c,
                     const struct xg_qlm_gpu_args *a, struct xg_qlm_result *r,
                     double *seconds);

/* Compare the n words at a and b of ids (term id order). */
static inline int xg_qlm_cmp(const uint32_t *ids, uint64_t a, uint64_t b,
                             uint32_t n)
{
    for (uint32_t i = 0; i < n; ++i)
        if (ids[a + i] != ids[b + i]) return ids[a + i] < ids[b + i] ? -1 : 1;
    return 0;
}

/* Append one n-gram to a list (XG_ERR_NOMEM). */
int xg_qlm_grams_push(struct xg_qlm_grams *g, uint64_t pos, uint64_t z,
                      uint64_t df);
void xg_qlm_grams_free(struct xg_qlm_grams *g);

/* Sort a[0, n) ascending (LSD radix for large n; tmp holds n items). */
void xg_qlm_sort_u64(uint64_t *a, size_t n, uint64_t *tmp);
void xg_qlm_sort_u32(uint32_t *a, size_t n, uint32_t *tmp);

#endif
