/** @file test_soak.c
 *  @brief The soak: many application threads through one context (the
 *         router's Enquire front, its dispatcher batching their GPU
 *         queries) for a long run, with GPU faults injected at random
 *         points all along; every MSet must be stock Xapian's and nothing
 *         may leak or grow.
 *
 *  The bundled Cranfield sample's queries, OR and AND, and shapes the
 *  engines leave to stock (phrase, NOT), each thread in its own order.  A
 *  fault thread keeps arming the fault hook (runtime/fault.h: the n-th next
 *  allocation of the device pool or of the twins' pipeline fails) with a
 *  random n of 1..32, re-armed a random 0.2-5.2 ms after each fault is
 *  taken, so faults land in every stage of batches of every size; the
 *  router must answer each hit query from stock and count it.  Checked:
 *  every answer equals stock's (docids, bit-equal weights, the match
 *  estimate), the routes the calls returned are the routes the context
 *  counted, faults were taken and answered by stock, served queries ran on
 *  the GPU engine, and the resident set did not grow between the end of
 *  the first tenth and the end (the leak check proper is LeakSanitizer in
 *  CI's ASan build).
 *  usage: test_soak SAMPLE_DIR WORK_DIR [THREADS [QUERIES_PER_THREAD]]
 *         [--device]   (the real GPU; without it the kernels' CPU twins)
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../gpu/runtime/error.h"
#include "../gpu/runtime/fault.h"
#include "../plugin/handle.h"
#include "../plugin/xapian-gpu.h"
#include "mset_compare.h"
#include "sample_db.h"

#define NQ 225
#define K 10

static char texts[NQ + 2][512];
static int n_texts;
static struct xg_result stock[2][NQ + 2];   /* [and_op][query] */
static xg_context *ctx;
static uint32_t per_thread;
static atomic_int running;
static atomic_ulong mismatches, errors, done_queries;
static atomic_ulong routes[XG_ROUTE_COUNT];


static uint32_t gcd(uint32_t a, uint32_t b)
{
    while (b) { uint32_t r = a % b; a = b; b = r; }
    return a;
}

static struct xg_search_opts opts(int and_op)
{
    struct xg_search_opts o = XG_SEARCH_DEFAULTS;
    o.k = K;
    o.default_and = and_op;
    return o;
}

static void *client(void *arg)
{
    uint32_t t = (uint32_t)(uintptr_t)arg;
    /* Each thread its own stride through the queries. */
    uint32_t stride = 2 * t + 1;
    while (gcd(stride, (uint32_t)n_texts) != 1) stride += 2;
    for (uint32_t i = 0; i < per_thread; ++i) {
        int q = (int)((t * 37u + i * stride) % (uint32_t)n_texts);
        int and_op = (int)((i + t) & 1);
        struct xg_search_opts o = opts(and_op);
        struct xg_result res;
        int route = -1;
        int rc = xg_context_search(ctx, texts[q], &o, 0, K, &res, &route);
        if (rc != XG_OK) {
            if (atomic_fetch_add(&errors, 1) < 5)
                printf("FAIL thread %u query '%s': %s\n", t, texts[q],
                       xg_last_error());
            continue;
        }
        if (!xg_test_same_mset(&res, &stock[and_op][q], K) &&
            atomic_fetch_add(&mismatches, 1) < 5)
            printf("FAIL thread %u query '%s' (%s, route %s): MSet differs "
                   "from stock's (%u hits, estimate %llu; stock %u, %llu)\n",
                   t, texts[q], and_op ? "AND" : "OR", xg_route_name(route),
                   res.n_hits, (unsigned long long)res.matches_estimated,
                   stock[and_op][q].n_hits,
                   (unsigned long long)stock[and_op][q].matches_estimated);
        xg_result_free(&res);
        if (route >= 0 && route < XG_ROUTE_COUNT)
            atomic_fetch_add(&routes[route], 1);
        atomic_fetch_add(&done_queries, 1);
    }
    return NULL;
}

/* Arm the fault hook with a random countdown; once that fault has been
 * taken (or 100 ms passed: a quiet spell), a random pause, and again.
 * Waiting for it to be taken matters on a device, whose pool allocates
 * only a few times a batch. */
static void *faults(void *arg)
{
    uint64_t x = (uint64_t)(uintptr_t)arg | 1;
    while (atomic_load(&running)) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        xg_fault_fail_next_alloc(1 + (int)(x % 32));
        for (int i = 0; i < 500 && xg_fault_armed() && atomic_load(&running);
             ++i) {
            struct timespec ts = {0, 200000};
            nanosleep(&ts, NULL);
        }
        struct timespec ts = {0, 200000 + (long)(x >> 40) % 5000000};
        nanosleep(&ts, NULL);
    }
    xg_fault_fail_next_alloc(0);
    return NULL;
}

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, resident = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
        fclose(f);
    }
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

