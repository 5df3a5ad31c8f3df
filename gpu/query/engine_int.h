/** @file engine_int.h
 *  @brief Internals shared by engine.c (host side, twin pipeline) and
 *         engine_cuda.c (device side).
 */
#ifndef XG_ENGINE_INT_H
#define XG_ENGINE_INT_H

#include <pthread.h>

#include "batch.h"
#include "engine.h"
#include "list_cache.h"
#include "../index/pfor.h"
#include "../runtime/knobs.h"

/* Batches in flight at once: one is built and finished on the host while
 * another runs on the device.  XG_ENGINE_SLOTS_DEFAULT of them unless
 * XG_SLOTS asks for up to XG_ENGINE_SLOTS. */
#define XG_ENGINE_SLOTS XG_SLOTS_MAX
#define XG_ENGINE_SLOTS_DEFAULT 2

/* One search's batch: its descriptors and the host copies of its results
 * (pinned, engine_cuda.c's; the twins' own), and the device side's
 * buffers and lane (engine_cuda.c). */
struct xg_slot {
    struct xg_batch batch;
    struct xg_dqresult *h_res;     /* per batch query */
    struct xg_dcand *h_cand;       /* batch.cand_total */
    uint64_t cap_res, cap_cand;    /* the twins' */
    double device_seconds;         /* the last batch's, from the device */
    void *dev;
    int busy;
};

struct xg_gpu {
    const struct xg_index *ix;
    struct xg_engine_opts o;
    struct xg_engine_stats st;
    struct xg_dindex hix;          /* host pointers: the twins' view */
    double *h_kd;                  /* xg_bm25_kd per doc for kd_params
                                      and the collection kd_n_docs,
                                      kd_total_length */
    struct xg_bm25_params kd_params;
    uint64_t kd_n_docs, kd_total_length;
    int kd_valid;
    /* Searches run at once, each on a slot of its own; n_slots is 1 with
     * a list cache (it places lists per batch) or a memory budget. */
    struct xg_slot slot[XG_ENGINE_SLOTS];
    uint32_t n_slots;
    int positions_resident;        /* hix/dix.pos_offsets set: phrase and
                                      NEAR filters of ANDs run here */
    pthread_mutex_t mu;            /* slots, K_d, statistics */
    pthread_cond_t cv;
    uint32_t kd_users;             /* searches weighing with K_d as it is */
    uint32_t kd_waiters;           /* searches waiting to change it */
    void *dev;                     /* engine_cuda.c's state */
    /* Where each list is: hix.list_off, patched by the cache (twins); the
     * device keeps its own copy, patched from `patch`. */
    uint64_t *list_off;
    struct xg_lcache *cache;       /* NULL: every list resident */
    uint64_t cache_pool;           /* its pool's bytes */
    uint64_t *list_bytes;          /* per term, with a cache */
    uint8_t *hpool;                /* the twins' pool */
    uint64_t *patch;               /* (term, offset) of lists just placed */
    uint32_t n_patch, cap_patch;
};

/* Bytes after POSTINGS (or the pool): a stream read never runs past. */
#define XG_POSTINGS_PAD (4 * XG_PFOR_MAX_WORDS * 2)

/* Decide, for a budget in bytes (0: unlimited), whether the lists stay
 * resident or share an LRU pool; set up the cache.  XG_OK or
 * XG_ERR_NOMEM / XG_ERR_FORMAT. */
int xg_engine_plan_memory(struct xg_gpu *e, uint64_t budget);

/* Device side (engine_cuda.c; engine_nocuda.c when built without CUDA). */
int xg_engine_dev_open(struct xg_gpu *e);
/* Upload kd after h_kd changed. */
int xg_engine_dev_set_kd(struct xg_gpu *e);
/* Run s->batch on s's lane; fill s->h_res, s->h_cand and
 * s->device_seconds.  Safe beside a run on another slot. */
int xg_engine_dev_run(struct xg_gpu *e, struct xg_slot *s);
/* The list cache placed term t at byte `off` of the pool: copy it in
 * (queued on the stream); then upload e->patch in one go. */
int xg_engine_dev_load_list(struct xg_gpu *e, uint32_t t, uint64_t off);
int xg_engine_dev_patch_offsets(struct xg_gpu *e);
void xg_engine_dev_close(struct xg_gpu *e);

/* Make room for the host copies of the results of s->batch (twins). */
int xg_engine_host_room(struct xg_slot *s);

#endif
