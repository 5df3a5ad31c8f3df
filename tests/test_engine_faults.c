/** @file test_engine_faults.c
 *  @brief GPU engine faults fall back to the CPU matcher, whole and exact.
 *
 *  DESIGN.md, reliability rules: "any doubt (... GPU error, out of device
 *  memory, device lost) means the stock matcher answers".  With the engine
 *  running on its CPU twins (XG_GPU_TWINS=1, so CI needs no GPU), the n-th
 *  allocation of a batch is made to fail for every n: each run must still
 *  return, for every query, exactly stock Xapian's MSet (xg_searcher_run
 *  with XG_ENGINE_XAPIAN: the stock Enquire, not the project's matcher),
 *  and the fault must show as a counted fallback.  The CPU matcher is
 *  checked against the same reference first.
 *  usage: test_engine_faults SAMPLE_DIR WORK_DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../gpu/query/engine.h"
#include "../gpu/runtime/error.h"
#include "../plugin/searcher.h"
#include "mset_compare.h"
#include "sample_db.h"
#include "../shim/xg_export.h"
#include "../shim/xg_shim.h"

#define NQ 40


int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_engine_faults SAMPLE_DIR WORK_DIR\n");
        return 2;
    }
    char db[4096], qpath[4096];
    if (sample_db_in(argv[1], argv[2], "faults-db", db, qpath)) return 1;
    const char *paths[] = {db};

    setenv("XG_GPU_TWINS", "1", 1);
    xg_searcher *s;
    if (xg_searcher_open(paths, 1, NULL, &s)) {
        printf("FAIL open: %s\n", xg_last_error());
        return 1;
    }
    /* The first NQ plain-word queries of the sample, prepared. */
    FILE *f = fopen(qpath, "r");
    if (!f) return 1;
    struct xg_search_opts o = XG_SEARCH_DEFAULTS;
    struct xg_prepared *pq[NQ];
    struct xg_result ref[NQ], got[NQ];
    int status[NQ];
    char line[65536];
    int n = 0;
    while (n < NQ && fgets(line, sizeof line, f)) {
        char *text = strchr(line, '\t');
        if (!text) continue;
        for (char *p = ++text; *p; ++p)
            if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
                *p = ' ';
        xg_xquery *xq;
        if (xg_searcher_parse(s, text, &o, &xq)) continue;
        int rc = xg_searcher_prepare(s, xq, &pq[n]);
        struct xg_search_opts so = o;
        so.engine = XG_ENGINE_XAPIAN;
        if (!rc && xg_searcher_run(s, xq, &so, &ref[n])) {
            printf("FAIL stock search: %s\n", xg_last_error());
            return 1;
        }
        xg_shim_xquery_free(xq);
        if (rc) continue;
        struct xg_result cpu;
        if (xg_searcher_run_cpu(s, pq[n], &o, &cpu)) return 1;
        if (!xg_test_same_mset(&cpu, &ref[n], o.k)) {
            printf("FAIL query %d: the CPU matcher's MSet is not stock's\n", n);
            return 1;
        }
        xg_result_free(&cpu);
        ++n;
    }
    fclose(f);
    if (n == 0) {
        printf("FAIL: no query prepared from %s\n", qpath);
        return 1;
    }
    printf("test_engine_faults: %d queries, stock Xapian as reference (the "
           "CPU matcher equal to it)\n", n);
    int passed = 0, failed = 0, hit = 0;
    o.engine = XG_ENGINE_GPU;
    for (int fault = 0; fault <= 12; ++fault) {
        uint64_t before = xg_searcher_gpu_fallbacks(s);
        xg_engine_fail_next_alloc(fault);
        int rc = xg_searcher_run_prepared(s, pq, (uint32_t)n, &o, got, status);
        xg_engine_fail_next_alloc(0);
        uint64_t fell = xg_searcher_gpu_fallbacks(s) - before;
        int ok = rc == XG_OK;
        for (int i = 0; ok && i < n; ++i)
            ok = status[i] == XG_OK && xg_test_same_mset(&got[i], &ref[i], o.k);
        if (ok) {
            ++passed;
            hit += fell > 0;
            printf("ok allocation %2d fails: %s, all %d MSets exact\n", fault,
                   fell ? "engine failed, CPU matcher answered"
                        : "no fault reached", n);
        } else {
            ++failed;
            printf("FAIL allocation %d fails: rc %d (%s)\n", fault, rc,
                   xg_last_error());
        }
        if (rc == XG_OK)
            for (int i = 0; i < n; ++i) xg_result_free(&got[i]);
    }
    /* A fault must actually have been taken, or this test proved nothing. */
    if (!hit) {
        printf("FAIL: no injected fault reached the engine\n");
        ++failed;
    }
    for (int i = 0; i < n; ++i) {
        xg_result_free(&ref[i]);
        xg_prepared_free(pq[i]);
    }
    xg_searcher_close(s);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
