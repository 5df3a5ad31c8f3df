/** @file test_cand_sort.c
 *  @brief The candidates' MSet order (gpu/query/cand_sort.c) against qsort
 *         with the same order written as a comparison function: random
 *         weights with many ties, sorted, reversed and organ-pipe inputs,
 *         every size up to 300 and larger ones, the introsort and its heap
 *         sort fallback alone, and the first k of each (quickselect).
 *  usage: test_cand_sort [--seed N]
 */
#include <stdlib.h>
#include <string.h>

#include "../gpu/query/cand_sort.h"
#include "test_util.h"

static int by_order(const void *x, const void *y)
{
    const struct xg_dcand *a = x, *b = y;
    if (a->weight != b->weight) return a->weight > b->weight ? -1 : 1;
    return a->doc < b->doc ? -1 : a->doc > b->doc;
}

/* n candidates of distinct documents; weights from `levels` values (ties
 * when few), laid out by `pattern`: 0 random, 1 in order, 2 reversed,
 * 3 rising then falling. */
static void fill(struct xg_dcand *c, uint32_t n, uint32_t levels, int pattern)
{
    for (uint32_t i = 0; i < n; ++i) {
        c[i].doc = i * 7919u % 1000003u;
        c[i].matched = 1;
        c[i].weight = 0.5 + (double)rng_below(levels) * 0.25;
    }
    if (pattern == 1 || pattern == 2 || pattern == 3)
        qsort(c, n, sizeof *c, by_order);
    if (pattern == 2)
        for (uint32_t i = 0; i < n / 2; ++i) {
            struct xg_dcand t = c[i];
            c[i] = c[n - 1 - i];
            c[n - 1 - i] = t;
        }
    if (pattern == 3 && n > 2) /* every other one to the back */
        for (uint32_t i = 1, j = n - 1; i < j; i += 2, --j) {
            struct xg_dcand t = c[i];
            c[i] = c[j];
            c[j] = t;
        }
}

/* The first k of n by xg_cand_top against qsort's first k. */
static int check_top(uint32_t n, uint32_t k, uint32_t levels, int pattern)
{
    struct xg_dcand *a = malloc((n + 1) * sizeof *a),
                    *b = malloc((n + 1) * sizeof *b);
    if (!a || !b) return 1;
    fill(a, n, levels, pattern);
    memcpy(b, a, n * sizeof *a);
    xg_cand_top(a, n, k);
    qsort(b, n, sizeof *b, by_order);
    const int same = !memcmp(a, b, k * sizeof *a);
    free(a);
    free(b);
    return same;
}

static int check(uint32_t n, uint32_t levels, int pattern, int heap)
{
    struct xg_dcand *a = malloc((n + 1) * sizeof *a),
                    *b = malloc((n + 1) * sizeof *b);
    if (!a || !b) return 1;
    fill(a, n, levels, pattern);
    memcpy(b, a, n * sizeof *a);
    if (heap) xg_cand_heapsort(a, n);
    else xg_cand_sort(a, n);
    qsort(b, n, sizeof *b, by_order);
    const int same = !memcmp(a, b, n * sizeof *a);
    free(a);
    free(b);
    return same;
}

int main(int argc, char **argv)
{
    rng_state = seed_used = parse_seed(argc, argv);
    printf("test_cand_sort: seed %" PRIu64 " (--seed %" PRIu64 " replays)\n",
           seed_used, seed_used);
    static const uint32_t levels[] = {1, 2, 7, 1000000};
    for (int heap = 0; heap < 2; ++heap)
        for (int pattern = 0; pattern < 4; ++pattern)
            for (int l = 0; l < 4; ++l) {
                for (uint32_t n = 0; n <= 300; ++n)
                    CHECK(check(n, levels[l], pattern, heap),
                          "%s: n %u, %u weight levels, pattern %d differs "
                          "from qsort", heap ? "heap sort" : "sort", n,
                          levels[l], pattern);
                for (uint32_t n = 1000; n <= 40000; n *= 2)
                    CHECK(check(n, levels[l], pattern, heap),
                          "%s: n %u, %u weight levels, pattern %d differs "
                          "from qsort", heap ? "heap sort" : "sort", n,
                          levels[l], pattern);
            }
    group_ok("every size, tie level and layout in qsort's order");
    for (int pattern = 0; pattern < 4; ++pattern)
        for (int l = 0; l < 4; ++l)
            for (uint32_t n = 2; n <= 5000; n += n < 200 ? 1 : 997) {
                const uint32_t ks[] = {1, 10, n / 2, n - 1, 1000 % n + 1};
                for (int t = 0; t < 5; ++t) {
                    const uint32_t k = ks[t] < n ? ks[t] : n - 1;
                    if (!k) continue;
                    CHECK(check_top(n, k, levels[l], pattern),
                          "top %u of %u, %u weight levels, pattern %d "
                          "differs from qsort's", k, n, levels[l], pattern);
                }
            }
    group_ok("the first k of every size in qsort's order");
    printf("%d passed, 0 failed\n", n_passed);
    return 0;
}
