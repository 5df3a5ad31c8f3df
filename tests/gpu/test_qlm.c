/** @file test_qlm.c
 *  @brief The qlm pipeline's GPU engine against its CPU twin: every
 *         n-gram and row bit for bit (term ids, row offsets, docids,
 *         probabilities as IEEE bits, the four counts) for sigma 1, 2, 4
 *         and 8, both sorts, in core and with tiny --device-memory budgets
 *         (many chunks), on random collections (one-word documents, blank
 *         runs, 245-byte words, external docids) and on every
 *         ../shared/ir-data collection; then qlm-search's GPU scorer
 *         against xg_qlm_score_ref (same hits, same score bits, same
 *         order).  --bench: seed 000 §5.1 synthetic collections end to end
 *         (input in host memory to the table in host memory), GPU (warm-up,
 *         median of 3, cudaEvent steps) against the twin on all cores, the
 *         step breakdown (seed 002 fig. 6), and prefix doubling against the
 *         plain sort of sigma-word keys.  Exits 77 without a CUDA device.
 *
 *  DESIGN.md: "for every kernel a plain-C reference twin that computes the
 *  same thing on the CPU ... what GPU tests compare against".
 *  usage: test_qlm [--seed N] [--ir-data DIR]
 *         test_qlm --bench MB[,MB...] [--sigmas 2,4,8] [--cpu-runs N]
 */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../gpu/runtime/error.h"
#include "../../gpu/qlm/qlm.h"
#include "../../gpu/qlm/qlm_score.h"
#include "../../plugin/cli/qlm_out.h"
#include "../../gpu/qlm/qlm_table.h"
#include "../../gpu/weight/wt_int.h"
#include "../../gpu/text/tokenize.h"
#include "../test_util.h"
#include "pipeline_test.h"

static int failed;

/* ---- comparison ---------------------------------------------------- */

/* 0 when b (GPU) equals a (CPU twin) bit for bit; else prints the first
 * difference. */
static int compare(const char *name, const struct xg_qlm_result *a,
                   const struct xg_qlm_result *b)
{
    if (a->n_terms != b->n_terms || a->n_docs != b->n_docs ||
        a->total_length != b->total_length)
        DIFF("terms %u vs %u, docs %llu vs %llu", a->n_terms, b->n_terms,
             (unsigned long long)a->n_docs, (unsigned long long)b->n_docs);
    if (a->n_grams != b->n_grams || a->n_rows != b->n_rows)
        DIFF("cpu %llu n-grams %llu rows, gpu %llu n-grams %llu rows",
             (unsigned long long)a->n_grams, (unsigned long long)a->n_rows,
             (unsigned long long)b->n_grams, (unsigned long long)b->n_rows);
    if ((a->counts != NULL) != (b->counts != NULL)) DIFF("counts kept by one engine only");
    /* The dictionary: the same terms in the same (byte) order. */
    for (uint32_t t = 0; t < a->n_terms; ++t)
        if (a->term_len[t] != b->term_len[t] ||
            memcmp(a->term[t], b->term[t], a->term_len[t]))
            DIFF("term %u: '%.*s' vs '%.*s'", t, (int)a->term_len[t], a->term[t],
                 (int)b->term_len[t], b->term[t]);
    for (uint64_t w = 0; w < a->total_length; ++w)
        if (a->ids[w] != b->ids[w])
            DIFF("word %llu: term %u vs %u", (unsigned long long)w, a->ids[w], b->ids[w]);
    for (uint64_t g = 0; g < a->n_grams; ++g) {
        const uint32_t n = a->gram_n[g];
        if (b->gram_n[g] != n || a->gram_off[g + 1] != b->gram_off[g + 1])
            DIFF("n-gram %llu: n %u vs %u, rows end %llu vs %llu", (unsigned long long)g, n,
                 b->gram_n[g], (unsigned long long)a->gram_off[g + 1],
                 (unsigned long long)b->gram_off[g + 1]);
        for (uint32_t i = 0; i < n; ++i)
            if (a->ids[a->gram_pos[g] + i] != b->ids[b->gram_pos[g] + i])
                DIFF("n-gram %llu (n = %u): word %u is term %u vs %u",
                     (unsigned long long)g, n, i, a->ids[a->gram_pos[g] + i],
                     b->ids[b->gram_pos[g] + i]);
        for (uint64_t r = a->gram_off[g]; r < a->gram_off[g + 1]; ++r) {
            uint64_t x, y;
            memcpy(&x, &a->prob[r], 8);
            memcpy(&y, &b->prob[r], 8);
            int same = a->docids[r] == b->docids[r] && x == y;
            for (int k = 0; same && a->counts && k < 4; ++k)
                same = a->counts[4 * r + k] == b->counts[4 * r + k];
            if (same) continue;
            printf("FAIL %s: n-gram %llu (n = %u), row %llu:\n", name, (unsigned long long)g,
                   n, (unsigned long long)r);
            for (int e = 0; e < 2; ++e) {
                const struct xg_qlm_result *z = e ? b : a;
                printf("  %s docid %u P %.17g (0x%016llx)", e ? "gpu     " : "cpu twin",
                       z->docids[r], z->prob[r], (unsigned long long)(e ? y : x));
                if (z->counts)
                    printf(" counts %llu %llu %llu %llu",
                           (unsigned long long)z->counts[4 * r],
                           (unsigned long long)z->counts[4 * r + 1],
                           (unsigned long long)z->counts[4 * r + 2],
                           (unsigned long long)z->counts[4 * r + 3]);
                printf("\n");
            }
            return 1;
        }
    }
    return 0;
}

