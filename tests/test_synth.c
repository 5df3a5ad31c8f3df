/** @file test_synth.c
 *  @brief Tests of shim/tools/synth.{h,c}: word spelling, the RNG, the Zipf
 *         alias table, document generation (determinism, ranks, wdfs,
 *         log-normal lengths) and the query generator.
 *
 *  Usage: test_synth [--seed N].  The seed picks the collection seeds the
 *  statistical checks run on; it is printed so a failure can be replayed.
 *  Prints one "ok" line per check group and "N passed, 0 failed"; exits 1
 *  at the first failure.  Statistical bounds are at least 5 standard
 *  errors wide, so a correct build fails them with negligible probability.
 */
#include "../shim/tools/synth.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- harness ---------------------------------------------------------- */

#include "test_util.h"

/* ---- helpers ---------------------------------------------------------- */

/* Inverse of xg_synth_word(): the rank a word spells, 0 if malformed. */
static uint64_t word_rank(const char *w)
{
    if (w[0] != 'q' || !w[1])
        return 0;
    uint64_t r = 0;
    for (const char *p = w + 1; *p; ++p) {
        if (*p < 'a' || *p > 'z')
            return 0;
        r = r * 26 + (uint64_t)(*p - 'a' + 1);
    }
    return r;
}

static int cmp_word(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

/* FNV-1a over a document's ranks and wdfs. */
static uint64_t doc_hash(const uint32_t *r, const uint32_t *w, uint32_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint32_t i = 0; i < n; ++i) {
        h = (h ^ r[i]) * 0x100000001b3ull;
        h = (h ^ w[i]) * 0x100000001b3ull;
    }
    return h;
}

static uint32_t *ranks, *wdfs;   /* XG_SYNTH_MAX_LEN each */

/* ---- checks ----------------------------------------------------------- */

static void test_words(void)
{
    char w[XG_SYNTH_WORD_MAX];
    static const struct { uint32_t rank; const char *word; } pinned[] = {
        {1, "qa"}, {2, "qb"}, {26, "qz"}, {27, "qaa"}, {52, "qaz"},
        {53, "qba"}, {702, "qzz"}, {703, "qaaa"}, {1000000, "qbdwgn"},
        {UINT32_MAX, "qmwlqkwu"}};
    for (size_t i = 0; i < sizeof pinned / sizeof pinned[0]; ++i) {
        size_t n = xg_synth_word(pinned[i].rank, w);
        CHECK(n == strlen(w) && !strcmp(w, pinned[i].word),
              "rank %u spelt '%s', want '%s'", pinned[i].rank, w,
              pinned[i].word);
    }
    CHECK(xg_synth_word(0, w) == 0 && w[0] == '\0', "rank 0 must be ''");
    group_ok("words: pinned spellings (qa, qz, qaa, ..., rank 2^32-1)");

    enum { N = 100000 };
    char (*all)[XG_SYNTH_WORD_MAX] = malloc(sizeof *all * N);
    CHECK(all, "out of memory");
    for (uint32_t r = 1; r <= N; ++r) {
        size_t n = xg_synth_word(r, all[r - 1]);
        CHECK(n >= 2 && n < XG_SYNTH_WORD_MAX, "rank %u: length %zu", r, n);
        for (size_t i = 0; i < n; ++i)
            CHECK(all[r - 1][i] >= 'a' && all[r - 1][i] <= 'z',
                  "rank %u: '%s' is not lowercase letters", r, all[r - 1]);
        CHECK(word_rank(all[r - 1]) == r, "rank %u: '%s' decodes to %" PRIu64,
              r, all[r - 1], word_rank(all[r - 1]));
    }
    qsort(all, N, sizeof *all, cmp_word);
    for (uint32_t i = 1; i < N; ++i)
        CHECK(strcmp(all[i - 1], all[i]) != 0, "'%s' appears twice", all[i]);
    free(all);
    group_ok("words: ranks 1..10^5 are lowercase, distinct and decode back");
}

