/** @file merge.cu
 *  @brief Block selection and merge path of the AND path (merge.h).
 *         Twins: merge_ref.c.
 */
#include <cuda_runtime.h>

#include "member.h"
#include "merge.h"
#include "merge_step.h"
#include "../runtime/kern_util.cuh"

/* One thread per candidate: mark its block in each BLOCK list. */
static __global__ void __launch_bounds__(THREADS)
block_select_kernel(struct xg_dindex ix, struct xg_merge_args a)
{
    const uint64_t total = a.iprefix[a.n_iq];
    for (uint64_t g = (uint64_t)blockIdx.x * THREADS + threadIdx.x; g < total;
         g += (uint64_t)gridDim.x * THREADS) {
        const uint32_t qn = xg_prefix_owner(a.iprefix, a.n_iq, g);
        const struct xg_dquery &q = a.queries[a.iq[qn]];
        const struct xg_dlist &s = a.lists[q.list_first + q.shortest];
        const uint32_t doc = a.docs[s.decoded + (g - a.iprefix[qn])];
        for (uint32_t j = 0; j < q.n_lists; ++j) {
            const struct xg_dlist &l = a.lists[q.list_first + j];
            if (j == q.shortest ||
                (l.method & XG_MEMBER_KIND) != XG_MEMBER_BLOCK)
                continue;
            const int64_t b = xg_block_of(&ix, l.term, doc);
            if (b >= 0) a.bsel[l.block_start + (uint64_t)b] = 1;
        }
    }
}

/* xg_merge_split by a whole warp: a 32-way search (about 5 rounds of
 * loads for 5M-posting lists instead of 23 dependent ones). */
static __device__ uint32_t warp_merge_split(const uint32_t *A, uint32_t na,
                                            const uint32_t *B, uint32_t nb,
                                            uint64_t d)
{
    const uint32_t lane = threadIdx.x & 31u;
    uint64_t lo = d > nb ? d - nb : 0, hi = d < na ? d : na;
    while (lo < hi) {
        /* A[i] <= B[d - i - 1] holds for i below the answer, not above. */
        const uint64_t step = (hi - lo + 31) / 32;
        const uint64_t i = lo + lane * step;
        const bool below = i < hi && A[i] <= B[d - i - 1];
        const uint32_t c = __popc(__ballot_sync(0xFFFFFFFFu, below));
        if (c == 0) break;              /* the answer is lo */
        const uint64_t next = lo + c * step;
        lo = lo + (c - 1) * step + 1;
        if (next < hi) hi = next;
    }
    return (uint32_t)lo;
}

/* One thread block per tile of XG_MERGE_TILE merge steps. */
static __global__ void __launch_bounds__(XG_MERGE_THREADS)
mergepath_kernel(struct xg_merge_args a, uint64_t tiles)
{
    __shared__ uint32_t s_a[XG_MERGE_TILE], s_b[XG_MERGE_TILE + 1];
    __shared__ uint32_t s_split[2];
    for (uint64_t g = blockIdx.x; g < tiles; g += gridDim.x) {
        const uint32_t m = xg_prefix_owner(a.mprefix, a.n_ml, g);
        const struct xg_dlist &l = a.lists[a.mlist[m]];
        const struct xg_dquery &q = a.queries[l.query];
        const struct xg_dlist &s = a.lists[q.list_first + q.shortest];
        const uint32_t *A = a.docs + s.decoded, *B = a.docs + l.decoded;
        const uint64_t end = (uint64_t)s.df + l.df;
        const uint64_t d0 = (g - a.mprefix[m]) * XG_MERGE_TILE;
        const uint64_t d1 = d0 + XG_MERGE_TILE < end ? d0 + XG_MERGE_TILE : end;
        if (threadIdx.x < 64) {
            const uint32_t w = threadIdx.x >> 5;
            const uint32_t i = warp_merge_split(A, s.df, B, l.df, w ? d1 : d0);
            if ((threadIdx.x & 31u) == 0) s_split[w] = i;
        }
        __syncthreads();
        const uint32_t i0 = s_split[0], i1 = s_split[1];
        const uint32_t j0 = (uint32_t)(d0 - i0), j1 = (uint32_t)(d1 - i1);
        /* B[j1] too, if there is one: the match test of the last A's. */
        const uint32_t nb_ext = j1 - j0 + (j1 < l.df ? 1u : 0u);
        for (uint32_t k = threadIdx.x; k < i1 - i0; k += XG_MERGE_THREADS)
            s_a[k] = A[i0 + k];
        for (uint32_t k = threadIdx.x; k < nb_ext; k += XG_MERGE_THREADS)
            s_b[k] = B[j0 + k];
        __syncthreads();
        const uint64_t t0 = (uint64_t)threadIdx.x * XG_MERGE_CHUNK;
        if (t0 < d1 - d0)
            xg_merge_walk(s_a, i1 - i0, s_b, j1 - j0, nb_ext, j0, t0,
                          t0 + XG_MERGE_CHUNK < d1 - d0 ? t0 + XG_MERGE_CHUNK
                                                        : d1 - d0,
                          a.mpos + l.mpos + i0);
        __syncthreads();
    }
}

static unsigned grid_for(uint64_t items)
{
    const uint64_t blocks = (items + THREADS - 1) / THREADS;
    return (unsigned)(blocks < 65535u * 16u ? blocks : 65535u * 16u);
}

extern "C" int xg_block_select_gpu(const struct xg_dindex *ix,
                                   const struct xg_merge_args *a,
                                   uint64_t candidates, cudaStream_t stream)
{
    if (!candidates) return cudaSuccess;
    block_select_kernel<<<grid_for(candidates), THREADS, 0, stream>>>(*ix, *a);
    return (int)cudaPeekAtLastError();
}

extern "C" int xg_mergepath_gpu(const struct xg_merge_args *a,
                                uint64_t tiles, cudaStream_t stream)
{
    if (!tiles) return cudaSuccess;
    const unsigned grid = (unsigned)(tiles < 65535u * 16u ? tiles
                                                          : 65535u * 16u);
    mergepath_kernel<<<grid, XG_MERGE_THREADS, 0, stream>>>(*a, tiles);
    return (int)cudaPeekAtLastError();
}
