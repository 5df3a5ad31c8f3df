/** @file test_big_alloc.c
 *  @brief Large host allocations (gpu/runtime/big_alloc.c): a prefault on
 *         background threads (or on the pool, xg_big_alloc_touched)
 *         leaves every page of its regions resident
 *         (mincore) and their memory usable, whatever the thread count and
 *         region sizes; a trim gives back exactly the whole huge pages past
 *         the bytes kept and leaves those bytes as they were.
 */
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../gpu/runtime/big_alloc.h"
#include "test_util.h"

#define HUGE ((size_t)2 << 20)

/* Pages of [p, p + n) resident, and how many there are. */
static size_t resident(const void *p, size_t n, size_t *pages)
{
    const size_t ps = (size_t)sysconf(_SC_PAGESIZE);
    const uintptr_t lo = (uintptr_t)p / ps * ps, hi = ((uintptr_t)p + n + ps - 1) / ps * ps;
    *pages = (hi - lo) / ps;
    unsigned char *v = malloc(*pages);
    size_t in = 0;
    if (v && !mincore((void *)lo, hi - lo, v))
        for (size_t i = 0; i < *pages; ++i) in += v[i] & 1;
    free(v);
    return in;
}

static void prefault_rounds(void)
{
    for (int r = 0; r < 40; ++r) {
        const int k = 1 + (int)rng_below(4);
        void *p[4];
        size_t n[4];
        for (int i = 0; i < k; ++i) {
            /* Mostly large (fresh mappings), some below a huge page. */
            n[i] = rng_below(5) ? HUGE * 4 + rng_below(48u << 20) : 1 + rng_below(HUGE);
            p[i] = xg_big_alloc(n[i]);
            CHECK(p[i], "round %d: allocation of %zu bytes", r, n[i]);
        }
        size_t pages;
        if (n[0] >= HUGE * 4)   /* the check below can fail: fresh is not resident */
            CHECK(resident(p[0], n[0], &pages) < pages, "round %d: fresh memory resident", r);
        const uint32_t threads = 1 + rng_below(16);
        struct xg_prefault *f = xg_prefault_start(p, n, k, threads);
        CHECK(f, "round %d: no prefault thread started", r);
        xg_prefault_wait(f);
        for (int i = 0; i < k; ++i) {
            const size_t in = resident(p[i], n[i], &pages);
            CHECK(in == pages, "round %d region %d (%zu bytes, %u threads): %zu of %zu pages "
                  "resident", r, i, n[i], threads, in, pages);
            memset(p[i], 0x5a, n[i]);
            CHECK(((unsigned char *)p[i])[n[i] - 1] == 0x5a, "round %d: memory", r);
            free(p[i]);
        }
    }
    group_ok("prefault: 40 rounds of 1-4 regions on 1-16 threads, every page resident");
    for (int r = 0; r < 10; ++r) {
        const size_t n = HUGE * 4 + rng_below(48u << 20);
        const uint32_t threads = 1 + rng_below(16);
        unsigned char *p = xg_big_alloc_touched(n, threads);
        size_t pages;
        const size_t in = resident(p, n, &pages);
        CHECK(p && in == pages, "touched %zu bytes on %u threads: %zu of %zu pages resident",
              n, threads, in, pages);
        free(p);
    }
    group_ok("touched on the pool: 10 allocations, every page resident");
    CHECK(!xg_prefault_start(NULL, NULL, 0, 4), "no regions");
    xg_prefault_wait(NULL);
    group_ok("prefault: nothing to do");
}

static void trim_rounds(void)
{
    for (int r = 0; r < 20; ++r) {
        const size_t n = HUGE * (4 + rng_below(12)) + rng_below(HUGE);
        const size_t used = rng_below((uint32_t)n);
        unsigned char *p = xg_big_alloc(n);
        CHECK(p, "trim round %d: allocation", r);
        void *const reg[1] = {p};
        xg_prefault_wait(xg_prefault_start(reg, &n, 1, 4));
        for (size_t i = 0; i < used; ++i) p[i] = (unsigned char)(i * 31 + 7);
        xg_big_trim(p, used, n);
        const size_t kept = (used + HUGE - 1) / HUGE * HUGE;
        size_t pages;
        const size_t in_kept = resident(p, kept, &pages);
        CHECK(!kept || in_kept == pages, "trim round %d: kept part not resident", r);
        if (kept < n)
            CHECK(resident(p + kept, n - kept, &pages) == 0,
                  "trim round %d: %zu of the trimmed pages still resident (used %zu of %zu)",
                  r, pages, used, n);
        for (size_t i = 0; i < used; ++i)
            CHECK(p[i] == (unsigned char)(i * 31 + 7), "trim round %d: byte %zu changed", r, i);
        free(p);
    }
    group_ok("trim: 20 rounds, the tail given back, the kept bytes unchanged");
}

int main(int argc, char **argv)
{
    rng_state = seed_used = parse_seed(argc, argv);
    /* A fixed threshold: every large block a fresh mapping, as in a run
     * (glibc's moving one would serve later blocks from freed ones). */
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    mallopt(M_PERTURB, 0);  /* meson's MALLOC_PERTURB_ would touch them */
    prefault_rounds();
    trim_rounds();
    printf("%d passed, 0 failed\n", n_passed);
    return 0;
}
