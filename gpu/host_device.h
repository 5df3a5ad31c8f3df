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

#endif
