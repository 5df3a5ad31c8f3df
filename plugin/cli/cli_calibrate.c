/** @file cli_calibrate.c
 *  @brief xapian-gpu calibrate: measure this machine and write the cost
 *         model the plugin's planner routes with (cost_model.h).
 *
 *  Stock Xapian: every query, in its OR and its AND form, once to warm the
 *  caches, then once timed, one thread; least squares of its time against
 *  the OR queries' postings and the AND queries' probes, as power laws
 *  (least squares in log space).  The exact CPU matcher: every AND the
 *  same way (serve weighs an AND between it and the GPU), and every flat
 *  OR twice: its top k without the count (the Enquire front weighs one
 *  between it, stock and the GPU) and its top k with the exact count
 *  (serve and the matcher front).  GPU: the same
 *  queries in batches of 1 to 256; least squares of each batch's wall
 *  time against its work.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../gpu/runtime/error.h"
#include "../../gpu/runtime/outfile.h"
#include "cli.h"
#include "cli_search_opts.h"
#include "../../gpu/query/match_ref.h"
#include "../cost_model.h"
#include "../router.h"
#include "../searcher.h"

static const char help[] =
    "usage: xapian-gpu calibrate --db DB --queries FILE [OPTIONS]\n"
    "Time every query on stock Xapian, every AND and flat OR on the exact CPU\n"
    "matcher too, and, with a usable GPU, in GPU batches; fit the plugin's cost\n"
    "model and write it (default: xapian-gpu.model next to the index, where the\n"
    "plugin and serve look for it).\n"
    "  --model FILE            where to write the model\n"
    "  --samples FILE          also write each timed query as TSV: op, lists,\n"
    "                          shortest, sum (document frequencies), stock\n"
    "                          seconds, model seconds, CPU matcher seconds\n"
    "                          (ANDs and flat ORs' top k; 0 otherwise), and\n"
    "                          its seconds with the count (flat ORs)\n"
    "  plus --index, -k, --stem, --stopper, --bm25 as for 'xapian-gpu\n"
    "  search'.  Every query is timed in its OR and its AND form.\n";

struct sample {
    struct xg_prepared *pq;
    xg_xquery *xq;
    struct xg_query_features f;
    double stock;
    double cpu;     /* the CPU matcher's time (an AND; a flat OR's top k
                       without the count), 0: not timed */
    double cpu_count; /* a flat OR's top k with the exact count */
};

/* Fit stock Xapian's power laws (OR, AND) and the CPU matcher's (AND)
 * from the timed samples. */
static void fit_laws(const struct sample *s, uint32_t n,
                      struct xg_cost_model *m)
{
    double *x = malloc((n + 1) * sizeof *x), *y = malloc((n + 1) * sizeof *y);
    if (!x || !y) goto done;
    for (int and = 0; and < 2; ++and) {
        uint32_t k = 0;
        for (uint32_t i = 0; i < n; ++i) {
            const struct xg_query_features *f = &s[i].f;
            if (f->is_and != and) continue;
            x[k] = and ? xg_cost_and_probes(f) : (double)f->sum;
            y[k++] = s[i].stock;
        }
        if (!k) continue; /* none of that form: the default stays */
        double *scale = and ? &m->stock_and_scale : &m->stock_or_scale,
               *exponent = and ? &m->stock_and_exponent
                               : &m->stock_or_exponent;
        xg_cost_fit_power(x, y, k, scale, exponent);
        *(and ? &m->stock_and_spread : &m->stock_or_spread) =
            xg_cost_spread(x, y, k, *scale, *exponent);
    }
    /* The CPU matcher's laws, from the queries it answered (none: priced
     * as stock): AND, an OR's top k, an OR with its count. */
    xg_cost_model_cpu_as_stock(m);
    xg_cost_model_cpu_or_as_stock(m);
    xg_cost_model_cpu_or_count_as_stock(m);
    for (int law = 0; law < 3; ++law) {
        const int and = law == 0;
        uint32_t k = 0;
        for (uint32_t i = 0; i < n; ++i) {
            const double t = law == 2 ? s[i].cpu_count : s[i].cpu;
            if (s[i].f.is_and == and && t > 0) {
                x[k] = and ? xg_cost_and_probes(&s[i].f) : (double)s[i].f.sum;
                y[k++] = t;
            }
        }
        if (!k) continue;
        double *const fit[3][3] = {
            {&m->cpu_and_scale, &m->cpu_and_exponent, &m->cpu_and_spread},
            {&m->cpu_or_scale, &m->cpu_or_exponent, &m->cpu_or_spread},
            {&m->cpu_or_count_scale, &m->cpu_or_count_exponent,
             &m->cpu_or_count_spread}};
        xg_cost_fit_power(x, y, k, fit[law][0], fit[law][1]);
        *fit[law][2] = xg_cost_spread(x, y, k, *fit[law][0], *fit[law][1]);
    }
done:
    free(x);
    free(y);
}

/* The timed queries and the fitted stock model's price of each, for an
 * operator to see how well the model fits. */
