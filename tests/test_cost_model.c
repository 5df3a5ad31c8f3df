/** @file test_cost_model.c
 *  @brief The planner's cost model (plugin/cost_model.c): the stock time
 *         the planner weighs (90th percentile stretched by the CPU's
 *         pressure; the median with idle cores while the GPU works, the
 *         work stealing of seed 003 §9), and the GPU's latency behind its
 *         queue, on random models and queries.
 */
#include <math.h>

#include "../plugin/cost_model.h"
#include "test_util.h"

static double rnd(double lo, double hi)
{
    return lo + (hi - lo) * (double)rng_u32() / 4294967296.0;
}

int main(int argc, char **argv)
{
    seed_used = parse_seed(argc, argv);
    rng_state = seed_used;
    printf("seed %" PRIu64 "\n", seed_used);
    for (int round = 0; round < 1000; ++round) {
        struct xg_cost_model m;
        xg_cost_model_default(&m);
        m.stock_or_scale = rnd(1e-7, 1e-3);
        m.stock_or_exponent = rnd(0, 1);
        m.stock_and_scale = rnd(1e-7, 1e-3);
        m.stock_and_exponent = rnd(0, 1);
        m.stock_or_spread = rnd(1, 6);
        m.stock_and_spread = rnd(1, 6);
        struct xg_query_features f = {1 + rng_below(8), (int)rng_below(2), 0, 0};
        f.shortest = rng_below(1u << 20);
        f.sum = f.shortest * f.n_lists + rng_below(1u << 20);
        const double p50 = xg_cost_stock_seconds(&m, &f);
        const double p90 = xg_cost_stock_seconds_p90(&m, &f);
        const double spread = f.is_and ? m.stock_and_spread : m.stock_or_spread;
        CHECK(fabs(p90 - p50 * spread) <= 1e-12 * p90, "p90 = median * spread");
        const double busy = rnd(1, 8), idle = rnd(0, 1);
        /* Saturated cores: p90 stretched, whatever the GPU does. */
        for (int gpu = 0; gpu < 2; ++gpu)
            CHECK(fabs(xg_cost_stock_weighed(&m, &f, busy, gpu) - p90 * busy) <=
                      1e-12 * p90 * busy, "pressure %.2f, gpu %d", busy, gpu);
        /* Idle cores, idle GPU: no stealing, p90 unstretched. */
        CHECK(xg_cost_stock_weighed(&m, &f, idle, 0) == p90, "idle GPU");
        /* Idle cores, busy GPU: the median, scaled down to the floor. */
        const double s = idle > XG_COST_IDLE_FLOOR ? idle : XG_COST_IDLE_FLOOR;
        CHECK(fabs(xg_cost_stock_weighed(&m, &f, idle, 1) - p50 * s) <= 1e-12 * p50,
              "stealing at pressure %.3f", idle);
        CHECK(xg_cost_stock_weighed(&m, &f, idle, 1) <= p90, "stealing is cheaper");
        /* The GPU: the wait, the batches ahead, its own batch. */
        const double bs = rnd(1e-4, 1e-2), wait = rnd(0, 2e-3);
        const uint64_t bw = 1 + rng_below(1u << 27);
        const double own = m.gpu_batch + m.gpu_per_posting *
                                             (double)xg_cost_gpu_work(&f);
        CHECK(fabs(xg_cost_gpu_seconds(&m, &f, 0, bw, 0, bs, wait) - (wait + own)) <
                  1e-15, "idle GPU");
        CHECK(fabs(xg_cost_gpu_seconds(&m, &f, 3 * bw, bw, 1, bs, wait) -
                   (wait + 4 * bs + own)) < 1e-12, "a batch running, 3 full queued");
        CHECK(xg_cost_gpu_work(&f) == (f.is_and ? f.shortest : f.sum), "work");
    }
    group_ok("stock weighed by pressure and stealing; GPU behind its queue");
    printf("%d passed, 0 failed\n", n_passed);
    return 0;
}
