/** @file test_weigh.c
 *  @brief The weight pipeline's GPU engine against its CPU twin: every
 *         output field bit for bit (terms, df offsets, docids, weights as
 *         IEEE bits) on random collections (both formulas, k2, empty
 *         documents, runs of empty lines, 1-byte and 245-byte words, a
 *         tiny --device-memory budget forcing many chunks, hash masks
 *         forcing collisions: the GPU must hand over to the twin) and on
 *         ../shared/ir-data collections.  --bench: seed 000 §5.1 synthetic
 *         collections, end to end from host memory to host memory, GPU vs
 *         the twin on all cores, with the per-step breakdown (seed 000
 *         fig. 5) and the main kernels' share of the memory bandwidth.
 *         Exits 77 when there is no CUDA device.
 *  usage: test_weigh [--seed N] [--ir-data DIR | --tsv FILE]...
 *         test_weigh --bench MB[,MB...] [--budget BYTES] [--cpu-runs N]
 */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../gpu/runtime/error.h"
#include "../../gpu/weight/wt.h"
#include "../../gpu/weight/wt_int.h"
#include "../../gpu/text/tokenize.h"
#include "../test_util.h"
#include "pipeline_test.h"

static int failed, fellback;

/* ---- comparison ---------------------------------------------------- */

static void show_term(const struct xg_wt_result *r, uint32_t t)
{
    printf("term %u '%.*s'", t, (int)(r->term_len[t] > 40 ? 40 : r->term_len[t]), r->term[t]);
}

/* 0 when b (GPU) equals a (CPU twin) bit for bit; else prints the first
 * difference. */
static int compare(const char *name, const struct xg_wt_result *a,
                   const struct xg_wt_result *b)
{
    if (a->n_docs != b->n_docs || a->total_length != b->total_length)
        DIFF("N %llu vs %llu, total length %llu vs %llu", (unsigned long long)a->n_docs,
             (unsigned long long)b->n_docs, (unsigned long long)a->total_length,
             (unsigned long long)b->total_length);
    if (a->n_terms != b->n_terms || a->n_postings != b->n_postings)
        DIFF("cpu %u terms %llu postings, gpu %u terms %llu postings", a->n_terms,
             (unsigned long long)a->n_postings, b->n_terms,
             (unsigned long long)b->n_postings);
    for (uint32_t t = 0; t < a->n_terms; ++t) {
        if (a->term_len[t] != b->term_len[t] ||
            memcmp(a->term[t], b->term[t], a->term_len[t])) {
            printf("FAIL %s: term id %u: cpu ", name, t);
            show_term(a, t);
            printf(", gpu ");
            show_term(b, t);
            printf("\n");
            return 1;
        }
        if (a->term_off[t + 1] != b->term_off[t + 1]) {
            printf("FAIL %s: ", name);
            show_term(a, t);
            printf(": df cpu %llu gpu %llu\n",
                   (unsigned long long)(a->term_off[t + 1] - a->term_off[t]),
                   (unsigned long long)(b->term_off[t + 1] - b->term_off[t]));
            return 1;
        }
    }
    for (uint32_t t = 0; t < a->n_terms; ++t)
        for (uint64_t i = a->term_off[t]; i < a->term_off[t + 1]; ++i) {
            uint64_t x, y;
            memcpy(&x, &a->weights[i], 8);
            memcpy(&y, &b->weights[i], 8);
            if (a->docids[i] == b->docids[i] && x == y) continue;
            printf("FAIL %s: first differing record %llu: ", name, (unsigned long long)i);
            show_term(a, t);
            printf("\n  cpu twin: docid %u weight %.17g (0x%016llx)\n", a->docids[i],
                   a->weights[i], (unsigned long long)x);
            printf("  gpu     : docid %u weight %.17g (0x%016llx)\n", b->docids[i],
                   b->weights[i], (unsigned long long)y);
            return 1;
        }
    return 0;
}

/* Run both engines on one input; the GPU must answer unless a hash
 * collision sent it to the twin (expect_fallback: -1 either, 1 must). */
