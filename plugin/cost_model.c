/** @file cost_model.c
 *  @brief The planner's cost model: features, predictions, the model file
 *         and the fit `xapian-gpu calibrate` uses (see cost_model.h).
 *
 *  File format: text, one `key value` per line, `#` comments:
 *      stock_or_scale 6.5e-06
 *      stock_or_exponent 0.54
 *      ...
 *  Unknown keys are an error (a typo must not silently keep a default);
 *  the keys of the linear model calibrate wrote before are named as such.
 */
#include "cost_model.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../gpu/runtime/error.h"
#include "../gpu/runtime/outfile.h"

void xg_cost_model_cpu_as_stock(struct xg_cost_model *m)
{
    m->cpu_and_scale = m->stock_and_scale;
    m->cpu_and_exponent = m->stock_and_exponent;
    m->cpu_and_spread = m->stock_and_spread;
}

void xg_cost_model_cpu_or_as_stock(struct xg_cost_model *m)
{
    m->cpu_or_scale = m->stock_or_scale;
    m->cpu_or_exponent = m->stock_or_exponent;
    m->cpu_or_spread = m->stock_or_spread;
}

void xg_cost_model_cpu_or_count_as_stock(struct xg_cost_model *m)
{
    m->cpu_or_count_scale = m->stock_or_scale;
    m->cpu_or_count_exponent = m->stock_or_exponent;
    m->cpu_or_count_spread = m->stock_or_spread;
}

void xg_cost_model_default(struct xg_cost_model *m)
{
    /* `xapian-gpu calibrate` on an H100 host (16 cores): the
     * real-text collection (322,045 paragraphs of Debian documentation)
     * with 500 TREC 2005 efficiency queries (docs/benchmarks.md). */
    m->stock_or_scale = 6.52e-6;
    m->stock_or_exponent = 0.542;
    m->stock_and_scale = 1.09e-5;
    m->stock_and_exponent = 0.120;
    m->stock_or_spread = 2.36;
    m->stock_and_spread = 2.13;
    m->gpu_batch = 3.328e-4;
    m->gpu_per_posting = 1.084e-9;
    /* The CPU matcher: calibrate on the same collection and 500 queries,
     * an H100 host, 2026-11-26 (tests/gpu/run.sh servebench). */
    m->cpu_and_scale = 1.914e-6;
    m->cpu_and_exponent = 0.194;
    m->cpu_and_spread = 3.81;
    /* Its top k of a flat OR without the count: calibrate on the same
     * collection and 500 queries, an H200 host, 2026-11-28 (tests/gpu/
     * run.sh fronts). */
    m->cpu_or_scale = 8.177e-7;
    m->cpu_or_exponent = 0.568;
    m->cpu_or_spread = 1.72;
    /* Its flat OR with the exact count (the pruned top k and the lists'
     * union counted apart): the same collection and queries, an H200
     * host, 2026-11-28 (tests/gpu/run.sh fronts). */
    m->cpu_or_count_scale = 4.848e-7;
    m->cpu_or_count_exponent = 0.658;
    m->cpu_or_count_spread = 2.17;
    snprintf(m->source, sizeof m->source, "built-in default");
}

static const struct {
    const char *key;
    size_t off;
} fields[] = {
    {"stock_or_scale", offsetof(struct xg_cost_model, stock_or_scale)},
    {"stock_or_exponent", offsetof(struct xg_cost_model, stock_or_exponent)},
    {"stock_and_scale", offsetof(struct xg_cost_model, stock_and_scale)},
    {"stock_and_exponent", offsetof(struct xg_cost_model, stock_and_exponent)},
    {"stock_or_spread", offsetof(struct xg_cost_model, stock_or_spread)},
    {"stock_and_spread", offsetof(struct xg_cost_model, stock_and_spread)},
    {"gpu_batch", offsetof(struct xg_cost_model, gpu_batch)},
    {"gpu_per_posting", offsetof(struct xg_cost_model, gpu_per_posting)},
    /* Optional (after N_REQUIRED): older files have none of them. */
    {"cpu_and_scale", offsetof(struct xg_cost_model, cpu_and_scale)},
    {"cpu_and_exponent", offsetof(struct xg_cost_model, cpu_and_exponent)},
    {"cpu_and_spread", offsetof(struct xg_cost_model, cpu_and_spread)},
    {"cpu_or_scale", offsetof(struct xg_cost_model, cpu_or_scale)},
    {"cpu_or_exponent", offsetof(struct xg_cost_model, cpu_or_exponent)},
    {"cpu_or_spread", offsetof(struct xg_cost_model, cpu_or_spread)},
    {"cpu_or_count_scale", offsetof(struct xg_cost_model, cpu_or_count_scale)},
    {"cpu_or_count_exponent",
     offsetof(struct xg_cost_model, cpu_or_count_exponent)},
    {"cpu_or_count_spread",
     offsetof(struct xg_cost_model, cpu_or_count_spread)},
};
#define N_FIELDS (sizeof fields / sizeof fields[0])
#define N_REQUIRED 8
#define CPU_KEYS (7u << N_REQUIRED)
#define CPU_OR_KEYS (7u << (N_REQUIRED + 3))
#define CPU_OR_COUNT_KEYS (7u << (N_REQUIRED + 6))