static int write_samples(const char *path, const struct sample *s, uint32_t n,
                         const struct xg_cost_model *m)
{
    struct xg_outfile o;
    int rc = xg_outfile_open(&o, path);
    if (rc) return rc;
    FILE *f = o.f;
    fputs("op\tlists\tshortest\tsum\tstock_s\tmodel_s\tcpu_s\tcpu_count_s\n",
          f);
    for (uint32_t i = 0; i < n; ++i)
        fprintf(f, "%s\t%u\t%llu\t%llu\t%.9f\t%.9f\t%.9f\t%.9f\n",
                s[i].f.is_and ? "and" : "or", s[i].f.n_lists,
                (unsigned long long)s[i].f.shortest,
                (unsigned long long)s[i].f.sum, s[i].stock,
                xg_cost_stock_seconds(m, &s[i].f), s[i].cpu, s[i].cpu_count);
    return xg_outfile_close(&o, 1);
}

/* Batches of 1..256 on the GPU; fills the GPU coefficients.  0 if ran. */
static int fit_gpu(xg_searcher *s, struct sample *smp, uint32_t n,
                   const struct xg_search_opts *o, struct xg_cost_model *m)
{
    static const uint32_t sizes[] = {1, 4, 16, 64, 256};
    const uint32_t max_pts = 5 * 64;
    double *x = malloc(max_pts * sizeof *x), *y = malloc(max_pts * sizeof *y);
    struct xg_prepared **pqs = malloc(256 * sizeof *pqs);
    struct xg_result *res = calloc(256, sizeof *res);
    int *status = calloc(256, sizeof *status);
    uint32_t pts = 0;
    int rc = x && y && pqs && res && status ? XG_OK : XG_ERR_NOMEM;
    struct xg_search_opts go = *o;
    go.engine = XG_ENGINE_GPU;
    for (size_t si = 0; !rc && si < sizeof sizes / sizeof sizes[0]; ++si) {
        /* One warm-up batch, then up to 64 timed ones of this size. */
        for (uint32_t b = 0, first = 0; !rc && b <= 64 && first < n; ++b) {
            uint32_t cnt = n - first < sizes[si] ? n - first : sizes[si];
            uint64_t work = 0;
            for (uint32_t i = 0; i < cnt; ++i) {
                pqs[i] = smp[first + i].pq;
                work += xg_cost_gpu_work(&smp[first + i].f);
            }
            double t0 = xg_cli_now();
            rc = xg_router_run_batch(xg_searcher_router(s),
                                     xg_searcher_handle(s), pqs, NULL, NULL,
                                     go.k, cnt, go.engine, &go.bm25, res,
                                     status, NULL);
            double t = xg_cli_now() - t0;
            for (uint32_t i = 0; i < cnt; ++i) xg_result_free(&res[i]);
            if (!rc && b > 0 && pts < max_pts) {
                x[pts] = (double)work;
                y[pts++] = t;
            }
            first += cnt;
        }
    }
    if (!rc && pts) xg_cost_fit(x, y, pts, &m->gpu_batch, &m->gpu_per_posting);
    free(x);
    free(y);
    free(pqs);
    free(res);
    free(status);
    return rc;
}

