/** @file test_lanes.c
 *  @brief One GPU engine run from three threads at once answers exactly
 *         as stock Xapian does.
 *
 *  The dispatcher's two lanes (plugin/dispatch.h) run their batches on
 *  one handle at the same time: the engine gives each a slot (batch
 *  buffers, results, a stream) and shares the index, so nothing a batch
 *  runs may keep state outside its slot.  A third thread waits for a
 *  slot, and weighs with other BM25 parameters, so the documents' length
 *  normalisers change between its searches and the others' (only while
 *  no search uses them).  With the engine on its CPU twins (XG_GPU_TWINS=1:
 *  CI has no GPU) and a candidate room of 16, every OR query of the
 *  sample that matches more than 8 documents narrows its selection
 *  threshold in histogram rounds (the step that once kept its histogram
 *  in a static array).  Each thread answers the sample's queries
 *  ROUNDS times: threads 0 and 2 in batches of 8, which run beside the
 *  other slot's, thread 1 all of them in one batch of at least
 *  XG_TURN_MIN_QUERIES, which takes turns on the device (engine_cuda.c).
 *  Every MSet must be stock's under the
 *  thread's parameters, and each hit's count of matched leaves Xapian's
 *  (the percentages' numerator).  With `gpu` the engine runs on the
 *  device (tests/gpu/run.sh kernels), its two slots on two streams.
 *  usage: test_lanes SAMPLE_DIR WORK_DIR [gpu]
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../gpu/runtime/error.h"
#include "../gpu/runtime/tuning.h"
#include "../plugin/handle.h"
#include "mset_compare.h"
#include "sample_db.h"

#define NQ 96
#define BATCH 8                 /* threads 0 and 2: small batches */
#define ROUNDS 40
#define K 10

#define THREADS 3

struct lane_run {
    xg_handle *h;
    struct xg_bm25_params p;
    int batch;                  /* queries per engine call */
    struct xg_prepared **pq;
    const struct xg_result *ref;
    uint32_t (*leaves)[K];      /* Xapian's count for each reference hit */
    int n;
    int wrong, faults;
};

