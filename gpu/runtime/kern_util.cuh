/** @file kern_util.cuh
 *  @brief What the kernel files share (wt.cu, qlm.cu, qlm_score.cu,
 *         dict_gpu.cu, the query engine's merge.cu, intersect.cu and
 *         topk.cu): the block size (tuning.h), the grid for n items, and
 *         CUB_TRY, which returns the first CUDA error of a CUB call or
 *         launch as an int (the launchers' return convention).
 */
#ifndef XG_KERN_UTIL_CUH
#define XG_KERN_UTIL_CUH

#include <cuda_runtime_api.h>
#include <stdint.h>

#include "tuning.h"

#define THREADS XG_THREADS_PER_BLOCK

static inline unsigned blocks(uint64_t n)
{
    uint64_t b = (n + THREADS - 1) / THREADS;
    return (unsigned)(b ? b : 1);
}

#define CUB_TRY(call)                                                       \
    do {                                                                    \
        cudaError_t e_ = (call);                                            \
        if (e_ != cudaSuccess) return (int)e_;                              \
    } while (0)

#endif
