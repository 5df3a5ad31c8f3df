/** @file list_cache.h
 *  @brief Host-side bookkeeping of an LRU cache of posting lists held in a
 *         fixed-size device memory pool: where each list lives and which
 *         lists to evict.  Pure C; it never touches device memory.
 *
 *  The GPU engine owns one device pool of `pool_bytes`.  Before a batch it
 *  calls xg_lcache_acquire() for each list the batch needs (a list is named
 *  by its term id and has a fixed byte size); the answer is the list's byte
 *  offset in the pool and whether the caller must copy it in now.  Acquired
 *  lists are pinned, never evicted, until xg_lcache_unpin_all() ends the
 *  batch.
 *
 *  Layout: a binary buddy allocator over 256-byte units.  A list of `size`
 *  bytes takes one block of 256 * 2^k bytes, the smallest that holds it,
 *  at an offset that is a multiple of the block's own size.  Internal
 *  fragmentation is therefore up to 2x (a 257-byte list takes 512 bytes);
 *  we accept that for O(log pool) allocation and coalescing.  A pool that is
 *  not a power-of-two multiple of 256 is cut, by the binary digits of
 *  pool_bytes / 256, into top-level blocks of decreasing size laid end to
 *  end (so each is aligned to its size); bytes past the last whole 256 are
 *  unused.  Blocks never merge across top-level blocks, so the largest list
 *  that fits is the largest power-of-two multiple of 256 not above
 *  pool_bytes.  A new block is the lowest-addressed free block of the
 *  smallest order that fits, split down as needed (deterministic: the same
 *  calls give the same offsets).
 *
 *  Eviction: while no block of the needed order is free, the least recently
 *  acquired unpinned list is evicted (lookups do not count as use).  Lists
 *  acquired in the current batch are the most recent ones, so the LRU end
 *  is unpinned unless every resident list is pinned; then the acquire fails.
 *
 *  Costs: acquire, evict and the buddy operations are O(log pool): each of
 *  the (at most 33) orders keeps its free blocks in a 64-ary hierarchical
 *  bitmap, so a find/set/clear touches one word per level (at most 6).
 *  Unpinning is O(1) (a batch counter).  Memory: 17 bytes per term id,
 *  allocated once, and about pool_bytes / 1024 bytes of bitmaps (64 MiB for
 *  a 64 GiB pool).  Not thread-safe: one cache per engine, which
 *  then runs one batch at a time (one slot).
 */
#ifndef XG_LIST_CACHE_H
#define XG_LIST_CACHE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define XG_LCACHE_UNIT 256u              /* smallest block, and alignment */
#define XG_LCACHE_MAX_POOL (1ull << 40)  /* 2^32 units: offsets fit 32 bits */

struct xg_lcache; /* opaque */

struct xg_lcache_stats {
    uint64_t hits;           /* successful acquires of a resident list */
    uint64_t misses;         /* successful acquires that placed a list */
    uint64_t evictions;      /* lists evicted to make room */
    uint64_t bytes_loaded;   /* sum of `size` over the misses */
    uint64_t resident_bytes; /* pool bytes held: block sizes, not list sizes */
    uint64_t resident_lists; /* lists resident now */
};

/* Create a cache for a pool of `pool_bytes` device bytes (256 ..
 * XG_LCACHE_MAX_POOL) and term ids below `n_terms` (1 .. UINT32_MAX).
 * Returns XG_OK and *out, XG_ERR_ARG for bad arguments, XG_ERR_NOMEM when
 * the host tables cannot be allocated (message set by xg_set_error). */
int xg_lcache_create(uint64_t pool_bytes, uint64_t n_terms,
                     struct xg_lcache **out);

/* Free the cache (NULL is fine). */
void xg_lcache_destroy(struct xg_lcache *c);

/* Make list `term` of `size` bytes (> 0) resident and pinned until
 * xg_lcache_unpin_all().  Sets *offset to its byte offset in the pool (a
 * multiple of its block size, so of 256) and *load to 1 if the caller must
 * copy the list in now, 0 if it was resident.  Acquiring a term again in the
 * same batch is a hit with the same offset.  Evicts least recently used
 * unpinned lists as needed.
 * Returns XG_OK; XG_ERR_ARG for a NULL pointer, term >= n_terms, size 0, or
 * a resident term acquired with a size that needs another block order (a
 * list's size is fixed); XG_ERR_NOMEM when the list is larger than the
 * largest top-level block (nothing evicted) or cannot fit beside the pinned
 * lists (then every unpinned list has been evicted).  A failed acquire
 * counts in no statistic but evictions, leaves the term not resident (or as
 * it was) and never moves or evicts a pinned list. */
int xg_lcache_acquire(struct xg_lcache *c, uint32_t term, uint64_t size,
                      uint64_t *offset, int *load);

/* End of batch: unpin every list (O(1)).  Lists stay resident. */
void xg_lcache_unpin_all(struct xg_lcache *c);

/* 1 and *offset (if offset is not NULL) when `term` is resident, else 0
 * (also for term >= n_terms).  No LRU update, no pin. */
int xg_lcache_lookup(const struct xg_lcache *c, uint32_t term,
                     uint64_t *offset);

/* Copy the counters into *st. */
void xg_lcache_stats(const struct xg_lcache *c, struct xg_lcache_stats *st);

#ifdef __cplusplus
}
#endif
#endif
