/** @file test_select.c
 *  @brief The selection's CPU twin (gpu/query/topk_ref.c), which the GPU
 *         kernel must equal, against brute force: the first round's log
 *         bins order weights and hold them (topk.h), and on the cases of
 *         select_cases.h each query's candidates are exactly the items at
 *         or above its threshold, with the top k among them; a query
 *         whose lists' bound is below its matches is an error.
 *  usage: test_select [--seed N]
 */
#include <math.h>

#include "../gpu/runtime/error.h"
#include "select_cases.h"
#include "test_util.h"

/* A weight of random magnitude: any double from 0 to about 2^40. */
static double any_weight(void)
{
    const uint64_t x = rng_next();
    switch (x % 4) {
    case 0: return 0.0;
    case 1: return (double)(uint32_t)(x >> 32);            /* an integer */
    default: return ldexp((double)(x >> 11) * 0x1p-53,
                          (int)(rng_below(80)) - 40);
    }
}

static void check_bins(void)
{
    for (int irow = 0; irow < 2; ++irow)
        for (int i = 0; i < 200000; ++i) {
            double a = any_weight(), b = any_weight();
            if (irow) {
                a = floor(a);
                b = floor(b);
            }
            if (a > b) { double t = a; a = b; b = t; }
            const uint32_t ba = xg_select_log_bin(a, irow),
                           bb = xg_select_log_bin(b, irow);
            CHECK(ba <= bb, "bins out of order: %.17g in %u, %.17g in %u",
                  a, ba, b, bb);
            double lo, hi;
            xg_select_log_range(bb, irow, INFINITY, &lo, &hi);
            CHECK(lo <= b && b <= hi, "%.17g outside its bin %u [%.17g, "
                  "%.17g] (irow %d)", b, bb, lo, hi, irow);
            /* The next bin starts just above this one's top. */
            if (bb + 1 < XG_SELECT_BINS) {
                double lo2, hi2;
                xg_select_log_range(bb + 1, irow, INFINITY, &lo2, &hi2);
                CHECK(nextafter(hi, INFINITY) == lo2, "bins %u and %u: "
                      "%.17g then %.17g", bb, bb + 1, hi, lo2);
            }
        }
    /* The largest weight caps the range of its bin. */
    double lo, hi;
    xg_select_log_range(xg_select_log_bin(3.0, 0), 0, 3.0, &lo, &hi);
    CHECK(hi == 3.0 && lo <= 3.0, "S's bin [%.17g, %.17g]", lo, hi);
    group_ok("log bins: ordered, each weight inside its bin's range, "
             "the bins adjacent (400,000 weights)");
}

int main(int argc, char **argv)
{
    seed_used = rng_state = parse_seed(argc, argv);
    printf("seed %llu\n", (unsigned long long)seed_used);
    check_bins();
    for (int round = 0; round < 3; ++round) {
        struct select_case c;
        CHECK(select_case_make(&c, rng_next) == 0, "out of memory");
        struct xg_dcand *out = calloc(c.cand_room, sizeof *out);
        struct xg_dqresult res[SC_QUERIES];
        CHECK(out, "out of memory");
        struct xg_select_args a = {c.q,        c.acc, c.mask, SC_DOCS,
                                   c.icount,   c.icand, XG_SELECT_MARGIN,
                                   out,        res,   NULL,   NULL, NULL,
                                   c.touched, NULL,     NULL};
        CHECK(xg_select_ref(&a, SC_QUERIES) == XG_OK, "xg_select_ref");
        char why[256];
        uint32_t rounds_cut = 0;
        for (uint32_t qi = 0; qi < SC_QUERIES; ++qi) {
            CHECK(select_case_check(&c, qi, &res[qi], out, why,
                                    sizeof why) == 0, "%s", why);
            rounds_cut += res[qi].threshold >= 0;
        }
        CHECK(rounds_cut >= SC_QUERIES - 3, "only %u of %u queries cut",
              rounds_cut, SC_QUERIES);
        /* A lists' bound below the matches is refused, not trusted. */
        c.q[round].match_bound = 5;
        CHECK(xg_select_ref(&a, SC_QUERIES) == XG_ERR_ARG,
              "a bound of 5 matches on q%d accepted", round);
        c.q[round].match_bound = SC_DOCS;
        free(out);
        select_case_free(&c);
    }
    group_ok("twin on 3 x 12 stress cases: match counts, largest weights, "
             "candidates exactly the items at or above the threshold, the "
             "top k inside, no overflow where the room suffices; a bound "
             "below the matches refused");
    printf("%d passed, 0 failed\n", n_passed);
    return 0;
}
