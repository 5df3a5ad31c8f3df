/** @file sample_db.h
 *  @brief For the C tests: index a docs.tsv into a fresh database with
 *         the TSV indexer and, if asked, export its GPU index beside it;
 *         read a sample's queries.tsv as plain word queries; stock
 *         Xapian's answer to one, the reference of every engine.
 */
#ifndef XG_TEST_SAMPLE_DB_H
#define XG_TEST_SAMPLE_DB_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../gpu/runtime/error.h"
#include "../plugin/handle.h"
#include "../shim/tools/indexer.h"
#include "../shim/xg_export.h"
#include "../shim/xg_shim.h"

/* 0, or 1 with "FAIL ..." printed. */
static inline int make_db(const char *tsv, const char *db, int export_index)
{
    char cmd[8400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", db);
    if (system(cmd) != 0) return 1;
    struct xg_index_opts io = {1, 0, 1, 1, 0};
    if (xg_shim_index_tsv(tsv, db, &io)) {
        printf("FAIL index %s: %s\n", db, xg_last_error());
        return 1;
    }
    if (!export_index) return 0;
    const char *paths[] = {db};
    xg_db *xdb;
    struct xg_export_opts eo;
    xg_export_opts_init(&eo);
    struct xg_export_report rep;
    char idx[4200];
    snprintf(idx, sizeof idx, "%s/xapian-gpu.idx", db);
    if (xg_shim_db_open(paths, 1, &xdb) || xg_export(xdb, idx, &eo, &rep)) {
        printf("FAIL export: %s\n", xg_last_error());
        return 1;
    }
    xg_shim_db_close(xdb);
    return 0;
}

/* The sample at sample_dir (docs.tsv, queries.tsv) indexed and exported
 * into work_dir/name (made afresh): its path in db[4096], the queries'
 * in queries[4096].  0, or 1 with "FAIL ..." printed. */
static inline int sample_db_in(const char *sample_dir, const char *work_dir,
                               const char *name, char *db, char *queries)
{
    char tsv[4096];
    snprintf(tsv, sizeof tsv, "%s/docs.tsv", sample_dir);
    snprintf(queries, 4096, "%s/queries.tsv", sample_dir);
    snprintf(db, 4096, "%s/%s", work_dir, name);
    mkdir(work_dir, 0755);
    return make_db(tsv, db, 1);
}

/* Up to max queries of queries.tsv into texts[max][len] (len > 200):
 * each text's first five words, lowercased ASCII letters only (the sample's
 * punctuation would make phrases).  Returns how many, or -1. */
static inline int sample_queries(const char *path, char (*texts)[512], int max)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[65536];
    int n = 0;
    while (n < max && fgets(line, sizeof line, f)) {
        char *text = strchr(line, '\t');
        if (!text) continue;
        char *o = texts[n];
        int words = 0;
        for (char *p = ++text; *p && o < texts[n] + 200; ++p)
            if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))
                *o++ = (char)(*p | 0x20);
            else if (o > texts[n] && o[-1] != ' ' && ++words < 6)
                *o++ = ' ';
            else if (words >= 6)
                break;
        *o = '\0';
        if (o > texts[n]) ++n;
    }
    fclose(f);
    return n;
}

/* Stock Xapian's top k for text (QueryParser as the tests' engines parse
 * it, OR or AND): 0, or 1 with "FAIL ..." printed. */
static inline int stock_answer(xg_handle *h, const char *text, int and_op,
                               uint32_t k, struct xg_result *out)
{
    struct xg_search_opts o = XG_SEARCH_DEFAULTS;
    o.k = k;
    o.default_and = and_op;
    o.engine = XG_ENGINE_XAPIAN;
    xg_xquery *xq;
    if (xg_handle_parse(h, text, &o, &xq) ||
        xg_handle_run_stock(h, xq, &o.bm25, k, out)) {
        printf("FAIL stock on '%s': %s\n", text, xg_last_error());
        return 1;
    }
    xg_shim_xquery_free(xq);
    return 0;
}

/* stock_answer for n texts, OR into or_out[] and AND into and_out[]. */
static inline int stock_answers(xg_handle *h, char (*texts)[512], int n,
                                uint32_t k, struct xg_result *or_out,
                                struct xg_result *and_out)
{
    for (int q = 0; q < n; ++q)
        if (stock_answer(h, texts[q], 0, k, &or_out[q]) ||
            stock_answer(h, texts[q], 1, k, &and_out[q]))
            return 1;
    return 0;
}

#endif