static void *lane(void *arg)
{
    struct lane_run *r = arg;
    static _Thread_local struct xg_result out[NQ];
    static _Thread_local int status[NQ];
    const int bs = r->batch;
    for (int round = 0; round < ROUNDS; ++round)
        for (int first = 0; first < r->n; first += bs) {
            uint32_t m = (uint32_t)(r->n - first < bs ? r->n - first : bs);
            if (xg_handle_run_gpu(r->h, r->pq + first, NULL, K, m, &r->p,
                                  out, NULL, status)) {
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
            /* Let a waiting thread take the slot: the threads' searches
             * must interleave, or their sharing proves nothing. */
            sched_yield();
        }
    return NULL;
}

/* Stock's MSet of each prepared query under p, and Xapian's count of
 * matched leaves for each hit. */
static int references(xg_handle *h, char (*texts)[512], const int *text_of,
                      struct xg_prepared **pq, int n,
                      const struct xg_bm25_params *p, struct xg_result *ref,
                      uint32_t (*leaves)[K])
{
    struct xg_search_opts o = XG_SEARCH_DEFAULTS;
    for (int q = 0; q < n; ++q) {
        xg_xquery *xq;
        if (xg_handle_parse(h, texts[text_of[q]], &o, &xq) ||
            xg_handle_run_stock(h, xq, p, K, &ref[q])) {
            printf("FAIL stock: %s\n", xg_last_error());
            return 1;
        }
        xg_shim_xquery_free(xq);
        for (uint32_t j = 0; j < ref[q].n_hits; ++j)
            if (xg_shim_doc_leaves(xg_handle_db(h), &pq[q]->q,
                                   ref[q].hits[j].docid, &leaves[q][j])) {
                printf("FAIL Xapian's matched leaves: %s\n", xg_last_error());
                return 1;
            }
    }
    return 0;
}

int main(int argc, char **argv)
{
    const int gpu = argc == 4 && !strcmp(argv[3], "gpu");
    if (argc != 3 && !gpu) {
        fprintf(stderr, "usage: test_lanes SAMPLE_DIR WORK_DIR [gpu]\n");
        return 2;
    }
    char db[4096], qpath[4096];
    if (sample_db_in(argv[1], argv[2], "lanes-db", db, qpath)) return 1;
    const char *paths[] = {db};
    if (!gpu) setenv("XG_GPU_TWINS", "1", 1);

    xg_handle *h;
    if (xg_handle_open(paths, 1, NULL, &h)) {
        printf("FAIL open: %s\n", xg_last_error());
        return 1;
    }
    struct xg_engine_opts eo = XG_ENGINE_DEFAULTS;
    eo.cand_min = 16;
    xg_handle_set_engine_opts(h, &eo);
    const char *why;
    if (xg_handle_gpu_status(h, &why)) {
        printf("FAIL engine: %s\n", why);
        return 1;
    }
    if (xg_handle_gpu_slots(h) != 2) {
        printf("FAIL: the engine runs %u batches at once, not 2\n",
               xg_handle_gpu_slots(h));
        return 1;
    }

    static char texts[NQ][512];
    int nt = sample_queries(qpath, texts, NQ);
    if (nt <= 0) {
        printf("FAIL: no query in %s\n", qpath);
        return 1;
    }
    struct xg_prepared *pq[NQ];
    int text_of[NQ];
    struct xg_search_opts o = XG_SEARCH_DEFAULTS;
    int n = 0;
    for (int q = 0; q < nt; ++q) {
        xg_xquery *xq;
        if (xg_handle_parse(h, texts[q], &o, &xq)) continue;
        int rc = xg_handle_prepare(h, xq, &pq[n]);
        xg_shim_xquery_free(xq);
        if (rc) continue;
        text_of[n++] = q;
    }
    /* Threads 0 and 1 weigh with BM25's defaults, thread 2 with others. */
    const struct xg_bm25_params defaults = XG_BM25_DEFAULTS;
    struct xg_bm25_params other = defaults;
    other.k1 = 2.0;
    other.b = 0.5;
    static struct xg_result ref[2][NQ];
    static uint32_t leaves[2][NQ][K];
    if (references(h, texts, text_of, pq, n, &defaults, ref[0], leaves[0]) ||
        references(h, texts, text_of, pq, n, &other, ref[1], leaves[1]))
        return 1;
    if (n < XG_TURN_MIN_QUERIES) {
        printf("FAIL: %d queries prepared, fewer than a batch that takes "
               "turns (%d)\n", n, XG_TURN_MIN_QUERIES);
        return 1;
    }
    printf("test_lanes: %d OR queries, candidate room 16, one engine (%s) "
           "in %d threads (the third with k1 2, b 0.5; the second in "
           "batches of %d, the others of %d), %d rounds each\n",
           n, gpu ? "GPU" : "CPU twins", THREADS, n, BATCH, ROUNDS);

    struct lane_run run[THREADS];
    pthread_t t[THREADS];
    for (int l = 0; l < THREADS; ++l) {
        const int w = l == 2;
        run[l] = (struct lane_run){h, w ? other : defaults,
                                   l == 1 ? n : BATCH, pq, ref[w],
                                   leaves[w], n, 0, 0};
        if (pthread_create(&t[l], NULL, lane, &run[l])) return 1;
    }
    for (int l = 0; l < THREADS; ++l) pthread_join(t[l], NULL);
    int failed = 0;
    for (int l = 0; l < THREADS; ++l) {
        if (run[l].wrong || run[l].faults) {
            printf("FAIL thread %d: %d MSets or leaf counts not stock's, %d "
                   "batches failed\n",
                   l, run[l].wrong, run[l].faults);
            failed = 1;
        } else {
            printf("ok thread %d: %d MSets, every one stock's, leaf counts "
                   "too\n", l, n * ROUNDS);
        }
    }
    /* The narrowing must have run, or this proved nothing: more matches
     * than half the room, for some query. */
    int narrowed = 0;
    for (int q = 0; q < n; ++q) narrowed += ref[0][q].matches_estimated > 8;
    if (!narrowed) {
        printf("FAIL: no query matches more than 8 documents\n");
        failed = 1;
    }
    for (int q = 0; q < n; ++q) {
        xg_result_free(&ref[0][q]);
        xg_result_free(&ref[1][q]);
        xg_prepared_free(pq[q]);
    }
    xg_handle_close(h);
    printf("%s\n", failed ? "FAILED" : "passed");
    return failed;
}
