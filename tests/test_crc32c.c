/** @file test_crc32c.c
 *  @brief Tests of gpu/index/crc32c.c: known vectors, chaining, hardware path vs
 *         table path vs a bit-at-a-time reference on random buffers.
 *
 *  Usage: test_crc32c [--seed N].  Prints the seed (replay with --seed),
 *  one "ok" line per check group, and "N passed, 0 failed"; exits 1 at the
 *  first failure.
 */
#include "../gpu/index/crc32c.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- harness ---------------------------------------------------------- */

#include "test_util.h"

/* ---- reference -------------------------------------------------------- */

/* CRC32C one bit at a time, straight from the definition. */
static uint32_t crc_bitwise(uint32_t crc, const unsigned char *p, size_t len)
{
    crc = ~crc;
    for (size_t i = 0; i < len; ++i) {
        crc ^= p[i];
        for (int j = 0; j < 8; ++j)
            crc = (crc & 1u) ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
    }
    return ~crc;
}

/* ---- groups ----------------------------------------------------------- */

static void test_known_vectors(void)
{
    unsigned char buf[48];
    struct { const char *name; size_t len; int fill; uint32_t want; } v[] = {
        {"\"123456789\"", 9, -1, 0xE3069283u},
        {"empty", 0, -2, 0x00000000u},
        {"32 x 0x00 (RFC 3720)", 32, 0x00, 0x8A9136AAu},
        {"32 x 0xFF (RFC 3720)", 32, 0xFF, 0x62A8AB43u},
        {"0..31 (RFC 3720)", 32, -3, 0x46DD794Eu},
        {"31..0 (RFC 3720)", 32, -4, 0x113FDB5Cu},
        {"\"The quick brown fox jumps over the lazy dog\"", 43, -5,
         0x22620404u},
    };
    for (size_t t = 0; t < sizeof v / sizeof v[0]; ++t) {
        if (v[t].fill >= 0)
            memset(buf, v[t].fill, v[t].len);
        else if (v[t].fill == -1)
            memcpy(buf, "123456789", 9);
        else if (v[t].fill == -3)
            for (int i = 0; i < 32; ++i)
                buf[i] = (unsigned char)i;
        else if (v[t].fill == -4)
            for (int i = 0; i < 32; ++i)
                buf[i] = (unsigned char)(31 - i);
        else if (v[t].fill == -5)
            memcpy(buf, "The quick brown fox jumps over the lazy dog", 43);
        uint32_t a = xg_crc32c(0, buf, v[t].len);
        uint32_t b = xg_crc32c_sw(0, buf, v[t].len);
        uint32_t c = crc_bitwise(0, buf, v[t].len);
        CHECK(a == v[t].want && b == v[t].want && c == v[t].want,
              "%s: xg_crc32c 0x%08X, sw 0x%08X, bitwise 0x%08X, want 0x%08X",
              v[t].name, a, b, c, v[t].want);
    }
    CHECK(xg_crc32c(0x12345678u, NULL, 0) == 0x12345678u &&
              xg_crc32c_sw(0x12345678u, NULL, 0) == 0x12345678u,
          "zero-length update must return the crc unchanged");
    group_ok("known vectors (check string, RFC 3720 iSCSI, empty, fox)");
}

static void test_chaining(void)
{
    enum { LEN = 600 };
    unsigned char buf[LEN];
    for (int i = 0; i < LEN; ++i)
        buf[i] = (unsigned char)rng_next();
    const uint32_t whole = crc_bitwise(0, buf, LEN);
    for (size_t cut = 0; cut <= LEN; ++cut) {
        uint32_t a = xg_crc32c(xg_crc32c(0, buf, cut), buf + cut, LEN - cut);
        uint32_t b =
            xg_crc32c_sw(xg_crc32c_sw(0, buf, cut), buf + cut, LEN - cut);
        CHECK(a == whole && b == whole,
              "split at %zu: hw-chain 0x%08X sw-chain 0x%08X whole 0x%08X",
              cut, a, b, whole);
    }
    for (int t = 0; t < 2000; ++t) {  /* random 3-way splits, mixed paths */
        size_t c1 = rng_below(LEN + 1), c2 = rng_below(LEN + 1);
        if (c1 > c2) {
            size_t x = c1;
            c1 = c2;
            c2 = x;
        }
        uint32_t c = xg_crc32c(0, buf, c1);
        c = xg_crc32c_sw(c, buf + c1, c2 - c1);
        c = xg_crc32c(c, buf + c2, LEN - c2);
        CHECK(c == whole, "3-way split %zu/%zu: 0x%08X, want 0x%08X", c1, c2,
              c, whole);
    }
    group_ok("chaining: crc(crc(a), b) == crc(a||b) at every split point");
}

