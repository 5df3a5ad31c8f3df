/** @file test_util.h
 *  @brief The shared harness of the unit tests: a seeded splitmix64 RNG
 *         (the seed is printed and --seed replays it), CHECK, and the
 *         "N passed, N failed" accounting that test runners read, and
 *         real posting lists from the CACM collection.
 */
#ifndef XG_TEST_UTIL_H
#define XG_TEST_UTIL_H

#include <ctype.h>
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

/* Real lists: the CACM collection's documents containing each of ten
 * common words, as dense doc numbers (line order). */
static const char *const cacm_words[] = {"the", "of", "and", "for",
                                         "computer", "algorithm", "system",
                                         "program", "data", "language"};
#define N_CACM_WORDS (sizeof cacm_words / sizeof cacm_words[0])

/* Read docs.tsv ("docid \t text" per line) and build, for each word of
 * cacm_words, the ascending list of dense doc numbers (line index) that
 * contain it.  Returns 0 if the file cannot be opened. */
static inline int cacm_lists(uint32_t *lists[N_CACM_WORDS], size_t len[N_CACM_WORDS],
                      uint32_t *n_docs)
{
    /* tests/meson.build points XG_CACM_TSV at ../shared/ir-data. */
    const char *path = getenv("XG_CACM_TSV");
    if (!path)
        path = "../shared/ir-data/cacm/docs.tsv";
    FILE *f = fopen(path, "r");
    if (!f) {
        printf("     (skipping: cannot open %s)\n", path);
        return 0;
    }
    size_t cap = 4096;
    for (size_t w = 0; w < N_CACM_WORDS; ++w) {
        lists[w] = malloc(cap * 4);
        CHECK(lists[w] != NULL, "malloc");
        len[w] = 0;
    }
    char *line = NULL;
    size_t line_cap = 0;
    uint32_t doc = 0;
    while (getline(&line, &line_cap, f) > 0) {
        char *text = strchr(line, '\t');
        if (!text)
            continue;
        int seen[N_CACM_WORDS] = {0};
        for (char *p = text + 1; *p;) {
            while (*p && !isalnum((unsigned char)*p))
                ++p;
            char *start = p;
            while (*p && isalnum((unsigned char)*p)) {
                *p = (char)tolower((unsigned char)*p);
                ++p;
            }
            size_t tl = (size_t)(p - start);
            for (size_t w = 0; w < N_CACM_WORDS && tl; ++w)
                if (strlen(cacm_words[w]) == tl &&
                    memcmp(cacm_words[w], start, tl) == 0)
                    seen[w] = 1;
        }
        CHECK(doc < cap, "more than %zu docs: enlarge cap", cap);
        for (size_t w = 0; w < N_CACM_WORDS; ++w)
            if (seen[w])
                lists[w][len[w]++] = doc;
        ++doc;
    }
    free(line);
    fclose(f);
    *n_docs = doc;
    return 1;
}

#endif