int xg_cost_model_load(const char *path, struct xg_cost_model *out)
{
    FILE *f = fopen(path, "r");
    if (!f) return xg_set_error(XG_ERR_IO, "%s: cannot open", path);
    struct xg_cost_model m;
    xg_cost_model_default(&m);
    unsigned seen = 0, line_no = 0;
    char line[256];
    int rc = XG_OK;
    while (!rc && fgets(line, sizeof line, f)) {
        ++line_no;
        char *p = line + strspn(line, " \t");
        if (*p == '#' || *p == '\n' || !*p) continue;
        char key[64];
        double v;
        char extra;
        if (sscanf(p, "%63s %lf %c", key, &v, &extra) != 2 || !(v >= 0)) {
            rc = xg_set_error(XG_ERR_FORMAT, "%s:%u: expected 'key value' "
                              "with a value >= 0", path, line_no);
            break;
        }
        size_t i = 0;
        while (i < N_FIELDS && strcmp(fields[i].key, key)) ++i;
        if (i == N_FIELDS) {
            rc = !strncmp(key, "stock_base", 10) ||
                         !strncmp(key, "stock_per_", 10)
                     ? xg_set_error(XG_ERR_FORMAT, "%s:%u: '%s' is the "
                                    "linear model of an older calibrate: "
                                    "re-run xapian-gpu calibrate", path,
                                    line_no, key)
                     : xg_set_error(XG_ERR_FORMAT, "%s:%u: unknown key "
                                    "'%s'", path, line_no, key);
            break;
        }
        *(double *)((char *)&m + fields[i].off) = v;
        seen |= 1u << i;
    }
    fclose(f);
    /* The CPU matcher's law: all three keys or none (then priced as
     * this file's stock AND, as an older planner did). */
    if (!rc && (seen & CPU_KEYS) && (seen & CPU_KEYS) != CPU_KEYS)
        rc = xg_set_error(XG_ERR_FORMAT, "%s: cpu_and_scale, "
                          "cpu_and_exponent and cpu_and_spread go together",
                          path);
    else if (!rc && !(seen & CPU_KEYS))
        xg_cost_model_cpu_as_stock(&m);
    if (!rc && (seen & CPU_OR_KEYS) && (seen & CPU_OR_KEYS) != CPU_OR_KEYS)
        rc = xg_set_error(XG_ERR_FORMAT, "%s: cpu_or_scale, cpu_or_exponent "
                          "and cpu_or_spread go together", path);
    else if (!rc && !(seen & CPU_OR_KEYS))
        xg_cost_model_cpu_or_as_stock(&m);
    if (!rc && (seen & CPU_OR_COUNT_KEYS) &&
        (seen & CPU_OR_COUNT_KEYS) != CPU_OR_COUNT_KEYS)
        rc = xg_set_error(XG_ERR_FORMAT, "%s: cpu_or_count_scale, "
                          "cpu_or_count_exponent and cpu_or_count_spread go "
                          "together", path);
    else if (!rc && !(seen & CPU_OR_COUNT_KEYS))
        xg_cost_model_cpu_or_count_as_stock(&m);
    if (!rc && (seen & ((1u << N_REQUIRED) - 1)) != (1u << N_REQUIRED) - 1)
        rc = xg_set_error(XG_ERR_FORMAT, "%s: missing keys (need all of "
                          "stock_or_scale, stock_or_exponent, "
                          "stock_and_scale, stock_and_exponent, "
                          "stock_or_spread, stock_and_spread, gpu_batch, "
                          "gpu_per_posting)", path);
    if (rc) return rc;
    snprintf(m.source, sizeof m.source, "%s", path);
    *out = m;
    return XG_OK;
}

