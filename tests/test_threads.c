/** @file test_threads.c
 *  @brief The shared fork-join pool (gpu/runtime/threads.c): every element of
 *         every job runs exactly once, jobs of any width back to back,
 *         two callers at once (the second starts threads of its own), and
 *         a fork from inside a pooled step.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "../gpu/runtime/threads.h"
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
        xg_threads_run(7, leaf, inner, sizeof *inner);
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
    xg_threads_run(n, step, e, sizeof *e);
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

/* xg_threads_memcpy (streaming stores for shares of 64 KB and more): every
 * byte where it belongs, nothing outside the destination written, for
 * sizes and alignments that put shares' heads and tails anywhere. */
static void copies(void)
{
    enum { GUARD = 80 };
    const size_t cap = (size_t)6 << 20;
    unsigned char *src = malloc(cap + 64), *dst = malloc(cap + 64 + 2 * GUARD);
    CHECK(src && dst, "memory");
    for (size_t j = 0; j < cap + 64; ++j) src[j] = (unsigned char)(j * 131 + (j >> 9));
    for (int r = 0; r < 300; ++r) {
        const size_t n = rng_below(3) ? rng_below((uint32_t)cap) : rng_below(256 << 10);
        const size_t so = rng_below(64), d0 = GUARD + rng_below(64);
        const uint32_t threads = 1 + rng_below(16);
        memset(dst, 0xee, cap + 64 + 2 * GUARD);
        xg_threads_memcpy(dst + d0, src + so, n, threads);
        for (size_t j = 0; j < d0; ++j)
            CHECK(dst[j] == 0xee, "copy %d (%zu bytes): byte %zu before it written", r, n, j);
        CHECK(!memcmp(dst + d0, src + so, n), "copy %d: %zu bytes from +%zu to +%zu on %u "
              "threads differ", r, n, so, d0 - GUARD, threads);
        for (size_t j = d0 + n; j < cap + 64 + 2 * GUARD; ++j)
            CHECK(dst[j] == 0xee, "copy %d (%zu bytes): byte %zu after it written", r, n, j);
    }
    free(src);
    free(dst);
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
    copies();
    group_ok("xg_threads_memcpy: 300 copies of 0 B to 6 MB, any alignment, 1-16 threads");
    printf("%d passed, 0 failed\n", n_passed);
    return 0;
}
