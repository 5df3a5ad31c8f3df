/** @file bloom.h
 *  @brief Per-list Bloom filters over dense doc numbers: one hash for host
 *         and device, build, test and the theoretical false-positive rate.
 *
 *  Seed 004 ch. 4 (§2.3) uses an xor-based hash family; ours is
 *
 *      h_i(x) = ((uint64_t)fmix32(x ^ XG_BLOOM_SEED[i]) * n_bits) >> 32,
 *      i = 0 .. k-1, n_bits = 64 * n_words,
 *
 *  where fmix32 is MurmurHash3's 32-bit finaliser (a bijection with full
 *  avalanche) and XG_BLOOM_SEED are 16 fixed odd constants (so k <= 16).
 *  The multiply-shift maps the hash onto [0, n_bits) without a division.
 *  Bit p of the filter is bit (p % 64) of uint64 word p / 64 (little-endian
 *  in the file, section XG_SEC_BLOOM of gpu/index/format.h).
 *
 *  A filter answers "maybe present" or "certainly absent"; its false
 *  positives must be removed by an exact search before results go out.  A
 *  list without a filter (n_words == 0) or k == 0 answers "maybe" for every
 *  key.  The hash and the test are static inline and marked XG_HOST_DEVICE
 *  so the GPU kernel compiles exactly this code; the seeds are therefore
 *  returned by a switch (xg_bloom_seed), not read from a host array that
 *  device code could not see.  Filters are at most XG_BLOOM_MAX_WORDS words
 *  (2^32 bits), which keeps the multiply-shift inside 64 bits.
 */
#ifndef XG_BLOOM_H
#define XG_BLOOM_H

#include <stdint.h>

#include "../runtime/host_device.h"

#ifdef __cplusplus
extern "C" {
#endif

#define XG_BLOOM_MAX_K 16u
#define XG_BLOOM_MAX_WORDS (1u << 26)  /* 2^32 bits */

/* The 16 seeds as an initialiser, e.g. for a __constant__ copy. */
#define XG_BLOOM_SEEDS                                                   \
    { 0xE220A839u, 0x6E789E6Bu, 0x06C45D19u, 0xF88BB8A9u,                \
      0x1B39896Bu, 0x53CB9F0Du, 0x2C829ABFu, 0xC584133Bu,                \
      0x3EE57891u, 0xF3B8488Du, 0x657EECDDu, 0xC2D326E1u,                \
      0x8621A03Fu, 0x8E1F7555u, 0xB54E0F17u, 0x84BB3F97u }

/* XG_BLOOM_SEED[i & 15] (the constants of XG_BLOOM_SEEDS). */
static inline XG_HOST_DEVICE uint32_t xg_bloom_seed(uint32_t i)
{
    switch (i & 15u) {
    case 0: return 0xE220A839u;
    case 1: return 0x6E789E6Bu;
    case 2: return 0x06C45D19u;
    case 3: return 0xF88BB8A9u;
    case 4: return 0x1B39896Bu;
    case 5: return 0x53CB9F0Du;
    case 6: return 0x2C829ABFu;
    case 7: return 0xC584133Bu;
    case 8: return 0x3EE57891u;
    case 9: return 0xF3B8488Du;
    case 10: return 0x657EECDDu;
    case 11: return 0xC2D326E1u;
    case 12: return 0x8621A03Fu;
    case 13: return 0x8E1F7555u;
    case 14: return 0xB54E0F17u;
    default: return 0x84BB3F97u;
    }
}

/* MurmurHash3 fmix32: a bijection of uint32 with full avalanche. */
static inline XG_HOST_DEVICE uint32_t xg_bloom_mix32(uint32_t h)
{
    h ^= h >> 16;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13;
    h *= 0xC2B2AE35u;
    h ^= h >> 16;
    return h;
}

/* h_i(key): the bit position (0 .. 64*n_words-1) of hash i for a filter
 * of n_words words (1 .. XG_BLOOM_MAX_WORDS). */
static inline XG_HOST_DEVICE uint32_t xg_bloom_hash(uint32_t key, uint32_t i,
                                                    uint32_t n_words)
{
    uint64_t n_bits = (uint64_t)n_words << 6;
    return (uint32_t)(((uint64_t)xg_bloom_mix32(key ^ xg_bloom_seed(i)) *
                       n_bits) >> 32);
}

/* 1 if `key` may be in the set the filter words[0..n_words) was built
 * from with k hashes, 0 if it certainly is not.  Returns 1 when n_words is
 * 0 or k is 0 (no filter); k above 16 and n_words above XG_BLOOM_MAX_WORDS
 * are clamped as in xg_bloom_build(). */
static inline XG_HOST_DEVICE int xg_bloom_test(const uint64_t *words,
                                               uint32_t n_words, uint32_t k,
                                               uint32_t key)
{
    if (n_words == 0)
        return 1;
    if (n_words > XG_BLOOM_MAX_WORDS)
        n_words = XG_BLOOM_MAX_WORDS;
    if (k > XG_BLOOM_MAX_K)
        k = XG_BLOOM_MAX_K;
    for (uint32_t i = 0; i < k; ++i) {
        uint32_t p = xg_bloom_hash(key, i, n_words);
        if (!((words[p >> 6] >> (p & 63u)) & 1u))
            return 0;
    }
    return 1;
}

/* Filter size in 64-bit words for n_keys keys at bits_per_key bits each:
 * ceil(n_keys * bits_per_key / 64), at least 1, at most XG_BLOOM_MAX_WORDS;
 * 0 (no filter) if bits_per_key is 0. */
uint32_t xg_bloom_words(uint32_t n_keys, uint32_t bits_per_key);

/* Zero words[0..n_words) and set the k bits h_0..h_{k-1} of each of
 * keys[0..n).  k above 16 is treated as 16; n_words above
 * XG_BLOOM_MAX_WORDS as XG_BLOOM_MAX_WORDS (only that many words are
 * written).  Does nothing if n_words is 0.  Never fails. */
void xg_bloom_build(const uint32_t *keys, uint32_t n, uint32_t k,
                    uint64_t *words, uint32_t n_words);

/* The textbook false-positive rate (1 - exp(-k / bits_per_key))^k; 1.0 if
 * bits_per_key or k is 0. */
double xg_bloom_fpr_theory(uint32_t bits_per_key, uint32_t k);

#ifdef __cplusplus
}
#endif
#endif
