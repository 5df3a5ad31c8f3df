/** @file test_staging.c
 *  @brief The pinned staging's copies back (gpu/staging.c) over the host
 *         runtime of tests/fakecuda: several copies as one pipeline
 *         (xg_staging_dtoh_many) and one at a time, of random sizes across
 *         the piece and direct-copy limits, empty ones, and destinations
 *         page-locked by xg_staging_lock (DMA alone): every byte lands
 *         where it belongs and nothing else is written.
 */
#include <cuda_runtime_api.h>

#include "../gpu/staging.h"
#include "test_util.h"

#define GUARD 64

/* A size: empty, small (direct), around the 1 MB limit, or many MB. */
static size_t some_size(void)
{
    switch (rng_below(5)) {
    case 0: return rng_below(3) ? 0 : 1;
    case 1: return 1 + rng_below(4096);
    case 2: return XG_STAGING_MIN - 64 + rng_below(128);
    default: return 1 + rng_below(40u << 20);
    }
}

static void one_round(struct xg_staging *s, int r)
{
    const int k = 1 + (int)rng_below(6);
    struct xg_copy c[6];
    unsigned char *dev[6], *host[6];
    int locked[6] = {0};
    for (int i = 0; i < k; ++i) {
        const size_t n = some_size();
        CHECK(!cudaMalloc((void **)&dev[i], n + 1), "device buffer");
        for (size_t j = 0; j < n; ++j) dev[i][j] = (unsigned char)(j * 7 + (size_t)i * 31 + 1);
        host[i] = malloc(n + 2 * GUARD);
        memset(host[i], 0xee, n + 2 * GUARD);
        c[i] = (struct xg_copy){host[i] + GUARD, dev[i], n};
        /* Some destinations page-locked: DMA alone, no staging. */
        if (n && !rng_below(4)) locked[i] = !xg_staging_lock(s, host[i] + GUARD, n);
    }
    const int many = rng_below(3) != 0;
    if (many) {
        CHECK(!xg_staging_dtoh_many(s, c, k), "round %d: dtoh_many", r);
    } else {
        for (int i = 0; i < k; ++i)
            CHECK(!xg_staging_dtoh(s, c[i].host, c[i].dev, c[i].n), "round %d: dtoh", r);
    }
    for (int i = 0; i < k; ++i) {
        const size_t n = c[i].n;
        for (size_t j = 0; j < GUARD; ++j)
            CHECK(host[i][j] == 0xee && host[i][GUARD + n + j] == 0xee,
                  "round %d copy %d: written outside its %zu bytes", r, i, n);
        for (size_t j = 0; j < n; ++j)
            CHECK(host[i][GUARD + j] == (unsigned char)(j * 7 + (size_t)i * 31 + 1),
                  "round %d copy %d of %d (%zu bytes%s, %s): byte %zu wrong", r, i, k, n,
                  locked[i] ? ", locked" : "", many ? "many" : "one by one", j);
    }
    xg_staging_unlock(s);
    for (int i = 0; i < k; ++i) {
        cudaFree(dev[i]);
        free(host[i]);
    }
}

int main(int argc, char **argv)
{
    rng_state = seed_used = parse_seed(argc, argv);
    cudaStream_t st;
    CHECK(!cudaStreamCreateWithFlags(&st, 0), "stream");
    struct xg_staging s;
    xg_staging_init(&s, st, 4);
    for (int r = 0; r < 60; ++r) one_round(&s, r);
    group_ok("60 rounds of 1-6 copies back, many at once or one by one, some locked");
    xg_staging_free(&s);
    cudaStreamDestroy(st);
    printf("%d passed, 0 failed\n", n_passed);
    return 0;
}
