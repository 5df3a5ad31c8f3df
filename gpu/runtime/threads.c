/** @file threads.c
 *  @brief Fork-join for the weight and qlm pipelines' host steps (the CPU
 *         twins' passes, the dictionary merge, placing, copies through the
 *         pinned buffers) on a pool of threads started once: a run that
 *         places 210 chunks forks several times per chunk, and starting
 *         16 threads each time cost more than some of the steps.
 *
 *  One caller at a time uses the pool; a second caller meanwhile, or a
 *  call from inside a pooled step, starts threads of its own as before, so
 *  nothing waits on itself.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "threads.h"

#include <unistd.h>

#include "error.h"
#include "knobs.h"

#define MAX_THREADS 256

/* The old way: threads started for this call only. */
static void run_spawned(uint32_t n, void *(*fn)(void *), char *args, size_t size)
{
    pthread_t tid[MAX_THREADS];
    int started[MAX_THREADS] = {0};
    const uint32_t m = n < MAX_THREADS ? n : MAX_THREADS;
    for (uint32_t t = 1; t < m; ++t)
        started[t] = !pthread_create(&tid[t], NULL, fn, args + t * size);
    fn(args);
    for (uint32_t t = m; t < n; ++t) fn(args + (size_t)t * size);
    for (uint32_t t = 1; t < m; ++t) {
        if (started[t]) pthread_join(tid[t], NULL);
        else fn(args + t * size);
    }
}

static pthread_mutex_t caller = PTHREAD_MUTEX_INITIALIZER;  /* one user */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t go = PTHREAD_COND_INITIALIZER, done = PTHREAD_COND_INITIALIZER;
static uint32_t n_workers;          /* worker w runs element w + 1 */
static uint64_t generation;         /* one per job */
static uint32_t pending;            /* workers yet to finish this job */
static void *(*job_fn)(void *);
static char *job_args;
static size_t job_size;
static uint32_t job_n;
static uint64_t start_gen[MAX_THREADS]; /* the job before a worker's first */
static _Thread_local int in_step;   /* this thread runs a pooled step */

static void *worker(void *arg)
{
    const uint32_t w = (uint32_t)(uintptr_t)arg;
    in_step = 1;
    pthread_mutex_lock(&mu);
    uint64_t seen = start_gen[w];
    for (;;) {
        while (generation == seen) pthread_cond_wait(&go, &mu);
        seen = generation;
        if (w + 1 < job_n) {
            void *(*fn)(void *) = job_fn;
            char *a = job_args + (size_t)(w + 1) * job_size;
            pthread_mutex_unlock(&mu);
            fn(a);
            pthread_mutex_lock(&mu);
        }
        if (--pending == 0) pthread_cond_signal(&done);
    }
    return NULL;
}

/* Workers for n elements (the caller runs element 0); fewer if threads
 * cannot start.  Called with `caller` held. */
static void grow(uint32_t n)
{
    while (n_workers + 1 < n && n_workers + 1 < MAX_THREADS) {
        pthread_t t;
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        /* A new worker takes part from the next job on. */
        pthread_mutex_lock(&mu);
        start_gen[n_workers] = generation;
        const int ok = !pthread_create(&t, &at, worker, (void *)(uintptr_t)n_workers);
        if (ok) ++n_workers;
        pthread_mutex_unlock(&mu);
        pthread_attr_destroy(&at);
        if (!ok) break;
    }
}

uint32_t xg_threads_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (uint32_t)n;
}

int xg_threads_run(uint32_t n, void *(*fn)(void *), void *args, size_t size)
{
    char *a = args;
    if (n <= 1) {
        if (n) fn(a);
        return XG_OK;
    }
    if (in_step || pthread_mutex_trylock(&caller)) {
        run_spawned(n, fn, a, size);
        return XG_OK;
    }
    grow(n);
    pthread_mutex_lock(&mu);
    job_fn = fn;
    job_args = a;
    job_size = size;
    job_n = n;
    pending = n_workers;
    ++generation;
    pthread_cond_broadcast(&go);
    pthread_mutex_unlock(&mu);
    in_step = 1;
    fn(a);
    /* Elements no worker takes (beyond MAX_THREADS, or threads that did
     * not start). */
    for (uint32_t t = n_workers + 1; t < n; ++t) fn(a + (size_t)t * size);
    in_step = 0;
    pthread_mutex_lock(&mu);
    while (pending) pthread_cond_wait(&done, &mu);
    pthread_mutex_unlock(&mu);
    pthread_mutex_unlock(&caller);
    return XG_OK;
}

uint32_t xg_threads_shares(uint32_t threads, uint64_t items, unsigned shift)
{
    uint32_t t = threads < 1                       ? 1
                 : threads > XG_THREADS_MAX_SHARES ? XG_THREADS_MAX_SHARES
                                                   : threads;
    if (items >> shift < t) t = (uint32_t)(items >> shift) + 1;
    return t;
}

struct piece {
    char *dst;
    const char *src;
    size_t n;
};

/* Shares of at least this much go by streaming stores. */
#define STREAM_MIN ((size_t)64 << 10)

#if defined(__SSE2__)
/* A copy with non-temporal stores: the destination's lines are written
 * without being read first (no read for ownership) and do not evict the
 * cache.  glibc's memcpy does this only above a threshold (a share of the
 * L3), which one thread's share of a staging piece is below; the pinned
 * staging's copies are bound by the host's memory bandwidth, and a third
 * less traffic took them from 32.4 to 34.3 GB/s up and 32.2 to 37.1 back
 * (bench_link on the H100, docs/benchmarks-archive.md).
 * XG_WT_NO_STREAM=1 copies by memcpy, to measure this (knobs.h). */
static void stream_copy(char *dst, const char *src, size_t n)
{
    size_t head = (16 - ((uintptr_t)dst & 15)) & 15;
    if (head > n) head = n;
    memcpy(dst, src, head);
    dst += head;
    src += head;
    n -= head;
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        const __m128i a = _mm_loadu_si128((const __m128i *)(src + i));
        const __m128i b = _mm_loadu_si128((const __m128i *)(src + i + 16));
        const __m128i c = _mm_loadu_si128((const __m128i *)(src + i + 32));
        const __m128i d = _mm_loadu_si128((const __m128i *)(src + i + 48));
        _mm_stream_si128((__m128i *)(dst + i), a);
        _mm_stream_si128((__m128i *)(dst + i + 16), b);
        _mm_stream_si128((__m128i *)(dst + i + 32), c);
        _mm_stream_si128((__m128i *)(dst + i + 48), d);
    }
    memcpy(dst + i, src + i, n - i);
    _mm_sfence();       /* the stores are weakly ordered: done before the join */
}

#endif

static void *copy_piece(void *arg)
{
    const struct piece *p = arg;
#if defined(__SSE2__)
    if (p->n >= STREAM_MIN && !xg_knob_wt_no_stream()) {
        stream_copy(p->dst, p->src, p->n);
        return NULL;
    }
#endif
    if (p->n) memcpy(p->dst, p->src, p->n);
    return NULL;
}

void xg_threads_memcpy(void *dst, const void *src, size_t n, uint32_t threads)
{
    struct piece p[XG_THREADS_MAX_SHARES];
    const uint32_t t = xg_threads_shares(threads, n, 20);
    for (uint32_t i = 0; i < t; ++i) {
        const size_t lo = n / t * i, hi = i + 1 == t ? n : n / t * (i + 1);
        p[i] = (struct piece){(char *)dst + lo, (const char *)src + lo, hi - lo};
    }
    xg_threads_run(t, copy_piece, p, sizeof *p);
}
