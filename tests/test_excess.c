/** @file test_excess.c
 *  @brief The planner's measured excess wait (plugin/excess.c): a zeroed
 *         estimate is 0, samples move it a quarter of the way each, it
 *         halves every XG_EXCESS_HALF_LIFE without samples, faster-than-
 *         predicted queries pull it down, and threads racing on it leave
 *         a value between their samples.
 */
#include <math.h>
#include <pthread.h>

#include "../plugin/excess.h"
#include "test_util.h"

static int near(double a, double b)
{
    return fabs(a - b) <= 1e-9 + 1e-6 * fabs(b);
}

struct racer {
    struct xg_excess *x;
    double t0, excess;
};

static void *race(void *arg)
{
    struct racer *r = arg;
    for (int i = 0; i < 100000; ++i)
        xg_excess_note(r->x, r->t0 + i * 1e-6, 0.001 + r->excess, 0.001);
    return NULL;
}

int main(void)
{
    struct xg_excess x = {0};
    CHECK(xg_excess_at(&x, 1000.0) == 0, "a new estimate is 0");
    /* Queries 8 ms later than predicted, all at t = 1000 s. */
    double want = 0;
    for (int i = 0; i < 30; ++i) {
        xg_excess_note(&x, 1000.0, 0.010, 0.002);
        want = (3 * want + 0.008) / 4;
        CHECK(near(xg_excess_at(&x, 1000.0), want), "sample %d: %g, want %g", i,
              xg_excess_at(&x, 1000.0), want);
    }
    CHECK(want > 0.0079, "30 samples reach the excess");
    group_ok("samples move it a quarter of the way");

    const double e = xg_excess_at(&x, 1000.0);
    CHECK(near(xg_excess_at(&x, 1000.0 + XG_EXCESS_HALF_LIFE), e / 2), "one half-life");
    CHECK(near(xg_excess_at(&x, 1000.0 + 3 * XG_EXCESS_HALF_LIFE), e / 8), "three");
    CHECK(xg_excess_at(&x, 1001.0) < e * 1e-5, "a second without samples: gone");
    CHECK(near(xg_excess_at(&x, 999.0), e), "a reading older than the sample: not grown");
    /* A sample after a quiet spell starts from the decayed value. */
    xg_excess_note(&x, 1000.0 + XG_EXCESS_HALF_LIFE, 0.002, 0.002);
    CHECK(near(xg_excess_at(&x, 1000.0 + XG_EXCESS_HALF_LIFE), 3 * (e / 2) / 4),
          "decay, then an on-time sample");
    group_ok("it halves without samples");

    /* Queries faster than predicted pull it below zero (the planner adds
     * only a positive excess). */
    for (int i = 0; i < 40; ++i) xg_excess_note(&x, 1002.0, 0.001, 0.003);
    CHECK(fabs(xg_excess_at(&x, 1002.0) + 0.002) < 1e-6, "fast queries: %g",
          xg_excess_at(&x, 1002.0));
    group_ok("faster than predicted pulls it down");

    /* Eight threads, excesses 1..8 ms: the estimate stays a blend. */
    struct xg_excess y = {0};
    struct racer r[8];
    pthread_t th[8];
    for (int i = 0; i < 8; ++i) {
        r[i] = (struct racer){&y, 2000.0, (i + 1) * 1e-3};
        CHECK(!pthread_create(&th[i], NULL, race, &r[i]), "thread");
    }
    for (int i = 0; i < 8; ++i) pthread_join(th[i], NULL);
    const double v = xg_excess_at(&y, 2000.1);
    /* (A thread's own samples, 1 us apart, settle a hair under its
     * excess: the decay between them.) */
    CHECK(v >= 0.0009 && v <= 0.008 + 1e-9, "raced estimate %g outside [0.9, 8] ms", v);
    group_ok("racing threads leave a blend of their samples");
    printf("%d passed, 0 failed\n", n_passed);
    return 0;
}
