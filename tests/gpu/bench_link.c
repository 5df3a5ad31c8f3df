/** @file bench_link.c
 *  @brief The host link's floor under the weight engine's copies
 *         (docs/weight.md, docs/benchmarks.md): DMA alone between pinned
 *         memory and the device, the host's memcpy on 1 to 16 threads,
 *         and the pinned staging's copies (staging.h) from and into
 *         pageable memory, resident or fresh; each a median of 9 after a
 *         warm-up.  `bench_link [MB]` (100 by default).
 */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "big_alloc.h"
#include "pipeline_test.h"
#include "staging.h"
#include "wt_int.h"

#define RUNS 9

struct ctx {
    size_t n;
    char *pinned, *dev, *src, *dst;
    struct xg_staging st;
    cudaStream_t stream;
    uint32_t threads;
};

typedef double (*op_fn)(struct ctx *c);

static double dma(struct ctx *c, int to_device)
{
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    cudaEventRecord(a, c->stream);
    if (to_device) cudaMemcpyAsync(c->dev, c->pinned, c->n, cudaMemcpyHostToDevice, c->stream);
    else cudaMemcpyAsync(c->pinned, c->dev, c->n, cudaMemcpyDeviceToHost, c->stream);
    cudaEventRecord(b, c->stream);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return ms * 1e-3;
}

static double dma_htod(struct ctx *c) { return dma(c, 1); }
static double dma_dtoh(struct ctx *c) { return dma(c, 0); }

static double host_copy(struct ctx *c)
{
    const double t0 = now();
    xg_wt_memcpy(c->dst, c->src, c->n, c->threads);
    return now() - t0;
}

/* Into fresh huge-page memory, as the result's arrays without prefault. */
static double host_copy_fresh(struct ctx *c)
{
    char *d = xg_big_alloc(c->n);
    const double t0 = now();
    xg_wt_memcpy(d, c->src, c->n, c->threads);
    const double s = now() - t0;
    free(d);
    return s;
}

static double staged_htod(struct ctx *c)
{
    const double t0 = now();
    if (xg_staging_htod(&c->st, c->dev, c->src, c->n)) return -1;
    cudaStreamSynchronize(c->stream);
    return now() - t0;
}

static double staged_dtoh(struct ctx *c)
{
    const double t0 = now();
    return xg_staging_dtoh(&c->st, c->dst, c->dev, c->n) ? -1 : now() - t0;
}

static double staged_dtoh_fresh(struct ctx *c)
{
    char *d = xg_big_alloc(c->n);
    const double t0 = now();
    const int rc = xg_staging_dtoh(&c->st, d, c->dev, c->n);
    const double s = now() - t0;
    free(d);
    return rc ? -1 : s;
}

static double lock_only(struct ctx *c)
{
    const double t0 = now();
    if (cudaHostRegister(c->dst, c->n, cudaHostRegisterDefault)) return -1;
    const double s = now() - t0;
    cudaHostUnregister(c->dst);
    return s;
}

static double unlock_only(struct ctx *c)
{
    if (cudaHostRegister(c->dst, c->n, cudaHostRegisterDefault)) return -1;
    const double t0 = now();
    cudaHostUnregister(c->dst);
    return now() - t0;
}

static void row(struct ctx *c, const char *name, op_fn f, uint32_t threads)
{
    c->threads = threads;
    c->st.threads = threads;
    double s[RUNS];
    f(c);                                   /* warm-up */
    for (int k = 0; k < RUNS; ++k) s[k] = f(c);
    qsort(s, RUNS, sizeof *s, cmp_double);
    if (s[0] < 0) {
        printf("%-34s %8s\n", name, "failed");
        return;
    }
    printf("%-34s %8u %9.3f %9.3f %9.1f\n", name, threads, s[RUNS / 2] * 1e3,
           s[RUNS - 1] * 1e3, c->n / s[RUNS / 2] / 1e9);
}

int main(int argc, char **argv)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count < 1) {
        printf("SKIP: no CUDA device\n");
        return 77;
    }
    struct ctx c;
    memset(&c, 0, sizeof c);
    c.n = (size_t)((argc > 1 ? atof(argv[1]) : 100) * 1e6);
    const uint32_t cores = xg_wt_cores();
    cudaStreamCreate(&c.stream);
    if (cudaHostAlloc((void **)&c.pinned, c.n, cudaHostAllocDefault) ||
        cudaMalloc((void **)&c.dev, c.n)) {
        printf("FAIL: pinned or device memory for %zu bytes\n", c.n);
        return 1;
    }
    c.src = xg_big_alloc_touched(c.n, cores);
    c.dst = xg_big_alloc_touched(c.n, cores);
    if (!c.src || !c.dst) return 1;
    memset(c.src, 'x', c.n);
    xg_staging_init(&c.st, c.stream, cores);
    printf("%.0f MB per copy, %u cores; wall time but DMA (events)\n", c.n / 1e6, cores);
    printf("%-34s %8s %9s %9s %9s\n", "copy", "threads", "median ms", "slowest", "GB/s");
    row(&c, "DMA pinned -> device", dma_htod, 1);
    row(&c, "DMA device -> pinned", dma_dtoh, 1);
    for (uint32_t t = 1; t <= cores; t *= 2) row(&c, "memcpy resident -> resident", host_copy, t);
    if (cores & (cores - 1)) row(&c, "memcpy resident -> resident", host_copy, cores);
    row(&c, "memcpy resident -> fresh (huge)", host_copy_fresh, cores);
    row(&c, "staged pageable -> device", staged_htod, cores);
    row(&c, "staged device -> resident", staged_dtoh, cores);
    row(&c, "staged device -> fresh (huge)", staged_dtoh_fresh, cores);
    row(&c, "cudaHostRegister (resident)", lock_only, 1);
    row(&c, "cudaHostUnregister", unlock_only, 1);
    xg_staging_free(&c.st);
    cudaFreeHost(c.pinned);
    cudaFree(c.dev);
    free(c.src);
    free(c.dst);
    return 0;
}