static void check(const char *name, const struct xg_wt_input *in, struct xg_wt_opts o,
                  int expect_fallback)
{
    struct xg_wt_result a, b;
    o.engine = XG_WT_CPU;
    int rc = xg_wt_run(in, &o, &a);
    if (rc) {
        printf("FAIL %s: cpu twin: %s\n", name, xg_last_error());
        ++failed;
        return;
    }
    o.engine = XG_WT_GPU;
    rc = xg_wt_run(in, &o, &b);
    if (rc) {
        printf("FAIL %s: gpu: %s\n", name, xg_last_error());
        ++failed;
        xg_wt_result_free(&a);
        return;
    }
    int bad = compare(name, &a, &b);
    if (!bad && b.engine != XG_WT_GPU && !b.fell_back) {
        printf("FAIL %s: engine gpu ran the twin without a collision\n", name);
        bad = 1;
    }
    /* Without a forced collision the device dictionary answers, in core
     * and in chunks. */
    if (!bad && !o.hash_mask && !b.dict_on_gpu) {
        printf("FAIL %s: the dictionary was not built on the device\n", name);
        bad = 1;
    }
    /* In chunks on the device, the device places the postings, unless
     * XG_WT_NO_PLACE=1 asks for the arena or XG_TEST_EXPECT_ARENA=1 says
     * that it cannot place them (the emulation's FAKECUDA_FAIL_MAPPED). */
    const char *no_place = getenv("XG_WT_NO_PLACE"), *expect = getenv("XG_TEST_EXPECT_ARENA");
    const int arena = (no_place && no_place[0] == '1') || (expect && expect[0] == '1');
    if (!bad && b.engine == XG_WT_GPU && !b.fell_back &&
        b.placed_on_gpu != (b.n_chunks > 1 && !arena)) {
        printf("FAIL %s: %u chunks, %s\n", name, b.n_chunks,
               b.placed_on_gpu ? "placed by the device" : "not placed by the device");
        bad = 1;
    }
    if (!bad && expect_fallback == 1 && !b.fell_back) {
        printf("FAIL %s: colliding hashes not detected\n", name);
        bad = 1;
    }
    if (!bad && expect_fallback == 0 && b.fell_back) {
        printf("FAIL %s: fell back to the twin without a collision\n", name);
        bad = 1;
    }
    fellback += b.fell_back;
    if (bad) ++failed;
    else {
        ++n_passed;
        printf("ok   %-34s %8llu postings %6u terms %4u chunks%s\n", name,
               (unsigned long long)b.n_postings, b.n_terms, b.n_chunks,
               b.fell_back ? " (hash collision: twin answered)"
               : b.placed_on_gpu ? (b.dict_on_gpu ? " (device dictionary, placed)"
                                                  : " (placed)")
               : b.dict_on_gpu ? " (device dictionary)" : "");
    }
    xg_wt_result_free(&a);
    xg_wt_result_free(&b);
}

static struct xg_wt_opts base_opts(void)
{
    struct xg_wt_opts o;
    memset(&o, 0, sizeof o);
    o.formula = XG_WT_XAPIAN;
    o.bm25 = (struct xg_bm25_params){1, 0, 1, 0.5, 0.5};
    o.threads = 0;
    return o;
}

/* The default xapian formula, then seed 000's with its k1 and b. */
static void formulas(const char *name, const struct xg_wt_input *in)
{
    char nm[160];
    struct xg_wt_opts o = base_opts();
    snprintf(nm, sizeof nm, "%s xapian", name);
    check(nm, in, o, 0);
    o.formula = XG_WT_SEED;
    o.bm25.k1 = 1.2;
    o.bm25.b = 0.75;
    snprintf(nm, sizeof nm, "%s seed", name);
    check(nm, in, o, 0);
}

/* ---- random collections -------------------------------------------- */

