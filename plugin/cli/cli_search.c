/** @file cli_search.c
 *  @brief xapian-gpu search: answer queries with the engine asked for,
 *         through the router (router.h): xapian, cpu and gpu at its
 *         matcher front, auto at the context's (the answer stock's MSet
 *         through Enquire, the JSON naming who answered).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../gpu/runtime/error.h"
#include "cli.h"
#include "cli_search_opts.h"
#include "../router.h"
#include "../searcher.h"

static const char help[] =
    "usage: xapian-gpu search --db DB [OPTIONS] (QUERY... | --queries FILE)\n"
    "       xapian-gpu search --scoring qlm --qlm TABLE [OPTIONS] (QUERY... | --queries FILE)\n"
    "Parse each query with Xapian's QueryParser and answer it; with\n"
    "--scoring qlm, rank by n-gram query likelihood from a qlm table\n"
    "instead (the same as 'xapian-gpu qlm-search', whose options apply).\n"
    "  --scoring bm25|qlm      the database's BM25 (default), or qlm\n"
    "  -d, --db DB             database (repeat to combine shards)\n"
    "  --index INDEX           GPU index (default: next to the database)\n"
    "  --engine E              xapian (stock matcher), cpu (exact CPU\n"
    "                          matcher), gpu, or auto (the plugin's planner:\n"
    "                          the JSON's engine says who answered) (cpu)\n"
    "  --batch B               queries per GPU batch (256)\n"
    "  --device-memory MIB     GPU memory budget (default: 90% of free); a\n"
    "                          larger index keeps its lists in an LRU cache\n"
    "  --list-cache KIB        force an LRU list cache of KIB KiB\n"
    "  --member M              AND membership test: auto, binary, lr,\n"
    "                          hashseg, merge or block (auto)\n"
    "  --bloom auto|on|off     Bloom prefilter before it (auto = off)\n"
    "  --impacts auto|off      GPU OR candidates from the index's impacts\n"
    "                          (export --impacts) when they fit (auto)\n"
    "  --cand-min N            least candidates the GPU engine rescores\n"
    "                          exactly per query (4096; or 4k if larger)\n"
    "  -k K                    results per query (10)\n"
    "  --op or|and|andor       default operator between words (or);\n"
    "                          andor: AND, then OR if AND finds < k\n"
    "  --stem english|none     stemmer, STEM_SOME (english)\n"
    "  --stopper english       drop English stop words (default: none)\n"
    "  --omega                 build queries as Omega does by default (its\n"
    "                          prefixes, stop words, english, AND)\n"
    "  --wildcard              QueryParser's FLAG_WILDCARD: word* is every\n"
    "                          term it starts (a synonym of them)\n"
    "  --partial               QueryParser's FLAG_PARTIAL: the last word\n"
    "                          also matches the 100 most frequent terms it\n"
    "                          starts (search as you type)\n"
    "  --filter TERM           Omega's B=TERM: keep the documents holding\n"
    "                          it (one prefix's terms ORed, prefixes ANDed;\n"
    "                          repeatable)\n"
    "  --exclude TERM          Omega's N=TERM: drop the documents holding\n"
    "                          it (repeatable)\n"
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

/* Why a batch left a prepared query unanswered: with --op andor its OR
 * form may be a shape the engines do not serve (converting it again gives
 * the reason); otherwise the engine's own limit.  NULL without memory. */
static char *batch_refusal(xg_handle *h, const char *text,
                           const struct xg_search_opts *o)
{
    struct xg_search_opts or_o = *o;
    xg_xquery *xq = NULL;
    struct xg_prepared *pq = NULL;
    char *why = NULL;
    if (o->default_and == 2) {
        or_o.default_and = 0;
        if (xg_handle_parse(h, text, &or_o, &xq) == XG_OK &&
            xg_handle_prepare(h, xq, &pq) == XG_ERR_UNSUPPORTED)
            why = strdup(xg_last_error());
        xg_prepared_free(pq);
        if (xq) xg_shim_xquery_free(xq);
    }
    return why ? why : strdup("unsupported: beyond the engine's limits");
}

/* A query that got no answer, and why (QueryParser's message, or
 * "unsupported"). */
