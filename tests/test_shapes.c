/** @file test_shapes.c
 *  @brief The planner's per-shape shares (plugin/shapes.c): every shape
 *         has its own class; a shape skips planning only once enough of
 *         its planned queries went to stock and fewer than one in
 *         XG_SHAPE_RATIO to an engine; one query in XG_SHAPE_SAMPLE is
 *         planned all the same; the counts halve at XG_SHAPE_WINDOW, so
 *         engine choices again stop the skipping.
 */
#include <string.h>

#include "../plugin/shapes.h"
#include "test_util.h"

/* How many of n queries of `shape` skip. */
static int skips(struct xg_shapes *sh, int shape, int n)
{
    int k = 0;
    for (int i = 0; i < n; ++i) k += xg_shapes_skip(sh, shape);
    return k;
}

int main(void)
{
    /* Shapes: a term, AND and OR of 1..8+ subqueries, flat or not. */
    int seen[XG_SHAPES];
    memset(seen, 0, sizeof seen);
    seen[xg_shape_of(1, 0, 0, 0, 1)]++;
    for (int op = 0; op < 2; ++op)
        for (uint32_t n = 1; n <= 8; ++n)
            for (int flat = 0; flat < 2; ++flat) {
                const int s = xg_shape_of(0, op == 0, op == 1, n, flat);
                CHECK(s >= 0 && s < XG_SHAPES, "shape %d out of range", s);
                seen[s]++;
                CHECK(xg_shape_of(0, op == 0, op == 1, n + 20, flat) ==
                          xg_shape_of(0, op == 0, op == 1, 8, flat),
                      "more than 8 subqueries share the class of 8");
            }
    for (int s = 0; s < XG_SHAPES; ++s)
        CHECK(seen[s] == 1, "shape %d taken %d times", s, seen[s]);
    CHECK(xg_shape_of(0, 0, 0, 3, 1) == -1, "another operator always plans");
    CHECK(xg_shape_of(0, 1, 0, 0, 1) == -1, "no subqueries always plans");
    group_ok("33 classes, one each");

    static struct xg_shapes sh;
    const int and2 = xg_shape_of(0, 1, 0, 2, 1);
    CHECK(skips(&sh, and2, 100) == 0, "a shape with no history plans");
    for (int i = 0; i < XG_SHAPE_MIN - 1; ++i) xg_shapes_note(&sh, and2, 0);
    CHECK(skips(&sh, and2, 100) == 0, "%d planned are not enough",
          XG_SHAPE_MIN - 1);
    xg_shapes_note(&sh, and2, 0);
    const int k = skips(&sh, and2, 16 * XG_SHAPE_SAMPLE);
    CHECK(k == 15 * 16, "after %d stock choices %d of 256 skipped, want 240",
          XG_SHAPE_MIN, k);
    CHECK(sh.skipped == (uint64_t)k, "skipped counted %llu of %d",
          (unsigned long long)sh.skipped, k);
    const int or3 = xg_shape_of(0, 0, 1, 3, 1);
    CHECK(skips(&sh, or3, 100) == 0, "another shape keeps its own counts");
    group_ok("skips once enough planned queries went to stock, samples");

    /* An engine choice in fewer than one of XG_SHAPE_RATIO keeps the
     * skipping; more stops it. */
    xg_shapes_note(&sh, and2, 1);
    CHECK(skips(&sh, and2, 32) > 0, "one engine choice in %d stops it",
          XG_SHAPE_MIN + 1);
    xg_shapes_note(&sh, and2, 1);
    CHECK(skips(&sh, and2, 100) == 0, "two engine choices in %d must stop it",
          XG_SHAPE_MIN + 2);
    group_ok("engine choices stop the skipping");

    /* The counts halve at the window: a long run of stock choices makes
     * the two engine choices rare enough again, and halving keeps the
     * share. */
    for (int i = 0; i < 4 * XG_SHAPE_WINDOW; ++i) xg_shapes_note(&sh, and2, 0);
    CHECK(sh.s[and2].planned < XG_SHAPE_WINDOW, "planned %u past the window",
          (unsigned)sh.s[and2].planned);
    CHECK(skips(&sh, and2, 32) > 0, "stock choices again: skipping");
    for (int i = 0; i < XG_SHAPE_WINDOW / XG_SHAPE_RATIO; ++i)
        xg_shapes_note(&sh, and2, 1);
    CHECK(skips(&sh, and2, 100) == 0, "engine choices again: planning");
    CHECK(skips(&sh, -1, 10) == 0 && skips(&sh, XG_SHAPES, 10) == 0,
          "no class, no skipping");
    xg_shapes_note(&sh, XG_SHAPES, 0);
    group_ok("the window halves; out-of-range shapes ignored");
    printf("%d passed, 0 failed\n", n_passed);
    return 0;
}
