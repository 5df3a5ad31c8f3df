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
                  double *acc, uint32_t *mask, uint32_t *touched,
                  uint32_t *tcount)
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
            if (!q.sparse) {
                for (uint32_t i = lane; i < n; i += 32u)
                    atomicAdd(&mask[row + s_docs[warp][i]],
                              xg_impact_add(l.imp_mult, codes[i]));
            } else {
                /* Every add is at least 1: the one that finds 0 is the
                 * document's first.  One count a block on the query's
                 * counter: an atomic a document, or a round, queued the
                 * warps behind each other. */
                bool first[XG_FMT_BLOCK / 32];
#pragma unroll
                for (uint32_t r = 0; r < XG_FMT_BLOCK / 32; ++r) {
                    const uint32_t i = r * 32u + lane;
                    first[r] = i < n && !atomicAdd(&mask[row + s_docs[warp][i]],
                                                   xg_impact_add(l.imp_mult,
                                                                 codes[i]));
                }
                uint32_t ballot[XG_FMT_BLOCK / 32], total = 0;
#pragma unroll
                for (uint32_t r = 0; r < XG_FMT_BLOCK / 32; ++r) {
                    ballot[r] = __ballot_sync(0xFFFFFFFFu, first[r]);
                    total += __popc(ballot[r]);
                }
                uint32_t at = 0;
                if (lane == 0 && total)
                    at = atomicAdd(&tcount[l.query], total);
                at = q.touch_first + __shfl_sync(0xFFFFFFFFu, at, 0);
                const uint32_t below = (1u << lane) - 1u;
#pragma unroll
                for (uint32_t r = 0; r < XG_FMT_BLOCK / 32; ++r) {
                    if ((ballot[r] >> lane) & 1u)
                        touched[at + __popc(ballot[r] & below)] =
                            s_docs[warp][r * 32u + lane];
                    at += __popc(ballot[r]);
                }
            }
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
                                 uint32_t *d_touched, uint32_t *d_tcount,
                                 cudaStream_t stream)
{
    if (block_hi <= block_lo) return cudaSuccess;
    uint64_t blocks = (block_hi - block_lo + WARPS - 1) / WARPS;
    unsigned grid = (unsigned)(blocks < 65535u * 8u ? blocks : 65535u * 8u);
    accumulate_kernel<<<grid, WARPS * 32, 0, stream>>>(
        *ix, d_lists, d_queries, list_lo, list_hi, block_lo, block_hi, d_acc,
        d_mask, d_touched, d_tcount);
    return (int)cudaPeekAtLastError();
}
