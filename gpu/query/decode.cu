/** @file decode.cu
 *  @brief Decode the AND path's lists into scratch, where they are
 *         searched: one warp per 128-posting block, localized prefix sum
 *         (seed 003 §6).  Twin: decode_ref.c.
 */
#include <cuda_runtime.h>

#include "decode.h"
#include "decode_dev.cuh"
#include "../runtime/tuning.h"

#define WARPS XG_DECODE_WARPS

/* Lists [list_lo, list_hi) of the batch; their blocks are numbered from
 * block_lo to block_hi by xg_dlist.block_start.  Without bsel: every block
 * of every list but the XG_MEMBER_BLOCK ones; with it: only the marked
 * blocks (merge.h's selection). */
static __global__ void __launch_bounds__(WARPS * 32)
decode_lists_kernel(struct xg_dindex ix, const struct xg_dlist *lists,
                    uint32_t list_lo, uint32_t list_hi, uint64_t block_lo,
                    uint64_t block_hi, const uint8_t *bsel, uint32_t *d_docs,
                    uint32_t *d_wdfs)
{
    __shared__ uint32_t s_docs[WARPS][128], s_wdfs[WARPS][128];
    const uint32_t warp = threadIdx.x >> 5, lane = threadIdx.x & 31u;
    const uint64_t stride = (uint64_t)gridDim.x * WARPS;
    for (uint64_t g = block_lo + (uint64_t)blockIdx.x * WARPS + warp;
         g < block_hi; g += stride) {
        if (bsel && !bsel[g]) continue;
        const struct xg_dlist &l =
            lists[xg_list_of_block(lists, list_lo, list_hi, g)];
        if (!bsel && (l.method & XG_MEMBER_KIND) == XG_MEMBER_BLOCK) continue;
        const uint32_t blk = (uint32_t)(g - l.block_start);
        const uint32_t n = xg_warp_decode_block(ix, l.term, blk, s_docs[warp],
                                                s_wdfs[warp]);
        const uint64_t out = l.decoded + (uint64_t)blk * XG_FMT_BLOCK;
        for (uint32_t i = lane; i < n; i += 32u) {
            d_docs[out + i] = s_docs[warp][i];
            d_wdfs[out + i] = s_wdfs[warp][i];
        }
        __syncwarp();
    }
}

extern "C" int xg_decode_lists_gpu(const struct xg_dindex *ix,
                                   const struct xg_dlist *d_lists,
                                   uint32_t list_lo, uint32_t list_hi,
                                   uint64_t block_lo, uint64_t block_hi,
                                   const uint8_t *bsel, uint32_t *d_docs,
                                   uint32_t *d_wdfs, cudaStream_t stream)
{
    if (block_hi <= block_lo) return cudaSuccess;
    uint64_t blocks = (block_hi - block_lo + WARPS - 1) / WARPS;
    unsigned grid = (unsigned)(blocks < 65535u * 8u ? blocks : 65535u * 8u);
    decode_lists_kernel<<<grid, WARPS * 32, 0, stream>>>(
        *ix, d_lists, list_lo, list_hi, block_lo, block_hi, bsel, d_docs,
        d_wdfs);
    return (int)cudaPeekAtLastError();
}

/* The list cache moved lists: pairs (term, new offset). */
static __global__ void patch_offsets_kernel(uint64_t *list_off,
                                            const uint64_t *pairs, uint32_t n)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) list_off[pairs[2 * i]] = pairs[2 * i + 1];
}

extern "C" int xg_patch_list_offsets_gpu(uint64_t *d_list_off,
                                         const uint64_t *d_pairs, uint32_t n,
                                         cudaStream_t stream)
{
    if (!n) return cudaSuccess;
    patch_offsets_kernel<<<(n + 255) / 256, 256, 0, stream>>>(d_list_off,
                                                              d_pairs, n);
    return (int)cudaPeekAtLastError();
}
