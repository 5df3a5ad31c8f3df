/** @file test_pfor.c
 *  @brief Tests of gpu/index/pfor.c: layout against an independent bit-by-bit
 *         packer, round trips for every b, choose_b optimality, docid-gap
 *         streams (synthetic Zipf-like and real CACM lists), rejection of
 *         truncated and corrupt blocks, a 100k-buffer fuzz behind a guard
 *         page, and the prefix sum.
 *
 *  Usage: test_pfor [--seed N].  The CACM group reads $XG_CACM_TSV
 *  (tests/meson.build points it at ../shared/ir-data) and is skipped with
 *  a message if it is missing.  Prints the seed, one "ok" line per check
 *  group and "N passed, 0 failed"; exits 1 at the first failure.
 */
#include "../gpu/runtime/error.h"
#include "../gpu/index/pfor.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* ---- harness ---------------------------------------------------------- */

#include "test_util.h"

static double rng_unit(void)  /* uniform in (0, 1] */
{
    return ((double)(rng_next() >> 11) + 1.0) / 9007199254740992.0;
}

/* ---- helpers ---------------------------------------------------------- */

/* A word buffer whose end abuts a PROT_NONE page, so any read past
 * avail_words faults; the handler turns that into a test failure. */
static unsigned char *guard_mem;
static size_t page_size;

static void on_segv(int sig)
{
    static const char msg[] =
        "FAIL: xg_pfor_decode_ref read past avail_words (SIGSEGV)\n";
    (void)sig;
    if (write(1, msg, sizeof msg - 1) < 0) {
        /* nothing more to do */
    }
    _exit(1);
}

static void guard_init(void)
{
    page_size = (size_t)sysconf(_SC_PAGESIZE);
    guard_mem = mmap(NULL, 2 * page_size, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(guard_mem != MAP_FAILED, "mmap");
    CHECK(mprotect(guard_mem + page_size, page_size, PROT_NONE) == 0,
          "mprotect");
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_segv;
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
}

/* Room for n words ending exactly at the guard page. */
static uint32_t *guard_words(size_t n)
{
    CHECK(n * 4 <= page_size, "guard buffer too small for %zu words", n);
    return (uint32_t *)(guard_mem + page_size - n * 4);
}

#define CANARY 0xC0FFEE11u
#define PAD 8
/* Output buffer with canaries around 128 values. */
struct outbuf {
    uint32_t w[PAD + 128 + PAD];
};

static uint32_t *out_init(struct outbuf *o)
{
    for (int i = 0; i < PAD + 128 + PAD; ++i)
        o->w[i] = CANARY;
    return o->w + PAD;
}

static void out_check(const struct outbuf *o, const char *ctx)
{
    for (int i = 0; i < PAD; ++i) {
        CHECK(o->w[i] == CANARY, "%s: canary below out[] overwritten", ctx);
        CHECK(o->w[PAD + 128 + i] == CANARY,
              "%s: canary above out[128] overwritten", ctx);
    }
}

/* Expected encoded size from the layout, counted independently. */
static uint32_t expect_words(const uint32_t *v, uint32_t n, uint32_t b)
{
    uint32_t e = 0;
    for (uint32_t i = 0; i < n; ++i)
        if (b < 32 && v[i] >= ((uint64_t)1 << b))
            ++e;
    return 1 + (n * b + 31) / 32 + (e + 3) / 4 + e;
}

/* The layout of pfor.h written one bit at a time (independent of pfor.c). */
static uint32_t ref_pack(const uint32_t *v, uint32_t n, uint32_t b,
                         uint32_t *out)
{
    uint32_t e = 0;
    uint32_t pos[128], high[128];
    uint32_t nslot = (n * b + 31) / 32;
    memset(out, 0, XG_PFOR_MAX_WORDS * sizeof *out);
    for (uint32_t i = 0; i < n; ++i) {
        for (uint32_t j = 0; j < b; ++j)
            if ((v[i] >> j) & 1u) {
                uint32_t bit = i * b + j;
                out[1 + bit / 32] |= 1u << (bit % 32);
            }
        uint64_t hi = (uint64_t)v[i] >> b;
        if (hi) {
            pos[e] = i;
            high[e] = (uint32_t)hi;
            ++e;
        }
    }
    out[0] = b + 256 * e + 65536 * (n - 1);
    for (uint32_t j = 0; j < e; ++j)  /* byte j of the position area */
        out[1 + nslot + j / 4] |= pos[j] << (8 * (j % 4));
    for (uint32_t j = 0; j < e; ++j)
        out[1 + nslot + (e + 3) / 4 + j] = high[j];
    return 1 + nslot + (e + 3) / 4 + e;
}

/* Random block of n values in one of several shapes. */
static void gen_block(uint32_t *v, uint32_t n, uint32_t b, int shape)
{
    uint32_t lim = b >= 32 ? 0xFFFFFFFFu : (1u << b) - 1u;
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t small = b == 0 ? 0 : (b >= 32 ? rng_u32() : rng_u32() & lim);
        uint32_t big = rng_u32() >> rng_below(32);
        switch (shape) {
        case 0: v[i] = small; break;                           /* fits */
        case 1: v[i] = rng_below(10) == 0 ? big : small; break; /* 10% exc */
        case 2: v[i] = rng_below(10) != 0 ? big : small; break; /* 90% exc */
        case 3: v[i] = 0xFFFFFFFFu - rng_below(3); break;      /* huge */
        case 4: v[i] = rng_u32(); break;                       /* full */
        default: v[i] = rng_below(2) ? lim : lim + 1u; break;  /* edges */
        }
    }
}