static void random_cases(void)
{
    static const struct shape shapes[] = {
        {1, 1, 1, 1, 0, 0},         /* one document of one word */
        {50, 30, 40, 3, 0, 1},      /* few terms, repeated words */
        {400, 200, 3000, 8, 1, 1},  /* 245-byte words, blank runs */
        {3000, 60, 20000, 12, 0, 0},
    };
    char name[96];
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; ++i) {
        struct text t = {0};
        size_t max_doc = 0;
        gen_random(&shapes[i], &t, &max_doc);
        struct xg_wt_input in = {t.b, t.len, NULL, 0, NULL};
        snprintf(name, sizeof name, "random %zu", i);
        formulas(name, &in);
        struct xg_wt_opts o = base_opts();
        o.bm25.k2 = 0.3;
        o.bm25.b = 1.0;
        snprintf(name, sizeof name, "random %zu k2, b 1", i);
        check(name, &in, o, 0);
        /* A tiny budget: chunks of about two of the largest documents. */
        o = base_opts();
        o.device_memory = (uint64_t)(2 * max_doc + 2) * 54;
        snprintf(name, sizeof name, "random %zu chunked", i);
        check(name, &in, o, 0);
        /* External docids and empty documents (TSV-like). */
        uint64_t n_docs = 0;
        for (size_t p = 0; p < t.len; ++p)
            n_docs += t.b[p] != '\n' && (p == 0 || (t.b[p - 1] == '\n' && (p < 2 ||
                                                   t.b[p - 2] == '\n')));
        uint32_t *ids = malloc((n_docs + 1) * sizeof *ids);
        for (uint64_t d = 0; d < n_docs; ++d) ids[d] = (uint32_t)(3 * d + 2);
        struct xg_wt_input in2 = {t.b, t.len, ids, 7, NULL};
        o = base_opts();
        snprintf(name, sizeof name, "random %zu docids, 7 empty", i);
        check(name, &in2, o, 0);
        /* Forced collisions: 6 hash bits (certain beyond 64 terms). */
        o = base_opts();
        o.hash_mask = 0x3f0;
        snprintf(name, sizeof name, "random %zu 6-bit hash", i);
        check(name, &in, o, shapes[i].vocab > 64 ? 1 : -1);
        o.device_memory = (uint64_t)(2 * max_doc + 2) * 54;
        snprintf(name, sizeof name, "random %zu 6-bit hash chunked", i);
        check(name, &in, o, -1);
        free(ids);
        free(t.b);
    }
}

/* The twin's result in a and the GPU engine's in b, with base_opts: 0,
 * or 1 (nothing to free) after printing why. */
static int twin_and_gpu(const char *name, const struct xg_wt_input *in,
                        struct xg_wt_result *a, struct xg_wt_result *b)
{
    struct xg_wt_opts o = base_opts();
    o.engine = XG_WT_CPU;
    if (xg_wt_run(in, &o, a)) {
        printf("FAIL %s: %s\n", name, xg_last_error());
        return 1;
    }
    o.engine = XG_WT_GPU;
    if (xg_wt_run(in, &o, b)) {
        printf("FAIL %s: %s\n", name, xg_last_error());
        xg_wt_result_free(a);
        return 1;
    }
    return 0;
}

/* The device dictionary keys a word of up to 7 bytes by itself and a
 * longer one by its hash, checked byte by byte.  With that hash cut to 2
 * bits (XG_TEST_GDICT_MASK), a text of short words must still be weighed
 * there, and one with distinct long words must be refused there (then the
 * two passes answer); the output equals the twin's either way. */
