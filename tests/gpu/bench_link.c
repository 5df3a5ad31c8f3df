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

#include "../../gpu/runtime/big_alloc.h"
#include "pipeline_test.h"
#include "../../gpu/runtime/staging.h"
#include "../../gpu/weight/wt_int.h"
#include "../../gpu/weight/wt_kern.h"

#define RUNS 9

struct ctx {
    size_t n;
    char *pinned, *dev, *src, *dst;
    struct xg_staging st;
    cudaStream_t stream;
    uint32_t threads;
    const struct placing *placing;  /* place_op's */
};

typedef double (*op_fn)(struct ctx *c);

/* The device's seconds for what work(c) puts on the stream (events), or
 * -1 if it fails. */
static double on_events(struct ctx *c, int (*work)(struct ctx *c))
{
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    cudaEventRecord(a, c->stream);
    const int rc = work(c);
    cudaEventRecord(b, c->stream);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return rc || cudaGetLastError() ? -1 : ms * 1e-3;
}

static int htod_work(struct ctx *c)
{
    return cudaMemcpyAsync(c->dev, c->pinned, c->n, cudaMemcpyHostToDevice, c->stream);
}

static int dtoh_work(struct ctx *c)
{
    return cudaMemcpyAsync(c->pinned, c->dev, c->n, cudaMemcpyDeviceToHost, c->stream);
}

static double dma_htod(struct ctx *c) { return on_events(c, htod_work); }
static double dma_dtoh(struct ctx *c) { return on_events(c, dtoh_work); }

static double host_copy(struct ctx *c)
{
    const double t0 = now();
    xg_threads_memcpy(c->dst, c->src, c->n, c->threads);
    return now() - t0;
}

/* Into fresh huge-page memory, as the result's arrays without prefault. */
static double host_copy_fresh(struct ctx *c)
{
    char *d = xg_big_alloc(c->n);
    const double t0 = now();
    xg_threads_memcpy(d, c->src, c->n, c->threads);
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

/* The run in chunks' placement (wt_cuda_place.c) on its own: postings
 * in runs of `run` (one term each) written by xg_wt_place_gpu into
 * page-locked, mapped host memory, each run at a random place of the
 * result: the bus's rate for the device's scattered writes. */
struct placing {
    uint32_t np, run;
    uint32_t *d_term, *d_doc, *d_rterm, *d_rlen, *d_rstart, *d_nr;
    double *d_w;
    uint64_t *d_cur0;       /* the cursors, placed again before each call */
    struct xg_wt_place p;
};

static int place_setup(struct ctx *c, struct placing *q, uint32_t run)
{
    memset(q, 0, sizeof *q);
    q->np = (uint32_t)((c->n - 4096) / 12) / run * run;
    q->run = run;
    const uint32_t np = q->np, nt = np / run;
    uint32_t *term = malloc((size_t)np * 4), *rs = malloc((size_t)nt * 4);
    uint32_t *rl = malloc((size_t)nt * 4), *perm = malloc((size_t)nt * 4);
    uint64_t *cur = malloc((size_t)nt * 8), *toff = malloc((size_t)nt * 8 + 8);
    if (!term || !rs || !rl || !perm || !cur || !toff) return 1;
    for (uint32_t i = 0; i < np; ++i) term[i] = i / run;
    for (uint32_t t = 0; t < nt; ++t) {
        rs[t] = t * run;
        rl[t] = run;
        perm[t] = t;
    }
    uint64_t x = 88172645463325252ull;
    for (uint32_t t = nt; t > 1; --t) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        const uint32_t j = (uint32_t)(x % t), v = perm[t - 1];
        perm[t - 1] = perm[j];
        perm[j] = v;
    }
    for (uint32_t t = 0; t < nt; ++t) cur[t] = (uint64_t)perm[t] * run;
    for (uint32_t t = 0; t <= nt; ++t) toff[t] = UINT64_MAX;    /* no term's end */
    int bad = cudaMalloc((void **)&q->d_term, (size_t)np * 4) ||
              cudaMalloc((void **)&q->d_doc, (size_t)np * 4) ||
              cudaMalloc((void **)&q->d_w, (size_t)np * 8) ||
              cudaMalloc((void **)&q->d_rterm, (size_t)nt * 4) ||
              cudaMalloc((void **)&q->d_rlen, (size_t)nt * 4) ||
              cudaMalloc((void **)&q->d_rstart, (size_t)nt * 4) ||
              cudaMalloc((void **)&q->d_nr, 4) ||
              cudaMalloc((void **)&q->p.cur, (size_t)nt * 8) ||
              cudaMalloc((void **)&q->p.shift, (size_t)nt * 8) ||
              cudaMalloc((void **)&q->p.toff, (size_t)nt * 8 + 8) ||
              cudaMalloc((void **)&q->p.err, 4) ||
              cudaMalloc((void **)&q->d_cur0, (size_t)nt * 8);
    bad = bad || cudaMemcpy(q->d_term, term, (size_t)np * 4, cudaMemcpyHostToDevice) ||
          cudaMemset(q->d_doc, 0, (size_t)np * 4) || cudaMemset(q->d_w, 0, (size_t)np * 8) ||
          cudaMemcpy(q->d_rstart, rs, (size_t)nt * 4, cudaMemcpyHostToDevice) ||
          cudaMemcpy(q->d_rlen, rl, (size_t)nt * 4, cudaMemcpyHostToDevice) ||
          cudaMemcpy(q->d_nr, &nt, 4, cudaMemcpyHostToDevice) ||
          cudaMemcpy((void *)q->p.toff, toff, (size_t)nt * 8 + 8, cudaMemcpyHostToDevice);
    /* Run t is term t's. */
    for (uint32_t t = 0; t < nt; ++t) perm[t] = t;
    bad = bad || cudaMemcpy(q->d_rterm, perm, (size_t)nt * 4, cudaMemcpyHostToDevice);
    bad = bad || cudaMemcpy(q->d_cur0, cur, (size_t)nt * 8, cudaMemcpyHostToDevice);
    q->p.nt = nt;
    q->p.out_doc = (uint32_t *)c->dst;
    q->p.out_w = (double *)(void *)(c->dst + ((size_t)np * 4 + 4095) / 4096 * 4096);
    free(term), free(rs), free(rl), free(perm), free(cur), free(toff);
    return bad;
}

