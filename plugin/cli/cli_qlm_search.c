/** @file cli_qlm_search.c
 *  @brief xapian-gpu qlm-search: rank documents for queries by n-gram
 *         query likelihood from a binary table of `xapian-gpu qlm`
 *         (issue 6, "Query time"): gpu/qlm/qlm_score.h's CPU twin or its GPU
 *         scorer (--engine), which give the same scores bit for bit and so
 *         the same ranking.
 *
 *  `search --scoring qlm` hands its other arguments here (cli_search.c):
 *  `search` is built around a Xapian database (--db is required) and
 *  QueryParser, and none of its options (--op, --stem, --bm25, --batch,
 *  ...) means anything for a table of probabilities.  Queries are read as
 *  `search` reads them (xg_cli_queries_*), and --json prints the lines of
 *  `search --json` with "engine":"qlm" and results [{docid, score}].
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../gpu/runtime/error.h"
#include "../../gpu/qlm/qlm_score.h"
#include "../../gpu/qlm/qlm_table.h"
#include "cli.h"
#include "cli_search_opts.h"

static const char help[] =
    "usage: xapian-gpu qlm-search --qlm TABLE [OPTIONS] (QUERY... | --queries FILE)\n"
    "Rank documents by n-gram query likelihood, log P(q|d) = sum over the\n"
    "query words of log P(q_i | the sigma-1 words before it, d), from a\n"
    "table of 'xapian-gpu qlm --format bin --counts' (docs/qlm.md).\n"
    "  --qlm TABLE             the binary table (with counts)\n"
    "  -k K                    results per query (10)\n"
    "  --queries FILE          'qid<TAB>text' lines ('-': stdin)\n"
    "  --json                  one JSON line per query, as search --json\n"
    "  --engine auto|cpu|gpu   the scorer: gpu, the CPU twin (same scores,\n"
    "                          bit for bit), or auto: the GPU when a device\n"
    "                          opens (default)\n"
    "Each QUERY argument is one query (qids 1, 2, ...).\n";

static void print_hits(const char *qid, const struct xg_qlm_hit *h,
                       uint32_t n, int json)
{
    if (json) {
        printf("{\"qid\":");
        xg_cli_json_string(stdout, qid);
        printf(",\"engine\":\"qlm\",\"results\":[");
        for (uint32_t i = 0; i < n; ++i)
            printf("%s{\"docid\":%u,\"score\":%.17g}", i ? "," : "",
                   h[i].docid, h[i].score);
        printf("]}\n");
        return;
    }
    printf("query %s: %u results\n", qid, n);
    for (uint32_t i = 0; i < n; ++i)
        printf("%6u  docid %-10u  score %.17g\n", i + 1, h[i].docid,
               h[i].score);
}

int xg_cli_qlm_search(int argc, char **argv)
{
    static const struct option opts[] = {
        {"qlm", required_argument, 0, 't'},
        {"queries", required_argument, 0, 'q'},
        {"json", no_argument, 0, 'j'},
        {"engine", required_argument, 0, 'e'},
        {0, 0, 0, 0}};
    const char *table = NULL, *queries = NULL;
    uint32_t k = 10;
    int json = 0, engine = 0, c, status;  /* engine: 0 auto, 1 cpu, 2 gpu */
    optind = 1;
    while ((c = xg_cli_getopt("qlm-search", help, argc, argv, "k:", opts,
                              &status)) != -1) {
        switch (c) {
        case 't': table = optarg; break;
        case 'q': queries = optarg; break;
        case 'j': json = 1; break;
        case 'e':
            engine = !strcmp(optarg, "cpu") ? 1 : !strcmp(optarg, "gpu") ? 2
                     : !strcmp(optarg, "auto") ? 0 : -1;
            if (engine < 0)
                return xg_cli_usage("qlm-search", "--engine must be auto, cpu or gpu");
            break;
        case 'k':
            if (xg_cli_uint("qlm-search", "-k", optarg, 0, 1u << 24, &k))
                return 2;
            break;
        default: return status;     /* --help, --version, bad usage */
        }
    }
    if (!table) return xg_cli_usage("qlm-search", "--qlm TABLE is required");
    if (queries && optind < argc)
        return xg_cli_usage("qlm-search", "give queries as arguments or "
                            "--queries, not both");
    if (!queries && optind >= argc)
        return xg_cli_usage("qlm-search", "no query given");
    struct xg_qlm_table t;
    if (xg_qlm_table_load(table, &t)) return xg_cli_fail();
    struct xg_cli_queries qs;
    if (queries ? xg_cli_queries_load(queries, &qs)
                : xg_cli_queries_from_args(argc - optind, argv + optind, &qs)) {
        xg_qlm_table_free(&t);
        return xg_cli_fail();
    }
    int rc = 0;
    xg_qlm_scorer_gpu *gpu = NULL;
    if (engine != 1 && xg_qlm_score_gpu_open(&t, &gpu) && engine == 2) {
        xg_cli_queries_free(&qs);
        xg_qlm_table_free(&t);
        return xg_cli_fail();
    }
    for (uint32_t i = 0; i < qs.n && !rc; ++i) {
        struct xg_qlm_hit *h;
        uint32_t n;
        int e = gpu ? xg_qlm_score_gpu(gpu, &t, qs.text[i], k, &h, &n)
                    : xg_qlm_score_ref(&t, qs.text[i], k, &h, &n);
        if (gpu && engine == 0 && (e == XG_ERR_CUDA || e == XG_ERR_NOMEM)) {
            /* auto: the device failed, the twin answers from here on */
            xg_qlm_score_gpu_close(gpu);
            gpu = NULL;
            e = xg_qlm_score_ref(&t, qs.text[i], k, &h, &n);
        }
        if (e) {
            fprintf(stderr, "xapian-gpu: query %s: %s\n", qs.qid[i],
                    xg_last_error());
            rc = 1;
            break;
        }
        print_hits(qs.qid[i], h, n, json);
        free(h);
    }
    xg_qlm_score_gpu_close(gpu);
    xg_cli_queries_free(&qs);
    xg_qlm_table_free(&t);
    return rc;
}
