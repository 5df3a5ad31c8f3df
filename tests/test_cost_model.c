/** @file test_cost_model.c
 *  @brief The planner's cost model (plugin/cost_model.c): stock's 90th
 *         percentile, the CPU matcher's, the GPU's latency behind its
 *         queue, on random models and queries; the model file's round
 *         trip, with and without the CPU matcher's keys.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../gpu/runtime/error.h"

#include "../plugin/cost_model.h"
#include "test_util.h"

static double rnd(double lo, double hi)
{
    return lo + (hi - lo) * (double)rng_u32() / 4294967296.0;
}

int main(int argc, char **argv)
{
    seed_used = parse_seed(argc, argv);
    rng_state = seed_used;
    printf("seed %" PRIu64 "\n", seed_used);
    for (int round = 0; round < 1000; ++round) {
        struct xg_cost_model m;
        xg_cost_model_default(&m);
        m.stock_or_scale = rnd(1e-7, 1e-3);
        m.stock_or_exponent = rnd(0, 1);
        m.stock_and_scale = rnd(1e-7, 1e-3);
        m.stock_and_exponent = rnd(0, 1);
        m.stock_or_spread = rnd(1, 6);
        m.stock_and_spread = rnd(1, 6);
        m.cpu_and_scale = rnd(1e-7, 1e-3);
        m.cpu_and_exponent = rnd(0, 1);
        m.cpu_and_spread = rnd(1, 6);
        m.cpu_or_scale = rnd(1e-7, 1e-3);
        m.cpu_or_exponent = rnd(0, 1);
        m.cpu_or_spread = rnd(1, 6);
        m.cpu_or_count_scale = rnd(1e-7, 1e-3);
        m.cpu_or_count_exponent = rnd(0, 1);
        m.cpu_or_count_spread = rnd(1, 6);
        struct xg_query_features f = {1 + rng_below(8), (int)rng_below(2), 0, 0};
        f.shortest = rng_below(1u << 20);
        f.sum = f.shortest * f.n_lists + rng_below(1u << 20);
        const double p50 = xg_cost_stock_seconds(&m, &f);
        const double p90 = xg_cost_stock_seconds_p90(&m, &f);
        const double spread = f.is_and ? m.stock_and_spread : m.stock_or_spread;
        CHECK(fabs(p90 - p50 * spread) <= 1e-12 * p90, "p90 = median * spread");
        /* The CPU matcher: its own laws on stock's probes (AND) and
         * postings (an OR's top k), each with its own spread; through
         * Enquire an OR adds stock's OR of no posting. */
        const double probes = (double)f.shortest * (f.n_lists > 1 ? f.n_lists - 1 : 1);
        const double cpu = f.is_and ? m.cpu_and_scale * pow(1 + probes, m.cpu_and_exponent) *
                                          m.cpu_and_spread
                                    : m.cpu_or_scale * pow(1 + (double)f.sum, m.cpu_or_exponent) *
                                          m.cpu_or_spread;
        CHECK(fabs(xg_cost_cpu_seconds_p90(&m, &f, 0) - cpu) <= 1e-12 * cpu,
              "cpu p90 = its operator's law * its spread");
        /* An OR's top k with its exact count: its own law and spread. */
        const double counted =
            f.is_and ? cpu
                     : m.cpu_or_count_scale *
                           pow(1 + (double)f.sum, m.cpu_or_count_exponent) *
                           m.cpu_or_count_spread;
        CHECK(fabs(xg_cost_cpu_seconds_p90(&m, &f, 1) - counted) <=
                  1e-12 * counted,
              "counted: an OR's own law, an AND's unchanged");
        struct xg_cost_model same = m;
        xg_cost_model_cpu_as_stock(&same);
        xg_cost_model_cpu_or_as_stock(&same);
        xg_cost_model_cpu_or_count_as_stock(&same);
        const double sp = xg_cost_stock_seconds_p90(&m, &f);
        CHECK(fabs(xg_cost_cpu_seconds_p90(&same, &f, 0) - sp) <= 1e-12 * sp &&
                  fabs(xg_cost_cpu_seconds_p90(&same, &f, 1) - sp) <= 1e-12 * sp,
              "priced as stock");
        if (!f.is_and) {
            CHECK(fabs(xg_cost_cpu_or_enquire_p90(&m, &f) - (cpu + m.stock_or_scale)) <=
                      1e-12 * (cpu + m.stock_or_scale),
                  "through Enquire: plus stock's OR of no posting");
            CHECK(xg_cost_cpu_or_enquire_p90(&same, &f) > sp,
                  "priced as stock's OR, never below it through Enquire");
        }
        /* The GPU: the wait, the batches ahead, its own batch. */
        const double bs = rnd(1e-4, 1e-2), wait = rnd(0, 2e-3);
        const uint64_t bw = 1 + rng_below(1u << 27);
        const double own = m.gpu_batch + m.gpu_per_posting *
                                             (double)xg_cost_gpu_work(&f);
        CHECK(fabs(xg_cost_gpu_seconds(&m, &f, 0, bw, 0, bs, wait) - (wait + own)) <
                  1e-15, "idle GPU");
        CHECK(fabs(xg_cost_gpu_seconds(&m, &f, 3 * bw, bw, 1, bs, wait) -
                   (wait + 4 * bs + own)) < 1e-12, "a batch running, 3 full queued");
        CHECK(xg_cost_gpu_work(&f) == (f.is_and ? f.shortest : f.sum), "work");
    }
    group_ok("stock p90 = median * spread; the CPU matcher's; GPU behind its queue");

    /* The file: saved and loaded back equal; an older file (no cpu_ keys)
     * prices the CPU matcher as its stock AND; two of three is an error. */
    char dir[] = "/tmp/test_cost_model.XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "temporary folder");
    char path[64];
    snprintf(path, sizeof path, "%s/m", dir);
    struct xg_cost_model a, b;
    xg_cost_model_default(&a);
    a.stock_and_scale = 2e-5;
    a.cpu_and_scale = 3e-6;
    a.cpu_and_exponent = 0.25;
    a.cpu_and_spread = 1.5;
    a.cpu_or_scale = 5e-6;
    a.cpu_or_exponent = 0.3;
    a.cpu_or_spread = 2.5;
    a.cpu_or_count_scale = 7e-6;
    a.cpu_or_count_exponent = 0.4;
    a.cpu_or_count_spread = 3.5;
    CHECK(xg_cost_model_save(path, &a, "test") == XG_OK, "save");
    CHECK(xg_cost_model_load(path, &b) == XG_OK, "load");
    CHECK(fabs(b.cpu_and_scale - 3e-6) < 1e-12 && fabs(b.cpu_and_exponent - 0.25) < 1e-9 &&
              fabs(b.cpu_and_spread - 1.5) < 1e-9 && fabs(b.stock_and_scale - 2e-5) < 1e-12,
          "round trip");
    CHECK(fabs(b.cpu_or_scale - 5e-6) < 1e-12 && fabs(b.cpu_or_exponent - 0.3) < 1e-9 &&
              fabs(b.cpu_or_spread - 2.5) < 1e-9,
          "round trip of the OR law");
    CHECK(fabs(b.cpu_or_count_scale - 7e-6) < 1e-12 &&
              fabs(b.cpu_or_count_exponent - 0.4) < 1e-9 &&
              fabs(b.cpu_or_count_spread - 3.5) < 1e-9,
          "round trip of the counted OR law");
    static const char *const old =
        "stock_or_scale 1e-6\nstock_or_exponent 0.5\nstock_and_scale 4e-5\n"
        "stock_and_exponent 0.2\nstock_or_spread 2\nstock_and_spread 3\n"
        "gpu_batch 1e-4\ngpu_per_posting 1e-9\n";
    FILE *fp = fopen(path, "w");
    CHECK(fp && fputs(old, fp) >= 0 && fclose(fp) == 0, "write an older file");
    CHECK(xg_cost_model_load(path, &b) == XG_OK, "an older file loads");
    CHECK(b.cpu_and_scale == 4e-5 && b.cpu_and_exponent == 0.2 && b.cpu_and_spread == 3,
          "an older file prices the CPU matcher as its stock AND");
    CHECK(b.cpu_or_scale == 1e-6 && b.cpu_or_exponent == 0.5 && b.cpu_or_spread == 2,
          "and its OR's top k as its stock OR");
    CHECK(b.cpu_or_count_scale == 1e-6 && b.cpu_or_count_exponent == 0.5 &&
              b.cpu_or_count_spread == 2,
          "and its counted OR as its stock OR");
    fp = fopen(path, "w");
    CHECK(fp && fprintf(fp, "%scpu_and_scale 1e-6\ncpu_and_spread 2\n", old) > 0 &&
              fclose(fp) == 0, "write a file with two of three");
    b = a;
    CHECK(xg_cost_model_load(path, &b) == XG_ERR_FORMAT, "two of three keys: an error");
    CHECK(strstr(xg_last_error(), "go together") != NULL, "the error names the keys");
    CHECK(b.cpu_and_scale == a.cpu_and_scale, "untouched on error");
    fp = fopen(path, "w");
    CHECK(fp && fprintf(fp, "%scpu_or_scale 1e-6\ncpu_or_exponent 0.5\n", old) > 0 &&
              fclose(fp) == 0, "write a file with two of the OR's three");
    CHECK(xg_cost_model_load(path, &b) == XG_ERR_FORMAT &&
              strstr(xg_last_error(), "cpu_or_scale") != NULL,
          "two of the OR's three keys: an error naming them");
    fp = fopen(path, "w");
    CHECK(fp && fprintf(fp, "%scpu_or_count_spread 2\n", old) > 0 &&
              fclose(fp) == 0, "write a file with one of the counted OR's three");
    CHECK(xg_cost_model_load(path, &b) == XG_ERR_FORMAT &&
              strstr(xg_last_error(), "cpu_or_count_scale") != NULL,
          "one of the counted OR's three keys: an error naming them");
    unlink(path);
    rmdir(dir);
    group_ok("model file: round trip, older files, partial CPU keys");

    /* Learning: nothing learned is a factor of 1; a side measured at twice
     * its price converges to 2, the other sides and operators untouched;
     * one observation moves the mean by 1/32 of the gap; a wild one is
     * clamped to e^3; nonsense (0 or negative) is ignored. */
    struct xg_cost_learned l;
    memset(&l, 0, sizeof l);
    CHECK(xg_cost_learned_factor(&l, XG_COST_CPU, 1) == 1, "nothing learned");
    xg_cost_learn(&l, XG_COST_STOCK, 0, 1e-4, 1e-4 * exp(1));
    CHECK(fabs(xg_cost_learned_factor(&l, XG_COST_STOCK, 0) - exp(1.0 / 32)) < 1e-12,
          "one observation: 1/32 of the way");
    for (int i = 0; i < 2000; ++i) xg_cost_learn(&l, XG_COST_CPU, 1, 3e-5, 6e-5);
    CHECK(fabs(xg_cost_learned_factor(&l, XG_COST_CPU, 1) - 2) < 1e-9,
          "converges to the measured ratio");
    CHECK(xg_cost_learned_seen(&l, XG_COST_CPU, 1) == 2000, "counted");
    CHECK(xg_cost_learned_factor(&l, XG_COST_CPU, 0) == 1 &&
              xg_cost_learned_seen(&l, XG_COST_STOCK, 1) == 0,
          "other operators untouched");
    for (int i = 0; i < 2000; ++i) xg_cost_learn(&l, XG_COST_STOCK, 1, 1e-6, 1);
    CHECK(fabs(xg_cost_learned_factor(&l, XG_COST_STOCK, 1) - exp(3)) < 1e-6,
          "clamped at e^3");
    xg_cost_learn(&l, XG_COST_CPU, 1, 0, 1);
    xg_cost_learn(&l, XG_COST_CPU, 1, 1, -1);
    xg_cost_learn(&l, XG_COST_SIDES, 1, 1, 2);
    CHECK(xg_cost_learned_seen(&l, XG_COST_CPU, 1) == 2000, "nonsense ignored");
    group_ok("learning: factor, convergence, clamp, independence");
    printf("%d passed, 0 failed\n", n_passed);
    return 0;
}
