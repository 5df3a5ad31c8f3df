/** @file qlm_cuda_int.h
 *  @brief Private to the qlm pipeline's GPU engine: the device state on
 *         the device runtime (runtime/device.h), and qlm_cuda.c's
 *         open/close, the chunk's device arrays, the chunk's upload, sort
 *         and levels shared with the three
 *         per-chunk entry points (qlm_cuda_pass.c).  Built only with CUDA.
 */
#ifndef XG_QLM_CUDA_INT_H
#define XG_QLM_CUDA_INT_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#include "../runtime/device.h"
#include "../runtime/error.h"
#include "qlm_int.h"
#include "qlm_kern.h"

#define XG_QLM_MAX_MARKS 64

struct xg_qlm_gpu {
    struct xg_device dev;               /* stream, pool (no budget: the
                                           chunk plan keeps within it),
                                           staging, timing */
    uint64_t cap_w, cap_d;              /* words, documents */
    int cap_counts;                     /* d_ocnt allocated */
    /* Per word of the chunk (cap_w + 1 each). */
    uint32_t *d_ids, *d_doc, *d_sa, *d_rank, *d_act[2], *d_L, *d_G[2];
    uint32_t *d_gstart[2], *d_rowstart, *d_ucnt[2], *d_odoc;
    uint8_t *d_lenv, *d_lcp;
    uint64_t *d_ukey[2], *d_pos, *d_z, *d_w, *d_off;
    double *d_oprob;
    uint64_t *d_ocnt;                   /* 4 per row (--counts) */
    /* Per document (cap_d + 1 each). */
    uint32_t *d_doc_end, *d_docids;
    struct xg_qlm_scratch s;
    uint32_t *d_count, *h_count;        /* 4 counters; h_count: dev's
                                           pinned ones */
};

/* One level as the host sees it: the device arrays and the counts. */
struct xg_qlm_lv {
    struct xg_qlm_level d;
    int dbits;
};

/* Upload the chunk (ids, document ends, docids) and compute doc[] on the
 * device; grows the arrays when needed. */
int xg_qlm_gpu_load(struct xg_qlm_gpu *g, const struct xg_qlm_chunk *c,
                    const struct xg_qlm_gpu_args *a);
/* Sort the chunk's suffixes (a->sort) and the shared words of neighbours. */
int xg_qlm_gpu_sort(struct xg_qlm_gpu *g, const struct xg_qlm_chunk *c,
                    const struct xg_qlm_gpu_args *a);
/* Level n's groups and rows (its counts in lv; lv->d.nL == 0: no n-grams
 * of length n, nor longer). */
int xg_qlm_gpu_level(struct xg_qlm_gpu *g, const struct xg_qlm_chunk *c,
                     uint32_t n, struct xg_qlm_lv *lv);
/* The error flag the rows set (a history not found). */
int xg_qlm_gpu_check(struct xg_qlm_gpu *g);

#endif