int xg_cli_calibrate(int argc, char **argv)
{
    struct xg_cli_search_args a;
    int rc = xg_cli_search_args_parse("calibrate", argc, argv, help, &a);
    if (rc >= 0) return rc;
    if (!a.queries)
        return xg_cli_usage("calibrate", "--queries FILE is required");
    struct xg_cli_queries qs;
    if (xg_cli_queries_load(a.queries, &qs)) return xg_cli_fail();
    xg_searcher *s;
    if (xg_searcher_open((const char *const *)a.dbs, a.n_dbs, a.index, &s)) {
        xg_cli_queries_free(&qs);
        return xg_cli_fail();
    }
    /* Each query in its OR and its AND form: the model has a cost for each. */
    struct sample *smp = calloc(2 * qs.n + 1, sizeof *smp);
    uint32_t n = 0;
    rc = smp ? 0 : 1;
    if (!rc && xg_searcher_index_error(s)) {
        fprintf(stderr, "xapian-gpu: %s\n", xg_searcher_index_error(s));
        rc = 1;
    }
    for (uint32_t i = 0; !rc && i < 2 * qs.n; ++i) {
        struct sample *p = &smp[n];
        struct xg_search_opts po = a.opts;
        po.default_and = (int)(i & 1);
        if (xg_handle_parse(xg_searcher_handle(s), qs.text[i / 2], &po,
                            &p->xq))
            continue;
        if (xg_handle_prepare(xg_searcher_handle(s), p->xq, &p->pq)) {
            xg_shim_xquery_free(p->xq);
            continue;
        }
        xg_query_features_of(p->pq, xg_searcher_index(s), &p->f);
        ++n;
    }
    struct xg_cost_model m;
    xg_cost_model_default(&m);
    for (int pass = 0; !rc && pass < 2 && n; ++pass)
        for (uint32_t i = 0; i < n && !rc; ++i) {
            struct xg_result r;
            double t0 = xg_cli_now();
            rc = xg_handle_run_stock(xg_searcher_handle(s), smp[i].xq,
                                     &a.opts.bm25, a.opts.k, &r);
            smp[i].stock = xg_cli_now() - t0;
            xg_result_free(&r);
            if (rc) {
                rc = xg_cli_fail();
                break;
            }
            /* The CPU matcher: an AND as serve runs it; a flat OR's top
             * k without the count as the Enquire front runs it, and with
             * the exact count as serve and the matcher front run it. */
            const int top_or = !smp[i].f.is_and &&
                               xg_match_top_prunes(&smp[i].pq->q, &a.opts.bm25);
            if (!smp[i].f.is_and && !top_or) continue;
            for (int counted = 0; counted < 1 + top_or && !rc; ++counted) {
                t0 = xg_cli_now();
                int st = top_or && !counted
                             ? xg_handle_run_cpu_top(xg_searcher_handle(s),
                                                     smp[i].pq, &a.opts.bm25,
                                                     a.opts.k, &r)
                             : xg_handle_run_cpu(xg_searcher_handle(s),
                                                 smp[i].pq, &a.opts.bm25,
                                                 a.opts.k, &r);
                const double t = st ? 0 : xg_cli_now() - t0;
                *(counted ? &smp[i].cpu_count : &smp[i].cpu) = t;
                xg_result_free(&r);
                if (st && st != XG_ERR_UNSUPPORTED) rc = xg_cli_fail();
            }
        }
    if (!rc && !n) {
        fprintf(stderr, "xapian-gpu calibrate: no query of %s can be served "
                "by the engines\n", a.queries);
        rc = 1;
    }
    if (!rc) fit_laws(smp, n, &m);
    if (!rc && a.samples_out && write_samples(a.samples_out, smp, n, &m))
        rc = xg_cli_fail();
    const char *why = NULL;
    int gpu = !rc && xg_handle_gpu_status(xg_searcher_handle(s), &why) == XG_OK;
    if (gpu && fit_gpu(s, smp, n, &a.opts, &m)) rc = xg_cli_fail();
    if (!rc) {
        const struct xg_index *ix = xg_searcher_index(s);
        char comment[512];
        char *path = a.model ? strdup(a.model) : xg_cost_model_path(ix->path);
        char dev[256] = "no GPU";
        if (gpu) xg_engine_device_info(a.engine_opts.device, dev, sizeof dev);
        snprintf(comment, sizeof comment, "%u queries of %s, k %u; GPU: %s%s",
                 n, a.queries, a.opts.k, dev,
                 gpu ? "" : " (GPU coefficients are the built-in default)");
        if (!path) {
            rc = (xg_set_error(XG_ERR_NOMEM, "out of memory"), xg_cli_fail());
        } else if (xg_cost_model_save(path, &m, comment)) {
            rc = xg_cli_fail();
        } else {
            uint32_t to_gpu = 0;
            for (uint32_t i = 0; i < n; ++i)
                to_gpu += xg_cost_gpu_seconds(&m, &smp[i].f, 0, 0, 0, 0, 0) <=
                          xg_cost_stock_seconds_p90(&m, &smp[i].f);
            printf("calibrated on %u queries (%s)\n", n, comment);
            printf("stock: %.3e s * (1 + postings)^%.3f (OR, spread %.2f), "
                   "%.3e s * (1 + probes)^%.3f (AND, spread %.2f)\n",
                   m.stock_or_scale, m.stock_or_exponent, m.stock_or_spread,
                   m.stock_and_scale, m.stock_and_exponent,
                   m.stock_and_spread);
            printf("cpu matcher: %.3e s * (1 + probes)^%.3f (AND, spread "
                   "%.2f), %.3e s * (1 + postings)^%.3f (OR's top k, spread "
                   "%.2f), %.3e s * (1 + postings)^%.3f (OR with its count, "
                   "spread %.2f)\n", m.cpu_and_scale, m.cpu_and_exponent,
                   m.cpu_and_spread, m.cpu_or_scale, m.cpu_or_exponent,
                   m.cpu_or_spread, m.cpu_or_count_scale,
                   m.cpu_or_count_exponent, m.cpu_or_count_spread);
            printf("gpu:   %.3e s/batch + %.3e s/posting%s\n", m.gpu_batch,
                   m.gpu_per_posting, gpu ? "" : " (default: no GPU)");
            printf("with an idle GPU and no batching wait, %u of %u queries "
                   "would go to the GPU\nwrote %s\n", to_gpu, n, path);
        }
        free(path);
    }
    for (uint32_t i = 0; i < n; ++i) {
        xg_prepared_free(smp[i].pq);
        xg_shim_xquery_free(smp[i].xq);
    }
    free(smp);
    xg_searcher_close(s);
    xg_cli_queries_free(&qs);
    return rc;
}