/* Decode with exactly avail words placed before the guard page; check the
 * result against want[0..n). */
static void decode_expect_used(const uint32_t *enc, uint32_t words,
                               const uint32_t *want, uint32_t n,
                               uint32_t want_used, const char *ctx)
{
    uint32_t *g = guard_words(words);
    memcpy(g, enc, words * 4);
    struct outbuf ob;
    uint32_t *out = out_init(&ob);
    uint32_t n_out = 777, used = 777;
    int rc = xg_pfor_decode_ref(g, words, out, &n_out, &used);
    CHECK(rc == XG_OK, "%s: decode failed (%d): %s", ctx, rc,
          xg_last_error());
    CHECK(n_out == n, "%s: n_out %u, want %u", ctx, n_out, n);
    CHECK(used == want_used, "%s: words_used %u, want %u", ctx, used,
          want_used);
    for (uint32_t i = 0; i < n; ++i)
        CHECK(out[i] == want[i], "%s: value %u is 0x%08X, want 0x%08X", ctx,
              i, out[i], want[i]);
    out_check(&ob, ctx);
    /* The first value alone, from the header, and the block's words. */
    uint32_t first = 777, words_first = 777;
    rc = xg_pfor_first(g, words, &first, &words_first);
    CHECK(rc == XG_OK && first == want[0] && words_first == want_used,
          "%s: first value 0x%08X in %u words (rc %d), want 0x%08X in %u",
          ctx, first, words_first, rc, want[0], want_used);
}

/* Decode a block that fills exactly `words` words. */
static void decode_expect(const uint32_t *enc, uint32_t words,
                          const uint32_t *want, uint32_t n, const char *ctx)
{
    decode_expect_used(enc, words, want, n, words, ctx);
}

/* ---- groups ----------------------------------------------------------- */

