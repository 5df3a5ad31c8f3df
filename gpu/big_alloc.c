/** @file big_alloc.c
 *  @brief Large host allocations on huge pages where the kernel allows
 *         them (big_alloc.h).
 */
#include "big_alloc.h"

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
