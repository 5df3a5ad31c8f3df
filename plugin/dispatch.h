/** @file dispatch.h
 *  @brief The GPU dispatcher: queries from many application threads are
 *         batched for the GPU engine (seed 004 ch. 3): a batch closes when
 *         it holds max_batch queries, when its work (postings) reaches the
 *         computation threshold, or when its oldest query has waited
 *         max_wait.  A query still queued at its deadline is withdrawn.
 *         One thread per lane runs the batches (a lane: a handle whose
 *         GPU engine it alone uses; with two, one batch is built and
 *         finished on the host while the other is on the device);
 *         callers block until their query is answered.  It only
 *         batches: each query comes back with the engine's status for
 *         it, and what to do about a status other than XG_OK is the
 *         router's (router.c).
 */
#ifndef XG_DISPATCH_H
#define XG_DISPATCH_H

#include <stdint.h>

#include "../gpu/runtime/knobs.h"
#include "handle.h"

struct xg_dispatch_opts {
    uint32_t max_batch;         /* queries per batch */
    uint64_t batch_work;        /* postings per batch (computation threshold) */
    double max_wait;            /* seconds the oldest query may wait */
    double deadline;            /* seconds a query may stay queued (0: none) */
    struct xg_bm25_params bm25;
};

struct xg_dispatch;

/* A lane per engine slot at most. */
#define XG_DISPATCH_MAX_LANES XG_SLOTS_MAX

/* Start a batch thread on each of lanes[0..n_lanes) (1 to
 * XG_DISPATCH_MAX_LANES handles on one index), whose GPU engine it alone
 * uses from now on (the caller has opened them: xg_handle_gpu_status). */
int xg_dispatch_start(xg_handle *const *lanes, uint32_t n_lanes,
                      const struct xg_dispatch_opts *o,
                      struct xg_dispatch **out);
void xg_dispatch_stop(struct xg_dispatch *d);

/* What became of a submitted query. */
enum xg_dispatch_outcome {
    XG_DISPATCH_RAN = 0,        /* in a batch: *status is the engine's */
    XG_DISPATCH_WITHDRAWN,      /* still queued at its deadline */
    XG_DISPATCH_STOPPED         /* the dispatcher is stopping */
};

/* Answer pq (top k, `work` postings) in the next batch; `predicted` is
 * the cost model's latency for it (seconds), against which the caller's
 * actual wait is measured (xg_dispatch_load's excess).  Returns XG_OK
 * with *outcome set; for XG_DISPATCH_RAN, *status is the engine's for
 * this query (xg_handle_run_gpu: XG_OK with `out` filled, else `out`
 * empty: XG_ERR_UNSUPPORTED, or the batch's fault).  Other returns are
 * errors (the query was not queued). */
int xg_dispatch_submit(struct xg_dispatch *d, struct xg_prepared *pq,
                       uint32_t k, uint64_t work, double predicted,
                       struct xg_result *out, int *status, int *outcome);

/* What a query submitted now would wait behind (for the cost model), read
 * without the lock. */
struct xg_dispatch_load {
    uint64_t queued_work;       /* postings queued, not yet in a batch */
    uint64_t batch_work;        /* the computation threshold */
    int running;                /* every lane has a batch */
    double batch_seconds;       /* recent batches' wall time (smoothed) */
    double excess;              /* recent queries' wait, submit to return,
                                   beyond their predicted latency
                                   (excess.h: smoothed, halving without
                                   new samples, so a GPU given no
                                   queries because of it is tried again) */
};
void xg_dispatch_load(struct xg_dispatch *d, struct xg_dispatch_load *l);

struct xg_dispatch_stats {
    uint64_t batches, queries, deadline_misses;
    uint64_t inline_batches;    /* of batches: a query alone on its
                                   caller's thread, the GPU idle */
    double busy_seconds;        /* the batch threads' wall in batches */
};
void xg_dispatch_stats(struct xg_dispatch *d, struct xg_dispatch_stats *st);

#endif