static void test_known_layout(void)
{
    uint32_t out[XG_PFOR_MAX_WORDS];
    {
        const uint32_t v[3] = {1, 2, 3};
        const uint32_t want[2] = {0x00020002u, 1u | 2u << 2 | 3u << 4};
        CHECK(xg_pfor_encode(v, 3, 2, out) == 2 && out[0] == want[0] &&
                  out[1] == want[1],
              "{1,2,3} b=2: got %08X %08X, want %08X %08X", out[0], out[1],
              want[0], want[1]);
    }
    {
        const uint32_t v[2] = {5, 1};  /* 5 = 0b101 is an exception at b=2 */
        const uint32_t want[4] = {0x00010102u, 0x5u, 0x0u, 0x1u};
        uint32_t w = xg_pfor_encode(v, 2, 2, out);
        CHECK(w == 4 && memcmp(out, want, sizeof want) == 0,
              "{5,1} b=2: %u words %08X %08X %08X %08X", w, out[0], out[1],
              out[2], out[3]);
    }
    {
        const uint32_t v[2] = {0xABCDEu, 0x12345u};  /* straddling slot */
        const uint32_t want[3] = {0x00010014u, 0x345ABCDEu, 0x00000012u};
        uint32_t w = xg_pfor_encode(v, 2, 20, out);
        CHECK(w == 3 && memcmp(out, want, sizeof want) == 0,
              "b=20 straddle: %u words %08X %08X %08X", w, out[0], out[1],
              out[2]);
    }
    {
        /* b = 0, 128 values, exceptions at 3, 7, 100 (positions in 1 word)
         * and every other value 0. */
        uint32_t v[128] = {0};
        v[3] = 9;
        v[7] = 1;
        v[100] = 0xFFFFFFFFu;
        const uint32_t want[5] = {0x007F0300u, 3u | 7u << 8 | 100u << 16, 9u,
                                  1u, 0xFFFFFFFFu};
        uint32_t w = xg_pfor_encode(v, 128, 0, out);
        CHECK(w == 5 && memcmp(out, want, sizeof want) == 0,
              "b=0 n=128: %u words %08X %08X %08X", w, out[0], out[1],
              out[2]);
    }
    {
        const uint32_t v[1] = {0xDEADBEEFu};
        uint32_t w = xg_pfor_encode(v, 1, 32, out);
        CHECK(w == 2 && out[0] == 32u && out[1] == 0xDEADBEEFu,
              "b=32 n=1: %u words %08X %08X", w, out[0], out[1]);
    }
    group_ok("hand-computed layouts (b=2, exception, straddle, b=0, b=32)");
}

static void test_layout_vs_bitwise(void)
{
    static const uint32_t sizes[] = {1, 2, 3, 4, 5, 31, 32, 33, 100, 127, 128};
    uint32_t v[128], a[XG_PFOR_MAX_WORDS], r[XG_PFOR_MAX_WORDS];
    for (uint32_t b = 0; b <= 32; ++b)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; ++si)
            for (int shape = 0; shape < 6; ++shape) {
                uint32_t n = sizes[si];
                gen_block(v, n, b, shape);
                memset(a, 0xA5, sizeof a);
                uint32_t wa = xg_pfor_encode(v, n, b, a);
                uint32_t wr = ref_pack(v, n, b, r);
                CHECK(wa == wr && memcmp(a, r, wa * 4) == 0,
                      "b=%u n=%u shape %d: encoder (%u words) differs from "
                      "the bit-by-bit layout (%u words)", b, n, shape, wa, wr);
            }
    group_ok("encoder output == independent bit-by-bit packer, b 0..32, "
             "n 1..128, 6 value shapes");
}

static void test_round_trip_forced_b(void)
{
    static const uint32_t sizes[] = {1, 2, 3, 7, 31, 32, 33, 64, 127, 128};
    uint32_t v[128], enc[XG_PFOR_MAX_WORDS + 8];
    char ctx[96];
    long blocks = 0;
    for (uint32_t b = 0; b <= 32; ++b)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; ++si)
            for (int shape = 0; shape < 6; ++shape)
                for (int rep = 0; rep < 3; ++rep) {
                    uint32_t n = sizes[si];
                    gen_block(v, n, b, shape);
                    uint32_t w = xg_pfor_encode(v, n, b, enc);
                    snprintf(ctx, sizeof ctx, "b=%u n=%u shape %d", b, n,
                             shape);
                    CHECK(w == expect_words(v, n, b) &&
                              w <= XG_PFOR_MAX_WORDS,
                          "%s: %u words, want %u", ctx, w,
                          expect_words(v, n, b));
                    CHECK(XG_PFOR_HDR_B(enc[0]) == b &&
                              XG_PFOR_HDR_N(enc[0]) == n &&
                              XG_PFOR_HDR_RESERVED(enc[0]) == 0,
                          "%s: header %08X", ctx, enc[0]);
                    decode_expect(enc, w, v, n, ctx);
                    /* Trailing words after the block are not consumed. */
                    for (int j = 0; j < 8; ++j)
                        enc[w + j] = rng_u32();
                    decode_expect_used(enc, w + 8, v, n, w, ctx);
                    ++blocks;
                }
    printf("     (%ld blocks)\n", blocks);
    group_ok("round trip for every forced b 0..32 (n 1..128, no/10%/90%/all "
             "exceptions, values up to UINT32_MAX)");
}

