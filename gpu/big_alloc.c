/** @file big_alloc.c
 *  @brief Large host allocations on huge pages where the kernel allows
 *         them (big_alloc.h).
 */
#include "big_alloc.h"

#include <stdlib.h>
#include <sys/mman.h>

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