static struct xg_qlm_opts base_opts(uint32_t sigma)
{
    struct xg_qlm_opts o;
    memset(&o, 0, sizeof o);
    o.sigma = sigma;
    o.lambda = 0.5;
    o.counts = 1;
    return o;
}

/* Both engines on one input; the GPU must answer. */
static void check(const char *name, const struct xg_text *in, struct xg_qlm_opts o)
{
    struct xg_qlm_result a, b;
    o.engine = XG_QLM_CPU;
    if (xg_qlm_run(in, &o, &a)) {
        printf("FAIL %s: cpu twin: %s\n", name, xg_last_error());
        ++failed;
        return;
    }
    o.engine = XG_QLM_GPU;
    if (xg_qlm_run(in, &o, &b)) {
        printf("FAIL %s: gpu: %s\n", name, xg_last_error());
        ++failed;
        xg_qlm_result_free(&a);
        return;
    }
    int bad = compare(name, &a, &b);
    if (!bad && b.engine != XG_QLM_GPU) {
        printf("FAIL %s: engine gpu did not run on the GPU\n", name);
        bad = 1;
    }
    /* In core the GPU engine builds the dictionary on the device (words
     * of at most 256 bytes, no 64-bit hash shared) unless told not to. */
    if (!bad && !o.device_memory && !o.host_dictionary && !b.dict_on_gpu) {
        printf("FAIL %s: the GPU dictionary was not used (%s)\n", name, xg_last_error());
        bad = 1;
    }
    if (!bad && (o.device_memory || o.host_dictionary) && b.dict_on_gpu) {
        printf("FAIL %s: the GPU dictionary ran where the host's was asked for\n", name);
        bad = 1;
    }
    if (bad) ++failed;
    else {
        ++n_passed;
        printf("ok   %-40s %9llu rows %8llu n-grams %4u chunks\n", name,
               (unsigned long long)b.n_rows, (unsigned long long)b.n_grams, b.n_chunks);
    }
    xg_qlm_result_free(&a);
    xg_qlm_result_free(&b);
}

/* sigma 1, 2, 4, 8: doubling and the key sort in core, and both under
 * the budgets given (0: skipped). */