/* Zipf-like gap: Pareto with exponent a, clamped to uint32. */
static uint32_t zipf_gap(double a)
{
    double g = floor(pow(rng_unit(), -1.0 / a));
    return g >= 4294967295.0 ? 0xFFFFFFFFu : (uint32_t)g;
}

static void test_choose_b_optimal(void)
{
    uint32_t v[128], enc[XG_PFOR_MAX_WORDS];
    for (int t = 0; t < 3000; ++t) {
        uint32_t n = 1 + rng_below(128);
        int kind = t % 4;
        for (uint32_t i = 0; i < n; ++i)
            v[i] = kind == 0   ? zipf_gap(0.3 + rng_unit() * 2)
                   : kind == 1 ? rng_u32() >> rng_below(32)
                   : kind == 2 ? rng_below(1000)
                               : (rng_below(20) ? rng_below(16) : rng_u32());
        uint32_t best = 0xFFFFFFFFu, best_b = 0;
        for (uint32_t b = 0; b <= 32; ++b) {
            uint32_t w = xg_pfor_encode(v, n, b, enc);
            if (w <= best) {  /* <=: the largest b of the minimum */
                best = w;
                best_b = b;
            }
        }
        uint32_t cb = xg_pfor_choose_b(v, n);
        CHECK(cb == best_b,
              "choose_b %u (words %u) but b=%u gives %u words and is the "
              "largest minimum (n=%u kind %d)", cb,
              expect_words(v, n, cb), best_b, best, n, kind);
        uint32_t wa = xg_pfor_encode_auto(v, n, enc);
        CHECK(wa == best, "encode_auto wrote %u words, minimum %u", wa, best);
        CHECK(XG_PFOR_HDR_B(enc[0]) == cb, "encode_auto used b=%u, chose %u",
              XG_PFOR_HDR_B(enc[0]), cb);
    }
    {   /* All zero: b = 0, one header word. */
        uint32_t z[128] = {0};
        CHECK(xg_pfor_choose_b(z, 128) == 0 &&
                  xg_pfor_encode_auto(z, 128, enc) == 1,
              "all-zero block should be b=0, 1 word");
    }
    group_ok("choose_b minimises the encoded size (ties to the largest b), "
             "3000 random blocks");
}

/* Encode an ascending docid list as gap blocks, decode it back through
 * decode_ref + prefix_sum and compare.  Returns the stream size in words. */
static size_t stream_round_trip(const uint32_t *d, size_t n, const char *ctx)
{
    uint32_t *stream = malloc((n / 128 + 1) * XG_PFOR_MAX_WORDS * 4);
    CHECK(stream != NULL, "malloc");
    size_t words = 0;
    uint32_t prev = 0;
    for (size_t s = 0; s < n; s += 128) {
        uint32_t m = (uint32_t)(n - s < 128 ? n - s : 128), gaps[128];
        for (uint32_t i = 0; i < m; ++i) {
            gaps[i] = d[s + i] - prev;
            prev = d[s + i];
        }
        uint32_t w = xg_pfor_encode_auto(gaps, m, stream + words);
        CHECK(w > 0 && w <= XG_PFOR_MAX_WORDS, "%s: block at %zu: %u words",
              ctx, s, w);
        words += w;
    }
    size_t pos = 0, got = 0;
    uint32_t base = 0;
    uint32_t out[128];
    while (pos < words) {
        uint32_t m, used;
        int rc = xg_pfor_decode_ref(stream + pos, words - pos, out, &m, &used);
        CHECK(rc == XG_OK, "%s: decode at word %zu: %s", ctx, pos,
              xg_last_error());
        xg_pfor_prefix_sum(out, m, base);
        for (uint32_t i = 0; i < m; ++i)
            CHECK(got + i < n && out[i] == d[got + i],
                  "%s: docid %zu decoded as %u, want %u", ctx, got + i,
                  out[i], got + i < n ? d[got + i] : 0);
        base = out[m - 1];
        got += m;
        pos += used;
    }
    CHECK(got == n && pos == words, "%s: decoded %zu of %zu docids", ctx,
          got, n);
    free(stream);
    return words;
}

