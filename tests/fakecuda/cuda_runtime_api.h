/** @file cuda_runtime_api.h
 *  @brief A stand-in for the CUDA runtime API on the host, for the tests
 *         that run the GPU engines' host side (gpu/runtime/device.c,
 *         staging.c, gpu/qlm/qlm_cuda*.c, qlm_score_cuda.c,
 *         gpu/weight/wt_cuda*.c, gpu/text/dict_gpu_cuda.c) over the host
 *         emulation of their kernels (tests/qlm_emul.c, wt_emul.c):
 *         "device" memory is malloc'd, copies are memcpy, the stream and
 *         events do nothing.  Only what those files
 *         call; everything static inline, so nothing clashes with the real
 *         runtime linked into the library.
 */
#ifndef XG_FAKE_CUDA_RUNTIME_API_H
#define XG_FAKE_CUDA_RUNTIME_API_H

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef enum {
    cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2,
    cudaErrorNotReady = 600
} cudaError_t;
typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;
enum cudaMemcpyKind {
    cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2, cudaMemcpyDeviceToDevice = 3
};
#define cudaStreamNonBlocking 1
#define cudaHostAllocDefault 0
#define cudaEventDisableTiming 2
#define cudaEventBlockingSync 1

static inline const char *cudaGetErrorString(cudaError_t e)
{
    return e == cudaErrorMemoryAllocation ? "out of memory (fake)"
           : e == cudaErrorInvalidValue  ? "invalid argument (fake)"
                                         : "error (fake)";
}
static inline cudaError_t cudaGetLastError(void) { return cudaSuccess; }
static inline cudaError_t cudaGetDeviceCount(int *n)
{
    *n = 1;
    return cudaSuccess;
}
enum cudaDeviceAttr {
    cudaDevAttrMemoryClockRate = 36, cudaDevAttrGlobalMemoryBusWidth = 37,
    cudaDevAttrCanUseHostPointerForRegisteredMem = 91
};
/* No clock or bus width: callers that report bandwidth report none.  The
 * emulated kernels run on the host, so they use its addresses. */
static inline cudaError_t cudaDeviceGetAttribute(int *v, enum cudaDeviceAttr a, int dev)
{
    (void)dev;
    *v = a == cudaDevAttrCanUseHostPointerForRegisteredMem;
    return *v ? cudaSuccess : cudaErrorMemoryAllocation;
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
static inline cudaError_t cudaMallocAsync(void **p, size_t n, cudaStream_t s)
{
    (void)s;
    return cudaMalloc(p, n);
}
static inline cudaError_t cudaFreeAsync(void *p, cudaStream_t s)
{
    (void)s;
    return cudaFree(p);
}
static inline cudaError_t cudaGetDevice(int *dev)
{
    *dev = 0;
    return cudaSuccess;
}
static inline cudaError_t cudaSetDevice(int dev)
{
    return dev == 0 ? cudaSuccess : cudaErrorInvalidValue;
}
/* One device: "fake", 1 SM, the memory cudaMemGetInfo reports. */
struct cudaDeviceProp {
    char name[256];
    int multiProcessorCount;
    size_t totalGlobalMem;
    int l2CacheSize;
};
static inline cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int dev)
{
    if (dev != 0) return cudaErrorInvalidValue;
    memset(p, 0, sizeof *p);
    strcpy(p->name, "fake");
    p->multiProcessorCount = 1;
    p->totalGlobalMem = (size_t)16 << 30;
    return cudaSuccess;
}
typedef struct CUmemPoolHandle_st *cudaMemPool_t;
#define cudaMemPoolAttrReleaseThreshold 4
static inline cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *mp, int dev)
{
    (void)dev;
    *mp = NULL;
    return cudaSuccess;
}
static inline cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t mp, int attr, void *v)
{
    (void)mp;
    (void)attr;
    (void)v;
    return cudaSuccess;
}
static inline cudaError_t cudaMemPoolTrimTo(cudaMemPool_t mp, size_t keep)
{
    (void)mp;
    (void)keep;
    return cudaSuccess;
}
#define cudaHostRegisterDefault 0
#define cudaHostRegisterReadOnly 8
#define cudaHostRegisterMapped 2
/* Registered host ranges, kept as the runtime does, so that a copy from a
 * registered range past its end fails as on a device (invalid argument).
 * Per translation unit: the file that registers is the one that copies. */
static struct { const char *p; size_t n; } fake_reg[4096];
static size_t fake_n_reg;
/* Threads register (the staging's locker) while others copy. */
static pthread_mutex_t fake_reg_mu = PTHREAD_MUTEX_INITIALIZER;
static inline cudaError_t cudaHostRegister(void *p, size_t n, unsigned flags)
{
    /* FAKECUDA_FAIL_MAPPED=1: no host memory can be mapped for the
     * device, so that the callers' way around it runs in the tests. */
    const char *fail = getenv("FAKECUDA_FAIL_MAPPED");
    if ((flags & cudaHostRegisterMapped) && fail && fail[0] == '1')
        return cudaErrorMemoryAllocation;
    cudaError_t e = cudaSuccess;
    pthread_mutex_lock(&fake_reg_mu);
    /* Whole pages are locked: two registrations may not share one. */
    const size_t a = (size_t)p >> 12, b = ((size_t)p + n - 1) >> 12;
    if (fake_n_reg == sizeof fake_reg / sizeof *fake_reg) e = cudaErrorMemoryAllocation;
    for (size_t i = 0; !e && i < fake_n_reg; ++i)
        if (a <= ((size_t)fake_reg[i].p + fake_reg[i].n - 1) >> 12 &&
            ((size_t)fake_reg[i].p >> 12) <= b)
            e = cudaErrorInvalidValue;
    if (!e) {
        fake_reg[fake_n_reg].p = (const char *)p;
        fake_reg[fake_n_reg++].n = n;
    }
    pthread_mutex_unlock(&fake_reg_mu);
    return e;
}
static inline cudaError_t cudaHostUnregister(void *p)
{
    cudaError_t e = cudaErrorInvalidValue;
    pthread_mutex_lock(&fake_reg_mu);
    for (size_t i = 0; i < fake_n_reg; ++i)
        if (fake_reg[i].p == (const char *)p) {
            fake_reg[i] = fake_reg[--fake_n_reg];
            e = cudaSuccess;
            break;
        }
    pthread_mutex_unlock(&fake_reg_mu);
    return e;
}
static inline int fake_crosses_registration(const void *src, size_t n)
{
    const char *c = (const char *)src;
    int crosses = 0;
    pthread_mutex_lock(&fake_reg_mu);
    for (size_t i = 0; i < fake_n_reg; ++i)
        if (c >= fake_reg[i].p && c < fake_reg[i].p + fake_reg[i].n) {
            crosses = c + n > fake_reg[i].p + fake_reg[i].n;
            break;
        }
    pthread_mutex_unlock(&fake_reg_mu);
    return crosses;
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
    if (k == cudaMemcpyHostToDevice && fake_crosses_registration(s, n))
        return cudaErrorInvalidValue;
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
/* The fake's work is done when it is enqueued. */
static inline cudaError_t cudaEventQuery(cudaEvent_t e)
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
static inline cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned f)
{
    (void)s;
    (void)e;
    (void)f;
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