static void test_rng(void)
{
    struct xg_synth_rng a, b;
    xg_synth_rng_init(&a, 42, 7, 1000);
    xg_synth_rng_init(&b, 42, 7, 1000);
    for (int i = 0; i < 1000; ++i)
        CHECK(xg_synth_rng_next(&a) == xg_synth_rng_next(&b),
              "same (seed, stream, index) gave different draws at %d", i);
    const uint64_t keys[][3] = {{42, 7, 1000}, {43, 7, 1000}, {42, 8, 1000},
                                {42, 7, 1001}, {0, 0, 0}};
    uint64_t first[5];
    for (int k = 0; k < 5; ++k) {
        xg_synth_rng_init(&a, keys[k][0], keys[k][1], keys[k][2]);
        first[k] = xg_synth_rng_next(&a);
        for (int j = 0; j < k; ++j)
            CHECK(first[j] != first[k], "keys %d and %d share a stream", j,
                  k);
    }
    /* Unit draws in [0, 1), normal draws with mean 0 and variance 1. */
    xg_synth_rng_init(&a, seed_used, 1, 2);
    double s = 0, s2 = 0;
    const int n = 200000;
    for (int i = 0; i < n; ++i) {
        double u = xg_synth_rng_unit(&a);
        CHECK(u >= 0 && u < 1, "unit draw %g out of [0, 1)", u);
        double z = xg_synth_rng_normal(&a);
        CHECK(isfinite(z), "normal draw is not finite");
        s += z;
        s2 += z * z;
    }
    double mean = s / n, var = s2 / n - mean * mean;
    CHECK(fabs(mean) < 5 / sqrt(n), "normal mean %g", mean);
    CHECK(fabs(var - 1) < 5 * sqrt(2.0 / n), "normal variance %g", var);
    group_ok("rng: deterministic, keyed streams differ, unit and normal "
             "draws");
}

/* Draw `n` samples and compare the head of the distribution with
 * r^-s / H: rank-1 share and the rank-1 : rank-2 ratio (= 2^s). */
static void check_zipf(uint32_t vocab, double s, uint32_t n)
{
    struct xg_synth_zipf z;
    CHECK(xg_synth_zipf_init(&z, vocab, s) == 0, "zipf init %u %g", vocab, s);
    struct xg_synth_rng r;
    xg_synth_rng_init(&r, seed_used, 99, vocab);
    uint32_t c1 = 0, c2 = 0;
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t k = xg_synth_zipf_sample(&z, &r);
        CHECK(k >= 1 && k <= vocab, "rank %u outside 1..%u", k, vocab);
        c1 += k == 1;
        c2 += k == 2;
    }
    double h = 0;
    for (uint32_t k = vocab; k >= 1; --k)
        h += pow(k, -s);
    double p1 = 1 / h, p2 = pow(2, -s) / h;
    double f1 = (double)c1 / n;
    CHECK(fabs(f1 - p1) < 5 * sqrt(p1 * (1 - p1) / n) + 1e-9,
          "vocab %u s %g: rank 1 share %g, want %g", vocab, s, f1, p1);
    double ratio = (double)c1 / c2, want = pow(2, s);
    /* Relative standard error of c1/c2 is sqrt(1/E[c1] + 1/E[c2]). */
    double rel = 5 * sqrt(1 / (p1 * n) + 1 / (p2 * n));
    CHECK(fabs(ratio / want - 1) < rel,
          "vocab %u s %g: count(1)/count(2) = %g, want %g +- %.1f%%", vocab,
          s, ratio, want, 100 * rel);
    printf("     zipf vocab %u s %g: count(1)/count(2) = %.4f (2^s = %.4f)\n",
           vocab, s, ratio, want);
    xg_synth_zipf_free(&z);
}

