/** @file test_threads.c
 *  @brief The shared fork-join pool (gpu/wt_threads.c): every element of
 *         every job runs exactly once, jobs of any width back to back,
 *         two callers at once (the second starts threads of its own), and
 *         a fork from inside a pooled step.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "../gpu/wt_int.h"
#include "test_util.h"

struct elem {
    _Atomic int runs;
    uint32_t value;
    int nest;                   /* fork a job of its own from inside */
};

static void *leaf(void *arg)
{
    struct elem *e = arg;
    atomic_fetch_add(&e->runs, 1);
    e->value = e->value * 3 + 1;
    return NULL;
}

static void *step(void *arg)
{
    struct elem *e = arg;
    leaf(e);
    if (e->nest) {
        struct elem inner[7];
        memset(inner, 0, sizeof inner);
        xg_wt_run_threads(7, leaf, inner, sizeof *inner);
        for (int i = 0; i < 7; ++i)
            if (atomic_load(&inner[i].runs) != 1) e->nest = -1;
    }
    return NULL;
}

/* n elements, each run once; returns the number that were not. */
static int job(uint32_t n, int nest)
{
    struct elem *e = calloc(n + 1, sizeof *e);
    for (uint32_t i = 0; i < n; ++i) {
        e[i].value = i;
        e[i].nest = nest;
    }
    xg_wt_run_threads(n, step, e, sizeof *e);
    int bad = 0;
    for (uint32_t i = 0; i < n; ++i)
        bad += atomic_load(&e[i].runs) != 1 || e[i].value != i * 3 + 1 || e[i].nest < 0;
    free(e);
    return bad;
}

static void *caller(void *arg)
{
    int *bad = arg;
    for (int r = 0; r < 300; ++r) *bad += job(1 + (uint32_t)(r * 7) % 33, 0);
    return NULL;
}

int main(int argc, char **argv)
{
    rng_state = seed_used = parse_seed(argc, argv);
    for (int r = 0; r < 2000; ++r) {
        /* Wide jobs start many workers, which every later job wakes. */
        const uint32_t n = 1 + rng_below(r < 1000 ? 20 : r < 1990 ? 64 : 300);
        CHECK(job(n, 0) == 0, "job %d of %u elements", r, n);
    }
    group_ok("2000 jobs of 1..300 elements, each element once");
    for (int r = 0; r < 50; ++r) CHECK(job(1 + rng_below(24), 1) == 0, "nested job %d", r);
    group_ok("a fork from inside a pooled step");
    int bad[2] = {0, 0};
    pthread_t t;
    CHECK(!pthread_create(&t, NULL, caller, &bad[0]), "thread");
    caller(&bad[1]);
    pthread_join(t, NULL);
    CHECK(bad[0] == 0 && bad[1] == 0, "two callers: %d and %d elements wrong", bad[0], bad[1]);
    group_ok("two callers at once");
    printf("%d passed, 0 failed\n", n_passed);
    return 0;
}