static void sigmas(const char *name, const struct xg_text *in, uint64_t tiny,
                   uint64_t some, double lambda)
{
    static const uint32_t S[] = {1, 2, 4, 8};
    char nm[200];
    for (size_t i = 0; i < sizeof S / sizeof *S; ++i) {
        struct xg_qlm_opts o = base_opts(S[i]);
        o.lambda = lambda;
        snprintf(nm, sizeof nm, "%s sigma %u", name, S[i]);
        check(nm, in, o);
        o.sort = XG_QLM_SORT_COMPARE;
        snprintf(nm, sizeof nm, "%s sigma %u keys", name, S[i]);
        check(nm, in, o);
        o.sort = XG_QLM_SORT_DOUBLING;
        if (S[i] == 2) {
            o.host_dictionary = 1;
            snprintf(nm, sizeof nm, "%s sigma %u host dictionary", name, S[i]);
            check(nm, in, o);
            o.host_dictionary = 0;
        }
        if (tiny) {
            o.device_memory = tiny;
            snprintf(nm, sizeof nm, "%s sigma %u tiny budget", name, S[i]);
            check(nm, in, o);
        }
        if (some) {
            o.device_memory = some;
            o.sort = XG_QLM_SORT_COMPARE;
            o.counts = 0;
            snprintf(nm, sizeof nm, "%s sigma %u keys chunked", name, S[i]);
            check(nm, in, o);
        }
    }
}

/* ---- qlm-search: the GPU scorer against the twin -------------------- */

static void search_case(const char *name, const struct xg_text *in, uint32_t sigma,
                        char **queries, uint32_t n_queries);

/* ---- random collections -------------------------------------------- */

/* Load a generated text as `qlm --text` does (the loader's checks and
 * document count). */
static int load(const struct text *t, struct xg_text *in)
{
    char path[] = "/tmp/test_qlm_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return XG_ERR_IO;
    int ok = write(fd, t->b, t->len) == (ssize_t)t->len;
    close(fd);
    int rc = ok ? xg_text_load(path, 2, in) : XG_ERR_IO;
    unlink(path);
    return rc;
}

static void random_cases(void)
{
    static const struct shape shapes[] = {
        {1, 1, 1, 1, 0, 0},         /* one document of one word */
        {40, 3, 2, 1, 0, 1},        /* two words, many equal n-grams */
        {50, 30, 40, 3, 0, 1},      /* few terms, repeated words */
        {400, 200, 3000, 8, 1, 1},  /* 245-byte words, blank runs */
        {3000, 60, 20000, 12, 0, 0},
    };
    char name[96];
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; ++i) {
        struct text t = {0};
        size_t max_doc = 0;
        gen_random(&shapes[i], &t, &max_doc);
        struct xg_text in;
        if (load(&t, &in)) {
            printf("FAIL random %zu: %s\n", i, xg_last_error());
            ++failed;
            free(t.b);
            continue;
        }
        /* A chunk of about one largest document (bytes >= words). */
        const uint64_t tiny = 48 * (uint64_t)max_doc;
        const uint64_t some = 48 * (in.len / 2 / 5 > max_doc ? in.len / 2 / 5 : max_doc);
        snprintf(name, sizeof name, "random %zu", i);
        sigmas(name, &in, tiny, some, i & 1 ? 0.3 : 0.5);
        /* External docids (as --tsv gives them), lambda 1. */
        in.docids = malloc((in.n_docs + 1) * sizeof *in.docids);
        for (uint64_t d = 0; d < in.n_docs; ++d) in.docids[d] = (uint32_t)(3 * d + 2);
        struct xg_qlm_opts o = base_opts(3);
        o.lambda = 1;
        snprintf(name, sizeof name, "random %zu docids, sigma 3, lambda 1", i);
        check(name, &in, o);
        o.device_memory = tiny;
        snprintf(name, sizeof name, "random %zu docids, sigma 3, tiny budget", i);
        check(name, &in, o);
        free(in.docids);
        in.docids = NULL;
        if (i == 2) {
            char *q[] = {"a", "b c", "aa ab ba", "abc abc abc", "zzz a", "d dd ddd a b c"};
            snprintf(name, sizeof name, "random %zu", i);
            search_case(name, &in, 2, q, 6);
        }
        xg_text_free(&in);
        free(t.b);
    }
}

/* ---- ir-data -------------------------------------------------------- */

/* The collection's queries (queries.tsv: qid<TAB>text), at most max. */
static uint32_t read_queries(const char *path, char ***out, uint32_t max)
{
    FILE *f = fopen(path, "r");
    char line[65536];
    uint32_t n = 0;
    *out = calloc(max + 1, sizeof **out);
    while (f && n < max && fgets(line, sizeof line, f)) {
        char *tab = strchr(line, '\t');
        if (!tab) continue;
        line[strcspn(line, "\n")] = 0;
        (*out)[n++] = strdup(tab + 1);
    }
    if (f) fclose(f);
    return n;
}

