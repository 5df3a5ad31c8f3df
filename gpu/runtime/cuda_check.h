/** @file cuda_check.h
 *  @brief The one mapping of CUDA errors to xg_status (xg_cuda_status)
 *         and XG_CUDA_CHECK, the one way host code checks a CUDA call: a
 *         failure returns XG_ERR_CUDA (XG_ERR_NOMEM for an allocation)
 *         from the calling function, with the CUDA error string; callers
 *         then fall back to the CPU.  Built only with CUDA.
 */
#ifndef XG_CUDA_CHECK_H
#define XG_CUDA_CHECK_H

#include <cuda_runtime_api.h>

#include "error.h"

/* XG_OK, XG_ERR_NOMEM (out of device or pinned memory) or XG_ERR_CUDA. */
static inline int xg_cuda_status(cudaError_t e)
{
    return e == cudaSuccess                 ? XG_OK
           : e == cudaErrorMemoryAllocation ? XG_ERR_NOMEM
                                            : XG_ERR_CUDA;
}

#define XG_CUDA_CHECK(call, what)                                           \
    do {                                                                    \
        cudaError_t err_ = (cudaError_t)(call);                             \
        if (err_ != cudaSuccess)                                            \
            return xg_set_error(xg_cuda_status(err_), "GPU: %s: %s", what,  \
                                cudaGetErrorString(err_));                  \
    } while (0)

#endif
