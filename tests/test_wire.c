/** @file test_wire.c
 *  @brief The remote-protocol codec of `xapian-gpu serve`
 *         (plugin/serve/wire.h): Xapian's own encodings of known values,
 *         round trips, frame headers cut at every byte, and the lengths
 *         the relay must refuse.
 *
 *  The expected bytes are Xapian 1.4.22's encode_length output, taken from
 *  python3-xapian: Query('', 2, n).serialise() is b'\x0e\x02' followed by
 *  encode_length(n) (QueryTerm::serialise writes a "MatchAll with a wqf
 *  and a position" as 0x0e, encode_length(wqf), encode_length(pos)).
 *  Regenerate with:
 *    /usr/bin/python3 -c "import xapian; print(xapian.Query('', 2,
 *        383).serialise()[2:].hex())"
 *  The doubles' bytes are serialise_double's, taken the same way from
 *  Query(OP_SCALE_WEIGHT, Query('a'), d).serialise(): b'\r', the double,
 *  b'Qa'.
 */
#include <float.h>
#include <math.h>

#include "../plugin/serve/wire.h"

#include "test_util.h"

static const struct {
    uint64_t v;
    const char *hex;
} xapian_known[] = {
    {0, "00"},           {1, "01"},           {127, "7f"},
    {128, "80"},         {254, "fe"},         {255, "ff80"},
    {256, "ff81"},       {381, "fffe"},       {382, "ffff"},
    {383, "ff0081"},     {16638, "ff7fff"},   {16639, "ff000081"},
    {16640, "ff010081"}, {2097406, "ff7f7fff"}, {2097407, "ff00000081"},
    {4294967295u, "ff007e7f7f8f"},
};

static const struct {
    double v;
    const char *hex;
} xapian_doubles[] = {
    {0.0, "0600"},
    {1.0, "0701"},
    {2.5, "170280"},
    {0.1, "661999999999999a"},
    {1.0 / 3, "6655555555555554"},
    {3.141592653589793, "6703243f6a8885a3"},
    {12345.678, "683039ad916872b0"},
    {256.0, "0801"},
    {255.5, "17ff80"},
    {1e-300, "7e030ab70fe17c79ac80"},
    {1e300, "6efc17e43c8800759c"},
    {5e-324, "0f797f40"},
    {1.7976931348623157e308, "6f7f80fffffffffffff8"},
    {2.2250738585072014e-308, "0e0004"},
    {0.0009765625, "0540"},
    {7.0e-3, "7601cac083126e9790"},
    {1e20, "6e88056bc75e2d6310"},
};

static size_t unhex(const char *h, unsigned char *out)
{
    size_t n = 0;
    for (; h[0] && h[1]; h += 2) {
        unsigned x;
        sscanf(h, "%2x", &x);
        out[n++] = (unsigned char)x;
    }
    return n;
}

static void test_xapian_bytes(void)
{
    for (size_t i = 0; i < sizeof xapian_known / sizeof xapian_known[0]; ++i) {
        unsigned char want[XG_WIRE_LEN_MAX], got[XG_WIRE_LEN_MAX];
        size_t wn = unhex(xapian_known[i].hex, want);
        size_t gn = xg_wire_encode_length(xapian_known[i].v, got);
        CHECK(gn == wn && !memcmp(got, want, wn), "encode %" PRIu64 " != %s",
              xapian_known[i].v, xapian_known[i].hex);
        uint64_t v;
        size_t used;
        CHECK(xg_wire_decode_length(want, wn, &v, &used) == XG_WIRE_OK &&
              v == xapian_known[i].v && used == wn, "decode %s",
              xapian_known[i].hex);
    }
    group_ok("Xapian 1.4.22's encode_length bytes of 16 values, both ways");
}

static void test_doubles(void)
{
    const size_t nk = sizeof xapian_doubles / sizeof xapian_doubles[0];
    for (size_t i = 0; i < nk; ++i) {
        unsigned char want[XG_WIRE_DOUBLE_MAX + 1], got[XG_WIRE_DOUBLE_MAX];
        size_t wn = unhex(xapian_doubles[i].hex, want);
        size_t gn = xg_wire_encode_double(xapian_doubles[i].v, got);
        CHECK(gn == wn && !memcmp(got, want, wn), "encode %.17g != %s",
              xapian_doubles[i].v, xapian_doubles[i].hex);
        struct xg_wire_reader r = {want, want + wn, 0};
        double d = xg_wire_read_double(&r);
        CHECK(!r.bad && r.p == want + wn && d == xapian_doubles[i].v,
              "decode %s: %.17g", xapian_doubles[i].hex, d);
    }
    /* Random bit patterns: every finite double, either sign, goes through
     * and back unchanged, and every cut of its bytes is refused. */
    for (int i = 0; i < 200000; ++i) {
        uint64_t bits = rng_next();
        double v;
        memcpy(&v, &bits, sizeof v);
        if (!isfinite(v)) continue;
        unsigned char b[XG_WIRE_DOUBLE_MAX];
        size_t n = xg_wire_encode_double(v, b);
        CHECK(n >= 2 && n <= XG_WIRE_DOUBLE_MAX, "size of %a: %zu", v, n);
        struct xg_wire_reader r = {b, b + n, 0};
        double d = xg_wire_read_double(&r);
        CHECK(!r.bad && r.p == b + n && (d == v || (v == 0 && d == 0)),
              "round trip %a: %a", v, d);
        for (size_t k = 0; k < n; ++k) {
            struct xg_wire_reader c = {b, b + k, 0};
            (void)xg_wire_read_double(&c);
            CHECK(c.bad, "prefix %zu of %a read", k, v);
        }
    }
    unsigned char b[XG_WIRE_DOUBLE_MAX];
    CHECK(xg_wire_encode_double(INFINITY, b) == 0 &&
          xg_wire_encode_double(NAN, b) == 0, "infinity and NaN refused");
    group_ok("serialise_double: Xapian's bytes of 17 values both ways; "
             "random doubles round trip; cut values refused");
}

