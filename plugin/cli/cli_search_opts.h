/** @file cli_search_opts.h
 *  @brief Options shared by `search` and `ab` (database, index, parser,
 *         weighting).
 */
#ifndef XG_CLI_SEARCH_OPTS_H
#define XG_CLI_SEARCH_OPTS_H

#include <stdio.h>

#include "../../gpu/query/engine.h"
#include "../xapian-gpu.h"

#define XG_CLI_MAX_FILTERS 64

struct xg_cli_search_args {
    char *dbs[64];
    size_t n_dbs;
    const char *index, *queries, *engines, *json_out;
    const char *qrels, *html_out;  /* ab: relevance judgements, report */
    const char *server;            /* ab: the stub file of engine "server" */
    const char *model;             /* calibrate: the cost model file */
    const char *samples_out;       /* ab, calibrate: per-query TSV */
    int json;
    int first_arg;                 /* first positional argument */
    uint32_t threads, batch;       /* ab/bench */
    uint32_t repeat;               /* ab/bench: timed passes per engine */
    double batch_wait_ms;          /* ab/bench: the plugin engines' context
                                      max_wait_ms (0: none) */
    double gpu_spin_ms;            /* ab/bench: their wait_spin_ms (< 0:
                                      the context's default) */
    const char *filters[XG_CLI_MAX_FILTERS];   /* opts.filters' storage */
    const char *excludes[XG_CLI_MAX_FILTERS];  /* opts.excludes' */
    struct xg_search_opts opts;
    struct xg_engine_opts engine_opts;
};

/* Parse argv.  Returns -1 to go on, or an exit status (0 after --help,
 * 2 on a usage error).  `cmd` is "search" or "ab"; "ab" also takes
 * --engines LIST and --json OUT, "search" --engine and --json. */
int xg_cli_search_args_parse(const char *cmd, int argc, char **argv,
                             const char *help, struct xg_cli_search_args *a);

/* Write `s` as a JSON string literal. */
void xg_cli_json_string(FILE *f, const char *s);

#endif