static void test_zipf_streams(void)
{
    size_t total = 0, total_words = 0;
    for (int t = 0; t < 60; ++t) {
        size_t n = t < 10 ? (size_t)(t + 1) * 13 : 1 + rng_below(20000);
        double a = 0.4 + 0.1 * (t % 20);
        uint32_t *d = malloc(n * 4);
        CHECK(d != NULL, "malloc");
        uint64_t cur = rng_below(1000);
        for (size_t i = 0; i < n; ++i) {
            if (i > 0)
                cur += 1 + (uint64_t)zipf_gap(a);
            /* Lists are ascending docids below 2^32; heavy tails may wrap,
             * which the uint32 gaps and prefix sum must still carry. */
            d[i] = (uint32_t)cur;
        }
        char ctx[64];
        snprintf(ctx, sizeof ctx, "zipf list %d (n=%zu a=%.1f)", t, n, a);
        total_words += stream_round_trip(d, n, ctx);
        total += n;
        free(d);
    }
    printf("     (%zu docids in %zu words: %.2f bits/docid)\n", total,
           total_words, 32.0 * (double)total_words / (double)total);
    group_ok("auto-b round trip of 60 Zipf-like gap lists via decode_ref + "
             "prefix_sum");
}

/* ---- CACM ------------------------------------------------------------- */


static void test_cacm(void)
{
    uint32_t *lists[N_CACM_WORDS];
    size_t len[N_CACM_WORDS];
    uint32_t n_docs;
    if (!cacm_lists(lists, len, &n_docs))
        return;
    size_t total = 0, words = 0;
    for (size_t w = 0; w < N_CACM_WORDS; ++w) {
        char ctx[64];
        snprintf(ctx, sizeof ctx, "cacm \"%s\" (df %zu)", cacm_words[w],
                 len[w]);
        if (len[w] > 0)
            words += stream_round_trip(lists[w], len[w], ctx);
        printf("     %-10s df %4zu\n", cacm_words[w], len[w]);
        total += len[w];
        free(lists[w]);
    }
    CHECK(n_docs > 1000 && total > 1000,
          "cacm: only %u docs / %zu postings parsed", n_docs, total);
    printf("     (%u docs, %zu postings, %.2f bits/posting)\n", n_docs, total,
           32.0 * (double)words / (double)total);
    group_ok("CACM docid-gap lists of 10 frequent words round-trip in blocks "
             "of 128");
}

/* ---- rejection -------------------------------------------------------- */

static void expect_format_error(const uint32_t *enc, size_t avail,
                                const char *ctx)
{
    uint32_t *g = guard_words(avail ? avail : 1);
    if (avail)
        memcpy(g, enc, avail * 4);
    g += avail ? 0 : 1;  /* avail 0: pointer at the guard page itself */
    struct outbuf ob;
    uint32_t *out = out_init(&ob);
    uint32_t n_out = 777, used = 777;
    xg_clear_error();
    int rc = xg_pfor_decode_ref(g, avail, out, &n_out, &used);
    CHECK(rc == XG_ERR_FORMAT, "%s: decode returned %d, want XG_ERR_FORMAT",
          ctx, rc);
    CHECK(xg_last_error_code() == XG_ERR_FORMAT && xg_last_error()[0] != 0 &&
              strchr(xg_last_error(), '\n') == NULL,
          "%s: no one-line error message set", ctx);
    CHECK(n_out == 777 && used == 777, "%s: outputs written on failure", ctx);
    out_check(&ob, ctx);
}

/* A header the first-value reader must refuse as the decoder does. */
static void expect_first_error(const uint32_t *enc, size_t avail,
                               const char *ctx)
{
    uint32_t *g = guard_words(avail ? avail : 1);
    if (avail)
        memcpy(g, enc, avail * 4);
    g += avail ? 0 : 1;
    uint32_t first = 777, used = 777;
    int rc = xg_pfor_first(g, avail, &first, &used);
    CHECK(rc == XG_ERR_FORMAT && first == 777 && used == 777,
          "%s: first-value reader returned %d, want XG_ERR_FORMAT and no "
          "output", ctx, rc);
}

