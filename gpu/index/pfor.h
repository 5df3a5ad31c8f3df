/** @file pfor.h
 *  @brief PForDelta blocks of up to 128 uint32 values: encoder, CPU decoder
 *         (twin of the GPU decoder) and the gap-to-docid prefix sum.
 *
 *  Seed 003 §6.2: one bit width b per block; values that do not fit in b bits
 *  ("exceptions") keep their low b bits in their slot and store the rest
 *  apart, so every value has a fixed b-bit slot and a GPU thread can unpack
 *  value i without looking at any other.  Postings are stored as docid gaps
 *  (and wdfs) in blocks of XG_FMT_BLOCK = 128 (gpu/index/format.h, section
 *  XG_SEC_POSTINGS).
 *
 *  Encoded layout, all uint32 words little-endian:
 *
 *    word 0            header: b            bits  0..7   (0..32)
 *                              n_exc        bits  8..15  (0..n_values)
 *                              n_values - 1 bits 16..22  (n_values 1..128)
 *                              bits 23..31 zero
 *    next S words      S = ceil(n_values * b / 32): slot i holds the low b
 *                      bits of value i at bit offset i*b of this area, LSB
 *                      first; a slot may straddle two words; unused high
 *                      bits of the last word are zero.
 *    next P words      P = ceil(n_exc / 4): exception positions, one byte
 *                      each, strictly ascending, byte j at bits 8*(j%4) of
 *                      word j/4; unused bytes zero.
 *    next n_exc words  the exceptions' high parts (value >> b), in position
 *                      order; each is nonzero and < 2^(32-b).
 *
 *  Total words = 1 + S + P + n_exc <= XG_PFOR_MAX_WORDS.  A value v is an
 *  exception iff v >= 2^b; with b = 32 there are none, with b = 0 every
 *  nonzero value is one (its slot is empty and its high part is v).
 *  Decoded value i = slot[i] | (high << b) for exceptions, slot[i] otherwise.
 */
#ifndef XG_PFOR_H
#define XG_PFOR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define XG_PFOR_BLOCK 128u     /* most values in one block */
#define XG_PFOR_MAX_WORDS (1 + 128 + 32 + 128)  /* header+slots+pos+highs */

/* Header fields (word 0). */
#define XG_PFOR_HDR_B(h) ((h) & 0xFFu)
#define XG_PFOR_HDR_NEXC(h) (((h) >> 8) & 0xFFu)
#define XG_PFOR_HDR_N(h) ((((h) >> 16) & 0x7Fu) + 1u)
#define XG_PFOR_HDR_RESERVED(h) ((h) >> 23)

/* The bit width b (0..32) that makes the encoding of in[0..n) smallest:
 * for each b, words(b) = 1 + ceil(n*b/32) + ceil(e/4) + e with e the count
 * of values >= 2^b.  Ties go to the LARGEST such b (same size, fewer
 * exceptions, less scattered work for the decoder).  Returns 0 for n == 0;
 * n above 128 is treated as 128. */
uint32_t xg_pfor_choose_b(const uint32_t *in, uint32_t n);

/* Encode in[0..n) (n in 1..128) with bit width b (0..32) into out, which
 * must hold XG_PFOR_MAX_WORDS words (or at least the returned count).
 * Values >= 2^b become exceptions.  Returns the number of words written,
 * or 0 (writing nothing) if n is 0 or above 128 or b above 32. */
uint32_t xg_pfor_encode(const uint32_t *in, uint32_t n, uint32_t b,
                        uint32_t *out);

/* xg_pfor_encode(in, n, xg_pfor_choose_b(in, n), out): returns the number
 * of words written, 0 if n is 0 or above 128. */
uint32_t xg_pfor_encode_auto(const uint32_t *in, uint32_t n, uint32_t *out);

/* Decode one block from in[0..avail_words) into out (room for 128 values);
 * the CPU twin of the GPU decoder.  On success returns XG_OK and sets
 * *n_out (1..128) and *words_used (<= avail_words).  Returns XG_ERR_FORMAT,
 * with a one-line message from xg_set_error(), if avail_words is 0, the
 * header's reserved bits are set, b > 32, n_exc > n_values, b == 32 with
 * exceptions, the block would extend past avail_words, an exception position
 * is >= n_values or not strictly ascending, or an exception's high part is
 * 0 or does not fit in 32-b bits; *n_out and *words_used are then untouched
 * and out[0..128) may be partly written.  Returns XG_ERR_ARG if in, out,
 * n_out or words_used is NULL.  Reads only in[0..avail_words), whatever
 * those words hold. */
int xg_pfor_decode_ref(const uint32_t *in, size_t avail_words, uint32_t *out,
                       uint32_t *n_out, uint32_t *words_used);

/* The block's first value alone, and the words the whole block takes
 * (where the next one starts), from its header: O(1).  The header is
 * checked as the decoder checks it; the exceptions are not (for blocks
 * of a list checked whole before, as an index's are at open).  XG_OK or
 * XG_ERR_FORMAT. */
int xg_pfor_first(const uint32_t *in, size_t avail_words, uint32_t *first,
                  uint32_t *words_used);

/* In place: v[i] = base + v[0] + ... + v[i] (uint32 wraparound), turning
 * docid gaps into docids.  Never fails. */
void xg_pfor_prefix_sum(uint32_t *v, uint32_t n, uint32_t base);

#ifdef __cplusplus
}
#endif
#endif