static void place_free(struct placing *q)
{
    cudaFree(q->d_term), cudaFree(q->d_doc), cudaFree(q->d_w), cudaFree(q->d_rterm);
    cudaFree(q->d_rlen), cudaFree(q->d_rstart), cudaFree(q->d_nr), cudaFree(q->p.cur);
    cudaFree(q->p.shift), cudaFree((void *)q->p.toff), cudaFree(q->p.err), cudaFree(q->d_cur0);
}

static int place_work(struct ctx *c)
{
    const struct placing *q = c->placing;
    return xg_wt_place_gpu(q->d_term, q->d_doc, q->d_w, q->np, q->d_rterm, q->d_rlen,
                           q->d_rstart, q->d_nr, q->p, c->stream);
}

static double place_op(struct ctx *c)
{
    const struct placing *q = c->placing;
    cudaMemcpyAsync(q->p.cur, q->d_cur0, (size_t)(q->np / q->run) * 8,
                    cudaMemcpyDeviceToDevice, c->stream);
    return on_events(c, place_work);
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
    const uint32_t cores = xg_threads_cores();
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
    if (cudaHostRegister(c.dst, c.n, cudaHostRegisterMapped)) {
        printf("%-34s %8s\n", "placing (mapped host memory)", "failed");
    } else {
        static const uint32_t runs[] = {1, 4, 8, 32, 1024};
        for (size_t k = 0; k < sizeof runs / sizeof *runs; ++k) {
            struct placing q;
            char name[64];
            snprintf(name, sizeof name, "place, runs of %u (12 B/posting)", runs[k]);
            if (place_setup(&c, &q, runs[k])) {
                printf("%-34s %8s\n", name, "failed");
            } else {
                c.placing = &q;
                row(&c, name, place_op, 1);
            }
            place_free(&q);
        }
        cudaHostUnregister(c.dst);
    }
    xg_staging_free(&c.st);
    cudaFreeHost(c.pinned);
    cudaFree(c.dev);
    free(c.src);
    free(c.dst);
    return 0;
}