static void test_truncated(void)
{
    uint32_t v[128], enc[XG_PFOR_MAX_WORDS];
    char ctx[80];
    int cases = 0;
    for (int t = 0; t < 400; ++t) {
        uint32_t n = t < 4 ? (uint32_t[]){1, 2, 127, 128}[t]
                           : 1 + rng_below(128);
        uint32_t b = rng_below(33);
        gen_block(v, n, b, t % 6);
        uint32_t w = xg_pfor_encode(v, n, b, enc);
        for (uint32_t a = 0; a < w; ++a) {
            snprintf(ctx, sizeof ctx, "n=%u b=%u (%u words) truncated to %u",
                     n, b, w, a);
            expect_format_error(enc, a, ctx);
            expect_first_error(enc, a, ctx);
            ++cases;
        }
    }
    printf("     (%d truncations)\n", cases);
    group_ok("every truncation (avail_words < block size) is XG_ERR_FORMAT, "
             "no read past the end");
}

static void test_corrupt_headers(void)
{
    uint32_t v[128], enc[XG_PFOR_MAX_WORDS + 4], bad[XG_PFOR_MAX_WORDS + 4];
    for (uint32_t i = 0; i < 128; ++i)
        v[i] = i % 5 == 0 ? 1000u + i : i % 7;  /* b=3 with exceptions */
    uint32_t w = xg_pfor_encode(v, 128, 3, enc);
    uint32_t e = XG_PFOR_HDR_NEXC(enc[0]);
    CHECK(e == 26, "setup: %u exceptions, want 26", e);
    uint32_t nslot = (128 * 3 + 31) / 32, posw = 1 + nslot;
    uint32_t highw = posw + (e + 3) / 4;
    memset(enc + w, 0, 4 * 4);
    decode_expect(enc, w, v, 128, "uncorrupted block");

#define CORRUPT(what, stmt)                                                \
    do {                                                                   \
        memcpy(bad, enc, sizeof bad);                                      \
        stmt;                                                              \
        expect_format_error(bad, XG_PFOR_MAX_WORDS + 4, what);             \
    } while (0)
    /* A bad header: the first-value reader refuses it too. */
#define CORRUPT_HEADER(what, stmt)                                         \
    do {                                                                   \
        CORRUPT(what, stmt);                                               \
        expect_first_error(bad, XG_PFOR_MAX_WORDS + 4, what);              \
    } while (0)
    for (uint32_t b = 33; b < 256; ++b)
        CORRUPT_HEADER("b > 32", bad[0] = (bad[0] & ~0xFFu) | b);
    CORRUPT_HEADER("b = 40", bad[0] = (bad[0] & ~0xFFu) | 40u);
    for (uint32_t x = 1; x < 512; ++x)
        CORRUPT_HEADER("reserved bits 23..31 set", bad[0] |= x << 23);
    {   /* n_exc > n for small n */
        const uint32_t s[2] = {1, 2};
        uint32_t small[XG_PFOR_MAX_WORDS];
        uint32_t sw = xg_pfor_encode(s, 2, 2, small);
        CHECK(sw == 2, "setup small");
        for (uint32_t x = 3; x < 256; ++x) {
            memset(bad, 0, sizeof bad);
            memcpy(bad, small, 8);
            bad[0] = (bad[0] & ~0xFF00u) | x << 8;
            expect_format_error(bad, XG_PFOR_MAX_WORDS + 4, "n_exc > n");
            expect_first_error(bad, XG_PFOR_MAX_WORDS + 4, "n_exc > n");
        }
    }
    CORRUPT_HEADER("b = 32 with exceptions",
                   bad[0] = 32u | 1u << 8 | 127u << 16);
    CORRUPT("exception position >= n",
            bad[0] = (bad[0] & ~(0x7Fu << 16)) | 99u << 16);
    CORRUPT("positions not ascending", bad[posw] = (bad[posw] & ~0xFFFFu) |
                                                   5u | 5u << 8);
    CORRUPT("positions descending", bad[posw] = (bad[posw] & ~0xFFFFu) |
                                                9u | 4u << 8);
    CORRUPT("last position out of range",
            bad[posw + (e - 1) / 4] |= 0xFFu << (8 * ((e - 1) % 4)));
    CORRUPT("exception high part 0", bad[highw + 3] = 0);
    CORRUPT("exception high part too wide for b=3",
            bad[highw] = 1u << 29);
    {   /* b = 0 accepts any nonzero high part; b = 31 only 1. */
        uint32_t x[2] = {0, 0xFFFFFFFFu}, t[8];
        uint32_t tw = xg_pfor_encode(x, 2, 31, t);
        CHECK(tw == 5 && t[tw - 1] == 1, "setup b=31: %u words", tw);
        t[tw - 1] = 2;
        expect_format_error(t, tw, "b=31 high part 2");
        tw = xg_pfor_encode(x, 2, 0, t);
        decode_expect(t, tw, x, 2, "b=0 high part 0xFFFFFFFF");
    }
    {   /* Header claiming a full 128 x 32-bit block with 3 words. */
        uint32_t h[3] = {32u | 127u << 16, 1, 2};
        expect_format_error(h, 3, "b=32 n=128 in 3 words");
        expect_first_error(h, 3, "b=32 n=128 in 3 words");
    }
    group_ok("corrupt headers rejected: b 33..255, reserved bits, n_exc > n, "
             "b=32 with exceptions, bad positions, bad high parts (the "
             "first-value reader: the header's faults)");
}

