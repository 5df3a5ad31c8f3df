/** @file merge.cu
 *  @brief Block selection and merge path of the AND path (merge.h).
 *         Twins: merge_ref.c.
 */
#include <cuda_runtime.h>

#include "member.h"
#include "merge.h"
#include "merge_step.h"

#define THREADS 256

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

/* One thread per chunk of XG_MERGE_CHUNK merge steps. */
static __global__ void __launch_bounds__(THREADS)
mergepath_kernel(struct xg_merge_args a, uint64_t chunks)
{
    for (uint64_t g = (uint64_t)blockIdx.x * THREADS + threadIdx.x; g < chunks;
         g += (uint64_t)gridDim.x * THREADS) {
        const uint32_t m = xg_prefix_owner(a.mprefix, a.n_ml, g);
        const struct xg_dlist &l = a.lists[a.mlist[m]];
        const struct xg_dquery &q = a.queries[l.query];
        const struct xg_dlist &s = a.lists[q.list_first + q.shortest];
        const uint64_t d0 = (g - a.mprefix[m]) * XG_MERGE_CHUNK;
        const uint64_t end = (uint64_t)s.df + l.df;
        const uint64_t d1 = d0 + XG_MERGE_CHUNK < end ? d0 + XG_MERGE_CHUNK
                                                       : end;
        xg_merge_walk(a.docs + s.decoded, s.df, a.docs + l.decoded, l.df, d0,
                      d1, a.mpos + l.mpos);
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
                                uint64_t chunks, cudaStream_t stream)
{
    if (!chunks) return cudaSuccess;
    mergepath_kernel<<<grid_for(chunks), THREADS, 0, stream>>>(*a, chunks);
    return (int)cudaPeekAtLastError();
}