static void test_zipf(void)
{
    struct xg_synth_zipf z;
    CHECK(xg_synth_zipf_init(&z, 0, 1.0) != 0, "vocab 0 must be refused");
    CHECK(xg_synth_zipf_init(&z, 10, -1.0) != 0, "s < 0 must be refused");
    CHECK(xg_synth_zipf_init(&z, 10, NAN) != 0, "s NaN must be refused");
    xg_synth_zipf_free(&z);
    check_zipf(1000000, 1.0, 4000000);
    check_zipf(1000000, 1.5, 2000000);
    check_zipf(1000, 0.8, 2000000);
    group_ok("zipf: ranks in range, rank-1 share 1/H, count(1)/count(2) "
             "near 2^s");

    /* A small table, checked slot by slot against r^-s / H. */
    const uint32_t v = 7, n = 2000000;
    CHECK(xg_synth_zipf_init(&z, v, 1.0) == 0, "zipf init 7");
    uint32_t count[8] = {0};
    struct xg_synth_rng r;
    xg_synth_rng_init(&r, seed_used, 98, 0);
    for (uint32_t i = 0; i < n; ++i)
        ++count[xg_synth_zipf_sample(&z, &r)];
    double h = 0;
    for (uint32_t k = 1; k <= v; ++k)
        h += 1.0 / k;
    CHECK(count[0] == 0, "rank 0 drawn");
    for (uint32_t k = 1; k <= v; ++k) {
        double p = 1.0 / k / h, f = (double)count[k] / n;
        CHECK(fabs(f - p) < 5 * sqrt(p * (1 - p) / n),
              "vocab 7: rank %u share %g, want %g", k, f, p);
    }
    xg_synth_zipf_free(&z);
    /* s = 0 is uniform; vocab 1 always gives rank 1. */
    CHECK(xg_synth_zipf_init(&z, 4, 0.0) == 0, "zipf init s 0");
    memset(count, 0, sizeof count);
    for (uint32_t i = 0; i < n; ++i)
        ++count[xg_synth_zipf_sample(&z, &r)];
    for (uint32_t k = 1; k <= 4; ++k)
        CHECK(fabs((double)count[k] / n - 0.25) < 5 * sqrt(0.1875 / n),
              "s 0: rank %u share %g", k, (double)count[k] / n);
    xg_synth_zipf_free(&z);
    CHECK(xg_synth_zipf_init(&z, 1, 1.0) == 0, "zipf init vocab 1");
    for (int i = 0; i < 1000; ++i)
        CHECK(xg_synth_zipf_sample(&z, &r) == 1, "vocab 1 gave another rank");
    xg_synth_zipf_free(&z);
    group_ok("zipf: every slot of a 7-word table, s = 0 uniform, vocab 1");
}