static void device_dictionary_keys(void)
{
    static const struct shape shapes[] = {
        {300, 40, 3000, 7, 0, 0},   /* words of 1-7 bytes only */
        {300, 40, 3000, 12, 0, 0},  /* and of 8-12 bytes */
    };
    setenv("XG_TEST_GDICT_MASK", "3", 1);
    for (int i = 0; i < 2; ++i) {
        struct text t = {0};
        size_t max_doc = 0;
        gen_random(&shapes[i], &t, &max_doc);
        struct xg_wt_input in = {t.b, t.len, NULL, 0, NULL};
        struct xg_wt_result a, b;
        const char *name = i ? "2-bit hash, long words" : "2-bit hash, short words";
        int bad = twin_and_gpu(name, &in, &a, &b);
        if (!bad) {
            bad = compare(name, &a, &b);
            const int declined = b.dict_declined[0] != 0;
            if (!bad && i == 0 && declined) {
                printf("FAIL %s: words of up to 7 bytes refused: %s\n", name,
                       b.dict_declined);
                bad = 1;
            }
            if (!bad && i == 1 && !strstr(b.dict_declined, "share a hash")) {
                printf("FAIL %s: colliding long words not caught (%s)\n", name,
                       declined ? b.dict_declined : "weighed on the device dictionary");
                bad = 1;
            }
            if (!bad)
                printf("ok   %-34s %8llu postings %6u terms (%s)\n", name,
                       (unsigned long long)b.n_postings, b.n_terms,
                       declined ? "refused by the device dictionary" : "device dictionary");
            xg_wt_result_free(&a);
            xg_wt_result_free(&b);
        }
        if (bad) ++failed;
        else ++n_passed;
        free(t.b);
    }
    unsetenv("XG_TEST_GDICT_MASK");
}

/* Words that differ only in trailing zero bytes ("ab", "ab\0", ...) tie
 * in every round of bytes (zero-padded) and are ranked by length in a
 * last round, which the device dictionary runs only for such ties; with
 * zero bytes inside words and words of 1-20 bytes, so that hashed ones
 * take several rounds. */
static void zero_bytes_case(void)
{
    const char *name = "zero bytes in words";
    struct text t = {0};
    for (int d = 0; d < 300; ++d) {
        for (int k = 1 + (int)(rnd() % 40); k > 0; --k) {
            char w[32];
            int l = 1 + (int)(rnd() % 20);
            for (int i = 0; i < l; ++i) w[i] = rnd() % 5 ? "ab"[rnd() & 1] : '\0';
            for (int z = (int)(rnd() % 4); z > 0 && l < 31; --z) w[l++] = '\0';
            w[l++] = '\n';
            put(&t, w, (size_t)l);
        }
        put(&t, "\n", 1);
    }
    struct xg_wt_input in = {t.b, t.len, NULL, 0, NULL};
    struct xg_wt_result a, b;
    int bad = twin_and_gpu(name, &in, &a, &b);
    if (!bad) {
        bad = compare(name, &a, &b);
        if (!bad && b.dict_declined[0]) {
            printf("FAIL %s: refused by the device dictionary: %s\n", name, b.dict_declined);
            bad = 1;
        }
        if (!bad)
            printf("ok   %-34s %8llu postings %6u terms (device dictionary)\n", name,
                   (unsigned long long)b.n_postings, b.n_terms);
        xg_wt_result_free(&a);
        xg_wt_result_free(&b);
    }
    if (bad) ++failed;
    else ++n_passed;
    free(t.b);
}

static void tsv_case(const char *path, const char *name)
{
    struct xg_text in;
    if (xg_text_load_tsv(path, &in)) {
        printf("FAIL %s: %s\n", name, xg_last_error());
        ++failed;
        return;
    }
    struct xg_wt_input wi = {in.buf, in.len, in.docids, in.n_empty, in.path};
    formulas(name, &wi);
    char nm[160];
    struct xg_wt_opts o = base_opts();
    o.device_memory = 4 << 20;
    snprintf(nm, sizeof nm, "%s 4 MiB budget", name);
    check(nm, &wi, o, 0);
    xg_text_free(&in);
}

static void ir_data(const char *dir)
{
    static const char *const colls[] = {"adi", "cacm", "cisi", "cranfield", "lisa",
                                        "med", "time"};
    for (size_t i = 0; i < sizeof colls / sizeof *colls; ++i) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s/docs.tsv", dir, colls[i]);
        FILE *f = fopen(path, "rb");
        if (!f) { printf("--   %s: no %s\n", colls[i], path); continue; }
        fclose(f);
        tsv_case(path, colls[i]);
    }
}

/* ---- benchmark ------------------------------------------------------ */

/* GPU runs per size after the warm-up, of which the median counts
 * (METHOD.md: repeat, take the median); the slowest is shown too. */
#define BENCH_RUNS 9