/* Words of the longest document of a loaded text (lines between empty
 * lines). */
static uint64_t max_doc_words(const struct xg_text *in)
{
    uint64_t best = 0, cur = 0;
    for (size_t i = 0; i < in->len; ++i) {
        if (in->buf[i] != '\n') continue;
        if (i > 0 && in->buf[i - 1] != '\n') ++cur;
        else cur = 0;
        if (cur > best) best = cur;
    }
    return best;
}

static void ir_data(const char *dir)
{
    static const char *const colls[] = {"adi", "cacm", "cisi", "cranfield", "lisa",
                                        "med", "time"};
    for (size_t i = 0; i < sizeof colls / sizeof *colls; ++i) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s/docs.tsv", dir, colls[i]);
        struct xg_text in;
        if (access(path, R_OK)) { printf("--   %s: no %s\n", colls[i], path); continue; }
        if (xg_text_load_tsv(path, &in)) {
            printf("FAIL %s: %s\n", colls[i], xg_last_error());
            ++failed;
            continue;
        }
        /* About 40 chunks, and about 6 (words: at least 2 bytes each). */
        const uint64_t words = in.len / 6, big = max_doc_words(&in);
        sigmas(colls[i], &in, 48 * (words / 40 > big ? words / 40 : big),
               48 * (words / 6 > big ? words / 6 : big), 0.5);
        char **q;
        snprintf(path, sizeof path, "%s/%s/queries.tsv", dir, colls[i]);
        const uint32_t nq = read_queries(path, &q, 100);
        if (nq) {
            search_case(colls[i], &in, 1, q, nq);
            search_case(colls[i], &in, 2, q, nq);
        }
        for (uint32_t k = 0; k < nq; ++k) free(q[k]);
        free(q);
        xg_text_free(&in);
    }
}

/* ---- qlm-search ----------------------------------------------------- */

/* Both scorers on every query at k = 10 and 1000: the same hits, the same
 * order, the same score bits. */
static void search_case(const char *name, const struct xg_text *in, uint32_t sigma,
                        char **queries, uint32_t n_queries)
{
    char nm[200], path[] = "/tmp/test_qlm_tab_XXXXXX";
    snprintf(nm, sizeof nm, "%s qlm-search sigma %u (%u queries)", name, sigma, n_queries);
    struct xg_qlm_opts o = base_opts(sigma);
    o.engine = XG_QLM_GPU;
    struct xg_qlm_result r;
    struct xg_qlm_table t;
    xg_qlm_scorer_gpu *s = NULL;
    int fd = mkstemp(path);
    if (fd >= 0) close(fd);
    int rc = fd < 0 ? XG_ERR_IO : xg_qlm_run(in, &o, &r);
    if (!rc) {
        rc = xg_qout_write(path, 1, &r, o.lambda);
        xg_qlm_result_free(&r);
    }
    if (!rc) rc = xg_qlm_table_load(path, &t);
    unlink(path);
    if (!rc && (rc = xg_qlm_score_gpu_open(&t, &s))) xg_qlm_table_free(&t);
    if (rc) {
        printf("FAIL %s: %s\n", nm, xg_last_error());
        ++failed;
        return;
    }
    uint64_t hits = 0;
    int bad = 0;
    for (uint32_t q = 0; q < n_queries && !bad; ++q)
        for (uint32_t k = 10; k <= 1000 && !bad; k *= 100) {
            struct xg_qlm_hit *a = NULL, *b = NULL;
            uint32_t na = 0, nb = 0;
            if (xg_qlm_score_ref(&t, queries[q], k, &a, &na) ||
                xg_qlm_score_gpu(s, &t, queries[q], k, &b, &nb)) {
                printf("FAIL %s: query '%s': %s\n", nm, queries[q], xg_last_error());
                bad = 1;
            }
            for (uint32_t i = 0; !bad && i < (na > nb ? na : nb); ++i) {
                uint64_t x = 0, y = 0;
                if (i < na) memcpy(&x, &a[i].score, 8);
                if (i < nb) memcpy(&y, &b[i].score, 8);
                if (i < na && i < nb && a[i].docid == b[i].docid && x == y) continue;
                printf("FAIL %s: query '%s' k %u: %u vs %u hits; at rank %u cpu docid %u "
                       "score %.17g, gpu docid %u score %.17g\n", nm, queries[q], k, na, nb,
                       i + 1, i < na ? a[i].docid : 0, i < na ? a[i].score : 0,
                       i < nb ? b[i].docid : 0, i < nb ? b[i].score : 0);
                bad = 1;
            }
            hits += na;
            free(a);
            free(b);
        }
    xg_qlm_score_gpu_close(s);
    xg_qlm_table_free(&t);
    if (bad) ++failed;
    else {
        ++n_passed;
        printf("ok   %-52s %8llu hits identical\n", nm, (unsigned long long)hits);
    }
}

