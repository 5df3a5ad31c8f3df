/** @file qlm_util.c
 *  @brief The qlm pipeline's small helpers: LSD radix sorts of 32- and
 *         64-bit keys (the CPU stand-ins for CUB's DeviceRadixSort), and
 *         the n-gram lists.
 */
#include <stdlib.h>
#include <string.h>

#include "../runtime/error.h"
#include "qlm_int.h"

/* Below this many items insertion sort beats the radix passes. */
#define SMALL_SORT 48

#define RADIX(NAME, T, BYTES)                                                  \
    void NAME(T *a, size_t n, T *tmp)                                          \
    {                                                                          \
        if (n < SMALL_SORT) {                                                  \
            for (size_t i = 1; i < n; ++i) {                                   \
                T x = a[i];                                                    \
                size_t j = i;                                                  \
                for (; j > 0 && a[j - 1] > x; --j) a[j] = a[j - 1];            \
                a[j] = x;                                                      \
            }                                                                  \
            return;                                                            \
        }                                                                      \
        T *src = a, *dst = tmp;                                                \
        for (unsigned b = 0; b < (BYTES); ++b) {                               \
            size_t cnt[256] = {0};                                             \
            const unsigned sh = 8 * b;                                         \
            for (size_t i = 0; i < n; ++i) ++cnt[(src[i] >> sh) & 0xFF];       \
            if (cnt[(src[0] >> sh) & 0xFF] == n) continue; /* one bucket */    \
            size_t at = 0;                                                     \
            for (unsigned k = 0; k < 256; ++k) {                               \
                size_t c = cnt[k];                                             \
                cnt[k] = at;                                                   \
                at += c;                                                       \
            }                                                                  \
            for (size_t i = 0; i < n; ++i) dst[cnt[(src[i] >> sh) & 0xFF]++] = src[i]; \
            T *s = src;                                                        \
            src = dst;                                                         \
            dst = s;                                                           \
        }                                                                      \
        if (src != a) memcpy(a, src, n * sizeof *a);                           \
    }

RADIX(xg_qlm_sort_u64, uint64_t, 8)
RADIX(xg_qlm_sort_u32, uint32_t, 4)

int xg_qlm_grams_push(struct xg_qlm_grams *g, uint64_t pos, uint64_t z,
                      uint64_t df)
{
    if (g->n == g->cap) {
        uint64_t cap = 2 * g->cap + 256;
        uint64_t *p = realloc(g->pos, cap * sizeof *p);
        if (p) g->pos = p;
        uint64_t *zz = p ? realloc(g->z, cap * sizeof *zz) : NULL;
        if (zz) g->z = zz;
        uint64_t *d = zz ? realloc(g->df, cap * sizeof *d) : NULL;
        if (!d) return XG_ERR_NOMEM;
        g->df = d;
        g->cap = cap;
    }
    g->pos[g->n] = pos;
    g->z[g->n] = z;
    g->df[g->n] = df;
    ++g->n;
    return XG_OK;
}

void xg_qlm_grams_free(struct xg_qlm_grams *g)
{
    free(g->pos);
    free(g->z);
    free(g->df);
    memset(g, 0, sizeof *g);
}