static void print_error(const char *qid, const char *engine, const char *why,
                        int json)
{
    if (json) {
        printf("{\"qid\":");
        xg_cli_json_string(stdout, qid);
        printf(",\"engine\":\"%s\",\"error\":", engine);
        xg_cli_json_string(stdout, why);
        printf("}\n");
    } else {
        printf("query %s: error: %s\n", qid, why);
    }
}

/* --engine auto: the plugin's planner answers each query (GPU, CPU
 * matcher or stock Xapian, docs/plugin.md) and the "engine" field says
 * which, with the reason when it is stock. */
static int search_auto(const struct xg_cli_search_args *a,
                       const struct xg_cli_queries *qs)
{
    if (a->opts.default_and == 2)
        return xg_cli_usage("search", "--op andor is not available with "
                            "--engine auto");
    struct xg_context_opts co = XG_CONTEXT_DEFAULTS;
    co.bm25 = a->opts.bm25;
    co.device = a->engine_opts.device;
    co.device_memory = a->engine_opts.memory_budget;
    xg_context *ctx;
    if (xg_context_open((const char *const *)a->dbs, a->n_dbs, a->index, &co,
                        &ctx))
        return xg_cli_fail();
    int rc = 0;
    for (uint32_t i = 0; i < qs->n && !rc; ++i) {
        struct xg_result r;
        int route;
        int qrc = xg_context_search(ctx, qs->text[i], &a->opts, 0, a->opts.k,
                                    &r, &route);
        if (qrc == XG_ERR_ARG) {
            /* QueryParser rejected it: reported, and on to the next, as
             * the other engines do. */
            print_error(qs->qid[i], "auto", xg_last_error(), a->json);
            continue;
        }
        if (qrc) {
            rc = xg_cli_fail();
            break;
        }
        print_result(qs->qid[i], xg_route_name(route), &r, a->json);
        xg_result_free(&r);
    }
    xg_context_close(ctx);
    return rc;
}

/* --scoring: bm25 (this command) or qlm (qlm-search, given the other
 * arguments); 0 and *scoring set, or a usage error's exit status. */
static int scoring(int *argc, char **argv, int *qlm)
{
    *qlm = 0;
    for (int i = 1; i < *argc; ++i) {
        const char *v = NULL;
        int used = 0;
        if (!strcmp(argv[i], "--scoring") && i + 1 < *argc) v = argv[i + 1], used = 2;
        else if (!strncmp(argv[i], "--scoring=", 10)) v = argv[i] + 10, used = 1;
        else if (!strcmp(argv[i], "--")) break;
        if (!used) continue;
        if (!strcmp(v, "qlm")) *qlm = 1;
        else if (strcmp(v, "bm25"))
            return xg_cli_usage("search", "--scoring must be bm25 or qlm, not '%s'", v);
        memmove(argv + i, argv + i + used, (size_t)(*argc - i - used + 1) * sizeof *argv);
        *argc -= used;
        --i;
    }
    return 0;
}