/* ---- benchmark ------------------------------------------------------ */

/* Median-of-3 GPU runs (after a warm-up) of one configuration: wall
 * seconds, the median run's steps, and (keep) that run's result. */
static int gpu_runs(const struct xg_text *in, struct xg_qlm_opts o, double *wall,
                    double *steps, struct xg_qlm_result *keep)
{
    struct xg_qlm_result r;
    double w[3], st[3][XG_QLM_N_STEPS];
    o.engine = XG_QLM_GPU;
    for (int k = -1; k < 3; ++k) {
        double t0 = now();
        if (xg_qlm_run(in, &o, &r)) {
            printf("FAIL gpu: %s\n", xg_last_error());
            return 1;
        }
        if (k < 0) { xg_qlm_result_free(&r); continue; }
        w[k] = now() - t0;
        memcpy(st[k], r.seconds, sizeof r.seconds);
        if (k == 2 && keep) *keep = r;
        else xg_qlm_result_free(&r);
    }
    double s[3];
    memcpy(s, w, sizeof w);
    qsort(s, 3, sizeof *s, cmp_double);
    const int med = w[0] == s[1] ? 0 : w[1] == s[1] ? 1 : 2;
    *wall = s[1];
    memcpy(steps, st[med], sizeof st[med]);
    return 0;
}

static void print_steps(const char *what, const double *st, double wall)
{
    printf("  %-26s", what);
    for (int s = 0; s < XG_QLM_N_STEPS; ++s) printf(" %9.1f", st[s] * 1e3);
    printf(" %9.1f\n", wall * 1e3);
}

struct bench_row {
    double mb, gpu, cpu, gpu_keys;
    uint32_t sigma;
    uint64_t rows;
    int identical;
};

static int bench_one(const struct xg_text *in, uint32_t sigma, int cpu_runs,
                     struct bench_row *row)
{
    struct xg_qlm_opts o = base_opts(sigma);
    o.counts = 0;
    double wd, wk, sd[XG_QLM_N_STEPS], sk[XG_QLM_N_STEPS];
    struct xg_qlm_result g, c;
    if (gpu_runs(in, o, &wd, sd, &g)) return 1;
    o.sort = XG_QLM_SORT_COMPARE;
    if (gpu_runs(in, o, &wk, sk, NULL)) return 1;
    o.sort = XG_QLM_SORT_DOUBLING;
    o.engine = XG_QLM_CPU;
    double cpu = 1e300, sc[XG_QLM_N_STEPS];
    for (int k = 0; k < cpu_runs; ++k) {
        if (k) xg_qlm_result_free(&c);
        double t0 = now();
        if (xg_qlm_run(in, &o, &c)) { printf("FAIL cpu: %s\n", xg_last_error()); return 1; }
        double s = now() - t0;
        if (s < cpu) { cpu = s; memcpy(sc, c.seconds, sizeof sc); }
    }
    row->identical = !compare("bench", &c, &g);
    row->sigma = sigma;
    row->mb = in->len / 1e6;
    row->gpu = wd;
    row->gpu_keys = wk;
    row->cpu = cpu;
    row->rows = g.n_rows;
    printf("sigma %u: %llu words, %llu documents, %u terms, %llu n-grams, %llu rows; "
           "GPU %.3f s (median of 3; key sort %.3f s), CPU twin %.3f s on %u threads; "
           "tables %s; dictionary on the %s\n", sigma, (unsigned long long)g.total_length,
           (unsigned long long)g.n_docs, g.n_terms, (unsigned long long)g.n_grams,
           (unsigned long long)g.n_rows, wd, wk, cpu, xg_threads_cores(),
           row->identical ? "bit-identical" : "DIFFER", g.dict_on_gpu ? "GPU" : "host");
    printf("  %-26s", "ms per step");
    for (int s = 0; s < XG_QLM_N_STEPS; ++s) printf(" %9s", xg_qlm_step_names[s]);
    printf(" %9s\n", "wall");
    print_steps("GPU, prefix doubling", sd, wd);
    print_steps("GPU, sort of sigma-word keys", sk, wk);
    print_steps("CPU twin, prefix doubling", sc, cpu);
    xg_qlm_result_free(&g);
    xg_qlm_result_free(&c);
    return !row->identical;
}

