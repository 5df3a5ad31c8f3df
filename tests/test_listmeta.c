/** @file test_listmeta.c
 *  @brief Tests of gpu/index/listmeta.{h,c}: every element of a list is found by
 *         binary search inside its linear-regression range and inside its
 *         hash segment; non-members get valid ranges; shift/count/build
 *         match their definitions.
 *
 *  Lists: tiny (n = 0, 1, 2), uniform, clustered, arithmetic progressions,
 *  values near UINT32_MAX with n_docs near 2^32, and (if
 *  $XG_CACM_TSV, set by tests/meson.build, exists) real CACM
 *  lists.  Usage: test_listmeta [--seed N].  Prints the seed, one "ok" line
 *  per check group and "N passed, 0 failed"; exits 1 at the first failure.
 */
#include "../gpu/index/listmeta.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- harness ---------------------------------------------------------- */

#include "test_util.h"

/* ---- helpers ---------------------------------------------------------- */

/* First index in [lo, hi) with d[idx] >= key (hi if none). */
static uint32_t lower_bound(const uint32_t *d, uint32_t lo, uint32_t hi,
                            uint32_t key)
{
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (d[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int is_member(const uint32_t *d, uint32_t n, uint32_t key)
{
    uint32_t i = lower_bound(d, 0, n, key);
    return i < n && d[i] == key;
}

/* A non-member key chosen near the list (gaps, ends) or anywhere. */
static uint32_t probe_key(const uint32_t *d, uint32_t n, uint32_t n_docs)
{
    switch (rng_below(4)) {
    case 0:
        return n ? d[rng_below(n)] + 1 : rng_u32();
    case 1:
        return n ? d[rng_below(n)] - 1 : rng_u32();
    case 2:
        return n_docs ? rng_below(n_docs) : rng_u32();
    default:
        return rng_u32();
    }
}

struct stats {
    uint64_t lists, elems, lr_width, hs_width, probes;
};

/* The checks every list goes through; ctx names the list in messages. */
static void check_list(const uint32_t *d, uint32_t n, uint32_t n_docs,
                       const char *ctx, struct stats *st)
{
    for (uint32_t i = 1; i < n; ++i)
        CHECK(d[i - 1] < d[i], "%s: test list not ascending", ctx);
    CHECK(n == 0 || d[n - 1] < n_docs || n_docs == 0,
          "%s: test list exceeds n_docs", ctx);

    /* Regression. */
    float slope = -1, icpt = -1;
    uint32_t ml = 0xDEADu, mr = 0xBEEFu;
    xg_lr_fit(d, n, &slope, &icpt, &ml, &mr);
    CHECK(isfinite(slope) && isfinite(icpt) && slope >= 0,
          "%s: fit gave slope %g intercept %g", ctx, (double)slope,
          (double)icpt);
    if (n < 2)
        CHECK(slope == 0 && icpt == 0 && ml == 0 && mr == (n ? n - 1 : 0),
              "%s: n=%u must give the whole-list model, got slope %g "
              "ml %u mr %u", ctx, n, (double)slope, ml, mr);
    if (slope == 0)
        CHECK(icpt == 0, "%s: slope 0 with intercept %g", ctx, (double)icpt);
    CHECK(ml <= n && mr <= n, "%s: distances %u/%u exceed n %u", ctx, ml,
          mr, n);
    int hit_l = ml == 0, hit_r = mr == 0;
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t lo, hi;
        xg_lr_range(slope, icpt, ml, mr, n, d[i], &lo, &hi);
        CHECK(lo <= i && i < hi && hi <= n,
              "%s: element %u (doc %u) outside its LR range [%u,%u) "
              "(slope %.9g intercept %.9g ml %u mr %u)", ctx, i, d[i], lo,
              hi, (double)slope, (double)icpt, ml, mr);
        uint32_t at = lower_bound(d, lo, hi, d[i]);
        CHECK(at == i, "%s: binary search in [%u,%u) found %u for element %u",
              ctx, lo, hi, at, i);
        st->lr_width += hi - lo;
        if (slope > 0) {
            int64_t p = xg_lr_predict(slope, icpt, d[i]);
            hit_l |= p - (int64_t)i == (int64_t)ml;
            hit_r |= (int64_t)i - p == (int64_t)mr;
        }
    }
    /* The distances are tight: some element needs each of them. */
    if (slope > 0)
        CHECK(hit_l && hit_r, "%s: max_left %u / max_right %u attained by "
                              "no element", ctx, ml, mr);
    else
        CHECK(ml == 0 && mr == (n ? n - 1 : 0),
              "%s: whole-list model has ml %u mr %u", ctx, ml, mr);

    /* Hash segments, for several targets. */
    static const uint32_t targets[] = {1, 4, 16, 100};
    for (size_t t = 0; t < sizeof targets / sizeof targets[0]; ++t) {
        uint32_t shift = xg_hashseg_shift(n_docs, n, targets[t]);
        uint32_t segs = xg_hashseg_count(n_docs, shift);
        uint32_t limit = n / targets[t] ? n / targets[t] : 1;
        CHECK(shift <= 31, "%s: shift %u", ctx, shift);
        CHECK(segs <= limit || shift == 31,
              "%s: target %u: %u segments > limit %u (shift %u)", ctx,
              targets[t], segs, limit, shift);
        CHECK(shift == 0 || xg_hashseg_count(n_docs, shift - 1) > limit,
              "%s: target %u: shift %u not the smallest", ctx, targets[t],
              shift);
        uint32_t *starts = malloc(((size_t)segs + 1) * 4);
        CHECK(starts != NULL, "malloc %u segments", segs);
        xg_hashseg_build(d, n, shift, segs, starts);
        CHECK(starts[0] == 0 && starts[segs] == n, "%s: starts ends %u..%u",
              ctx, starts[0], starts[segs]);
        for (uint32_t s = 0; s < segs; ++s) {
            CHECK(starts[s] <= starts[s + 1], "%s: starts not monotone at %u",
                  ctx, s);
            /* Definition: starts[s] = first i with (d[i] >> shift) >= s. */
            uint32_t a = starts[s];
            CHECK((a == n || (d[a] >> shift) >= s) &&
                      (a == 0 || (d[a - 1] >> shift) < s),
                  "%s: starts[%u] = %u violates its definition", ctx, s, a);
        }
        for (uint32_t i = 0; i < n; ++i) {
            uint32_t lo, hi;
            xg_hashseg_range(starts, shift, segs, d[i], &lo, &hi);
            CHECK(lo <= i && i < hi && hi <= n,
                  "%s: element %u (doc %u) outside its segment [%u,%u) "
                  "(shift %u)", ctx, i, d[i], lo, hi, shift);
            CHECK(lower_bound(d, lo, hi, d[i]) == i,
                  "%s: binary search in segment missed element %u", ctx, i);
            st->hs_width += hi - lo;
        }
        for (int q = 0; q < 200; ++q) {
            uint32_t key = probe_key(d, n, n_docs);
            uint32_t lo, hi;
            xg_hashseg_range(starts, shift, segs, key, &lo, &hi);
            CHECK(lo <= hi && hi <= n, "%s: key %u gives segment [%u,%u)",
                  ctx, key, lo, hi);
            if (is_member(d, n, key))
                CHECK(lower_bound(d, lo, hi, key) < hi,
                      "%s: member %u missed", ctx, key);
            else
                CHECK(lower_bound(d, lo, hi, key) == hi ||
                          d[lower_bound(d, lo, hi, key)] != key,
                      "%s: non-member %u found", ctx, key);
            st->probes++;
        }
        free(starts);
    }
    /* Non-members: ranges valid (and members met on the way still found). */
    for (int q = 0; q < 1000; ++q) {
        uint32_t key = probe_key(d, n, n_docs), lo, hi;
        xg_lr_range(slope, icpt, ml, mr, n, key, &lo, &hi);
        CHECK(lo <= hi && hi <= n, "%s: key %u gives LR range [%u,%u)", ctx,
              key, lo, hi);
        if (is_member(d, n, key)) {
            uint32_t at = lower_bound(d, lo, hi, key);
            CHECK(at < hi && d[at] == key, "%s: member %u missed", ctx, key);
        }
        st->probes++;
    }
    st->lists++;
    st->elems += n;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Sort and dedupe; returns the new length. */
static uint32_t sort_unique(uint32_t *d, uint32_t n)
{
    qsort(d, n, 4, cmp_u32);
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; ++i)
        if (m == 0 || d[i] != d[m - 1])
            d[m++] = d[i];
    return m;
}

/* A sorted random subset of about n of [lo, lo + span). */
static uint32_t gen_uniform(uint32_t *d, uint32_t n, uint32_t lo,
                            uint32_t span)
{
    for (uint32_t i = 0; i < n; ++i)
        d[i] = lo + rng_below(span);
    return sort_unique(d, n);
}

static void report(const char *what, const struct stats *st)
{
    printf("     (%" PRIu64 " lists, %" PRIu64 " elements; mean LR range "
           "%.1f, mean segment %.1f, %" PRIu64 " non-member probes)\n",
           st->lists, st->elems,
           st->elems ? (double)st->lr_width / (double)st->elems : 0.0,
           st->elems ? (double)st->hs_width / (double)st->elems / 4 : 0.0,
           st->probes);
    group_ok(what);
}

/* ---- groups ----------------------------------------------------------- */

static void test_definitions(void)
{
    CHECK(xg_hashseg_count(0, 0) == 1 && xg_hashseg_count(0, 31) == 1,
          "count(n_docs = 0) must be 1");
    CHECK(xg_hashseg_count(1, 0) == 1 && xg_hashseg_count(2, 0) == 2 &&
              xg_hashseg_count(1000, 3) == 125 &&
              xg_hashseg_count(1001, 3) == 126,
          "count small values");
    CHECK(xg_hashseg_count(0xFFFFFFFFu, 0) == 0xFFFFFFFFu &&
              xg_hashseg_count(0xFFFFFFFFu, 31) == 2 &&
              xg_hashseg_count(0x80000000u, 31) == 1,
          "count near 2^32");
    CHECK(xg_hashseg_shift(1000, 100, 10) == 7,
          "shift(1000, 100, 10) = %u, want 7", xg_hashseg_shift(1000, 100, 10));
    CHECK(xg_hashseg_shift(1000, 5, 10) == 10,
          "shift(1000, 5, 10) = %u, want 10 (one segment)",
          xg_hashseg_shift(1000, 5, 10));
    CHECK(xg_hashseg_shift(1000, 1000, 1) == 0, "shift(1000,1000,1) != 0");
    CHECK(xg_hashseg_shift(1000, 1000, 0) == 0, "target 0 must count as 1");
    CHECK(xg_hashseg_shift(0xFFFFFFFFu, 1, 1) == 31 &&
              xg_hashseg_shift(0xFFFFFFFFu, 3, 1) == 31 &&
              xg_hashseg_shift(0xFFFFFFFFu, 0xFFFFFFFFu, 1) == 0,
          "shift near 2^32");
    CHECK(xg_hashseg_shift(0, 0, 8) == 0 && xg_hashseg_shift(1, 1, 8) == 0,
          "shift of tiny n_docs");
    for (int t = 0; t < 20000; ++t) {  /* brute-force the definition */
        uint32_t n_docs = rng_u32() >> rng_below(32);
        uint32_t df = rng_below(n_docs ? n_docs : 1) + (t & 1);
        uint32_t target = rng_below(300);
        uint32_t lim = df / (target ? target : 1);
        if (lim < 1)
            lim = 1;
        uint32_t want = 31;
        for (uint32_t s = 0; s < 32; ++s)
            if ((n_docs ? ((n_docs - 1) >> s) + 1 : 1) <= lim) {
                want = s;
                break;
            }
        CHECK(xg_hashseg_shift(n_docs, df, target) == want,
              "shift(%u, %u, %u) = %u, want %u", n_docs, df, target,
              xg_hashseg_shift(n_docs, df, target), want);
    }
    /* predict is exactly the documented float expression. */
    for (int t = 0; t < 100000; ++t) {
        float s = (float)(0.5 + 100.0 * (double)rng_u32() / 4294967296.0);
        float c = (float)((double)rng_u32() - 2147483648.0);
        uint32_t key = rng_u32();
        int64_t want = (int64_t)floorf(((float)key - c) / s);
        CHECK(xg_lr_predict(s, c, key) == want,
              "predict(%g, %g, %u) = %lld, want %lld", (double)s, (double)c,
              key, (long long)xg_lr_predict(s, c, key), (long long)want);
    }
    CHECK(xg_lr_predict(0.0f, 5.0f, 100) == 0 &&
              xg_lr_predict(-1.0f, 5.0f, 100) == 0 &&
              xg_lr_predict(NAN, 5.0f, 100) == 0,
          "predict with slope <= 0 or NaN must be 0");
    {   /* range for slope 0 is the whole list, whatever the distances */
        uint32_t lo = 9, hi = 9;
        xg_lr_range(0.0f, 0.0f, 0, 0, 77, 123456, &lo, &hi);
        CHECK(lo == 0 && hi == 77, "slope-0 range [%u,%u), want [0,77)", lo,
              hi);
        xg_lr_range(1.0f, 0.0f, 0, 0, 10, 0xFFFFFFFFu, &lo, &hi);
        CHECK(lo == 10 && hi == 10, "far-right key: [%u,%u)", lo, hi);
        xg_lr_range(1.0f, 1e9f, 0, 0, 10, 5, &lo, &hi);
        CHECK(lo == 0 && hi == 0, "far-left key: [%u,%u)", lo, hi);
        xg_lr_range(2.0f, 10.0f, 1, 2, 100, 50, &lo, &hi);  /* p = 20 */
        CHECK(lo == 19 && hi == 23, "p=20 ml 1 mr 2: [%u,%u), want [19,23)",
              lo, hi);
    }
    {   /* hashseg_range: out-of-range segment is empty at n */
        const uint32_t d[3] = {1, 9, 17}, st[4] = {0, 1, 2, 3};
        const uint32_t d2[4] = {0, 2, 19, 20}, st2[4] = {0, 2, 2, 4};
        uint32_t lo, hi;
        xg_hashseg_range(st, 3, 3, 9, &lo, &hi);
        CHECK(lo == 1 && hi == 2, "key 9 shift 3: [%u,%u)", lo, hi);
        xg_hashseg_range(st2, 3, 3, 12, &lo, &hi);
        CHECK(lo == 2 && hi == 2, "key 12 (empty segment 1): [%u,%u)", lo,
              hi);
        xg_hashseg_range(st2, 3, 3, 23, &lo, &hi);
        CHECK(lo == 2 && hi == 4, "key 23 (segment 2): [%u,%u)", lo, hi);
        xg_hashseg_range(st, 3, 3, 24, &lo, &hi);
        CHECK(lo == 3 && hi == 3, "key 24 (segment 3 of 3): [%u,%u)", lo, hi);
        uint32_t b[4];
        xg_hashseg_build(d, 3, 3, 3, b);
        CHECK(memcmp(b, st, sizeof b) == 0, "build {1,9,17} shift 3: %u %u "
              "%u %u", b[0], b[1], b[2], b[3]);
        xg_hashseg_build(d2, 4, 3, 3, b);
        CHECK(memcmp(b, st2, sizeof b) == 0, "build {0,2,19,20} shift 3: %u "
              "%u %u %u", b[0], b[1], b[2], b[3]);
    }
    group_ok("definitions: hashseg count/shift (brute force), predict "
             "expression, range clamping, hand examples");
}

static void test_tiny(void)
{
    struct stats st = {0};
    uint32_t d[2] = {0, 0};
    check_list(d, 0, 0, "n=0 n_docs=0", &st);
    check_list(d, 0, 100, "n=0", &st);
    d[0] = 0;
    check_list(d, 1, 1, "n=1 {0}", &st);
    d[0] = 0xFFFFFFFEu;
    check_list(d, 1, 0xFFFFFFFFu, "n=1 {2^32-2}", &st);
    d[0] = 0;
    d[1] = 1;
    check_list(d, 2, 2, "n=2 {0,1}", &st);
    d[0] = 0;
    d[1] = 0xFFFFFFFEu;
    check_list(d, 2, 0xFFFFFFFFu, "n=2 {0,2^32-2}", &st);
    for (int t = 0; t < 300; ++t) {
        uint32_t n_docs = 1 + (rng_u32() >> rng_below(32));
        uint32_t n = gen_uniform(d, 1 + rng_below(2), 0, n_docs);
        check_list(d, n, n_docs, "random n=1/2", &st);
    }
    report("tiny lists (n = 0, 1, 2; extreme values): found, whole-list "
           "model for n < 2", &st);
}

static void test_uniform_and_clustered(void)
{
    struct stats st = {0};
    uint32_t *d = malloc(200000 * 4);
    CHECK(d != NULL, "malloc");
    char ctx[80];
    for (int t = 0; t < 40; ++t) {
        uint32_t n_docs = t < 20 ? 1000 + rng_below(10000000)
                                 : 0xFFFFFFFFu - rng_below(1000);
        uint32_t want = 3 + rng_below(t % 5 == 0 ? 200000 : 5000);
        if (want > n_docs / 2)
            want = n_docs / 2;
        uint32_t n = gen_uniform(d, want, 0, n_docs);
        snprintf(ctx, sizeof ctx, "uniform %d (n=%u of %u)", t, n, n_docs);
        check_list(d, n, n_docs, ctx, &st);
        if (n >= 10000) {
            float s, c;
            uint32_t ml, mr;
            xg_lr_fit(d, n, &s, &c, &ml, &mr);
            CHECK(s > 0 && ml + mr < n / 4,
                  "%s: regression useless on a uniform list (slope %g, "
                  "width %u)", ctx, (double)s, ml + mr);
        }
    }
    for (int t = 0; t < 40; ++t) {  /* clusters: dense runs, big jumps */
        uint32_t n_docs = t % 2 ? 0xFFFFFFFFu : 1 + rng_below(50000000);
        uint32_t n = 0, clusters = 1 + rng_below(8);
        for (uint32_t c = 0; c < clusters; ++c) {
            uint32_t span = 1 + rng_below(n_docs / 64 + 1);
            uint32_t lo = rng_below(n_docs - span + 1);
            uint32_t m = 1 + rng_below(span < 20000 ? span : 20000);
            n += gen_uniform(d + n, m, lo, span);
        }
        n = sort_unique(d, n);
        snprintf(ctx, sizeof ctx, "clustered %d (n=%u, %u clusters)", t, n,
                 clusters);
        check_list(d, n, n_docs, ctx, &st);
    }
    free(d);
    report("uniform and clustered lists (n up to 2*10^5, n_docs up to "
           "2^32-1): every element found", &st);
}

static void test_progressions_and_top(void)
{
    struct stats st = {0};
    uint32_t *d = malloc(300000 * 4);
    CHECK(d != NULL, "malloc");
    char ctx[96];
    /* Exact arithmetic progressions with small values: the float model is
     * (almost) exact, so the range must be tiny. */
    static const uint32_t steps[] = {1, 2, 3, 7, 100, 12345};
    for (size_t s = 0; s < sizeof steps / sizeof steps[0]; ++s) {
        uint32_t n = 1000, a = 5;
        for (uint32_t i = 0; i < n; ++i)
            d[i] = a + i * steps[s];
        snprintf(ctx, sizeof ctx, "progression 5 + %u i", steps[s]);
        check_list(d, n, d[n - 1] + 1, ctx, &st);
        float sl, c;
        uint32_t ml, mr;
        xg_lr_fit(d, n, &sl, &c, &ml, &mr);
        CHECK(fabsf(sl - (float)steps[s]) <= 1e-3f * (float)steps[s] &&
                  ml + mr <= 2,
              "%s: slope %g, ml %u mr %u (want slope %u, width <= 2)", ctx,
              (double)sl, ml, mr, steps[s]);
    }
    for (int t = 0; t < 30; ++t) {  /* random progressions anywhere */
        uint32_t n = 2 + rng_below(t % 3 ? 5000 : 300000);
        uint32_t step = 1 + rng_below(0xFFFFFFFEu / n);
        uint32_t a = rng_below(0xFFFFFFFFu - (n - 1) * step);
        for (uint32_t i = 0; i < n; ++i)
            d[i] = a + i * step;
        snprintf(ctx, sizeof ctx, "progression %u + %u i (n=%u)", a, step, n);
        check_list(d, n, 0xFFFFFFFFu, ctx, &st);
    }
    /* The top of the uint32 range: dense runs ending at 2^32-2, where a
     * float has 256-unit steps. */
    for (int t = 0; t < 20; ++t) {
        uint32_t n = 1 + rng_below(t % 2 ? 100000 : 3000);
        uint32_t span = n + rng_below(3 * n + 1);
        uint32_t got = gen_uniform(d, n, 0xFFFFFFFFu - span, span);
        snprintf(ctx, sizeof ctx, "top of range (n=%u, span %u)", got, span);
        check_list(d, got, 0xFFFFFFFFu, ctx, &st);
    }
    {   /* 0 and the top together, plus a dense run */
        uint32_t n = 0;
        d[n++] = 0;
        for (uint32_t i = 0; i < 5000; ++i)
            d[n++] = 0xFFFFFFF0u - 5000 + i;
        d[n++] = 0xFFFFFFFEu;
        check_list(d, n, 0xFFFFFFFFu, "0 + top run", &st);
    }
    free(d);
    report("arithmetic progressions (exact fit: width <= 2) and lists near "
           "UINT32_MAX", &st);
}

static void test_fallback(void)
{
    uint32_t d[100];
    float s, c;
    uint32_t ml, mr, lo, hi;
    for (uint32_t i = 0; i < 100; ++i)
        d[i] = 1000 - 7 * i;  /* descending: not a valid list */
    xg_lr_fit(d, 100, &s, &c, &ml, &mr);
    CHECK(s == 0 && c == 0 && ml == 0 && mr == 99,
          "descending list: slope %g intercept %g ml %u mr %u", (double)s,
          (double)c, ml, mr);
    xg_lr_range(s, c, ml, mr, 100, d[50], &lo, &hi);
    CHECK(lo == 0 && hi == 100, "fallback range [%u,%u)", lo, hi);
    for (uint32_t i = 0; i < 100; ++i)
        d[i] = 42;  /* constant */
    xg_lr_fit(d, 100, &s, &c, &ml, &mr);
    CHECK(s == 0 && ml == 0 && mr == 99, "constant list: slope %g",
          (double)s);
    /* Non-monotone but increasing on average: bounds still hold. */
    for (uint32_t i = 0; i < 100; ++i)
        d[i] = 10 * i + rng_below(400);
    xg_lr_fit(d, 100, &s, &c, &ml, &mr);
    for (uint32_t i = 0; i < 100; ++i) {
        xg_lr_range(s, c, ml, mr, 100, d[i], &lo, &hi);
        CHECK(lo <= i && i < hi, "noisy list: index %u outside [%u,%u)", i,
              lo, hi);
    }
    group_ok("fallback: descending/constant lists give slope 0 and the whole "
             "list; noisy lists keep the bound");
}

/* ---- CACM ------------------------------------------------------------- */


static void test_cacm(void)
{
    uint32_t *lists[N_CACM_WORDS];
    size_t len[N_CACM_WORDS];
    uint32_t n_docs;
    if (!cacm_lists(lists, len, &n_docs))
        return;
    struct stats st = {0};
    for (size_t w = 0; w < N_CACM_WORDS; ++w) {
        char ctx[64];
        snprintf(ctx, sizeof ctx, "cacm \"%s\" (df %zu)", cacm_words[w],
                 len[w]);
        check_list(lists[w], (uint32_t)len[w], n_docs, ctx, &st);
        float s, c;
        uint32_t ml, mr;
        xg_lr_fit(lists[w], (uint32_t)len[w], &s, &c, &ml, &mr);
        printf("     %-10s df %4zu  slope %7.3f  max_left %3u  max_right "
               "%3u\n", cacm_words[w], len[w], (double)s, ml, mr);
        free(lists[w]);
    }
    CHECK(n_docs > 1000 && st.elems > 1000,
          "cacm: only %u docs / %" PRIu64 " postings parsed", n_docs,
          st.elems);
    report("CACM lists of 10 frequent words: every posting found via LR "
           "range and hash segments", &st);
}

int main(int argc, char **argv)
{
    seed_used = parse_seed(argc, argv);
    rng_state = seed_used;
    printf("test_listmeta: seed %" PRIu64 "\n", seed_used);
    test_definitions();
    test_tiny();
    test_uniform_and_clustered();
    test_progressions_and_top();
    test_fallback();
    test_cacm();
    printf("%d passed, 0 failed\n", n_passed);
    return 0;
}
