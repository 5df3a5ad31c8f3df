/** @file gpu_feedback.c
 *  @brief The observed/predicted ratio of GPU-routed queries (see the
 *         header): lock-free, one relaxed load on the planner's path.
 */
#include "gpu_feedback.h"

#include <math.h>
#include <time.h>

#define DECAY_NS 1e9            /* time constant of the decay towards 1 */
#define WEIGHT 0.2              /* of a new observation in the average */
#define MAX_RATIO 1000.0        /* a stalled query must not price the GPU
                                   out for longer than the decay allows */

void xg_gpu_feedback_init(struct xg_gpu_feedback *f)
{
    atomic_store(&f->ratio_milli, 1000);
    atomic_store(&f->last_ns, 0);
}

uint64_t xg_gpu_feedback_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The smoothed ratio as it stands at now_ns, decayed towards 1. */
static double decayed(const struct xg_gpu_feedback *f, uint64_t now_ns)
{
    const double r =
        atomic_load_explicit(&f->ratio_milli, memory_order_relaxed) / 1000.0;
    const uint64_t last =
        atomic_load_explicit(&f->last_ns, memory_order_relaxed);
    const double age = now_ns > last ? (double)(now_ns - last) : 0;
    return 1 + (r - 1) * exp(-age / DECAY_NS);
}

double xg_gpu_feedback_factor(const struct xg_gpu_feedback *f,
                              uint64_t now_ns)
{
    const double r = decayed(f, now_ns);
    return r > 1 ? r : 1;
}

void xg_gpu_feedback_observe(struct xg_gpu_feedback *f, double observed,
                             double predicted, uint64_t now_ns)
{
    if (!(observed > 0) || !(predicted > 0)) return;
    double r = observed / predicted;
    if (r > MAX_RATIO) r = MAX_RATIO;
    /* Racing updates may lose one observation: a sample, not a count. */
    const double v = (1 - WEIGHT) * decayed(f, now_ns) + WEIGHT * r;
    atomic_store_explicit(&f->ratio_milli, (uint64_t)(v * 1000 + 0.5),
                          memory_order_relaxed);
    atomic_store_explicit(&f->last_ns, now_ns, memory_order_relaxed);
}
