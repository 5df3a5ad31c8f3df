/** @file test_bloom.c
 *  @brief Tests of gpu/index/bloom.{h,c}: sizing, the pinned hash values, build
 *         zeroing its words, no false negatives ever, and the measured
 *         false-positive rate against (1 - e^(-k/bits))^k.
 *
 *  Usage: test_bloom [--seed N].  Prints the seed, one "ok" line per check
 *  group and "N passed, 0 failed"; exits 1 at the first failure.
 */
#include "../gpu/index/bloom.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- harness ---------------------------------------------------------- */

#include "test_util.h"

/* ---- helpers ---------------------------------------------------------- */

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* n distinct keys, sorted, of one of several shapes (dense doc numbers
 * mostly).  Returns the number of keys (n after removing duplicates). */
static uint32_t gen_keys(uint32_t *k, uint32_t n, int shape)
{
    for (uint32_t i = 0; i < n; ++i)
        switch (shape) {
        case 0: k[i] = i; break;                          /* 0..n-1 */
        case 1: k[i] = rng_below(4 * n + 1); break;       /* sparse-dense */
        case 2: k[i] = rng_u32(); break;                  /* anywhere */
        default: k[i] = 0xFFFFFFFFu - rng_below(3 * n + 1); break; /* top */
        }
    qsort(k, n, 4, cmp_u32);
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; ++i)
        if (m == 0 || k[i] != k[m - 1])
            k[m++] = k[i];
    return m;
}