char *xg_cost_model_path(const char *index_path)
{
    static const char name[] = "xapian-gpu.model";
    const char *slash = strrchr(index_path, '/');
    size_t dir = slash ? (size_t)(slash - index_path) + 1 : 0;
    char *path = malloc(dir + sizeof name);
    if (!path) {
        xg_set_error(XG_ERR_NOMEM, "out of memory");
        return NULL;
    }
    memcpy(path, index_path, dir);
    memcpy(path + dir, name, sizeof name);
    return path;
}

int xg_cost_model_save(const char *path, const struct xg_cost_model *m,
                       const char *comment)
{
    struct xg_outfile o;
    int rc = xg_outfile_open(&o, path);
    if (rc) return rc;
    fprintf(o.f, "# xapian-gpu cost model (xapian-gpu calibrate)\n# %s\n",
            comment ? comment : "");
    for (size_t i = 0; i < N_FIELDS; ++i)
        fprintf(o.f, "%s %.6e\n", fields[i].key,
                *(const double *)((const char *)m + fields[i].off));
    return xg_outfile_close(&o, 1);
}

void xg_query_features_of(const struct xg_prepared *pq,
                          const struct xg_index *ix,
                          struct xg_query_features *f)
{
    memset(f, 0, sizeof *f);
    f->is_and = pq->q.op == XG_QOP_AND && pq->q.n_groups > 1;
    f->shortest = UINT64_MAX;
    for (uint32_t i = 0; i < pq->q.n_leaves; ++i) {
        int64_t t = pq->term[i];
        if (t < 0) continue;
        int dup = 0;
        for (uint32_t j = 0; j < i && !dup; ++j) dup = pq->term[j] == t;
        if (dup) continue;
        uint64_t df = ix->terms[t].df;
        ++f->n_lists;
        f->sum += df;
        if (df < f->shortest) f->shortest = df;
    }
    if (!f->n_lists) f->shortest = 0;
}

uint64_t xg_cost_gpu_work(const struct xg_query_features *f)
{
    return f->is_and ? f->shortest : f->sum;
}

double xg_cost_and_probes(const struct xg_query_features *f)
{
    return (double)f->shortest * (double)(f->n_lists > 1 ? f->n_lists - 1 : 1);
}

double xg_cost_stock_seconds(const struct xg_cost_model *m,
                             const struct xg_query_features *f)
{
    if (f->is_and)
        return m->stock_and_scale *
               pow(1 + xg_cost_and_probes(f), m->stock_and_exponent);
    return m->stock_or_scale * pow(1 + (double)f->sum, m->stock_or_exponent);
}

double xg_cost_stock_seconds_p90(const struct xg_cost_model *m,
                                 const struct xg_query_features *f)
{
    return xg_cost_stock_seconds(m, f) *
           (f->is_and ? m->stock_and_spread : m->stock_or_spread);
}

double xg_cost_cpu_seconds(const struct xg_cost_model *m,
                           const struct xg_query_features *f, int counted)
{
    if (f->is_and)
        return m->cpu_and_scale *
               pow(1 + xg_cost_and_probes(f), m->cpu_and_exponent);
    if (counted)
        return m->cpu_or_count_scale *
               pow(1 + (double)f->sum, m->cpu_or_count_exponent);
    return m->cpu_or_scale * pow(1 + (double)f->sum, m->cpu_or_exponent);
}

double xg_cost_cpu_seconds_p90(const struct xg_cost_model *m,
                               const struct xg_query_features *f,
                               int counted)
{
    return xg_cost_cpu_seconds(m, f, counted) *
           (f->is_and   ? m->cpu_and_spread
            : counted   ? m->cpu_or_count_spread
                        : m->cpu_or_spread);
}

double xg_cost_cpu_or_enquire_p90(const struct xg_cost_model *m,
                                  const struct xg_query_features *f)
{
    return xg_cost_cpu_seconds_p90(m, f, 0) + m->stock_or_scale;
}

/* A GPU batch of `work` postings as the model prices it. */
static double gpu_batch_seconds(const struct xg_cost_model *m, uint64_t work)
{
    return m->gpu_batch + m->gpu_per_posting * (double)work;
}

