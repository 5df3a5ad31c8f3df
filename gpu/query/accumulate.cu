/** @file accumulate.cu
 *  @brief OR (and AND of OR-groups): term-at-a-time accumulation (seed 003
 *         §8.3).  One warp per 128-posting block decodes it in shared
 *         memory, then adds each posting's BM25 contribution to its query's
 *         dense accumulator row and sets the list's operand bits.
 *
 *  The sum is approximate (atomics add in any order); it only selects
 *  candidates, which finish.cu rescores exactly.  Twin: accumulate_ref.c.
 */
#include <cuda_runtime.h>

#include "accumulate.h"
#include "../bm25.h"
#include "decode_dev.cuh"
#include "../index/impact.h"
#include "../runtime/tuning.h"

#define WARPS XG_DECODE_WARPS

static __global__ void __launch_bounds__(WARPS * 32)
accumulate_kernel(struct xg_dindex ix, const struct xg_dlist *lists,
                  const struct xg_dquery *queries, uint32_t list_lo,
                  uint32_t list_hi, uint64_t block_lo, uint64_t block_hi,
                  double *acc, uint32_t *mask)
{
    __shared__ uint32_t s_docs[WARPS][128], s_wdfs[WARPS][128];
    const uint32_t warp = threadIdx.x >> 5, lane = threadIdx.x & 31u;
    const uint64_t stride = (uint64_t)gridDim.x * WARPS;
    for (uint64_t g = block_lo + (uint64_t)blockIdx.x * WARPS + warp;
         g < block_hi; g += stride) {
        const struct xg_dlist &l =
            lists[xg_list_of_block(lists, list_lo, list_hi, g)];
        const struct xg_dquery &q = queries[l.query];
        const uint32_t blk = (uint32_t)(g - l.block_start);
        const uint64_t row = q.slot * (uint64_t)ix.n_docs;
        if (q.impact_row) {
            /* Integer bounds from the codes: no wdfs, no K_d. */
            const uint32_t n = xg_warp_decode_block(ix, l.term, blk,
                                                    s_docs[warp], NULL);
            const uint8_t *codes = ix.impact_codes +
                                   ix.impacts[l.term].code_offset +
                                   (uint64_t)blk * XG_FMT_BLOCK;
            for (uint32_t i = lane; i < n; i += 32u)
                atomicAdd(&mask[row + s_docs[warp][i]],
                          xg_impact_add(l.imp_mult, codes[i]));
            __syncwarp();
            continue;
        }
        const uint32_t n = xg_warp_decode_block(ix, l.term, blk, s_docs[warp],
                                                s_wdfs[warp]);
        /* OR: a nonzero sum already says "matched", so the mask is only
         * needed for a zero contribution (wdf 0); AND needs every bit. */
        const bool need_mask = q.all_groups != 0;
        for (uint32_t i = lane; i < n; i += 32u) {
            const uint32_t doc = s_docs[warp][i];
            const double c = xg_bm25_sumpart_kd(l.weight, ix.kd[doc],
                                                s_wdfs[warp][i]);
            atomicAdd(&acc[row + doc], c);
            if (need_mask || c == 0.0) atomicOr(&mask[row + doc], l.group_mask);
        }
        __syncwarp();
    }
}

extern "C" int xg_accumulate_gpu(const struct xg_dindex *ix,
                                 const struct xg_dlist *d_lists,
                                 const struct xg_dquery *d_queries,
                                 uint32_t list_lo, uint32_t list_hi,
                                 uint64_t block_lo, uint64_t block_hi,
                                 double *d_acc, uint32_t *d_mask,
                                 cudaStream_t stream)
{
    if (block_hi <= block_lo) return cudaSuccess;
    uint64_t blocks = (block_hi - block_lo + WARPS - 1) / WARPS;
    unsigned grid = (unsigned)(blocks < 65535u * 8u ? blocks : 65535u * 8u);
    accumulate_kernel<<<grid, WARPS * 32, 0, stream>>>(
        *ix, d_lists, d_queries, list_lo, list_hi, block_lo, block_hi, d_acc,
        d_mask);
    return (int)cudaPeekAtLastError();
}
