/** @file bloom.c
 *  @brief Bloom filter sizing, construction and theory (see bloom.h).
 *
 *  Called by the index writer for each posting list (keys: the list's dense
 *  doc numbers); the probe side is the static inline xg_bloom_test() in
 *  bloom.h, shared with the GPU kernel.
 */
#include "bloom.h"

#include <math.h>
#include <string.h>

/* ceil(n_keys * bits_per_key / 64) in 1..XG_BLOOM_MAX_WORDS; 0 if no bits. */
uint32_t xg_bloom_words(uint32_t n_keys, uint32_t bits_per_key)
{
    if (bits_per_key == 0)
        return 0;
    uint64_t bits = (uint64_t)n_keys * bits_per_key;
    uint64_t w = (bits + 63u) / 64u;
    if (w < 1)
        w = 1;
    if (w > XG_BLOOM_MAX_WORDS)
        w = XG_BLOOM_MAX_WORDS;
    return (uint32_t)w;
}

/* Zero the filter and set every key's k bits; never fails. */
void xg_bloom_build(const uint32_t *keys, uint32_t n, uint32_t k,
                    uint64_t *words, uint32_t n_words)
{
    if (n_words == 0)
        return;
    if (n_words > XG_BLOOM_MAX_WORDS)
        n_words = XG_BLOOM_MAX_WORDS;
    if (k > XG_BLOOM_MAX_K)
        k = XG_BLOOM_MAX_K;
    memset(words, 0, (size_t)n_words * sizeof *words);
    for (uint32_t j = 0; j < n; ++j)
        for (uint32_t i = 0; i < k; ++i) {
            uint32_t p = xg_bloom_hash(keys[j], i, n_words);
            words[p >> 6] |= (uint64_t)1 << (p & 63u);
        }
}

/* (1 - e^(-k/bits))^k, or 1.0 when bits or k is 0. */
double xg_bloom_fpr_theory(uint32_t bits_per_key, uint32_t k)
{
    if (bits_per_key == 0 || k == 0)
        return 1.0;
    return pow(1.0 - exp(-(double)k / (double)bits_per_key), (double)k);
}