static int member(const uint32_t *k, uint32_t n, uint32_t x)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (k[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && k[lo] == x;
}

/* ---- groups ----------------------------------------------------------- */

static void test_sizing_and_theory(void)
{
    static const struct { uint32_t n, bits, want; } w[] = {
        {0, 10, 1}, {1, 8, 1}, {8, 8, 1}, {9, 8, 2}, {100, 10, 16},
        {64, 1, 1}, {65, 1, 2}, {1000, 0, 0}, {0, 0, 0},
        {100000, 16, 25000}, {0xFFFFFFFFu, 64, XG_BLOOM_MAX_WORDS},
        {(1u << 26), 64, XG_BLOOM_MAX_WORDS}, {(1u << 26) + 1, 64,
                                               XG_BLOOM_MAX_WORDS},
    };
    for (size_t i = 0; i < sizeof w / sizeof w[0]; ++i) {
        uint32_t got = xg_bloom_words(w[i].n, w[i].bits);
        CHECK(got == w[i].want, "xg_bloom_words(%u, %u) = %u, want %u",
              w[i].n, w[i].bits, got, w[i].want);
    }
    static const struct { uint32_t bits, k; double want; } f[] = {
        {10, 7, 0.0081937}, {8, 3, 0.0305794}, {16, 6, 0.0009351},
        {0, 3, 1.0}, {10, 0, 1.0}, {1, 1, 0.6321206}, {24, 16, 0.0000099},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; ++i) {
        double got = xg_bloom_fpr_theory(f[i].bits, f[i].k);
        CHECK(fabs(got - f[i].want) < 6e-8 + 1e-5 * f[i].want,
              "xg_bloom_fpr_theory(%u, %u) = %.7f, want %.7f", f[i].bits,
              f[i].k, got, f[i].want);
    }
    group_ok("xg_bloom_words (ceil, min 1, 0 bits -> 0, clamp) and "
             "xg_bloom_fpr_theory values");
}

static void test_hash_pinned(void)
{
    static const uint32_t seeds[16] = XG_BLOOM_SEEDS;
    for (uint32_t i = 0; i < 16; ++i) {
        CHECK(xg_bloom_seed(i) == seeds[i] && (seeds[i] & 1u),
              "seed %u: 0x%08X vs table 0x%08X (must match and be odd)", i,
              xg_bloom_seed(i), seeds[i]);
        for (uint32_t j = 0; j < i; ++j)
            CHECK(seeds[i] != seeds[j], "seeds %u and %u equal", i, j);
    }
    CHECK(xg_bloom_mix32(0) == 0 && xg_bloom_mix32(1) == 0x514E28B7u &&
              xg_bloom_mix32(0xDEADBEEFu) == 0x0DE5C6A9u,
          "fmix32 known values: %08X %08X", xg_bloom_mix32(1),
          xg_bloom_mix32(0xDEADBEEFu));
    /* Values computed independently (Python) from the formula in bloom.h;
     * they pin the on-disk meaning of a filter. */
    static const struct { uint32_t key, i, n_words, want; } h[] = {
        {0, 0, 1, 41},
        {12345, 0, 100, 724},
        {12345, 15, 100, 5428},
        {0xFFFFFFFEu, 7, 1u << 26, 1590012206u},
        {42, 3, 3, 8},
    };
    for (size_t t = 0; t < sizeof h / sizeof h[0]; ++t) {
        uint32_t got = xg_bloom_hash(h[t].key, h[t].i, h[t].n_words);
        CHECK(got == h[t].want, "h_%u(%u) with %u words = %u, want %u",
              h[t].i, h[t].key, h[t].n_words, got, h[t].want);
    }
    for (int t = 0; t < 200000; ++t) {
        uint32_t nw = t % 3 == 0 ? 1 + rng_below(XG_BLOOM_MAX_WORDS)
                                 : 1 + rng_below(64);
        if (t % 1000 == 0)
            nw = XG_BLOOM_MAX_WORDS;
        uint32_t p = xg_bloom_hash(rng_u32(), rng_below(16), nw);
        CHECK((uint64_t)p < (uint64_t)nw * 64, "hash %u out of %u words", p,
              nw);
    }
    group_ok("seeds odd/distinct/equal to XG_BLOOM_SEEDS, fmix32 and h_i "
             "known values, positions < 64*n_words");
}

static void test_build_zeroes(void)
{
    uint32_t keys[500];
    uint64_t a[200], b[200];
    for (int t = 0; t < 200; ++t) {
        uint32_t n = gen_keys(keys, 1 + rng_below(500), t % 4);
        uint32_t k = 1 + rng_below(16), nw = 1 + rng_below(200);
        for (uint32_t i = 0; i < nw; ++i)
            a[i] = rng_next();
        memset(b, 0, sizeof b);
        b[nw < 200 ? nw : 199] = 0x5555u;  /* beyond the filter: untouched */
        xg_bloom_build(keys, n, k, a, nw);
        xg_bloom_build(keys, n, k, b, nw);
        CHECK(memcmp(a, b, nw * 8) == 0,
              "build into garbage differs from build into zeros");
        if (nw < 200)
            CHECK(b[nw] == 0x5555u, "build wrote past n_words");
        uint64_t pop = 0;
        for (uint32_t i = 0; i < nw; ++i)
            pop += (uint64_t)__builtin_popcountll(b[i]);
        CHECK(pop >= 1 && pop <= (uint64_t)n * k,
              "%llu bits set by %u keys x %u hashes",
              (unsigned long long)pop, n, k);
        /* Exactly the bits the hashes name are set. */
        uint64_t c[200] = {0};
        for (uint32_t j = 0; j < n; ++j)
            for (uint32_t i = 0; i < k; ++i) {
                uint32_t p = xg_bloom_hash(keys[j], i, nw);
                c[p / 64] |= 1ull << (p % 64);
            }
        CHECK(memcmp(b, c, nw * 8) == 0, "filter bits differ from h_i");
    }
    uint64_t one = 0x1234;
    xg_bloom_build(keys, 10, 3, &one, 0);
    CHECK(one == 0x1234, "n_words = 0 must write nothing");
    CHECK(xg_bloom_test(&one, 0, 3, 5) == 1 && xg_bloom_test(&one, 1, 0, 5),
          "no filter (n_words 0 or k 0) must answer maybe");
    group_ok("build zeroes its words, sets exactly the h_i bits, stays "
             "inside n_words; no filter answers maybe");
}

static void test_no_false_negatives(void)
{
    static const uint32_t sizes[] = {1, 2, 3, 7, 64, 100, 1000, 12345, 100000};
    static const uint32_t cfg[][2] = {{8, 3}, {10, 4}, {16, 6}, {4, 1},
                                      {24, 16}, {1, 1}, {32, 16}, {2, 9}};
    uint32_t *keys = malloc(100000 * 4);
    CHECK(keys != NULL, "malloc");
    long tested = 0;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; ++si)
        for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; ++c) {
            uint32_t n = gen_keys(keys, sizes[si], (int)(si + c) % 4);
            uint32_t bits = cfg[c][0], k = cfg[c][1];
            uint32_t nw = xg_bloom_words(n, bits);
            uint64_t *w = malloc((size_t)nw * 8);
            CHECK(w != NULL, "malloc");
            xg_bloom_build(keys, n, k, w, nw);
            for (uint32_t i = 0; i < n; ++i)
                CHECK(xg_bloom_test(w, nw, k, keys[i]),
                      "false negative: key %u of %u (bits %u k %u)", keys[i],
                      n, bits, k);
            tested += n;
            free(w);
        }
    /* k above 16 behaves as 16 in build and test alike. */
    uint32_t n = gen_keys(keys, 5000, 1);
    uint32_t nw = xg_bloom_words(n, 40);
    uint64_t *w = malloc((size_t)nw * 8), *w16 = malloc((size_t)nw * 8);
    CHECK(w && w16, "malloc");
    xg_bloom_build(keys, n, 40, w, nw);
    xg_bloom_build(keys, n, 16, w16, nw);
    CHECK(memcmp(w, w16, (size_t)nw * 8) == 0, "k = 40 differs from k = 16");
    for (uint32_t i = 0; i < n; ++i)
        CHECK(xg_bloom_test(w, nw, 40, keys[i]), "false negative with k 40");
    free(w);
    free(w16);
    free(keys);
    printf("     (%ld member probes)\n", tested);
    group_ok("no false negatives: sizes 1..100000, 8 (bits, k) settings up "
             "to k = 16, 4 key shapes");
}

