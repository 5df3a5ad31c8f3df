/** @file engine_int.h
 *  @brief Internals shared by engine.c (host side, twin pipeline) and
 *         engine_cuda.c (device side).
 */
#ifndef XG_ENGINE_INT_H
#define XG_ENGINE_INT_H

#include "batch.h"
#include "engine.h"

struct xg_gpu {
    const struct xg_index *ix;
    struct xg_engine_opts o;
    struct xg_engine_stats st;
    struct xg_dindex hix;          /* host pointers: the twins' view */
    double *h_kd;                  /* xg_bm25_kd per doc for kd_params */
    struct xg_bm25_params kd_params;
    int kd_valid;
    struct xg_batch batch;
    struct xg_dqresult *h_res;     /* per batch query */
    struct xg_dcand *h_cand;       /* batch.cand_total */
    uint64_t cap_res, cap_cand;
    void *dev;                     /* engine_cuda.c's state */
};

/* Device side (engine_cuda.c; engine_nocuda.c when built without CUDA). */
int xg_engine_dev_open(struct xg_gpu *e);
/* Upload kd after h_kd changed. */
int xg_engine_dev_set_kd(struct xg_gpu *e);
/* Run e->batch; fill e->h_res and e->h_cand. */
int xg_engine_dev_run(struct xg_gpu *e);
void xg_engine_dev_close(struct xg_gpu *e);

/* 1 if this allocation must fail (fault injection), else 0. */
int xg_engine_fault_take(void);

/* Make room for the host copies of the results of e->batch. */
int xg_engine_host_room(struct xg_gpu *e);

#endif