static void test_random_buffers(void)
{
    enum { MAXLEN = 5000 };
    unsigned char *mem = malloc(MAXLEN + 16);
    CHECK(mem != NULL, "malloc");
    for (int t = 0; t < 3000; ++t) {
        size_t off = rng_below(16);
        size_t len = t < 100 ? (size_t)t : rng_below(MAXLEN + 1);
        unsigned char *p = mem + off;
        for (size_t i = 0; i < len; ++i)
            p[i] = (unsigned char)rng_next();
        uint32_t init = (t & 1) ? (uint32_t)rng_next() : 0;
        uint32_t a = xg_crc32c(init, p, len);
        uint32_t b = xg_crc32c_sw(init, p, len);
        uint32_t c = crc_bitwise(init, p, len);
        CHECK(a == c && b == c,
              "len %zu offset %zu init 0x%08X: xg_crc32c 0x%08X sw 0x%08X "
              "bitwise 0x%08X", len, off, init, a, b, c);
    }
    free(mem);
    printf("     (hardware SSE4.2 path %s)\n",
           xg_crc32c_hw_available() ? "in use" : "not available: table only");
    group_ok("3000 random buffers, lengths 0..5000, misaligned: "
             "xg_crc32c == xg_crc32c_sw == bitwise");
}

static void test_large_buffer(void)
{
    const size_t len = (size_t)8 << 20;
    unsigned char *p = malloc(len);
    CHECK(p != NULL, "malloc");
    for (size_t i = 0; i < len; i += 8) {
        uint64_t r = rng_next();
        memcpy(p + i, &r, 8);
    }
    clock_t t0 = clock();
    uint32_t a = xg_crc32c(0, p, len);
    clock_t t1 = clock();
    uint32_t b = xg_crc32c_sw(0, p, len);
    clock_t t2 = clock();
    CHECK(a == b, "8 MiB: xg_crc32c 0x%08X sw 0x%08X", a, b);
    /* Pieces of odd sizes give the same result as the whole. */
    uint32_t c = 0;
    for (size_t pos = 0; pos < len;) {
        size_t piece = 1 + rng_below(100000);
        if (piece > len - pos)
            piece = len - pos;
        c = xg_crc32c(c, p + pos, piece);
        pos += piece;
    }
    CHECK(c == a, "8 MiB in random pieces: 0x%08X, whole 0x%08X", c, a);
    free(p);
    printf("     (8 MiB: xg_crc32c %.1f ms, table %.1f ms)\n",
           1e3 * (double)(t1 - t0) / CLOCKS_PER_SEC,
           1e3 * (double)(t2 - t1) / CLOCKS_PER_SEC);
    group_ok("8 MiB buffer, whole and in random pieces, both paths agree");
}

static void test_detects_bit_flips(void)
{
    unsigned char buf[64];
    for (int i = 0; i < 64; ++i)
        buf[i] = (unsigned char)rng_next();
    const uint32_t base = xg_crc32c(0, buf, 64);
    for (int bit = 0; bit < 64 * 8; ++bit) {
        buf[bit / 8] ^= (unsigned char)(1u << (bit % 8));
        uint32_t c = xg_crc32c(0, buf, 64);
        buf[bit / 8] ^= (unsigned char)(1u << (bit % 8));
        CHECK(c != base, "flipping bit %d did not change the crc", bit);
    }
    CHECK(xg_crc32c(0, buf, 64) == base, "crc not reproducible");
    group_ok("every single-bit flip of a 64-byte buffer changes the crc");
}

int main(int argc, char **argv)
{
    seed_used = parse_seed(argc, argv);
    rng_state = seed_used;
    printf("test_crc32c: seed %" PRIu64 "\n", seed_used);
    test_known_vectors();
    test_chaining();
    test_random_buffers();
    test_large_buffer();
    test_detects_bit_flips();
    printf("%d passed, 0 failed\n", n_passed);
    return 0;
}
