/** @file wt.h
 *  @brief Whole-collection term weighting (seed 000 §4, seed 001's out-of-
 *         core chunks): the weight of every (term, document) of a text
 *         collection in the seed format, on the GPU or on its multi-
 *         threaded CPU twin, with bit-identical results.
 *
 *  wt.c drives both engines through the same chunk plan (wt_plan.c:
 *  documents never straddle chunks) and two passes: pass 1 gives document
 *  lengths and the global dictionary with each term's df; the terms are
 *  ranked in byte order (term id = rank) and every per-term and
 *  per-document constant is computed on the host with glibc; pass 2 gives
 *  each chunk's postings sorted by term id then document, with tf and
 *  weight, which are gathered into the global order.  The engines: wt_ref.c
 *  (pthreads) and the GPU's (wt_cuda*.c + wt.cu), which keeps the
 *  dictionary on the device: in core in one pass (wt_cuda_whole.c), in
 *  chunks across both passes (wt_cuda_dict.c).
 */
#ifndef XG_WT_H
#define XG_WT_H

#include <stddef.h>
#include <stdint.h>

#include "../query_shape.h"

#ifdef __cplusplus
extern "C" {
#endif

enum xg_wt_formula { XG_WT_XAPIAN = 0, XG_WT_SEED = 1 };
enum xg_wt_engine { XG_WT_AUTO = 0, XG_WT_CPU = 1, XG_WT_GPU = 2 };

/* Steps timed (seed 000 fig. 5 style). */
enum xg_wt_step {
    XG_WT_STEP_HTOD, XG_WT_STEP_STARTS, XG_WT_STEP_DOCIDS, XG_WT_STEP_DOCLEN,
    XG_WT_STEP_DICT, XG_WT_STEP_SORT, XG_WT_STEP_TF, XG_WT_STEP_DF,
    XG_WT_STEP_RANK, XG_WT_STEP_WEIGHT, XG_WT_STEP_DTOH, XG_WT_STEP_PLACE,
    XG_WT_STEP_SETUP,   /* host: engine open and close, chunk plan */
    XG_WT_N_STEPS
};
extern const char *const xg_wt_step_names[XG_WT_N_STEPS];

struct xg_wt_input {
    const char *buf;        /* seed format; each word ends with '\n' */
    size_t len;
    const uint32_t *docids; /* external docid per non-empty document, or
                               NULL for 1, 2, ... */
    uint64_t n_empty;       /* documents without words, counted in N */
    const char *path;       /* where it came from, for messages (NULL:
                               "weight") */
};

struct xg_wt_opts {
    int formula;                    /* enum xg_wt_formula */
    struct xg_bm25_params bm25;     /* k1, b used by both formulas */
    int engine;                     /* enum xg_wt_engine */
    uint32_t threads;               /* CPU twin threads (0: all cores) */
    uint64_t device_memory;         /* budget in bytes (0: in core, or
                                       90% of the device's free memory) */
    int progress;                   /* lines on stderr */
    uint64_t hash_mask;             /* tests: keep only these hash bits
                                       (0: all 64) to force collisions */
};

struct xg_wt_result {
    uint64_t n_docs;                /* N (with empty documents) */
    uint64_t total_length;          /* words */
    uint32_t n_terms;
    uint64_t n_postings;
    const char **term;              /* term id -> bytes (into the input) */
    uint32_t *term_len;
    uint64_t *term_off;             /* [n_terms + 1]: postings of term t */
    uint32_t *docids;               /* per posting, external */
    double *weights;                /* per posting */
    uint32_t n_chunks;
    int engine;                     /* the engine that ran (CPU or GPU) */
    int fell_back;                  /* 1: GPU hash collision, CPU answered */
    int dict_on_gpu;                /* 1: the dictionary was built on the
                                       device (in core: one pass over the
                                       text; in chunks: kept there) */
    int placed_on_gpu;              /* 1: a run in chunks whose device
                                       placed the postings into docids
                                       and weights (no host gather) */
    char dict_declined[160];        /* why the device dictionary declined
                                       and the host's answered, or "" */
    double seconds[XG_WT_N_STEPS];  /* per step, summed over chunks */
    int terms_in_weights;           /* 1: term and term_off lie in weights'
                                       allocation, past its postings (the
                                       in-core GPU run's room), and go
                                       with it */
};

/* Weigh a collection.  Errors: XG_ERR_NODEVICE (--engine gpu without a
 * device or without CUDA), XG_ERR_CUDA, XG_ERR_NOMEM (also: a document
 * larger than the budget allows), XG_ERR_FORMAT (more than 2^32-1 terms
 * or words in a chunk).  With engine AUTO a GPU failure before any output
 * falls back to the CPU twin. */
int xg_wt_run(const struct xg_wt_input *in, const struct xg_wt_opts *o,
              struct xg_wt_result *r);
void xg_wt_result_free(struct xg_wt_result *r);

#ifdef __cplusplus
}
#endif
#endif