static void test_round_trips(void)
{
    uint64_t edge[] = {UINT64_MAX, UINT64_MAX - 1, UINT64_MAX - 255,
                       UINT64_MAX - 254, (uint64_t)1 << 63, ((uint64_t)1 << 35) + 254};
    for (int i = 0; i < 200000; ++i) {
        uint64_t v = i < 6 ? edge[i] : rng_next() >> rng_below(64);
        unsigned char b[XG_WIRE_LEN_MAX + 1];
        size_t n = xg_wire_encode_length(v, b);
        CHECK(n >= 1 && n <= XG_WIRE_LEN_MAX, "length of %" PRIu64 ": %zu", v, n);
        uint64_t d;
        size_t used;
        b[n] = 0x55;    /* a following byte is not read */
        CHECK(xg_wire_decode_length(b, n + 1, &d, &used) == XG_WIRE_OK &&
              d == v && used == n, "round trip %" PRIu64, v);
        for (size_t k = 0; k < n; ++k)
            CHECK(xg_wire_decode_length(b, k, &d, &used) == XG_WIRE_NEED_MORE,
                  "prefix %zu of %" PRIu64, k, v);
    }
    group_ok("200000 round trips (64-bit edges too); every prefix needs more");
}

static void test_frames(void)
{
    /* MSG_KEEPALIVE (6) with no payload, as a Xapian client sends it. */
    unsigned char h[XG_WIRE_HDR_MAX];
    CHECK(xg_wire_encode_header(6, 0, h) == 2 && h[0] == 6 && h[1] == 0,
          "keepalive header");
    /* REPLY_DOCDATA (5) of 300 bytes: 05 ff ad (300 - 255 = 45 = 0x2d, one
     * group, the last, so its top bit is set). */
    size_t hn = xg_wire_encode_header(5, 300, h);
    CHECK(hn == 3 && h[0] == 5 && h[1] == 0xff && h[2] == 0xad,
          "300-byte header");
    unsigned char buf[400];
    memcpy(buf, h, hn);
    memset(buf + hn, 'x', 300);
    struct xg_wire_frame f;
    for (size_t n = 0; n < hn; ++n)
        CHECK(xg_wire_parse_header(buf, n, 1000, &f) == XG_WIRE_NEED_MORE,
              "header prefix %zu", n);
    CHECK(xg_wire_parse_header(buf, hn + 3, 1000, &f) == XG_WIRE_OK &&
          f.type == 5 && f.header == 3 && f.payload == 300,
          "header parsed before the payload is whole");
    CHECK(xg_wire_parse_header(buf, hn + 300, 299, &f) == XG_WIRE_TOO_LONG &&
          f.payload == 300, "over the limit");
    CHECK(xg_wire_parse_header(buf, hn + 300, 300, &f) == XG_WIRE_OK,
          "at the limit");
    group_ok("frame headers: keepalive, 300 bytes, prefixes, the limit");
}

static void test_refused(void)
{
    /* 0xff then eleven groups without a last-group byte: no 64-bit value. */
    unsigned char b[16] = {0xff};
    for (int i = 1; i < 16; ++i) b[i] = 0x7f;
    uint64_t v;
    size_t used;
    CHECK(xg_wire_decode_length(b, 16, &v, &used) == XG_WIRE_BAD, "12 bytes");
    /* Ten groups whose last holds more than the 64th bit. */
    memset(b + 1, 0x7f, 9);
    b[10] = 0x82;
    CHECK(xg_wire_decode_length(b, 11, &v, &used) == XG_WIRE_BAD, "65 bits");
    /* 2^64 - 1 - 255 + 255 fits; one more than UINT64_MAX does not. */
    unsigned char m[XG_WIRE_LEN_MAX];
    size_t n = xg_wire_encode_length(UINT64_MAX, m);
    CHECK(n == 11 && xg_wire_decode_length(m, n, &v, &used) == XG_WIRE_OK &&
          v == UINT64_MAX, "UINT64_MAX");
    m[1] += 1;  /* the lowest group + 1: the value overflows */
    CHECK(xg_wire_decode_length(m, n, &v, &used) == XG_WIRE_BAD, "overflow");
    struct xg_wire_frame f;
    unsigned char fr[17] = {8, 0xff};
    memset(fr + 2, 0x7f, 15);
    CHECK(xg_wire_parse_header(fr, 17, UINT64_MAX, &f) == XG_WIRE_BAD,
          "frame with a runaway length");
    group_ok("lengths no 64-bit value fits are refused");
}

int main(int argc, char **argv)
{
    seed_used = parse_seed(argc, argv);
    rng_state = seed_used;
    printf("test_wire: seed %" PRIu64 "\n", seed_used);
    test_xapian_bytes();
    test_doubles();
    test_round_trips();
    test_frames();
    test_refused();
    printf("%d passed, 0 failed\n", n_passed);
    return 0;
}
