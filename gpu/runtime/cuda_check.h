/** @file cuda_check.h
 *  @brief XG_CUDA_CHECK: the one way host code (engine_cuda.c, wt_cuda*.c)
 *         checks a CUDA call.  A failure returns XG_ERR_CUDA (XG_ERR_NOMEM
 *         for an allocation) from the calling function, with the CUDA
 *         error string; callers then fall back to the CPU.  Built only with
 *         CUDA.
 */
#ifndef XG_CUDA_CHECK_H
#define XG_CUDA_CHECK_H

#include <cuda_runtime_api.h>

#include "error.h"

#define XG_CUDA_CHECK(call, what)                                           \
    do {                                                                    \
        cudaError_t err_ = (cudaError_t)(call);                             \
        if (err_ != cudaSuccess)                                            \
            return xg_set_error(err_ == cudaErrorMemoryAllocation           \
                                    ? XG_ERR_NOMEM : XG_ERR_CUDA,           \
                                "GPU: %s: %s", what,                        \
                                cudaGetErrorString(err_));                  \
    } while (0)

#endif
