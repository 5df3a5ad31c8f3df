/** @file big_alloc.c
 *  @brief Large host allocations on huge pages where the kernel allows
 *         them (big_alloc.h).
 */
#include "big_alloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "threads.h"

#define HUGE_PAGE ((size_t)2 << 20)

void *xg_big_alloc(size_t n)
{
    void *p = NULL;
    if (n < HUGE_PAGE) {
        /* Whole pages of its own: page-locking it (wt_cuda_place.c) may
         * not share a page with another registration. */
        const size_t m = n ? (n + 4095) / 4096 * 4096 : 4096;
        return posix_memalign(&p, 4096, m) ? NULL : p;
    }
    const size_t m = (n + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    if (posix_memalign(&p, HUGE_PAGE, m)) return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, m, MADV_HUGEPAGE);   /* advice only: 4 KB pages work too */
#endif
    return p;
}

/* Faulting in: one byte written per 4 KB page (a huge page faults in
 * whole at its first write, a 4 KB one, where the kernel gave no huge
 * page, at each), by `threads` threads, thread t over the t-th share of
 * each of up to 4 regions. */
struct span {
    char *p;
    size_t n;
};

#define PREFAULT_MAX_THREADS 64

static void *prefault_share(void *arg)
{
    const struct span *s = arg;
    for (int i = 0; i < 4; ++i) {
        for (size_t o = 0; o < s[i].n; o += 4096) ((volatile char *)s[i].p)[o] = 0;
        /* and the last byte: a share that does not start on a page
         * boundary ends in a page the steps above miss */
        if (s[i].n) ((volatile char *)s[i].p)[s[i].n - 1] = 0;
    }
    return NULL;
}

static void split(void *const *p, const size_t *n, int k, uint32_t threads,
                  struct span (*share)[4])
{
    for (uint32_t t = 0; t < threads; ++t)
        for (int i = 0; i < 4; ++i) {
            if (i >= k) {
                share[t][i] = (struct span){NULL, 0};
                continue;
            }
            const size_t pages = (n[i] + 4095) / 4096;
            const size_t lo = pages * t / threads * 4096,
                         hi = pages * (t + 1) / threads * 4096;
            share[t][i] = (struct span){(char *)p[i] + lo,
                                        (hi < n[i] ? hi : n[i]) - (lo < n[i] ? lo : n[i])};
        }
}

void *xg_big_alloc_touched(size_t n, uint32_t threads)
{
    void *p = xg_big_alloc(n);
    if (!p || n < HUGE_PAGE) return p;
    if (threads < 1) threads = 1;
    if (threads > PREFAULT_MAX_THREADS) threads = PREFAULT_MAX_THREADS;
    struct span share[PREFAULT_MAX_THREADS][4];
    split(&p, &n, 1, threads, share);
    xg_threads_run(threads, prefault_share, share, sizeof share[0]);
    return p;
}

struct xg_prefault {
    pthread_t tid[PREFAULT_MAX_THREADS];
    struct span share[PREFAULT_MAX_THREADS][4];
    int n_threads;
};

struct xg_prefault *xg_prefault_start(void *const *p, const size_t *n, int k,
                                      uint32_t threads)
{
    if (k < 1 || k > 4 || threads < 1) return NULL;
    if (threads > PREFAULT_MAX_THREADS) threads = PREFAULT_MAX_THREADS;
    struct xg_prefault *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    split(p, n, k, threads, f->share);
    for (uint32_t t = 0; t < threads; ++t) {
        if (pthread_create(&f->tid[t], NULL, prefault_share, f->share[t])) break;
        f->n_threads = (int)t + 1;
    }
    if (f->n_threads == 0) {
        free(f);
        return NULL;
    }
    /* Shares whose thread did not start are left to the copies. */
    return f;
}

void xg_prefault_wait(struct xg_prefault *f)
{
    if (!f) return;
    for (int t = 0; t < f->n_threads; ++t) pthread_join(f->tid[t], NULL);
    free(f);
}

void xg_big_trim(void *p, size_t used, size_t n)
{
    if (n < HUGE_PAGE) return;
    const size_t lo = (used + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    const size_t m = (n + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    if (lo < m) madvise((char *)p + lo, m - lo, MADV_DONTNEED);
}
