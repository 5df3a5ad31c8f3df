/** @file test_cost_model.c
 *  @brief The planner's cost model (plugin/cost_model.c): stock's 90th
 *         percentile and the GPU's latency behind its queue, on random
 *         models and queries.
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
    group_ok("stock p90 = median * spread; GPU behind its queue");
    printf("%d passed, 0 failed\n", n_passed);
    return 0;
}