struct bench_row {
    double mb, gpu_gbs, gpu_slow_gbs, cpu_gbs;
    uint32_t chunks;
    int identical;
};

static double peak_bandwidth(void)
{
    int clock_khz = 0, bus = 0;
    if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, 0) ||
        cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, 0))
        return 0;
    return 2.0 * clock_khz * 1e3 * (bus / 8.0);
}

static int bench_one(double mb, uint64_t budget, int cpu_runs, struct bench_row *row)
{
    struct text t = {0};
    double t0 = now();
    gen_synthetic((size_t)(mb * 1e6), &t);
    printf("\n== %.0f MB synthetic (seed 000 §5.1), generated in %.1f s\n", mb, now() - t0);
    struct xg_wt_input in = {t.b, t.len, NULL, 0, NULL};
    struct xg_wt_opts o = base_opts();
    o.formula = XG_WT_SEED;
    o.bm25.k1 = 1.2;
    o.bm25.b = 0.75;
    o.device_memory = budget;
    o.engine = XG_WT_GPU;
    struct xg_wt_result g, c;
    t0 = now();
    if (xg_wt_run(&in, &o, &g)) {          /* warm-up */
        printf("FAIL gpu: %s\n", xg_last_error());
        return 1;
    }
    printf("warm-up run %.3f s (the process's first also pays for the CUDA context and "
           "the pinned staging)\n", now() - t0);
    xg_wt_result_free(&g);
    double wall[BENCH_RUNS], step[BENCH_RUNS][XG_WT_N_STEPS], bytes[XG_WT_N_STEPS];
    xg_wt_gpu_traffic(bytes, 1);
    for (int k = 0; k < BENCH_RUNS; ++k) {
        t0 = now();
        if (xg_wt_run(&in, &o, &g)) { printf("FAIL gpu: %s\n", xg_last_error()); return 1; }
        wall[k] = now() - t0;
        memcpy(step[k], g.seconds, sizeof g.seconds);
        if (k + 1 < BENCH_RUNS) xg_wt_result_free(&g);
    }
    xg_wt_gpu_traffic(bytes, 1);
    double sorted[BENCH_RUNS];
    memcpy(sorted, wall, sizeof wall);
    qsort(sorted, BENCH_RUNS, sizeof *sorted, cmp_double);
    const double median = sorted[BENCH_RUNS / 2];
    int med = 0;
    while (wall[med] != median) ++med;
    o.engine = XG_WT_CPU;
    double cpu = 1e300;
    for (int k = 0; k < cpu_runs; ++k) {
        if (k) xg_wt_result_free(&c);
        t0 = now();
        if (xg_wt_run(&in, &o, &c)) { printf("FAIL cpu: %s\n", xg_last_error()); return 1; }
        double s = now() - t0;
        if (s < cpu) cpu = s;
    }
    row->identical = !compare("bench", &c, &g);
    row->mb = t.len / 1e6;
    row->gpu_gbs = t.len / median / 1e9;
    row->gpu_slow_gbs = t.len / sorted[BENCH_RUNS - 1] / 1e9;
    row->cpu_gbs = t.len / cpu / 1e9;
    row->chunks = g.n_chunks;
    const double peak = peak_bandwidth();
    printf("%llu words, %llu documents, %u terms, %llu postings, %u chunks; GPU run "
           "%.3f s (median of %d; fastest %.3f, slowest %.3f), CPU twin %.3f s on %u "
           "threads; outputs %s; %s%s\n",
           (unsigned long long)g.total_length, (unsigned long long)g.n_docs, g.n_terms,
           (unsigned long long)g.n_postings, g.n_chunks, median, BENCH_RUNS, sorted[0],
           sorted[BENCH_RUNS - 1], cpu, xg_threads_cores(),
           row->identical ? "bit-identical" : "DIFFER",
           g.dict_on_gpu ? "dictionary on the GPU" : "host dictionary: ", g.dict_declined);
    if (g.n_chunks > 1)
        printf("postings %s\n", g.placed_on_gpu ? "placed by the device"
                                                : "gathered by the host from the arena");
    printf("%-10s %9s %6s %10s %8s %7s   (GPU steps: cudaEvent time, both passes; "
           "host steps: wall)\n", "step", "ms", "%", "est. MB", "GB/s", "% peak");
    double total = 0;
    for (int s = 0; s < XG_WT_N_STEPS; ++s) total += step[med][s];
    for (int s = 0; s < XG_WT_N_STEPS; ++s) {
        double sec = step[med][s], b = bytes[s] / BENCH_RUNS;
        printf("%-10s %9.2f %6.1f", xg_wt_step_names[s], sec * 1e3,
               total > 0 ? 100 * sec / total : 0);
        if (b > 0 && sec > 0)
            printf(" %10.1f %8.1f %7.1f", b / 1e6, b / sec / 1e9,
                   peak > 0 ? 100 * b / sec / peak : 0);
        printf("\n");
    }
    printf("%-10s %9.2f   (peak memory bandwidth %.0f GB/s from the memory clock "
           "and bus width; est. MB: least bytes the step's kernels must move)\n",
           "sum", total * 1e3, peak / 1e9);
    xg_wt_result_free(&g);
    xg_wt_result_free(&c);
    free(t.b);
    return !row->identical;
}

