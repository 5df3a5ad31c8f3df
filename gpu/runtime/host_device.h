/** @file host_device.h
 *  @brief XG_HOST_DEVICE: marks the inline functions that the CUDA kernels
 *         and their CPU twins share (one definition, compiled by both).
 */
#ifndef XG_HOST_DEVICE_H
#define XG_HOST_DEVICE_H

#ifdef __CUDACC__
#define XG_HOST_DEVICE __host__ __device__
#else
#define XG_HOST_DEVICE
#endif

#include <stdint.h>

/* Work items numbered across a batch by prefix sums (prefix[0] = 0,
 * prefix[n] = total): the last i < n with prefix[i] <= g, i.e. the owner of
 * item g.  One thread per item finds its query or list with this. */
XG_HOST_DEVICE static inline uint32_t xg_prefix_owner(const uint64_t *prefix,
                                                      uint32_t n, uint64_t g)
{
    uint32_t lo = 0, hi = n;
    while (hi - lo > 1) {
        const uint32_t mid = (lo + hi) >> 1;
        if (prefix[mid] <= g) lo = mid; else hi = mid;
    }
    return lo;
}

#endif