int xg_cli_search(int argc, char **argv)
{
    int qlm = 0;
    int rc0 = scoring(&argc, argv, &qlm);
    if (rc0) return rc0;
    if (qlm) return xg_cli_qlm_search(argc, argv);
    struct xg_cli_search_args a;
    int rc = xg_cli_search_args_parse("search", argc, argv, help, &a);
    if (rc >= 0) return rc;
    struct xg_cli_queries qs;
    if (a.queries ? xg_cli_queries_load(a.queries, &qs)
                  : xg_cli_queries_from_args(argc - a.first_arg,
                                             argv + a.first_arg, &qs))
        return xg_cli_fail();
    if (a.opts.engine == XG_ENGINE_AUTO) {
        rc = search_auto(&a, &qs);
        xg_cli_queries_free(&qs);
        return rc;
    }
    xg_searcher *s;
    if (xg_searcher_open((const char *const *)a.dbs, a.n_dbs, a.index, &s)) {
        xg_cli_queries_free(&qs);
        return xg_cli_fail();
    }
    static const char *names[] = {"xapian", "cpu", "gpu", "auto"};
    const char *engine = names[a.opts.engine];
    xg_handle *h = xg_searcher_handle(s);
    xg_router *router = xg_searcher_router(s);
    xg_handle_set_engine_opts(h, &a.engine_opts);
    if (a.opts.engine != XG_ENGINE_XAPIAN && xg_searcher_index_error(s)) {
        fprintf(stderr, "xapian-gpu: %s\n", xg_searcher_index_error(s));
        rc = 1;
        goto done;
    }
    const char *why;
    if (a.opts.engine == XG_ENGINE_GPU && xg_handle_gpu_status(h, &why)) {
        fprintf(stderr, "xapian-gpu: %s\n", why);
        rc = 1;
        goto done;
    }
    rc = 0;
    int batched = a.opts.engine == XG_ENGINE_GPU ||
                  a.opts.engine == XG_ENGINE_AUTO;
    uint32_t bsz = batched ? a.engine_opts.max_batch : 1;
    struct xg_prepared **pq = calloc(bsz, sizeof *pq);
    struct xg_result *res = calloc(bsz, sizeof *res);
    int *qrc = calloc(bsz, sizeof *qrc);
    char **err = calloc(bsz, sizeof *err);
    if (!pq || !res || !qrc || !err) {
        rc = (xg_set_error(XG_ERR_NOMEM, "out of memory"), xg_cli_fail());
        goto free_batch;
    }
    for (uint32_t f = 0; f < qs.n && !rc; f += bsz) {
        uint32_t cnt = qs.n - f < bsz ? qs.n - f : bsz, np = 0;
        struct xg_prepared *ready[1024];
        uint32_t where[1024];
        for (uint32_t i = 0; i < cnt; ++i) {
            xg_xquery *xq = NULL;
            pq[i] = NULL;
            if (batched) {
                qrc[i] = xg_handle_parse(h, qs.text[f + i], &a.opts, &xq);
                if (!qrc[i]) qrc[i] = xg_handle_prepare(h, xq, &pq[i]);
            } else {
                qrc[i] = xg_router_search_text(router, h, qs.text[f + i],
                                               &a.opts, &res[i], NULL);
            }
            if (xq) xg_shim_xquery_free(xq);
            if (qrc[i]) {
                if (qrc[i] != XG_ERR_UNSUPPORTED && qrc[i] != XG_ERR_ARG) {
                    rc = xg_cli_fail(); /* a fault, not a query we cannot serve */
                    break;
                }
                err[i] = strdup(xg_last_error());
            } else if (batched) {
                ready[np] = pq[i];
                where[np++] = i;
            }
            if (batched && np == 1024) break; /* bsz <= 1024 by --batch cap */
        }
        if (!rc && batched && np) {
            struct xg_result pres[1024];
            int pst[1024];
            const char *texts[1024];
            for (uint32_t j = 0; j < np; ++j) texts[j] = qs.text[f + where[j]];
            if (xg_router_run_batch(router, h, ready, NULL, NULL, a.opts.k,
                                    np, a.opts.engine, &a.opts.bm25, pres,
                                    pst, NULL) ||
                xg_router_andor_finish(router, h, texts, np, &a.opts, pres,
                                       pst)) {
                rc = xg_cli_fail();
            } else {
                for (uint32_t j = 0; j < np; ++j) {
                    res[where[j]] = pres[j];
                    qrc[where[j]] = pst[j];
                }
            }
        }
        for (uint32_t i = 0; i < cnt && !rc; ++i) {
            if (!qrc[i]) {
                print_result(qs.qid[f + i], engine, &res[i], a.json);
            } else {
                if (!err[i] && qrc[i] == XG_ERR_UNSUPPORTED)
                    err[i] = batch_refusal(h, qs.text[f + i], &a.opts);
                print_error(qs.qid[f + i], engine,
                            err[i] ? err[i] : "unsupported", a.json);
            }
        }
        for (uint32_t i = 0; i < cnt; ++i) {
            if (!qrc[i]) xg_result_free(&res[i]);
            memset(&res[i], 0, sizeof res[i]);
            xg_prepared_free(pq[i]);
            pq[i] = NULL;
            free(err[i]);
            err[i] = NULL;
        }
    }
free_batch:
    free(pq);
    free(res);
    free(qrc);
    free(err);
done:
    xg_searcher_close(s);
    xg_cli_queries_free(&qs);
    return rc;
}
