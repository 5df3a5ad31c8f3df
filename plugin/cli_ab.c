/** @file cli_ab.c
 *  @brief xapian-gpu ab: answer a query file with several engines, check
 *         that every MSet equals the stock matcher's, and time them.
 *
 *  Engines run one after the other on the same parsed query, single
 *  threaded; the first engine listed is the reference (xapian by default).
 *  Equality is exact: same docids, same order, bit-equal weights.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../gpu/error.h"
#include "cli.h"
#include "cli_search_opts.h"
#include "searcher.h"
#include "xg_config.h"

static const char help[] =
    "usage: xapian-gpu ab --db DB --queries FILE [OPTIONS]\n"
    "Answer every query with each engine, check the MSets are identical to\n"
    "the first engine's, and print throughput and latency per engine.\n"
    "  --engines LIST          comma-separated: xapian,cpu (default)\n"
    "  --json=OUT              write per-engine figures as JSON to OUT\n"
    "  plus the options of 'xapian-gpu search' (--db, --index, -k, --op,\n"
    "  --stem, --stopper, --bm25).  Exit status 1 if any MSet differs.\n";

#define MAX_ENGINES 4

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int same_mset(const struct xg_result *a, const struct xg_result *b)
{
    if (a->n_hits != b->n_hits) return 0;
    for (uint32_t i = 0; i < a->n_hits; ++i)
        if (a->hits[i].docid != b->hits[i].docid ||
            memcmp(&a->hits[i].weight, &b->hits[i].weight, sizeof(double)))
            return 0;
    return 1;
}

int xg_cli_ab(int argc, char **argv)
{
    struct xg_cli_search_args a;
    int rc = xg_cli_search_args_parse("ab", argc, argv, help, &a);
    if (rc >= 0) return rc;
    if (!a.queries) return xg_cli_usage("ab", "--queries FILE is required");
    const char *names[MAX_ENGINES];
    int engines[MAX_ENGINES], n_eng = 0;
    char list[256];
    snprintf(list, sizeof list, "%s", a.engines ? a.engines : "xapian,cpu");
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        if (n_eng == MAX_ENGINES) return xg_cli_usage("ab", "too many engines");
        if (!strcmp(tok, "xapian")) engines[n_eng] = XG_ENGINE_XAPIAN;
        else if (!strcmp(tok, "cpu")) engines[n_eng] = XG_ENGINE_CPU;
        else return xg_cli_usage("ab", "unknown engine '%s' (xapian, cpu)", tok);
        names[n_eng++] = tok == list ? "xapian" : tok;
        names[n_eng - 1] = engines[n_eng - 1] == XG_ENGINE_XAPIAN ? "xapian" : "cpu";
    }
    struct xg_cli_queries qs;
    if (xg_cli_queries_load(a.queries, &qs)) return xg_cli_fail();
    xg_searcher *s;
    if (xg_searcher_open((const char *const *)a.dbs, a.n_dbs, a.index, &s)) {
        xg_cli_queries_free(&qs);
        return xg_cli_fail();
    }
    for (int e = 0; e < n_eng; ++e)
        if (engines[e] == XG_ENGINE_CPU && xg_searcher_index_error(s)) {
            fprintf(stderr, "xapian-gpu: %s\n", xg_searcher_index_error(s));
            xg_searcher_close(s);
            xg_cli_queries_free(&qs);
            return 1;
        }
    double *lat[MAX_ENGINES];
    double total[MAX_ENGINES] = {0};
    uint32_t served[MAX_ENGINES] = {0};
    uint32_t identical = 0, different = 0, unsupported = 0, est_cmp = 0,
             est_equal = 0, bad_parse = 0;
    for (int e = 0; e < n_eng; ++e) lat[e] = calloc(qs.n + 1, sizeof(double));
    rc = 0;
    for (uint32_t i = 0; i < qs.n && !rc; ++i) {
        xg_xquery *xq = NULL;
        if (xg_searcher_parse(s, qs.text[i], &a.opts, &xq)) {
            ++bad_parse;
            continue;
        }
        struct xg_result ref, r;
        int have_ref = 0, skip = 0;
        double t_eng[MAX_ENGINES];
        for (int e = 0; e < n_eng && !skip; ++e) {
            struct xg_search_opts o = a.opts;
            o.engine = engines[e];
            double t = xg_cli_now();
            int qrc = xg_searcher_run(s, xq, &o, &r);
            t = xg_cli_now() - t;
            if (qrc == XG_ERR_UNSUPPORTED) {
                ++unsupported;
                skip = 1;
                break;
            }
            if (qrc) {
                rc = xg_cli_fail();
                break;
            }
            t_eng[e] = t;
            if (!have_ref) {
                ref = r;
                have_ref = 1;
                continue;
            }
            if (same_mset(&ref, &r)) {
                ++identical;
            } else {
                ++different;
                fprintf(stderr, "xapian-gpu ab: query %s: %s differs from %s\n",
                        qs.qid[i], names[e], names[0]);
            }
            if (ref.n_hits < o.k) { /* the reference counted every match */
                ++est_cmp;
                est_equal += ref.matches_estimated == r.matches_estimated;
            }
            xg_result_free(&r);
        }
        if (have_ref) xg_result_free(&ref);
        xg_shim_xquery_free(xq);
        /* Time only the queries every engine served. */
        if (!skip && !rc)
            for (int e = 0; e < n_eng; ++e) {
                lat[e][served[e]++] = t_eng[e];
                total[e] += t_eng[e];
            }
    }
    if (!rc) {
        printf("queries %u: compared %u, identical %u, different %u, "
               "unsupported %u, rejected by QueryParser %u\n", qs.n,
               identical + different, identical, different, unsupported,
               bad_parse);
        printf("match counts compared where the reference is exact: %u of %u "
               "equal\n", est_equal, est_cmp);
        printf("%-8s %9s %10s %10s %10s %10s\n", "engine", "queries",
               "queries/s", "mean ms", "p50 ms", "p99 ms");
        FILE *jf = a.json_out ? fopen(a.json_out, "w") : NULL;
        if (jf) fprintf(jf, "{\"queries\":%u,\"identical\":%u,\"different\":%u,"
                        "\"unsupported\":%u,\"engines\":[", qs.n, identical,
                        different, unsupported);
        for (int e = 0; e < n_eng; ++e) {
            uint32_t n = served[e];
            qsort(lat[e], n, sizeof(double), cmp_double);
            double mean = n ? total[e] / n : 0;
            double p50 = n ? lat[e][n / 2] : 0;
            double p99 = n ? lat[e][(uint32_t)(0.99 * (n - 1))] : 0;
            double qps = total[e] > 0 ? n / total[e] : 0;
            printf("%-8s %9u %10.0f %10.3f %10.3f %10.3f\n", names[e], n, qps,
                   mean * 1e3, p50 * 1e3, p99 * 1e3);
            if (jf) fprintf(jf, "%s{\"engine\":\"%s\",\"queries\":%u,\"qps\":%.1f,"
                            "\"mean_ms\":%.4f,\"p50_ms\":%.4f,\"p99_ms\":%.4f}",
                            e ? "," : "", names[e], n, qps, mean * 1e3,
                            p50 * 1e3, p99 * 1e3);
        }
        if (jf) {
            fprintf(jf, "]}\n");
            fclose(jf);
        }
        printf("gpu engine: %s\n", XG_HAVE_CUDA
                   ? "built; the GPU query engine is not in this version, the "
                     "CPU matcher serves"
                   : "not built (no CUDA toolkit): the CPU matcher serves");
        if (different) rc = 1;
    }
    for (int e = 0; e < n_eng; ++e) free(lat[e]);
    xg_searcher_close(s);
    xg_cli_queries_free(&qs);
    return rc;
}
