/** @file test_staging.c
 *  @brief The pinned staging's copies (gpu/runtime/staging.c) over the host
 *         runtime of tests/fakecuda: copies back and up of random sizes
 *         across the piece and direct-copy limits, empty ones, and
 *         destinations page-locked by xg_staging_lock (DMA alone): every
 *         byte lands where it belongs and nothing else is written.
 */
#include <cuda_runtime_api.h>

#include "../gpu/runtime/staging.h"
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

struct copy {
    void *host;
    unsigned char *dev;
    size_t n;
};

static unsigned char byte_at(size_t j, int i)
{
    return (unsigned char)(j * 7 + (size_t)i * 31 + 1);
}

static void one_round(struct xg_staging *s, int r)
{
    const int k = 1 + (int)rng_below(6);
    struct copy c[6];
    unsigned char *host[6];
    int locked[6] = {0};
    for (int i = 0; i < k; ++i) {
        const size_t n = some_size();
        CHECK(!cudaMalloc((void **)&c[i].dev, n + 1), "device buffer");
        for (size_t j = 0; j < n; ++j) c[i].dev[j] = byte_at(j, i);
        host[i] = malloc(n + 2 * GUARD);
        memset(host[i], 0xee, n + 2 * GUARD);
        c[i].host = host[i] + GUARD;
        c[i].n = n;
        /* Some destinations page-locked: DMA alone, no staging. */
        if (n && !rng_below(4)) locked[i] = !xg_staging_lock(s, c[i].host, n);
    }
    for (int i = 0; i < k; ++i)
        CHECK(!xg_staging_dtoh(s, c[i].host, c[i].dev, c[i].n), "round %d: dtoh", r);
    for (int i = 0; i < k; ++i) {
        const size_t n = c[i].n;
        for (size_t j = 0; j < GUARD; ++j)
            CHECK(host[i][j] == 0xee && host[i][GUARD + n + j] == 0xee,
                  "round %d copy %d: written outside its %zu bytes", r, i, n);
        for (size_t j = 0; j < n; ++j)
            CHECK(host[i][GUARD + j] == byte_at(j, i), "round %d copy %d (%zu bytes%s): "
                  "byte %zu wrong", r, i, n, locked[i] ? ", locked" : "", j);
    }
    /* And back up, into zeroed device buffers. */
    for (int i = 0; i < k; ++i) {
        memset(c[i].dev, 0, c[i].n);
        CHECK(!xg_staging_htod(s, c[i].dev, c[i].host, c[i].n), "round %d: htod", r);
    }
    CHECK(!cudaStreamSynchronize(s->stream), "stream");
    for (int i = 0; i < k; ++i)
        for (size_t j = 0; j < c[i].n; ++j)
            CHECK(c[i].dev[j] == byte_at(j, i), "round %d copy %d up: byte %zu wrong", r, i, j);
    xg_staging_unlock(s);
    for (int i = 0; i < k; ++i) {
        cudaFree(c[i].dev);
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
    group_ok("60 rounds of 1-6 copies back and up, some destinations locked");
    xg_staging_free(&s);
    cudaStreamDestroy(st);
    printf("%d passed, 0 failed\n", n_passed);
    return 0;
}
