/** @file cand_sort.c
 *  @brief The candidates' MSet order (see cand_sort.h).
 */
#include "cand_sort.h"

static inline void swap(struct xg_dcand *a, struct xg_dcand *b)
{
    const struct xg_dcand t = *a;
    *a = *b;
    *b = t;
}

static void insertion(struct xg_dcand *c, uint32_t n)
{
    for (uint32_t i = 1; i < n; ++i) {
        const struct xg_dcand x = c[i];
        uint32_t j = i;
        for (; j && xg_cand_before(&x, &c[j - 1]); --j) c[j] = c[j - 1];
        c[j] = x;
    }
}

/* Sift c[at] down a heap of n whose root comes last in the order. */
static void sift(struct xg_dcand *c, uint32_t n, uint32_t at)
{
    for (;;) {
        const uint32_t l = 2 * at + 1, r = l + 1;
        uint32_t w = at;
        if (l < n && xg_cand_before(&c[w], &c[l])) w = l;
        if (r < n && xg_cand_before(&c[w], &c[r])) w = r;
        if (w == at) return;
        swap(&c[at], &c[w]);
        at = w;
    }
}

void xg_cand_heapsort(struct xg_dcand *c, uint32_t n)
{
    for (uint32_t i = n / 2; i-- > 0;) sift(c, n, i);
    for (uint32_t e = n; e > 1; --e) {
        swap(&c[0], &c[e - 1]);
        sift(c, e - 1, 0);
    }
}

/* Hoare's partition of c[0..n) (n > 2) around the median of three:
 * returns s, 0 < s < n, with c[0..s) each before or equal to each of
 * c[s..n). */
static uint32_t partition(struct xg_dcand *c, uint32_t n)
{
    /* The median of three also leaves sentinels at both ends. */
    const uint32_t mid = n / 2;
    if (xg_cand_before(&c[mid], &c[0])) swap(&c[mid], &c[0]);
    if (xg_cand_before(&c[n - 1], &c[mid])) {
        swap(&c[n - 1], &c[mid]);
        if (xg_cand_before(&c[mid], &c[0])) swap(&c[mid], &c[0]);
    }
    const struct xg_dcand pivot = c[mid];
    uint32_t i = 0, j = n - 1;
    for (;;) {
        do ++i; while (xg_cand_before(&c[i], &pivot));
        do --j; while (xg_cand_before(&pivot, &c[j]));
        if (i >= j) return j + 1;
        swap(&c[i], &c[j]);
    }
}

static unsigned depth_of(uint32_t n)
{
    unsigned depth = 0;
    for (; n > 1; n >>= 1) depth += 2;
    return depth;
}

static void intro(struct xg_dcand *c, uint32_t n, unsigned depth)
{
    while (n > 16) {
        if (depth-- == 0) {
            xg_cand_heapsort(c, n);
            return;
        }
        /* The smaller side recursively, the larger in this loop. */
        const uint32_t left = partition(c, n);
        if (left < n - left) {
            intro(c, left, depth);
            c += left;
            n -= left;
        } else {
            intro(c + left, n - left, depth);
            n = left;
        }
    }
    insertion(c, n);
}

void xg_cand_top(struct xg_dcand *c, uint32_t m, uint32_t k)
{
    /* Narrow [lo, hi) down to where the k-th boundary falls: all before
     * lo come first, all from hi on come after; then sort the first k. */
    uint32_t lo = 0, hi = m;
    unsigned depth = depth_of(m);
    while (hi - lo > 16) {
        if (depth-- == 0) {
            xg_cand_heapsort(c + lo, hi - lo);
            break;
        }
        const uint32_t s = lo + partition(c + lo, hi - lo);
        if (s == k) break;
        if (s > k) hi = s;
        else lo = s;
    }
    if (hi - lo <= 16) insertion(c + lo, hi - lo);
    xg_cand_sort(c, k);
}

void xg_cand_sort(struct xg_dcand *c, uint32_t n)
{
    intro(c, n, depth_of(n));
}