static int bench(const char *sizes, const char *sigmas_arg, int cpu_runs)
{
    struct bench_row rows[64];
    int n = 0, bad = 0;
    for (const char *p = sizes; *p && n < 60;) {
        char *end;
        double mb = strtod(p, &end);
        if (mb <= 0 || end == p) break;
        p = end;
        if (*p == ',') ++p;
        struct text t = {0};
        double t0 = now();
        gen_synthetic((size_t)(mb * 1e6), &t);
        struct xg_text in = {t.b, t.len, NULL, 0, 0, NULL};
        for (size_t i = 1; i < t.len; ++i) in.n_docs += t.b[i] == '\n' && t.b[i - 1] == '\n';
        printf("\n== %.0f MB synthetic (seed 000 §5.1), %llu documents, generated in "
               "%.1f s\n", t.len / 1e6, (unsigned long long)in.n_docs, now() - t0);
        for (const char *q = sigmas_arg; *q && n < 60;) {
            const uint32_t sigma = (uint32_t)strtoul(q, &end, 10);
            if (end == q || sigma < 1 || sigma > XG_QLM_MAX_SIGMA) break;
            q = *end == ',' ? end + 1 : end;
            bad |= bench_one(&in, sigma, cpu_runs, &rows[n++]);
        }
        free(t.b);
    }
    printf("\n%8s %6s %12s %10s %12s %9s %12s %10s   (end to end, host memory to host "
           "memory; GPU: median of 3)\n", "MB", "sigma", "rows", "GPU s", "CPU twin s",
           "speedup", "GPU keys s", "identical");
    for (int i = 0; i < n; ++i)
        printf("%8.0f %6u %12llu %10.3f %12.3f %9.1f %12.3f %10s\n", rows[i].mb, rows[i].sigma,
               (unsigned long long)rows[i].rows, rows[i].gpu, rows[i].cpu,
               rows[i].cpu / rows[i].gpu, rows[i].gpu_keys, rows[i].identical ? "yes" : "NO");
    return bad;
}

int main(int argc, char **argv)
{
    uint64_t seed = (uint64_t)time(NULL);
    const char *bench_sizes = NULL, *bench_sigmas = "2,4,8";
    int cpu_runs = 1, count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count < 1) {
        printf("SKIP: no CUDA device\n");
        return 77;
    }
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--bench") && i + 1 < argc) bench_sizes = argv[++i];
        else if (!strcmp(argv[i], "--sigmas") && i + 1 < argc) bench_sigmas = argv[++i];
        else if (!strcmp(argv[i], "--cpu-runs") && i + 1 < argc) cpu_runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ir-data") && i + 1 < argc) ++i;
        else {
            fprintf(stderr, "usage: test_qlm [--seed N] [--ir-data DIR]\n"
                    "       test_qlm --bench MB[,MB...] [--sigmas 2,4,8] [--cpu-runs N]\n");
            return 2;
        }
    }
    rng_state = seed_used = seed;
    if (bench_sizes) return bench(bench_sizes, bench_sigmas, cpu_runs < 1 ? 1 : cpu_runs);
    printf("test_qlm --seed %llu (GPU vs CPU twin, bit for bit)\n", (unsigned long long)seed);
    random_cases();
    for (int i = 1; i < argc; ++i)
        if (!strcmp(argv[i], "--ir-data") && i + 1 < argc) ir_data(argv[++i]);
    printf("%d passed, %d failed; replay: --seed %llu\n", n_passed, failed,
           (unsigned long long)seed);
    return failed ? 1 : 0;
}
