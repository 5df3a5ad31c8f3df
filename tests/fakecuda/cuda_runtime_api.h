/** @file cuda_runtime_api.h
 *  @brief A stand-in for the CUDA runtime API on the host, for the tests
 *         that run the qlm GPU engine's host side (gpu/qlm_cuda*.c,
 *         gpu/qlm_score_cuda.c) over the host emulation of its kernels
 *         (tests/qlm_emul.c): "device" memory is malloc'd, copies are
 *         memcpy, the stream and events do nothing.  Only what those files
 *         call; everything static inline, so nothing clashes with the real
 *         runtime linked into the library.
 */
#ifndef XG_FAKE_CUDA_RUNTIME_API_H
#define XG_FAKE_CUDA_RUNTIME_API_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef enum { cudaSuccess = 0, cudaErrorMemoryAllocation = 2 } cudaError_t;
typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;
enum cudaMemcpyKind {
    cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2, cudaMemcpyDeviceToDevice = 3
};
#define cudaStreamNonBlocking 1
#define cudaHostAllocDefault 0
#define cudaEventDisableTiming 2

static inline const char *cudaGetErrorString(cudaError_t e)
{
    return e == cudaErrorMemoryAllocation ? "out of memory (fake)" : "error (fake)";
}
static inline cudaError_t cudaGetLastError(void) { return cudaSuccess; }
static inline cudaError_t cudaGetDeviceCount(int *n)
{
    *n = 1;
    return cudaSuccess;
}
enum cudaDeviceAttr { cudaDevAttrMemoryClockRate = 36, cudaDevAttrGlobalMemoryBusWidth = 37 };
/* No attributes: callers that report bandwidth report none. */
static inline cudaError_t cudaDeviceGetAttribute(int *v, enum cudaDeviceAttr a, int dev)
{
    (void)a;
    (void)dev;
    *v = 0;
    return cudaErrorMemoryAllocation;
}
/* A device of 16 GiB, all free. */
static inline cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total)
{
    *free_bytes = *total = (size_t)16 << 30;
    return cudaSuccess;
}
static inline cudaError_t cudaMalloc(void **p, size_t n)
{
    *p = malloc(n ? n : 1);
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
static inline cudaError_t cudaFree(void *p)
{
    free(p);
    return cudaSuccess;
}
static inline cudaError_t cudaHostAlloc(void **p, size_t n, unsigned flags)
{
    (void)flags;
    return cudaMalloc(p, n);
}
static inline cudaError_t cudaFreeHost(void *p) { return cudaFree(p); }
#define cudaHostRegisterDefault 0
#define cudaHostRegisterReadOnly 8
static inline cudaError_t cudaHostRegister(void *p, size_t n, unsigned flags)
{
    (void)p;
    (void)n;
    (void)flags;
    return cudaSuccess;
}
static inline cudaError_t cudaHostUnregister(void *p)
{
    (void)p;
    return cudaSuccess;
}
static inline cudaError_t cudaMemcpy(void *d, const void *s, size_t n, enum cudaMemcpyKind k)
{
    (void)k;
    if (n) memcpy(d, s, n);
    return cudaSuccess;
}
static inline cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n,
                                          enum cudaMemcpyKind k, cudaStream_t st)
{
    (void)st;
    return cudaMemcpy(d, s, n, k);
}
static inline cudaError_t cudaMemsetAsync(void *d, int v, size_t n, cudaStream_t st)
{
    (void)st;
    memset(d, v, n);
    return cudaSuccess;
}
static inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags)
{
    (void)flags;
    *s = (cudaStream_t)malloc(1);
    return cudaSuccess;
}
static inline cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    free(s);
    return cudaSuccess;
}
static inline cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    (void)s;
    return cudaSuccess;
}
static inline cudaError_t cudaEventCreate(cudaEvent_t *e)
{
    *e = (cudaEvent_t)malloc(1);
    return cudaSuccess;
}
static inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned flags)
{
    (void)flags;
    return cudaEventCreate(e);
}
static inline cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
    (void)e;
    return cudaSuccess;
}
static inline cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    free(e);
    return cudaSuccess;
}
static inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
    (void)e;
    (void)s;
    return cudaSuccess;
}
static inline cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
    (void)a;
    (void)b;
    *ms = 0;
    return cudaSuccess;
}

#endif
