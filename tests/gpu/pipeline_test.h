/** @file pipeline_test.h
 *  @brief What the GPU pipeline tests (test_weigh.c, test_qlm.c) share:
 *         text collections in the seed format (small random ones of a
 *         given shape, seed 000 §5.1's synthetic ones for the benchmarks),
 *         a clock, the median of three runs, and DIFF, the "FAIL name:
 *         ..." line of a comparison.  Header only; the RNG is
 *         ../test_util.h's.
 */
#ifndef XG_PIPELINE_TEST_H
#define XG_PIPELINE_TEST_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../test_util.h"

#define rnd rng_next

static inline double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Inside a comparison function with a `name`: print the difference and
 * return 1. */
#define DIFF(...)                                                           \
    do {                                                                    \
        printf("FAIL %s: ", name);                                          \
        printf(__VA_ARGS__);                                                \
        printf("\n");                                                       \
        return 1;                                                           \
    } while (0)

static inline double unif(void) { return (rnd() >> 11) * (1.0 / 9007199254740992.0); }

/* A growing text in the seed format. */
struct text {
    char *b;
    size_t len, cap;
};
static inline void put(struct text *t, const char *s, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        t->cap = 2 * (t->len + n + 1) + (1 << 20);
        t->b = realloc(t->b, t->cap);
        if (!t->b) { fprintf(stderr, "out of memory\n"); exit(1); }
    }
    memcpy(t->b + t->len, s, n);
    t->len += n;
}

/* A random collection's shape. */
struct shape {
    uint32_t docs, max_words, vocab;
    int max_wordlen, long_words, blank_runs;
};

/* Words over a 4-letter alphabet (shared prefixes, equal lengths). */
static inline void gen_random(const struct shape *s, struct text *t, size_t *max_doc)
{
    char **voc = malloc(s->vocab * sizeof *voc);
    for (uint32_t v = 0; v < s->vocab; ++v) {
        int l = 1 + (int)(rnd() % (uint64_t)s->max_wordlen);
        if (s->long_words && v % 97 == 3) l = 245;
        voc[v] = malloc((size_t)l + 2);
        for (int i = 0; i < l; ++i) voc[v][i] = "abcd"[rnd() & 3];
        voc[v][l] = 0;
    }
    t->len = 0;
    *max_doc = 0;
    if (s->blank_runs) put(t, "\n\n", 2);
    for (uint32_t d = 0; d < s->docs; ++d) {
        size_t at = t->len;
        uint32_t n = 1 + (uint32_t)(rnd() % s->max_words);
        for (uint32_t i = 0; i < n; ++i) {
            /* Skewed: low ids far more often. */
            uint32_t v = (uint32_t)(s->vocab * unif() * unif());
            put(t, voc[v], strlen(voc[v]));
            put(t, "\n", 1);
        }
        if (t->len - at > *max_doc) *max_doc = t->len - at;
        put(t, "\n", 1);
        for (int k = s->blank_runs ? (int)(rnd() % 3) : 0; k > 0; --k) put(t, "\n", 1);
    }
    for (uint32_t v = 0; v < s->vocab; ++v) free(voc[v]);
    free(voc);
}

#define SYN_VOCAB 1000000
#define SYN_TABLE (1u << 24)

/* Seed 000 §5.1: document lengths log-normal (mu 6.0, sigma 1.1) in
 * words, each word drawn from the vocabulary by a Zipf (s = 1) law. */
static inline void gen_synthetic(size_t bytes, struct text *t)
{
    char (*voc)[16] = malloc((size_t)SYN_VOCAB * sizeof *voc);
    uint8_t *vlen = malloc(SYN_VOCAB);
    for (uint32_t v = 0; v < SYN_VOCAB; ++v) {
        /* Frequent words are short: 2 + log-ish length, up to 14. */
        int l = 2 + (int)(log((double)v + 2) * 0.6 + 2 * unif());
        if (l > 14) l = 14;
        for (int i = 0; i < l; ++i) voc[v][i] = (char)('a' + rnd() % 26);
        voc[v][l] = '\n';
        vlen[v] = (uint8_t)(l + 1);
    }
    uint32_t *table = malloc(SYN_TABLE * sizeof *table);
    double h = 0;
    for (uint32_t v = 0; v < SYN_VOCAB; ++v) h += 1.0 / (v + 1);
    uint32_t v = 0;
    double cum = 1.0 / h;                       /* P(rank <= v) */
    for (uint32_t k = 0; k < SYN_TABLE; ++k) {
        const double target = (k + 0.5) / SYN_TABLE;
        while (cum < target && v + 1 < SYN_VOCAB) cum += 1.0 / ((double)(++v + 1) * h);
        table[k] = v;
    }
    t->len = 0;
    t->cap = bytes + (1 << 20);
    t->b = malloc(t->cap);
    while (t->len < bytes) {
        double g = sqrt(-2 * log(unif() + 1e-300)) * cos(6.283185307179586 * unif());
        uint64_t n = (uint64_t)exp(6.0 + 1.1 * g);
        if (n < 1) n = 1;
        for (uint64_t i = 0; i < n; ++i) {
            const uint32_t w = table[rnd() & (SYN_TABLE - 1)];
            put(t, voc[w], vlen[w]);
        }
        put(t, "\n", 1);
    }
    free(voc);
    free(vlen);
    free(table);
}

#endif
