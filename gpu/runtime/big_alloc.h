/** @file big_alloc.h
 *  @brief Host memory for large results that copies from the device fill
 *         (the weight and qlm tables): aligned to 2 MB with transparent
 *         huge pages advised, since faulting in fresh 4 KB pages costs
 *         more than the copy itself (on the H100 host, 16 threads copying
 *         512 MB into fresh memory took 67 ms on 4 KB pages and 20 ms on
 *         huge pages; a host probe, docs/benchmarks-archive.md).  Freed with
 *         free().
 */
#ifndef XG_BIG_ALLOC_H
#define XG_BIG_ALLOC_H

#include <stddef.h>
#include <stdint.h>

/* n bytes (at least 1) on whole pages of their own, or NULL. */
void *xg_big_alloc(size_t n);
/* The same, every page touched by `threads` threads over large shares:
 * for memory that many small copies fill later (each would otherwise
 * fault its pages in on the few threads that copy it). */
void *xg_big_alloc_touched(size_t n, uint32_t threads);

/* The same faulting in, on `threads` threads of its own in the background
 * while the caller goes on (the weight engine's output while the device
 * builds the dictionary): the copies back then write resident pages.
 * Regions [p[i], p[i] + n[i]) for i < k (k <= 4).  NULL when no thread
 * starts: nothing is lost, the copies fault the pages in themselves. */
struct xg_prefault;
struct xg_prefault *xg_prefault_start(void *const *p, const size_t *n, int k,
                                      uint32_t threads);
/* Waits for the threads; before the regions are written or freed.  NULL
 * is a no-op. */
void xg_prefault_wait(struct xg_prefault *f);
/* Gives back the whole huge pages of [p, p + n) past its first `used`
 * bytes (p from xg_big_alloc, n its size): what a prefault touched beyond
 * a size known only later. */
void xg_big_trim(void *p, size_t used, size_t n);

#endif
