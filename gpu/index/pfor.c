/** @file pfor.c
 *  @brief PForDelta encoder, reference decoder and prefix sum (see pfor.h).
 *
 *  Used by the index writer (shim/ export) to encode docid gaps and wdfs in
 *  blocks of 128, and by the CPU match path and tests as the twin of the GPU
 *  decoder.  The decoder validates every header field and bounds every read
 *  against avail_words before touching the words, so it is safe on
 *  arbitrary (corrupt or hostile) input.
 */
#include "pfor.h"

#include "../runtime/error.h"

#include <string.h>

/* Mask of the low b bits, b in 0..32. */
static uint32_t low_mask(uint32_t b)
{
    return b >= 32 ? 0xFFFFFFFFu : (1u << b) - 1u;
}

/* Bits needed to write v (0 for v == 0). */
static inline uint32_t bit_width(uint32_t v)
{
    return v ? 32u - (uint32_t)__builtin_clz(v) : 0u;
}

/* Words of a block of n values with bit width b and e exceptions. */
static uint32_t block_words(uint32_t n, uint32_t b, uint32_t e)
{
    return 1u + (n * b + 31u) / 32u + (e + 3u) / 4u + e;
}

/* Smallest-encoding b (ties: largest b); 0 for n == 0. */
uint32_t xg_pfor_choose_b(const uint32_t *in, uint32_t n)
{
    uint32_t count[33] = {0};  /* count[w]: values of bit width w */
    if (n == 0)
        return 0;
    if (n > XG_PFOR_BLOCK)
        n = XG_PFOR_BLOCK;
    for (uint32_t i = 0; i < n; ++i)
        ++count[bit_width(in[i])];
    uint32_t maxw = 32;
    while (maxw && !count[maxw]) --maxw;
    /* At and above the widest value there are no exceptions; the largest
     * width that still needs as few slot words as maxw wins those ties. */
    uint32_t best_words = block_words(n, maxw, 0);
    uint32_t best_b = 32u * ((n * maxw + 31u) / 32u) / n;
    if (best_b > 32u) best_b = 32u;
    uint32_t exc = 0;  /* values of bit width > b */
    for (int b = (int)maxw - 1; b >= 0; --b) {
        exc += count[b + 1];
        uint32_t w = block_words(n, (uint32_t)b, exc);
        if (w < best_words) {  /* strict: ties keep the larger b */
            best_words = w;
            best_b = (uint32_t)b;
        }
    }
    return best_b;
}

/* Words written, or 0 (nothing written) for n outside 1..128 or b > 32. */
uint32_t xg_pfor_encode(const uint32_t *in, uint32_t n, uint32_t b,
                        uint32_t *out)
{
    if (n == 0 || n > XG_PFOR_BLOCK || b > 32)
        return 0;
    const uint32_t mask = low_mask(b);
    const uint32_t n_slot_words = (n * b + 31u) / 32u;
    uint32_t *slots = out + 1;
    memset(slots, 0, n_slot_words * sizeof *slots);
    uint8_t pos[XG_PFOR_BLOCK];
    uint32_t high[XG_PFOR_BLOCK];
    uint32_t e = 0;
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t v = in[i];
        if (b < 32 && (v >> b) != 0) {
            pos[e] = (uint8_t)i;
            high[e] = v >> b;
            ++e;
        }
        if (b == 0)
            continue;
        uint32_t bit = i * b, w = bit >> 5, s = bit & 31u;
        uint32_t lowv = v & mask;
        slots[w] |= lowv << s;
        if (s + b > 32)
            slots[w + 1] |= lowv >> (32u - s);
    }
    out[0] = b | (e << 8) | ((n - 1u) << 16);
    uint32_t *pw = slots + n_slot_words;
    const uint32_t n_pos_words = (e + 3u) / 4u;
    memset(pw, 0, n_pos_words * sizeof *pw);
    for (uint32_t j = 0; j < e; ++j)
        pw[j / 4] |= (uint32_t)pos[j] << (8u * (j % 4));
    uint32_t *hw = pw + n_pos_words;
    for (uint32_t j = 0; j < e; ++j)
        hw[j] = high[j];
    return block_words(n, b, e);
}

/* Words written with the chosen b, or 0 for n outside 1..128. */
uint32_t xg_pfor_encode_auto(const uint32_t *in, uint32_t n, uint32_t *out)
{
    if (n == 0 || n > XG_PFOR_BLOCK)
        return 0;
    return xg_pfor_encode(in, n, xg_pfor_choose_b(in, n), out);
}

/* The header of the block at in: its fields and total words, checked
 * against each other and avail_words.  XG_OK or XG_ERR_FORMAT. */
