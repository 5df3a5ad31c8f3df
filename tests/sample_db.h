/** @file sample_db.h
 *  @brief For the C tests: index a docs.tsv into a fresh database with
 *         the TSV indexer and, if asked, export its GPU index beside it.
 */
#ifndef XG_TEST_SAMPLE_DB_H
#define XG_TEST_SAMPLE_DB_H

#include <stdio.h>
#include <stdlib.h>

#include "../gpu/runtime/error.h"
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

#endif