static int bench(const char *sizes, uint64_t budget, int cpu_runs)
{
    struct bench_row rows[32];
    int n = 0, bad = 0;
    for (const char *p = sizes; *p && n < 32;) {
        char *end;
        double mb = strtod(p, &end);
        if (mb <= 0 || end == p) break;
        p = end;
        bad |= bench_one(mb, budget, cpu_runs, &rows[n++]);
        if (*p == ',') ++p;
    }
    printf("\n%8s %12s %9s %16s %8s %7s %10s   (end to end: input in host memory to "
           "output in host memory; GPU: median of %d runs, and the slowest; budget %s)\n",
           "MB", "GB/s GPU", "slowest", "GB/s CPU twin", "speedup", "chunks", "identical",
           BENCH_RUNS, budget ? "as given" : "90% of free");
    for (int i = 0; i < n; ++i)
        printf("%8.0f %12.3f %9.3f %16.3f %8.1f %7u %10s\n", rows[i].mb, rows[i].gpu_gbs,
               rows[i].gpu_slow_gbs, rows[i].cpu_gbs, rows[i].gpu_gbs / rows[i].cpu_gbs,
               rows[i].chunks, rows[i].identical ? "yes" : "NO");
    return bad;
}

int main(int argc, char **argv)
{
    uint64_t seed = (uint64_t)time(NULL), budget = 0;
    const char *bench_sizes = NULL;
    int cpu_runs = 1;
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count < 1) {
        printf("SKIP: no CUDA device\n");
        return 77;
    }
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--bench") && i + 1 < argc) bench_sizes = argv[++i];
        else if (!strcmp(argv[i], "--budget") && i + 1 < argc)
            budget = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--cpu-runs") && i + 1 < argc) cpu_runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ir-data") || !strcmp(argv[i], "--tsv")) {
            if (i + 1 >= argc) break;
            ++i;
        } else {
            fprintf(stderr, "usage: test_weigh [--seed N] [--ir-data DIR | --tsv FILE]...\n"
                    "       test_weigh --bench MB[,MB...] [--budget BYTES] [--cpu-runs N]\n");
            return 2;
        }
    }
    rng_state = seed_used = seed;
    if (bench_sizes) return bench(bench_sizes, budget, cpu_runs < 1 ? 1 : cpu_runs);
    printf("test_weigh --seed %llu (GPU vs CPU twin, bit for bit)\n",
           (unsigned long long)seed);
    random_cases();
    device_dictionary_keys();
    zero_bytes_case();
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--ir-data") && i + 1 < argc) ir_data(argv[++i]);
        else if (!strcmp(argv[i], "--tsv") && i + 1 < argc) {
            tsv_case(argv[i + 1], argv[i + 1]);
            ++i;
        }
    }
    printf("%d passed, %d failed (%d answered by the twin after a hash collision); "
           "replay: --seed %llu\n", n_passed, failed, fellback, (unsigned long long)seed);
    return failed ? 1 : 0;
}
