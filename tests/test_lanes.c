/** @file test_lanes.c
 *  @brief Two GPU engines on one index, run from two threads at once,
 *         answer exactly as stock Xapian does.
 *
 *  The dispatcher's two lanes (plugin/dispatch.h) are two handles whose
 *  engines share the index and run their batches at the same time, so
 *  nothing an engine runs may keep state outside itself.  With the
 *  engines on their CPU twins (XG_GPU_TWINS=1: CI has no GPU) and a
 *  candidate room of 16, every OR query of the sample that matches more
 *  than 8 documents narrows its selection threshold in histogram rounds
 *  (the step that once kept its histogram in a static array).  Each
 *  thread answers the sample's queries in batches of 8, ROUNDS times;
 *  every MSet must be stock's, and each hit's count of matched leaves
 *  Xapian's (the percentages' numerator).
 *  usage: test_lanes SAMPLE_DIR WORK_DIR
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../gpu/runtime/error.h"
#include "../plugin/handle.h"
#include "mset_compare.h"
#include "sample_db.h"

#define NQ 64
#define BATCH 8
#define ROUNDS 40
#define K 10

struct lane_run {
    xg_handle *h;
    struct xg_prepared **pq;
    const struct xg_result *ref;
    uint32_t (*leaves)[K];      /* Xapian's count for each reference hit */
    int n;
    int wrong, faults;
};

static void *lane(void *arg)
{
    struct lane_run *r = arg;
    const struct xg_bm25_params p = XG_BM25_DEFAULTS;
    struct xg_result out[BATCH];
    int status[BATCH];
    for (int round = 0; round < ROUNDS; ++round)
        for (int first = 0; first < r->n; first += BATCH) {
            uint32_t m = (uint32_t)(r->n - first < BATCH ? r->n - first
                                                         : BATCH);
            if (xg_handle_run_gpu(r->h, r->pq + first, NULL, K, m, &p, out,
                                  status)) {
                ++r->faults;
                continue;
            }
            for (uint32_t i = 0; i < m; ++i) {
                if (status[i] != XG_OK ||
                    !xg_test_same_mset(&out[i], &r->ref[first + i], K))
                    ++r->wrong;
                else
                    for (uint32_t j = 0; j < out[i].n_hits; ++j)
                        r->wrong += out[i].hits[j].matched_leaves !=
                                    r->leaves[first + i][j];
                if (status[i] == XG_OK) xg_result_free(&out[i]);
            }
        }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_lanes SAMPLE_DIR WORK_DIR\n");
        return 2;
    }
    char db[4096], qpath[4096];
    if (sample_db_in(argv[1], argv[2], "lanes-db", db, qpath)) return 1;
    const char *paths[] = {db};
    setenv("XG_GPU_TWINS", "1", 1);

    xg_handle *h[2];
    if (xg_handle_open(paths, 1, NULL, &h[0]) ||
        xg_handle_clone(h[0], paths, 1, &h[1])) {
        printf("FAIL open: %s\n", xg_last_error());
        return 1;
    }
    struct xg_engine_opts eo = XG_ENGINE_DEFAULTS;
    eo.cand_min = 16;
    for (int l = 0; l < 2; ++l) {
        const char *why;
        xg_handle_set_engine_opts(h[l], &eo);
        if (xg_handle_gpu_status(h[l], &why)) {
            printf("FAIL engine %d: %s\n", l, why);
            return 1;
        }
    }

    static char texts[NQ][512];
    int nt = sample_queries(qpath, texts, NQ);
    if (nt <= 0) {
        printf("FAIL: no query in %s\n", qpath);
        return 1;
    }
    struct xg_prepared *pq[NQ];
    struct xg_result ref[NQ];
    static uint32_t leaves[NQ][K];
    struct xg_search_opts o = XG_SEARCH_DEFAULTS;
    int n = 0;
    for (int q = 0; q < nt; ++q) {
        xg_xquery *xq;
        if (xg_handle_parse(h[0], texts[q], &o, &xq)) continue;
        int rc = xg_handle_prepare(h[0], xq, &pq[n]);
        xg_shim_xquery_free(xq);
        if (rc) continue;
        if (stock_answer(h[0], texts[q], 0, K, &ref[n])) return 1;
        for (uint32_t j = 0; j < ref[n].n_hits; ++j)
            if (xg_shim_doc_leaves(xg_handle_db(h[0]), &pq[n]->q,
                                   ref[n].hits[j].docid, &leaves[n][j])) {
                printf("FAIL Xapian's matched leaves: %s\n", xg_last_error());
                return 1;
            }
        ++n;
    }
    printf("test_lanes: %d OR queries, candidate room 16, two engines in "
           "two threads, %d rounds each\n", n, ROUNDS);

    struct lane_run run[2];
    pthread_t t[2];
    for (int l = 0; l < 2; ++l) {
        run[l] = (struct lane_run){h[l], pq, ref, leaves, n, 0, 0};
        if (pthread_create(&t[l], NULL, lane, &run[l])) return 1;
    }
    for (int l = 0; l < 2; ++l) pthread_join(t[l], NULL);
    int failed = 0;
    for (int l = 0; l < 2; ++l) {
        if (run[l].wrong || run[l].faults) {
            printf("FAIL lane %d: %d MSets or leaf counts not stock's, %d "
                   "batches failed\n",
                   l, run[l].wrong, run[l].faults);
            failed = 1;
        } else {
            printf("ok lane %d: %d MSets, every one stock's, leaf counts "
                   "too\n", l, n * ROUNDS);
        }
    }
    /* The narrowing must have run, or this proved nothing: more matches
     * than half the room, for some query. */
    int narrowed = 0;
    for (int q = 0; q < n; ++q) narrowed += ref[q].matches_estimated > 8;
    if (!narrowed) {
        printf("FAIL: no query matches more than 8 documents\n");
        failed = 1;
    }
    for (int q = 0; q < n; ++q) {
        xg_result_free(&ref[q]);
        xg_prepared_free(pq[q]);
    }
    xg_handle_close(h[1]);
    xg_handle_close(h[0]);
    printf("%s\n", failed ? "FAILED" : "passed");
    return failed;
}
