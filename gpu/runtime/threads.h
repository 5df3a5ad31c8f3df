/** @file threads.h
 *  @brief Fork-join on a pool of host threads started once (threads.c),
 *         for every product's host steps (the CPU twins' passes, the
 *         dictionary merge, placing, copies through the pinned buffers),
 *         and the number of cores that a thread count of 0 means.
 */
#ifndef XG_THREADS_H
#define XG_THREADS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Run fn on each of the n elements of args (`size` bytes each) on up to
 * 256 threads, the caller's among them, from a pool started once;
 * elements beyond the threads run on the caller's. */
int xg_threads_run(uint32_t n, void *(*fn)(void *), void *args, size_t size);
/* How many shares to split `items` into for xg_threads_run: `threads`
 * (1 to XG_THREADS_MAX_SHARES), but no more than one per 2^shift items
 * plus one, so that small jobs do not wake every thread. */
#define XG_THREADS_MAX_SHARES 256
uint32_t xg_threads_shares(uint32_t threads, uint64_t items, unsigned shift);
/* memcpy on up to `threads` threads (pieces of at least 1 MB). */
void xg_threads_memcpy(void *dst, const void *src, size_t n, uint32_t threads);
/* The number of CPU cores (threads 0 means this many). */
uint32_t xg_threads_cores(void);

#ifdef __cplusplus
}
#endif
#endif
