/** @file test_util.h
 *  @brief The shared harness of the unit tests: a seeded splitmix64 RNG
 *         (the seed is printed and --seed replays it), CHECK, and the
 *         "N passed, N failed" accounting that test runners read.
 */
#ifndef XG_TEST_UTIL_H
#define XG_TEST_UTIL_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t rng_state;
static uint64_t seed_used;
static int n_passed;

static inline uint64_t rng_next(void) /* splitmix64 */
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline uint32_t rng_u32(void) { return (uint32_t)(rng_next() >> 32); }

static inline uint32_t rng_below(uint32_t n) /* uniform in [0, n), n > 0 */
{
    return (uint32_t)(((uint64_t)rng_u32() * n) >> 32);
}

/* On failure: the place, the message, the seed, the count; exit 1. */
#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (!(cond)) {                                                     \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                    \
            printf(__VA_ARGS__);                                           \
            printf("\n(seed %" PRIu64 ")\n%d passed, 1 failed\n",          \
                   seed_used, n_passed);                                   \
            exit(1);                                                       \
        }                                                                  \
    } while (0)

static inline void group_ok(const char *what)
{
    ++n_passed;
    printf("ok   %s\n", what);
    fflush(stdout);
}

/* --seed N or --seed=N; otherwise a time-based seed.  Exits 2 on a bad
 * argument. */
static inline uint64_t parse_seed(int argc, char **argv)
{
    uint64_t seed = (uint64_t)time(NULL) ^ ((uint64_t)clock() << 32);
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 0);
        else if (strncmp(argv[i], "--seed=", 7) == 0)
            seed = strtoull(argv[i] + 7, NULL, 0);
        else {
            fprintf(stderr, "usage: %s [--seed N]\n", argv[0]);
            exit(2);
        }
    }
    return seed;
}

#endif