static int read_header(const uint32_t *in, size_t avail_words, uint32_t *b_out,
                       uint32_t *e_out, uint32_t *n_out, uint32_t *total_out)
{
    if (avail_words == 0)
        return xg_set_error(XG_ERR_FORMAT, "pfor block: no header word");
    const uint32_t h = in[0];
    const uint32_t b = XG_PFOR_HDR_B(h), e = XG_PFOR_HDR_NEXC(h);
    const uint32_t n = XG_PFOR_HDR_N(h);
    if (XG_PFOR_HDR_RESERVED(h) != 0)
        return xg_set_error(XG_ERR_FORMAT,
                            "pfor block: header 0x%08x has reserved bits set",
                            h);
    if (b > 32)
        return xg_set_error(XG_ERR_FORMAT, "pfor block: bit width %u > 32", b);
    if (e > n)
        return xg_set_error(XG_ERR_FORMAT,
                            "pfor block: %u exceptions for %u values", e, n);
    if (b == 32 && e != 0)
        return xg_set_error(XG_ERR_FORMAT,
                            "pfor block: %u exceptions with bit width 32", e);
    const uint32_t total = block_words(n, b, e);
    if (total > avail_words)
        return xg_set_error(XG_ERR_FORMAT,
                            "pfor block: needs %u words, only %zu available",
                            total, avail_words);
    *b_out = b;
    *e_out = e;
    *n_out = n;
    *total_out = total;
    return XG_OK;
}

int xg_pfor_first(const uint32_t *in, size_t avail_words, uint32_t *first,
                  uint32_t *words_used)
{
    uint32_t b = 0, e = 0, n = 0, total = 0;
    int rc = read_header(in, avail_words, &b, &e, &n, &total);
    if (rc) return rc;
    uint32_t v = b ? in[1] & low_mask(b) : 0;
    const uint32_t *pw = in + 1 + (n * b + 31u) / 32u;
    if (e && (pw[0] & 0xFFu) == 0)     /* value 0 is the first exception */
        v |= pw[(e + 3u) / 4u] << b;   /* b < 32: b == 32 has none */
    *first = v;
    *words_used = total;
    return XG_OK;
}

/* XG_OK, XG_ERR_FORMAT on any invalid or truncated block, XG_ERR_ARG on
 * NULL arguments; never reads past in[avail_words - 1]. */
int xg_pfor_decode_ref(const uint32_t *in, size_t avail_words, uint32_t *out,
                       uint32_t *n_out, uint32_t *words_used)
{
    if (!in || !out || !n_out || !words_used)
        return xg_set_error(XG_ERR_ARG, "pfor decode: NULL argument");
    uint32_t b = 0, e = 0, n = 0, total = 0;
    int rc = read_header(in, avail_words, &b, &e, &n, &total);
    if (rc) return rc;

    const uint32_t *slots = in + 1;
    const uint32_t mask = low_mask(b);
    for (uint32_t i = 0; i < n; ++i) {
        if (b == 0) {
            out[i] = 0;
            continue;
        }
        uint32_t bit = i * b, w = bit >> 5, s = bit & 31u;
        uint32_t v = slots[w] >> s;
        if (s + b > 32)
            v |= slots[w + 1] << (32u - s);
        out[i] = v & mask;
    }
    const uint32_t *pw = slots + (n * b + 31u) / 32u;
    const uint32_t *hw = pw + (e + 3u) / 4u;
    int prev = -1;
    for (uint32_t j = 0; j < e; ++j) {
        uint32_t p = (pw[j / 4] >> (8u * (j % 4))) & 0xFFu;
        if (p >= n || (int)p <= prev)
            return xg_set_error(XG_ERR_FORMAT,
                                "pfor block: exception %u at position %u "
                                "(values %u, previous %d)", j, p, n, prev);
        uint32_t hi = hw[j];
        if (hi == 0 || (hi >> (31u - b) >> 1) != 0)  /* b < 32 here */
            return xg_set_error(XG_ERR_FORMAT,
                                "pfor block: exception %u high part 0x%x "
                                "invalid for bit width %u", j, hi, b);
        out[p] |= hi << b;  /* b < 32: b == 32 has no exceptions */
        prev = (int)p;
    }
    *n_out = n;
    *words_used = total;
    return XG_OK;
}

/* In-place inclusive prefix sum from base, mod 2^32; never fails. */
void xg_pfor_prefix_sum(uint32_t *v, uint32_t n, uint32_t base)
{
    uint32_t acc = base;
    for (uint32_t i = 0; i < n; ++i) {
        acc += v[i];
        v[i] = acc;
    }
}
