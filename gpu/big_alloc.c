/** @file big_alloc.c
 *  @brief Large host allocations on huge pages where the kernel allows
 *         them (big_alloc.h).
 */
#include "big_alloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "wt_int.h"

#define HUGE_PAGE ((size_t)2 << 20)

void *xg_big_alloc(size_t n)
{
    if (n < HUGE_PAGE) return malloc(n ? n : 1);
    void *p = NULL;
    const size_t m = (n + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    if (posix_memalign(&p, HUGE_PAGE, m)) return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, m, MADV_HUGEPAGE);   /* advice only: 4 KB pages work too */
#endif
    return p;
}

struct touch {
    char *p;
    size_t n;
};

static void *touch_share(void *arg)
{
    const struct touch *t = arg;
    memset(t->p, 0, t->n);
    return NULL;
}

void *xg_big_alloc_touched(size_t n, uint32_t threads)
{
    char *p = xg_big_alloc(n);
    if (!p || n < HUGE_PAGE) return p;
    struct touch t[XG_WT_MAX_SHARES];
    const size_t pages = (n + HUGE_PAGE - 1) / HUGE_PAGE;
    const uint32_t k = xg_wt_shares(threads, pages, 0);
    for (uint32_t i = 0; i < k; ++i) {
        const size_t lo = pages * i / k * HUGE_PAGE, hi = pages * (i + 1) / k * HUGE_PAGE;
        t[i] = (struct touch){p + lo, (hi < n ? hi : n) - lo};
    }
    xg_wt_run_threads(k, touch_share, t, sizeof *t);
    return p;
}

/* One byte written per 4 KB page: a huge page faults in whole at its
 * first write, a 4 KB one (where the kernel gave no huge page) at each. */
struct span {
    char *p;
    size_t n;
};

#define PREFAULT_MAX_THREADS 64

struct xg_prefault {
    pthread_t tid[PREFAULT_MAX_THREADS];
    struct span share[PREFAULT_MAX_THREADS][4];
    int n_threads;
};

static void *prefault_share(void *arg)
{
    const struct span *s = arg;
    for (int i = 0; i < 4; ++i)
        for (size_t o = 0; o < s[i].n; o += 4096) ((volatile char *)s[i].p)[o] = 0;
    return NULL;
}

struct xg_prefault *xg_prefault_start(void *const *p, const size_t *n, int k,
                                      uint32_t threads)
{
    if (k < 1 || k > 4 || threads < 1) return NULL;
    if (threads > PREFAULT_MAX_THREADS) threads = PREFAULT_MAX_THREADS;
    struct xg_prefault *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    /* Thread t takes the t-th share of each region, in pages. */
    for (uint32_t t = 0; t < threads; ++t)
        for (int i = 0; i < k; ++i) {
            const size_t pages = (n[i] + 4095) / 4096;
            const size_t lo = pages * t / threads * 4096,
                         hi = pages * (t + 1) / threads * 4096;
            f->share[t][i] = (struct span){(char *)p[i] + lo,
                                           (hi < n[i] ? hi : n[i]) - (lo < n[i] ? lo : n[i])};
        }
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