static void test_fpr(void)
{
    static const uint32_t cfg[][2] = {{8, 3}, {10, 4}, {10, 7}, {16, 6},
                                      {16, 11}, {24, 16}, {4, 2}};
    const uint32_t n_keys = 100000, n_probes = 1000000;
    uint32_t *keys = malloc(n_keys * 4);
    CHECK(keys != NULL, "malloc");
    for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; ++c) {
        uint32_t bits = cfg[c][0], k = cfg[c][1];
        /* Dense doc numbers: a random half of 0 .. 2*n_keys-1, or (odd
         * configs) keys anywhere in uint32. */
        uint32_t n = 0;
        if (c % 2 == 0) {
            for (uint32_t x = 0; x < 2 * n_keys && n < n_keys; ++x)
                if (rng_below(2 * n_keys - x) < n_keys - n)
                    keys[n++] = x;
        } else {
            n = gen_keys(keys, n_keys, 2);
        }
        uint32_t nw = xg_bloom_words(n, bits);
        uint64_t *w = malloc((size_t)nw * 8);
        CHECK(w != NULL, "malloc");
        xg_bloom_build(keys, n, k, w, nw);
        uint32_t probes = 0, fp = 0;
        uint32_t x = 0;
        while (probes < n_probes) {
            /* Sequential non-members first (the dense-docid case), then
             * random ones. */
            uint32_t q = probes < n_probes / 2 ? x++ : rng_u32();
            if (member(keys, n, q))
                continue;
            ++probes;
            fp += (uint32_t)xg_bloom_test(w, nw, k, q);
        }
        free(w);
        double meas = (double)fp / probes;
        double th = xg_bloom_fpr_theory(bits, k);
        double sigma = sqrt(th * (1 - th) / probes);
        double tol = 0.25 * th + 6 * sigma + 1e-5;
        printf("     bits/key %2u k %2u: measured %.6f, theory %.6f "
               "(tolerance %.6f)\n", bits, k, meas, th, tol);
        CHECK(fabs(meas - th) <= tol,
              "false-positive rate %.6f vs theory %.6f (bits %u k %u) beyond "
              "tolerance %.6f", meas, th, bits, k, tol);
    }
    free(keys);
    group_ok("false-positive rate on 10^6 non-member probes within 25% + "
             "6 sigma of theory (7 settings, k up to 16)");
}

int main(int argc, char **argv)
{
    seed_used = parse_seed(argc, argv);
    rng_state = seed_used;
    printf("test_bloom: seed %" PRIu64 "\n", seed_used);
    test_sizing_and_theory();
    test_hash_pinned();
    test_build_zeroes();
    test_no_false_negatives();
    test_fpr();
    printf("%d passed, 0 failed\n", n_passed);
    return 0;
}
