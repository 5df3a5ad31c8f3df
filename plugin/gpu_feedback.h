/** @file gpu_feedback.h
 *  @brief How much longer GPU-routed queries take than the cost model
 *         says, measured on the queries themselves, for the planner.
 *
 *  The model prices a GPU query from the device's batch time.  On a host
 *  whose cores are saturated (64 application threads running stock
 *  queries on 16 cores), the dispatcher thread and the thread waiting for
 *  its batch both wait for a core too: on the real-text AND run the few
 *  GPU-routed queries took 19 ms against 1.9 ms when the GPU had every
 *  query (docs/benchmarks.md, fourth session).  The planner multiplies its
 *  GPU price by the observed/predicted ratio, smoothed over the last GPU
 *  queries; with no GPU query for a while the ratio decays back towards 1,
 *  so the planner tries the GPU again once the host is calmer.
 */
#ifndef XG_GPU_FEEDBACK_H
#define XG_GPU_FEEDBACK_H

#include <stdatomic.h>
#include <stdint.h>

struct xg_gpu_feedback {
    _Atomic uint64_t ratio_milli;   /* smoothed observed/predicted, x1000 */
    _Atomic uint64_t last_ns;       /* when it was last updated */
};

/* Start at ratio 1. */
void xg_gpu_feedback_init(struct xg_gpu_feedback *f);

/* The factor for the GPU price at time now_ns (CLOCK_MONOTONIC): the
 * smoothed ratio, decayed towards 1 with a 1 s time constant since the
 * last observation; at least 1 (a GPU faster than modelled is priced as
 * modelled). */
double xg_gpu_feedback_factor(const struct xg_gpu_feedback *f,
                              uint64_t now_ns);

/* One GPU-routed query took `observed` seconds where the model said
 * `predicted` (both > 0; anything else is ignored). */
void xg_gpu_feedback_observe(struct xg_gpu_feedback *f, double observed,
                             double predicted, uint64_t now_ns);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t xg_gpu_feedback_now_ns(void);

#endif
