/** @file test_gpu_feedback.c
 *  @brief The planner's GPU feedback (plugin/gpu_feedback.c): the factor
 *         follows slow GPU queries, never goes below 1, ignores bad
 *         samples, caps a stall, and decays back to 1 without new ones.
 */
#include <math.h>

#include "../plugin/gpu_feedback.h"
#include "test_util.h"

#define S 1000000000ull         /* one second in ns */

int main(void)
{
    struct xg_gpu_feedback f;
    xg_gpu_feedback_init(&f);
    double x = xg_gpu_feedback_factor(&f, 5 * S);
    CHECK(x == 1.0, "fresh factor %g, want 1", x);
    group_ok("starts at 1");

    /* Queries 10x slower than modelled, every millisecond: the factor
     * climbs towards 10 (20 samples at weight 0.2: within 2%). */
    uint64_t t = 10 * S;
    for (int i = 0; i < 20; ++i, t += S / 1000)
        xg_gpu_feedback_observe(&f, 0.010, 0.001, t);
    x = xg_gpu_feedback_factor(&f, t);
    CHECK(x > 9.8 && x < 10.0, "factor %g after 20 samples of 10x", x);
    group_ok("follows slow GPU queries");

    /* Without new samples it decays: by e^-1 of the excess after 1 s. */
    const double excess = x - 1;
    double y = xg_gpu_feedback_factor(&f, t + S);
    CHECK(fabs((y - 1) - excess * exp(-1)) < 0.01, "after 1 s %g, want %g", y,
          1 + excess * exp(-1));
    y = xg_gpu_feedback_factor(&f, t + 10 * S);
    CHECK(y < 1.001, "after 10 s %g, want about 1", y);
    group_ok("decays towards 1");

    /* Faster than modelled: the factor stays 1. */
    xg_gpu_feedback_init(&f);
    for (int i = 0; i < 20; ++i) xg_gpu_feedback_observe(&f, 0.0001, 0.001, t);
    x = xg_gpu_feedback_factor(&f, t);
    CHECK(x == 1.0, "factor %g for a fast GPU, want 1", x);
    group_ok("never below 1");

    /* Zero, negative and NaN samples change nothing; one stall is capped
     * (1000x) and weighs 0.2. */
    xg_gpu_feedback_init(&f);
    xg_gpu_feedback_observe(&f, 0, 0.001, t);
    xg_gpu_feedback_observe(&f, 0.001, 0, t);
    xg_gpu_feedback_observe(&f, -1, 0.001, t);
    xg_gpu_feedback_observe(&f, NAN, 0.001, t);
    x = xg_gpu_feedback_factor(&f, t);
    CHECK(x == 1.0, "factor %g after bad samples, want 1", x);
    xg_gpu_feedback_observe(&f, 1e6, 1e-6, t);
    x = xg_gpu_feedback_factor(&f, t);
    CHECK(fabs(x - (0.8 + 0.2 * 1000)) < 0.01, "stall: factor %g, want %g", x,
          0.8 + 0.2 * 1000);
    group_ok("bad samples ignored, a stall capped");

    printf("%d passed, 0 failed\n", n_passed);
    return 0;
}
