/** @file qlm.h
 *  @brief N-gram query likelihood (seed 002, Wakatsuki et al., DEIM 2018;
 *         issue 6): for every n in 1..sigma and every distinct (n-gram,
 *         document) pair of a text collection, the Jelinek-Mercer smoothed
 *         probability of eq. 2, computed by the multi-threaded CPU twin of
 *         the seed's GPU pipeline or by its GPU engine (qlm_cuda*.c,
 *         qlm.cu), which gives the same bytes.
 *
 *  Definitions (docs/qlm.md): f(x, d) is the number of occurrences of the
 *  word sequence x in document d, f(x, C) its sum over the collection;
 *  n-grams never cross documents; for n = 1 the history counts are the
 *  document's and the collection's lengths in words.  P is xg_qlm_prob()
 *  of qlm_formula.h.  Term ids come from the weight pipeline's dictionary
 *  (id = rank in byte order), so ordering n-grams by their id sequences
 *  orders them by their words' bytes.
 *
 *  qlm.c drives the run: the dictionary and term ids, a plan of chunks that
 *  split at documents (--device-memory), pass 1 (every chunk's distinct
 *  n-grams with their collection counts, merged into global tables), and
 *  pass 2 (every chunk's rows with the document counts, placed in the
 *  global order: n, then n-gram, then document).
 */
#ifndef XG_QLM_H
#define XG_QLM_H

#include <stddef.h>
#include <stdint.h>

#include "../text/tokenize.h"

#ifdef __cplusplus
extern "C" {
#endif

#define XG_QLM_MAX_SIGMA 8

/* How the sigma-word suffixes are sorted. */
enum xg_qlm_sort {
    XG_QLM_SORT_DOUBLING = 0,   /* prefix doubling (seed 002 Algorithm 1) */
    XG_QLM_SORT_COMPARE = 1     /* comparison sort of sigma-word keys */
};

/* Which engine computes the table: auto is the GPU when a device opens,
 * else the CPU twin. */
enum xg_qlm_engine { XG_QLM_AUTO = 0, XG_QLM_CPU = 1, XG_QLM_GPU = 2 };

/* Steps timed (seed 002 fig. 6 style), summed over chunks and passes.
 * The GPU engine's sort, count, prob and copy steps are cudaEvent times;
 * every other step is host wall time. */
enum xg_qlm_step {
    XG_QLM_STEP_DICT, XG_QLM_STEP_IDS, XG_QLM_STEP_SORT, XG_QLM_STEP_COUNT,
    XG_QLM_STEP_MERGE, XG_QLM_STEP_PROB, XG_QLM_STEP_COPY, XG_QLM_N_STEPS
};
extern const char *const xg_qlm_step_names[XG_QLM_N_STEPS];

struct xg_qlm_opts {
    uint32_t sigma;         /* 1..XG_QLM_MAX_SIGMA */
    double lambda;          /* weight of the document model, in [0, 1] */
    int sort;               /* enum xg_qlm_sort */
    uint32_t threads;       /* 0: all cores */
    uint64_t device_memory; /* chunk budget in bytes (0: in core) */
    int counts;             /* 1: keep the four counts of every row */
    int progress;           /* lines on stderr */
    int engine;             /* enum xg_qlm_engine */
    int host_dictionary;    /* 1: the GPU engine takes the host's
                               dictionary and term ids; 0 (default): it
                               builds them on the device in core (text/dict_gpu.h)
                               and the host answers only when it cannot */
};

struct xg_qlm_result {
    uint32_t sigma;
    uint64_t n_docs;        /* non-empty documents */
    uint64_t total_length;  /* words */
    uint32_t n_terms;
    const char **term;      /* term id -> bytes (into the input) */
    uint32_t *term_len;
    uint32_t *ids;          /* term id of every word, documents in order */
    uint64_t n_grams;       /* distinct n-grams, all n, in output order */
    uint8_t *gram_n;        /* per n-gram: n */
    uint64_t *gram_pos;     /* per n-gram: an occurrence (index into ids) */
    uint64_t *gram_off;     /* [n_grams + 1]: rows of each n-gram */
    uint64_t n_rows;
    uint32_t *docids;       /* per row, external, ascending per n-gram */
    double *prob;           /* per row */
    uint64_t *counts;       /* per row (opts.counts): f(x,d), f(h,d),
                               f(x,C), f(h,C); h is x without its last word */
    uint32_t n_chunks;
    int engine;             /* the engine that ran (XG_QLM_CPU or _GPU) */
    int dict_on_gpu;        /* the dictionary and ids came from the GPU
                               (text/dict_gpu.h); else the host built them */
    double seconds[XG_QLM_N_STEPS];
};

/* Compute the table.  Errors: XG_ERR_ARG for a bad sigma or lambda,
 * XG_ERR_NOMEM (also: a document larger than the
 * --device-memory budget allows), XG_ERR_FORMAT (more than 2^32-1 terms),
 * XG_ERR_NODEVICE (engine GPU without a device, or a build without CUDA),
 * XG_ERR_CUDA (engine GPU: the device failed).  Engine AUTO runs the CPU
 * twin when no device opens or the GPU run fails.
 * The message names the fault; on error r is left empty. */
/* The input is a loaded text (text/tokenize.h: --text or --tsv); its empty
 * documents have no n-grams and no rows. */
int xg_qlm_run(const struct xg_text *in, const struct xg_qlm_opts *o,
               struct xg_qlm_result *r);
void xg_qlm_result_free(struct xg_qlm_result *r);

#ifdef __cplusplus
}
#endif
#endif
