/** @file merge.h
 *  @brief The merge steps of the AND path, before the intersection:
 *         Parallel Merge Find block selection (seed 003 §8.1) and
 *         merge-path membership (seed 004 ch. 4).  Launchers and twins.
 *
 *  Block selection: every candidate (posting of its query's shortest list)
 *  finds, in each XG_MEMBER_BLOCK list, the one block whose B* range can
 *  hold it (member.h: xg_block_of) and marks it; only marked blocks of
 *  those lists are decoded (decode.h, pass 1).
 *
 *  Merge path: for each XG_MEMBER_MERGE list, the merge of the shortest
 *  list A (na) with it, B (nb), is cut into tiles of XG_MERGE_TILE steps
 *  along its na + nb diagonals.  A thread block finds its tile's ends by
 *  binary searches on the diagonals, loads the tile's parts of A and B
 *  into shared memory (coalesced), and each thread walks XG_MERGE_CHUNK
 *  steps of it, writing for each A[i] it consumes B's index of the same
 *  document or UINT32_MAX.
 */
#ifndef XG_MERGE_H
#define XG_MERGE_H

#include <stdint.h>

#include "engine_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct CUstream_st;

#define XG_MERGE_CHUNK 16u  /* merge steps per thread */
#define XG_MERGE_THREADS 256u
#define XG_MERGE_TILE (XG_MERGE_CHUNK * XG_MERGE_THREADS)

struct xg_merge_args {
    const struct xg_dquery *queries;
    const struct xg_dlist *lists;
    const uint32_t *iq;          /* INTERSECT queries (intersect.h) */
    const uint64_t *iprefix;     /* n_iq + 1 prefix sums of shortest df */
    uint32_t n_iq;
    uint32_t n_ml;               /* MERGE lists */
    const uint32_t *mlist;       /* their batch list indices */
    const uint64_t *mprefix;     /* n_ml + 1 prefix sums of their tiles */
    const uint32_t *docs;        /* decoded lists (xg_dlist.decoded) */
    uint8_t *bsel;               /* per batch block: 1 = decode it */
    uint32_t *mpos;              /* MERGE positions (xg_dlist.mpos) */
};

/* Tiles of the merge of an na-list with an nb-list. */
static inline uint64_t xg_merge_tiles(uint64_t na, uint64_t nb)
{
    return (na + nb + XG_MERGE_TILE - 1) / XG_MERGE_TILE;
}

/* Mark the blocks of XG_MEMBER_BLOCK lists that hold a candidate (bsel
 * must be zeroed); candidates = iprefix[n_iq].  Kernels return a
 * cudaError_t. */
int xg_block_select_gpu(const struct xg_dindex *ix,
                        const struct xg_merge_args *a, uint64_t candidates,
                        struct CUstream_st *stream);
int xg_block_select_ref(const struct xg_dindex *ix,
                        const struct xg_merge_args *a);

/* Fill mpos for every XG_MEMBER_MERGE list (their lists decoded). */
int xg_mergepath_gpu(const struct xg_merge_args *a, uint64_t tiles,
                     struct CUstream_st *stream);
int xg_mergepath_ref(const struct xg_merge_args *a);

#ifdef __cplusplus
}
#endif
#endif
