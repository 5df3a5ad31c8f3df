/** @file cli_search.c
 *  @brief xapian-gpu search: answer queries with the stock Xapian matcher
 *         or the exact CPU matcher over the GPU index.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../gpu/error.h"
#include "cli.h"
#include "cli_search_opts.h"
#include "searcher.h"

static const char help[] =
    "usage: xapian-gpu search --db DB [OPTIONS] (QUERY... | --queries FILE)\n"
    "Parse each query with Xapian's QueryParser and answer it.\n"
    "  --db DB                 database (repeat to combine shards)\n"
    "  --index INDEX           GPU index (default: next to the database)\n"
    "  --engine xapian|cpu     stock matcher or exact CPU matcher (cpu)\n"
    "  -k K                    results per query (10)\n"
    "  --op or|and             default operator between words (or)\n"
    "  --stem english|none     stemmer, STEM_SOME (english)\n"
    "  --stopper english       drop English stop words (default: none)\n"
    "  --bm25 K1,K2,K3,B,MINLEN  BM25Weight parameters (1,0,1,0.5,0.5)\n"
    "  --queries FILE          'qid<TAB>text' lines ('-': stdin)\n"
    "  --json                  one JSON line per query\n"
    "Each QUERY argument is one query (qids 1, 2, ...).\n";

static void print_result(const char *qid, const char *engine,
                         const struct xg_result *r, int json)
{
    if (json) {
        printf("{\"qid\":");
        xg_cli_json_string(stdout, qid);
        printf(",\"engine\":\"%s\",\"matches_estimated\":%llu,\"results\":[",
               engine, (unsigned long long)r->matches_estimated);
        for (uint32_t i = 0; i < r->n_hits; ++i)
            printf("%s{\"docid\":%u,\"weight\":%.17g}", i ? "," : "",
                   r->hits[i].docid, r->hits[i].weight);
        printf("]}\n");
        return;
    }
    printf("query %s: %llu matches (estimated)\n", qid,
           (unsigned long long)r->matches_estimated);
    for (uint32_t i = 0; i < r->n_hits; ++i)
        printf("%6u  docid %-10u  weight %.17g\n", i + 1, r->hits[i].docid,
               r->hits[i].weight);
}

int xg_cli_search(int argc, char **argv)
{
    struct xg_cli_search_args a;
    int rc = xg_cli_search_args_parse("search", argc, argv, help, &a);
    if (rc >= 0) return rc;
    struct xg_cli_queries qs;
    if (a.queries ? xg_cli_queries_load(a.queries, &qs)
                  : xg_cli_queries_from_args(argc - a.first_arg,
                                             argv + a.first_arg, &qs))
        return xg_cli_fail();
    xg_searcher *s;
    if (xg_searcher_open((const char *const *)a.dbs, a.n_dbs, a.index, &s)) {
        xg_cli_queries_free(&qs);
        return xg_cli_fail();
    }
    const char *engine = a.opts.engine == XG_ENGINE_XAPIAN ? "xapian" : "cpu";
    if (a.opts.engine == XG_ENGINE_CPU && xg_searcher_index_error(s)) {
        fprintf(stderr, "xapian-gpu: %s\n", xg_searcher_index_error(s));
        rc = 1;
        goto done;
    }
    rc = 0;
    for (uint32_t i = 0; i < qs.n; ++i) {
        struct xg_result r;
        if (xg_searcher_search(s, qs.text[i], &a.opts, &r) == XG_OK) {
            print_result(qs.qid[i], engine, &r, a.json);
            xg_result_free(&r);
            continue;
        }
        int code = xg_last_error_code();
        if (code != XG_ERR_UNSUPPORTED && code != XG_ERR_ARG) {
            rc = xg_cli_fail(); /* a fault, not a query we cannot serve */
            break;
        }
        if (a.json) {
            printf("{\"qid\":");
            xg_cli_json_string(stdout, qs.qid[i]);
            printf(",\"engine\":\"%s\",\"error\":", engine);
            xg_cli_json_string(stdout, xg_last_error());
            printf("}\n");
        } else {
            printf("query %s: error: %s\n", qs.qid[i], xg_last_error());
        }
    }
done:
    xg_searcher_close(s);
    xg_cli_queries_free(&qs);
    return rc;
}