double xg_cost_gpu_seconds(const struct xg_cost_model *m,
                           const struct xg_query_features *f,
                           uint64_t queued, uint64_t batch_work, int running,
                           double batch_seconds, double max_wait)
{
    double ahead = running ? 1 : 0;
    if (batch_work) ahead += (double)(queued / batch_work);
    return max_wait + ahead * batch_seconds +
           gpu_batch_seconds(m, xg_cost_gpu_work(f));
}

static double bits_double(uint64_t b)
{
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

static uint64_t double_bits(double d)
{
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}

void xg_cost_learn(struct xg_cost_learned *l, int side, int is_and,
                   double predicted, double actual)
{
    if (side < 0 || side >= XG_COST_SIDES || !(predicted > 0) ||
        !(actual > 0))
        return;
    double r = log(actual / predicted);
    r = r > 3 ? 3 : r < -3 ? -3 : r;
    _Atomic uint64_t *m = &l->mean_bits[side][is_and != 0];
    uint64_t old = atomic_load_explicit(m, memory_order_relaxed);
    for (;;) {
        const double mean = bits_double(old);
        const uint64_t nb = double_bits(mean + (r - mean) / 32);
        if (atomic_compare_exchange_weak_explicit(m, &old, nb,
                                                  memory_order_relaxed,
                                                  memory_order_relaxed))
            break;
    }
    atomic_fetch_add_explicit(&l->seen[side][is_and != 0], 1,
                              memory_order_relaxed);
}

double xg_cost_learned_factor(const struct xg_cost_learned *l, int side,
                              int is_and)
{
    if (side < 0 || side >= XG_COST_SIDES) return 1;
    struct xg_cost_learned *m = (struct xg_cost_learned *)l;
    return exp(bits_double(atomic_load_explicit(
        &m->mean_bits[side][is_and != 0], memory_order_relaxed)));
}

uint64_t xg_cost_learned_seen(const struct xg_cost_learned *l, int side,
                              int is_and)
{
    if (side < 0 || side >= XG_COST_SIDES) return 0;
    struct xg_cost_learned *m = (struct xg_cost_learned *)l;
    return atomic_load_explicit(&m->seen[side][is_and != 0],
                                memory_order_relaxed);
}

void xg_cost_fit(const double *x, const double *y, uint32_t n, double *a,
                 double *b)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (uint32_t i = 0; i < n; ++i) {
        sx += x[i];
        sy += y[i];
        sxx += x[i] * x[i];
        sxy += x[i] * y[i];
    }
    const double d = n * sxx - sx * sx;
    *b = n && d > 0 ? (n * sxy - sx * sy) / d : 0;
    if (*b < 0) *b = 0;
    *a = n ? (sy - *b * sx) / n : 0;
    if (*a < 0) {
        /* Through the origin instead: never a negative cost. */
        *a = 0;
        *b = sxx > 0 ? sxy / sxx : 0;
        if (*b < 0) *b = 0;
    }
}

void xg_cost_fit_power(const double *x, const double *y, uint32_t n,
                       double *scale, double *exponent)
{
    double m = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (uint32_t i = 0; i < n; ++i) {
        if (!(y[i] > 0) || !(x[i] >= 0)) continue;
        const double lx = log1p(x[i]), ly = log(y[i]);
        ++m;
        sx += lx;
        sy += ly;
        sxx += lx * lx;
        sxy += lx * ly;
    }
    const double d = m * sxx - sx * sx;
    double b = m && d > 0 ? (m * sxy - sx * sy) / d : 0;
    if (b < 0) b = 0;
    *exponent = b;
    *scale = m ? exp((sy - b * sx) / m) : 0;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double xg_cost_spread(const double *x, const double *y, uint32_t n,
                      double scale, double exponent)
{
    double *r = malloc((n + 1) * sizeof *r);
    if (!r || !(scale > 0)) {
        free(r);
        return 1;
    }
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; ++i)
        if (y[i] > 0) r[k++] = y[i] / (scale * pow(1 + x[i], exponent));
    double s = 1;
    if (k) {
        qsort(r, k, sizeof *r, cmp_double);
        s = r[(uint32_t)(0.9 * (k - 1))];
    }
    free(r);
    return s > 1 ? s : 1;
}