static void test_docs(void)
{
    struct xg_synth_params p = XG_SYNTH_DEFAULTS;
    p.seed = seed_used;
    struct xg_synth_zipf z;
    CHECK(xg_synth_params_check(&p) == 0, "defaults must be valid");
    CHECK(xg_synth_zipf_init(&z, p.vocab, p.zipf_s) == 0, "zipf init");

    enum { N = 20000 };
    uint64_t *hash = malloc(N * sizeof *hash);
    CHECK(hash, "out of memory");
    double s = 0, s2 = 0;
    uint64_t tokens = 0, postings = 0;
    for (uint32_t d = 0; d < N; ++d) {
        uint32_t len = xg_synth_doc_length(&p, d);
        CHECK(len >= 1 && len <= XG_SYNTH_MAX_LEN, "doc %u length %u", d,
              len);
        uint32_t n = xg_synth_doc(&p, &z, d, ranks, wdfs, XG_SYNTH_MAX_LEN);
        CHECK(n >= 1 && n <= len, "doc %u: %u distinct of %u tokens", d, n,
              len);
        uint64_t sum = 0;
        for (uint32_t i = 0; i < n; ++i) {
            CHECK(ranks[i] >= 1 && ranks[i] <= p.vocab, "doc %u rank %u", d,
                  ranks[i]);
            CHECK(i == 0 || ranks[i - 1] < ranks[i],
                  "doc %u: ranks not strictly ascending at %u", d, i);
            CHECK(wdfs[i] >= 1, "doc %u: wdf 0", d);
            sum += wdfs[i];
        }
        CHECK(sum == len, "doc %u: wdfs sum to %" PRIu64 ", length %u", d,
              sum, len);
        hash[d] = doc_hash(ranks, wdfs, n);
        double l = log((double)len);
        s += l;
        s2 += l * l;
        tokens += len;
        postings += n;
    }
    double mean = s / N, sd = sqrt(s2 / N - mean * mean);
    printf("     %d docs: mean ln(len) %.4f, sd %.4f, %.1f tokens and %.1f "
           "distinct terms per doc\n", N, mean, sd, (double)tokens / N,
           (double)postings / N);
    group_ok("docs: ranks ascending, distinct, in range; wdfs sum to length");
    CHECK(fabs(mean - p.mu) < 0.05, "mean ln(length) %g, mu %g", mean, p.mu);
    CHECK(fabs(sd - p.sigma) < 0.05, "sd ln(length) %g, sigma %g", sd,
          p.sigma);
    group_ok("docs: ln(length) mean within 0.05 of mu, sd within 0.05 of "
             "sigma");

    /* Any order, any time: the same (seed, index), the same document. */
    for (uint32_t d = N; d-- > 0;) {
        if (d % 7 != 0)
            continue;
        uint32_t n = xg_synth_doc(&p, &z, d, ranks, wdfs, XG_SYNTH_MAX_LEN);
        CHECK(doc_hash(ranks, wdfs, n) == hash[d],
              "doc %u differs when generated again in reverse order", d);
    }
    /* Another seed: (almost) every document differs. */
    struct xg_synth_params q = p;
    q.seed = p.seed + 1;
    uint32_t same = 0;
    for (uint32_t d = 0; d < 1000; ++d) {
        uint32_t n = xg_synth_doc(&q, &z, d, ranks, wdfs, XG_SYNTH_MAX_LEN);
        same += doc_hash(ranks, wdfs, n) == hash[d];
    }
    CHECK(same < 10, "seeds %" PRIu64 " and %" PRIu64 " share %u of 1000 "
          "documents", p.seed, q.seed, same);
    free(hash);
    group_ok("docs: deterministic in (seed, index); other seeds differ");

    /* cap: too small returns 0 and leaves the arrays alone. */
    uint32_t len0 = xg_synth_doc_length(&p, 0);
    ranks[0] = 12345;
    CHECK(xg_synth_doc(&p, &z, 0, ranks, wdfs, len0 - 1) == 0 &&
          ranks[0] == 12345, "cap below the length must return 0");
    CHECK(xg_synth_doc(&p, &z, 0, ranks, wdfs, len0) > 0,
          "cap equal to the length must do");
    xg_synth_zipf_free(&z);

    /* sigma 0: every length is round(e^mu); a huge mu hits the cap. */
    struct xg_synth_params f = p;
    f.sigma = 0;
    f.mu = log(5.0);
    f.vocab = 3;
    CHECK(xg_synth_zipf_init(&z, f.vocab, f.zipf_s) == 0, "zipf init 3");
    for (uint32_t d = 0; d < 100; ++d) {
        CHECK(xg_synth_doc_length(&f, d) == 5, "sigma 0: length %u",
              xg_synth_doc_length(&f, d));
        uint32_t n = xg_synth_doc(&f, &z, d, ranks, wdfs, XG_SYNTH_MAX_LEN);
        CHECK(n >= 1 && n <= 3, "vocab 3: %u distinct", n);
    }
    f.mu = -50;
    CHECK(xg_synth_doc_length(&f, 0) == 1, "tiny mu: length must be 1");
    f.mu = 100;
    f.sigma = 1;
    CHECK(xg_synth_doc_length(&f, 0) == XG_SYNTH_MAX_LEN,
          "huge mu: length must be the cap");
    uint32_t n = xg_synth_doc(&f, &z, 0, ranks, wdfs, XG_SYNTH_MAX_LEN);
    uint64_t sum = 0;
    for (uint32_t i = 0; i < n; ++i)
        sum += wdfs[i];
    CHECK(n == 3 && sum == XG_SYNTH_MAX_LEN, "capped doc: %u terms, %" PRIu64
          " tokens", n, sum);
    xg_synth_zipf_free(&z);
    f.sigma = -1;
    CHECK(xg_synth_params_check(&f) != 0, "sigma < 0 must be refused");
    f.sigma = 1;
    f.vocab = 0;
    CHECK(xg_synth_params_check(&f) != 0, "vocab 0 must be refused");
    group_ok("docs: cap too small, sigma 0, length 1 and length cap, bad "
             "parameters");
}