static void test_fuzz(void)
{
    enum { MAXW = 320 };
    uint32_t buf[MAXW], v[128], re[XG_PFOR_MAX_WORDS];
    long ok = 0, rejected = 0;
    for (int t = 0; t < 100000; ++t) {
        size_t avail = rng_below(MAXW + 1);
        int mode = t % 4;
        if (mode == 0) {          /* pure noise */
            for (size_t i = 0; i < avail; ++i)
                buf[i] = rng_u32();
        } else if (mode == 1) {   /* plausible header, noise body */
            for (size_t i = 0; i < avail; ++i)
                buf[i] = rng_u32();
            if (avail)
                buf[0] = rng_below(41) | rng_below(256) << 8 |
                         rng_below(128) << 16 |
                         (rng_below(8) == 0 ? rng_u32() << 23 : 0);
        } else {                  /* valid block with a few mutations */
            uint32_t n = 1 + rng_below(128), b = rng_below(33);
            gen_block(v, n, b, rng_below(6));
            uint32_t w = xg_pfor_encode(v, n, b, buf);
            for (size_t i = w; i < MAXW; ++i)
                buf[i] = rng_u32();
            int flips = mode == 2 ? 1 + (int)rng_below(3) : 0;
            for (int f = 0; f < flips; ++f) {
                uint32_t at = rng_below(w);
                buf[at] ^= 1u << rng_below(32);
            }
            avail = mode == 3 ? (size_t)rng_below(w + 2) : (size_t)w;
        }
        uint32_t *g = guard_words(avail ? avail : 1) + (avail ? 0 : 1);
        memcpy(g, buf, avail * 4);
        struct outbuf ob;
        uint32_t *out = out_init(&ob);
        uint32_t n_out = 0, used = 0;
        int rc = xg_pfor_decode_ref(g, avail, out, &n_out, &used);
        out_check(&ob, "fuzz");
        if (rc != XG_OK) {
            CHECK(rc == XG_ERR_FORMAT, "fuzz %d: returned %d", t, rc);
            ++rejected;
            continue;
        }
        ++ok;
        CHECK(n_out >= 1 && n_out <= 128 && used >= 1 && used <= avail,
              "fuzz %d: n_out %u words_used %u avail %zu", t, n_out, used,
              avail);
        uint32_t first, first_used;
        CHECK(xg_pfor_first(g, avail, &first, &first_used) == XG_OK &&
                  first == out[0] && first_used == used,
              "fuzz %d: first value 0x%08X in %u words, decoded 0x%08X in %u",
              t, first, first_used, out[0], used);
        /* Whatever was accepted re-encodes, with its own b, to a block that
         * decodes to the same values in the same number of words. */
        uint32_t b = XG_PFOR_HDR_B(g[0]);
        uint32_t w = xg_pfor_encode(out, n_out, b, re);
        CHECK(w == used, "fuzz %d: accepted block of %u words re-encodes to "
                         "%u", t, used, w);
        CHECK(re[0] == g[0], "fuzz %d: header %08X re-encodes as %08X", t,
              g[0], re[0]);
        decode_expect(re, w, out, n_out, "fuzz re-encode");
    }
    printf("     (%ld accepted, %ld rejected)\n", ok, rejected);
    CHECK(ok > 10000 && rejected > 10000, "fuzz mix degenerate");
    group_ok("fuzz: 100000 random/mutated/truncated buffers, no crash, no "
             "over-read, accepted blocks are consistent");
}