int main(int argc, char **argv)
{
    int device = 0, pos = 0;
    uint32_t threads = 16;
    per_thread = 100000;
    const char *sample = NULL, *work = NULL;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--device")) device = 1;
        else if (pos == 0) sample = argv[i], ++pos;
        else if (pos == 1) work = argv[i], ++pos;
        else if (pos == 2) threads = (uint32_t)atoi(argv[i]), ++pos;
        else if (pos == 3) per_thread = (uint32_t)atoi(argv[i]), ++pos;
    }
    if (!work || threads == 0 || threads > 256 || per_thread < 10) {
        fprintf(stderr, "usage: test_soak SAMPLE_DIR WORK_DIR [THREADS "
                "[QUERIES_PER_THREAD]] [--device]\n");
        return 2;
    }
    char tsv[4096], qpath[4096], db[4096];
    snprintf(tsv, sizeof tsv, "%s/docs.tsv", sample);
    snprintf(qpath, sizeof qpath, "%s/queries.tsv", sample);
    snprintf(db, sizeof db, "%s/soak-db", work);
    mkdir(work, 0755);
    if (make_db(tsv, db, 1)) return 1;
    if ((n_texts = sample_queries(qpath, texts, NQ)) <= 0) return 1;
    strcpy(texts[n_texts++], "\"boundary layer\" flow");
    strcpy(texts[n_texts++], "shock NOT wave");

    const char *paths[] = {db};
    xg_handle *h;
    if (xg_handle_open(paths, 1, NULL, &h)) {
        printf("FAIL open: %s\n", xg_last_error());
        return 1;
    }
    if (stock_answers(h, texts, n_texts, K, stock[0], stock[1])) return 1;
    xg_handle_close(h);

    if (device) unsetenv("XG_GPU_TWINS");
    else setenv("XG_GPU_TWINS", "1", 1);
    struct xg_context_opts co = XG_CONTEXT_DEFAULTS;
    co.engine = XG_ENGINE_GPU;
    if (xg_context_open(paths, 1, NULL, &co, &ctx)) {
        printf("FAIL context: %s\n", xg_last_error());
        return 1;
    }
    printf("test_soak: %u threads x %u queries (%d texts, OR and AND), "
           "GPU engine on %s, faults injected throughout\n", threads,
           per_thread, n_texts, device ? "the device" : "the CPU twins");

    atomic_store(&running, 1);
    pthread_t ft, *ct = calloc(threads, sizeof *ct);
    if (!ct || pthread_create(&ft, NULL, faults, (void *)(uintptr_t)time(NULL)))
        return 1;
    for (uint32_t t = 0; t < threads; ++t)
        if (pthread_create(&ct[t], NULL, client, (void *)(uintptr_t)t))
            return 1;
    /* The resident set once a tenth is done (caches, pools and the batch
     * buffers have reached their size), and at the end. */
    uint64_t total = (uint64_t)threads * per_thread;
    long rss_early = 0;
    while (atomic_load(&done_queries) + atomic_load(&errors) < total / 10)
        usleep(20000);
    rss_early = rss_kib();
    for (uint32_t t = 0; t < threads; ++t) pthread_join(ct[t], NULL);
    long rss_end = rss_kib();
    atomic_store(&running, 0);
    pthread_join(ft, NULL);
    free(ct);

    uint64_t counted[XG_ROUTE_COUNT];
    xg_context_routes(ctx, counted);
    int fail = 0;
    printf("routes:");
    for (int i = 0; i < XG_ROUTE_COUNT; ++i) {
        if (counted[i])
            printf(" %s %llu", xg_route_name(i), (unsigned long long)counted[i]);
        if (counted[i] != atomic_load(&routes[i])) fail = 1;
    }
    printf("\n");
    if (fail)
        printf("FAIL the context's route counts are not the routes its "
               "calls returned\n");
    if (atomic_load(&mismatches) || atomic_load(&errors)) {
        printf("FAIL %lu MSets differ from stock's, %lu errors\n",
               (unsigned long)atomic_load(&mismatches),
               (unsigned long)atomic_load(&errors));
        fail = 1;
    }
    if (counted[XG_ROUTE_STOCK_GPU_ERROR] == 0 || counted[XG_ROUTE_GPU] == 0) {
        printf("FAIL expected both GPU answers and injected faults answered "
               "by stock\n");
        fail = 1;
    }
    /* Growth past a slack for allocator fragmentation is a leak. */
    long grew = rss_end - rss_early;
    printf("resident set: %ld KiB after a tenth, %ld KiB at the end\n",
           rss_early, rss_end);
    if (grew > 16384 + rss_early / 8) {
        printf("FAIL the resident set grew by %ld KiB\n", grew);
        fail = 1;
    }
    xg_context_close(ctx);
    for (int and_op = 0; and_op < 2; ++and_op)
        for (int q = 0; q < n_texts; ++q) xg_result_free(&stock[and_op][q]);
    if (!fail)
        printf("ok soak: %llu queries, every MSet stock's\n",
               (unsigned long long)total);
    return fail;
}
