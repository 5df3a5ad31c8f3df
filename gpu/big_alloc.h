/** @file big_alloc.h
 *  @brief Host memory for large results that copies from the device fill
 *         (the weight and qlm tables): aligned to 2 MB with transparent
 *         huge pages advised, since faulting in fresh 4 KB pages costs
 *         more than the copy itself (on the H100 host, 16 threads copying
 *         512 MB into fresh memory took 67 ms on 4 KB pages and 20 ms on
 *         huge pages; docs/benchmarks.md, seventh session).  Freed with
 *         free().
 */
#ifndef XG_BIG_ALLOC_H
#define XG_BIG_ALLOC_H

#include <stddef.h>
#include <stdint.h>

/* n bytes (at least 1), or NULL. */
void *xg_big_alloc(size_t n);
/* The same, every page touched by `threads` threads over large shares:
 * for memory that many small copies fill later (each would otherwise
 * fault its pages in on the few threads that copy it). */
void *xg_big_alloc_touched(size_t n, uint32_t threads);

#endif