static void test_prefix_sum(void)
{
    uint32_t v[300], ref[300];
    for (int t = 0; t < 2000; ++t) {
        uint32_t n = rng_below(300);
        uint32_t base = t % 3 == 0 ? 0 : rng_u32();
        for (uint32_t i = 0; i < n; ++i)
            v[i] = t % 2 ? rng_u32() : rng_below(100);
        uint64_t acc = base;
        for (uint32_t i = 0; i < n; ++i) {
            acc += v[i];
            ref[i] = (uint32_t)(acc & 0xFFFFFFFFu);
        }
        xg_pfor_prefix_sum(v, n, base);
        for (uint32_t i = 0; i < n; ++i)
            CHECK(v[i] == ref[i], "prefix sum n=%u base %u: v[%u] = %u, want "
                                  "%u", n, base, i, v[i], ref[i]);
    }
    uint32_t x[3] = {5, 0, 2};
    xg_pfor_prefix_sum(x, 3, 10);
    CHECK(x[0] == 15 && x[1] == 15 && x[2] == 17, "prefix {5,0,2}+10: %u %u "
          "%u", x[0], x[1], x[2]);
    x[0] = 7;
    xg_pfor_prefix_sum(x, 0, 99);
    CHECK(x[0] == 7, "n = 0 must not write");
    group_ok("prefix_sum == 64-bit reference mod 2^32 (random, wraparound, "
             "n = 0)");
}

static void test_bad_args(void)
{
    uint32_t v[129] = {0}, out[XG_PFOR_MAX_WORDS];
    out[0] = 0xAAAAAAAAu;
    CHECK(xg_pfor_encode(v, 0, 5, out) == 0 &&
              xg_pfor_encode(v, 129, 5, out) == 0 &&
              xg_pfor_encode(v, 10, 33, out) == 0 &&
              xg_pfor_encode_auto(v, 0, out) == 0 &&
              xg_pfor_encode_auto(v, 129, out) == 0,
          "encode must return 0 for n = 0, n > 128, b > 32");
    CHECK(out[0] == 0xAAAAAAAAu, "encode wrote on bad arguments");
    CHECK(xg_pfor_choose_b(v, 0) == 0, "choose_b(n=0) != 0");
    uint32_t enc[2] = {0, 0}, n_out, used;
    CHECK(xg_pfor_decode_ref(NULL, 2, out, &n_out, &used) == XG_ERR_ARG &&
              xg_pfor_decode_ref(enc, 2, NULL, &n_out, &used) == XG_ERR_ARG &&
              xg_pfor_decode_ref(enc, 2, out, NULL, &used) == XG_ERR_ARG &&
              xg_pfor_decode_ref(enc, 2, out, &n_out, NULL) == XG_ERR_ARG,
          "NULL arguments must give XG_ERR_ARG");
    CHECK(xg_pfor_decode_ref(enc, 1, out, &n_out, &used) == XG_OK &&
              n_out == 1 && used == 1 && out[0] == 0,
          "header word 0 (b=0, n=1, value 0) must decode in 1 word");
    group_ok("argument checks (encode n/b limits, decode NULLs, 1-word "
             "block)");
}

int main(int argc, char **argv)
{
    seed_used = parse_seed(argc, argv);
    rng_state = seed_used;
    printf("test_pfor: seed %" PRIu64 "\n", seed_used);
    guard_init();
    test_known_layout();
    test_layout_vs_bitwise();
    test_round_trip_forced_b();
    test_choose_b_optimal();
    test_zipf_streams();
    test_cacm();
    test_truncated();
    test_corrupt_headers();
    test_fuzz();
    test_prefix_sum();
    test_bad_args();
    printf("%d passed, 0 failed\n", n_passed);
    return 0;
}
