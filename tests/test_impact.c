/** @file test_impact.c
 *  @brief The impact encoder (gpu/index/impact.c): for random lists of BM25
 *         parts, every code c satisfies (c - 1) * scale < g <= c * scale
 *         in double arithmetic, codes stay within 0..255, the largest part
 *         gets the top code, and zero parts get code 0; then the same on
 *         real parts (CACM lists with real document lengths).
 */
#include <math.h>

#include "../gpu/bm25.h"
#include "../gpu/runtime/buf.h"
#include "../gpu/index/impact.h"
#include "test_util.h"

static void check_codes(const double *g, uint32_t n, const uint8_t *c,
                        double scale, const char *what)
{
    double gmax = 0;
    for (uint32_t i = 0; i < n; ++i) gmax = g[i] > gmax ? g[i] : gmax;
    CHECK(gmax == 0 ? scale == 0 : scale > 0, "%s: scale %g for max %g",
          what, scale, gmax);
    int top = 0;
    for (uint32_t i = 0; i < n; ++i) {
        if (g[i] == 0) {
            CHECK(c[i] == 0, "%s: zero part got code %u", what, c[i]);
            continue;
        }
        CHECK(c[i] >= 1 && c[i] <= XG_IMPACT_MAX, "%s: code %u", what, c[i]);
        CHECK((double)c[i] * scale >= g[i], "%s: %u * %.17g < %.17g", what,
              c[i], scale, g[i]);
        CHECK((double)(c[i] - 1) * scale < g[i],
              "%s: code %u not the smallest for %.17g", what, c[i], g[i]);
        top |= c[i] == XG_IMPACT_MAX;
    }
    CHECK(gmax == 0 || top, "%s: the largest part missed code 255", what);
}

int main(int argc, char **argv)
{
    rng_state = seed_used = parse_seed(argc, argv);
    enum { MAXN = 5000 };
    static double g[MAXN];
    static uint8_t c[MAXN];
    for (int r = 0; r < 2000; ++r) {
        uint32_t n = 1 + rng_below(r < 1000 ? 8 : MAXN);
        int kind = r % 4;
        for (uint32_t i = 0; i < n; ++i) {
            double u = (rng_next() >> 11) * 0x1.0p-53;
            /* Uniform, tiny, some zeros, and few distinct values. */
            g[i] = kind == 0   ? u
                   : kind == 1 ? u * 1e-300
                   : kind == 2 ? (rng_below(3) ? u : 0.0)
                               : (double)(1 + rng_below(4)) / 5.0;
        }
        double scale;
        xg_impact_encode(g, n, c, &scale);
        char what[48];
        snprintf(what, sizeof what, "random list %d (n %u)", r, n);
        check_codes(g, n, c, scale, what);
    }
    group_ok("2000 random lists: (c-1)*scale < g <= c*scale, codes 0..255");
    for (uint32_t n = 1; n < 300; n += 37) {
        for (uint32_t i = 0; i < n; ++i) g[i] = 0;
        double scale = 1;
        xg_impact_encode(g, n, c, &scale);
        check_codes(g, n, c, scale, "all-zero list");
    }
    group_ok("all-zero lists: scale 0, codes 0");

    /* Real parts: CACM lists, lengths and wdfs drawn as in documents. */
    uint32_t *lists[N_CACM_WORDS] = {0};
    size_t len[N_CACM_WORDS] = {0};
    uint32_t n_docs = 0;
    if (!cacm_lists(lists, len, &n_docs)) {
        printf("%d passed, 0 failed (seed %" PRIu64 ")\n", n_passed,
               seed_used);
        return 0;
    }
    const struct xg_bm25_params p = XG_BM25_DEFAULTS;
    struct xg_bm25_query q;
    xg_bm25_query_init(&p, n_docs, (uint64_t)n_docs * 60, 0, &q);
    double *kd = malloc(((size_t)n_docs + 1) * sizeof *kd);
    for (uint32_t d = 0; d < n_docs; ++d)
        kd[d] = xg_bm25_kd(&q, 1 + rng_below(400));
    for (size_t w = 0; w < N_CACM_WORDS; ++w) {
        uint32_t *wdfs = malloc((len[w] + 1) * sizeof *wdfs);
        for (size_t i = 0; i < len[w]; ++i)
            wdfs[i] = rng_below(10) ? 1 + rng_below(3) : rng_below(40);
        struct xg_buf codes = {0};
        struct xg_fmt_impact im;
        CHECK(xg_impact_list(lists[w], wdfs, (uint32_t)len[w], kd, &codes,
                             &im) == XG_OK, "xg_impact_list");
        CHECK(im.code_offset == 0 && codes.len == len[w], "code layout");
        size_t n = len[w] < MAXN ? len[w] : MAXN;
        for (size_t i = 0; i < n; ++i)
            g[i] = xg_bm25_wdf_part(kd[lists[w][i]], wdfs[i]);
        check_codes(g, (uint32_t)n, codes.data, im.scale, cacm_words[w]);
        xg_buf_free(&codes);
        free(wdfs);
        free(lists[w]);
    }
    free(kd);
    group_ok("CACM lists' BM25 parts");
    printf("%d passed, 0 failed (seed %" PRIu64 ")\n", n_passed, seed_used);
    return 0;
}