static void test_queries(void)
{
    const uint32_t vocab = 1000000;
    const uint32_t nq = 20000;
    uint32_t r[XG_SYNTH_QUERY_MAX_TERMS], r2[XG_SYNTH_QUERY_MAX_TERMS], n, n2;
    uint32_t by_len[XG_SYNTH_QUERY_MAX_TERMS + 1] = {0};
    uint64_t terms = 0, low = 0;
    for (uint32_t q = 0; q < nq; ++q) {
        xg_synth_query(seed_used, q, vocab, r, &n);
        CHECK(n >= XG_SYNTH_QUERY_MIN_TERMS && n <= XG_SYNTH_QUERY_MAX_TERMS,
              "query %u has %u terms", q, n);
        ++by_len[n];
        for (uint32_t i = 0; i < n; ++i) {
            CHECK(r[i] >= 1 && r[i] <= vocab, "query %u rank %u", q, r[i]);
            for (uint32_t j = 0; j < i; ++j)
                CHECK(r[i] != r[j], "query %u repeats rank %u", q, r[i]);
            low += r[i] <= 1000;  /* ln 1000 / ln 10^6 = 1/2 */
            ++terms;
        }
        xg_synth_query(seed_used, q, vocab, r2, &n2);
        CHECK(n2 == n && !memcmp(r, r2, n * sizeof r[0]),
              "query %u is not deterministic", q);
    }
    for (uint32_t k = XG_SYNTH_QUERY_MIN_TERMS; k <= XG_SYNTH_QUERY_MAX_TERMS;
         ++k)
        CHECK(fabs(by_len[k] / (double)nq - 0.25) < 5 * sqrt(0.1875 / nq),
              "%u-term queries: %u of %u", k, by_len[k], nq);
    /* Log-uniform: half the draws at or below rank 1000 (redraws of
     * repeats move the share a little; 0.03 is far beyond that). */
    double share = (double)low / terms;
    CHECK(fabs(share - 0.5) < 0.03, "share of ranks <= 1000 is %g", share);
    printf("     %u queries: %.2f terms each, %.3f of ranks <= 1000\n", nq,
           (double)terms / nq, share);
    xg_synth_query(seed_used + 1, 0, vocab, r2, &n2);
    xg_synth_query(seed_used, 0, vocab, r, &n);
    CHECK(n != n2 || memcmp(r, r2, n * sizeof r[0]),
          "seeds %" PRIu64 " and +1 give the same first query", seed_used);
    group_ok("queries: 2..5 distinct terms (uniform), ranks in range, "
             "log-uniform, deterministic");

    /* Tiny vocabularies: at most vocab terms, all distinct. */
    for (uint32_t v = 1; v <= 6; ++v) {
        for (uint32_t q = 0; q < 200; ++q) {
            xg_synth_query(seed_used, q, v, r, &n);
            CHECK(n >= 1 && n <= v && n <= XG_SYNTH_QUERY_MAX_TERMS,
                  "vocab %u: %u terms", v, n);
            for (uint32_t i = 0; i < n; ++i) {
                CHECK(r[i] >= 1 && r[i] <= v, "vocab %u: rank %u", v, r[i]);
                for (uint32_t j = 0; j < i; ++j)
                    CHECK(r[i] != r[j], "vocab %u: repeated rank", v);
            }
        }
    }
    xg_synth_query(seed_used, 0, 0, r, &n);
    CHECK(n == 0, "vocab 0: %u terms", n);
    group_ok("queries: vocabularies 0..6");
}

int main(int argc, char **argv)
{
    seed_used = parse_seed(argc, argv);
    printf("test_synth: seed %" PRIu64 "\n", seed_used);
    ranks = malloc(XG_SYNTH_MAX_LEN * sizeof *ranks);
    wdfs = malloc(XG_SYNTH_MAX_LEN * sizeof *wdfs);
    CHECK(ranks && wdfs, "out of memory");
    test_words();
    test_rng();
    test_zipf();
    test_docs();
    test_queries();
    free(ranks);
    free(wdfs);
    printf("%d passed, 0 failed\n", n_passed);
    return 0;
}
