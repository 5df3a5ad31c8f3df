/** @file topk.cu
 *  @brief Candidate selection: for each query, every matching document
 *         whose (approximate) weight can still be in the top k.
 *
 *  One thread block per query.  Pass 1 counts the matches and finds the
 *  largest weight S.  If they are too many to keep, up to three rounds of
 *  a 2048-bin histogram narrow down the bin that holds the k-th largest
 *  weight (a radix select on value ranges); its lower edge T is the
 *  threshold.  The last pass keeps every match with weight >= T - margin,
 *  margin = S * rel_margin: the approximate sums differ from the exact ones
 *  by far less (docs/gpu.md), so the exact top k is always inside.  If even
 *  that is more than the query's candidate room, `overflow` sends the query
 *  to the CPU matcher.  Twin: topk_ref.c.
 */
#include <cuda_runtime.h>

#include "topk.h"

#define THREADS 1024
#define BINS 2048

struct view {
    const double *acc;
    const uint32_t *mask;
    uint32_t need;              /* DENSE: mask test */
    const struct xg_dcand *cand;
    uint64_t n;
    bool dense;
};

static __device__ __forceinline__ bool item(const view &v, uint64_t i, double *w)
{
    if (v.dense) {
        const uint32_t m = v.mask[i];
        const double a = v.acc[i];
        /* OR (need 0): any contribution or a mask bit; AND: every bit. */
        if (v.need ? (m & v.need) != v.need : (!m && a == 0.0)) return false;
        *w = a;
        return true;
    }
    *w = v.cand[i].weight;
    return true;
}

static __global__ void __launch_bounds__(THREADS)
select_kernel(struct xg_select_args a)
{
    __shared__ uint32_t hist[BINS];
    __shared__ unsigned long long s_count;
    __shared__ double s_max;
    __shared__ double s_lo, s_hi, s_thr;
    __shared__ unsigned long long s_above;
    __shared__ uint32_t s_done;
    __shared__ unsigned s_written;
    const struct xg_dquery &q = a.queries[blockIdx.x];
    view v;
    v.dense = q.path == XG_DPATH_DENSE;
    v.acc = a.acc + q.slot * a.n_docs;
    v.mask = a.mask + q.slot * a.n_docs;
    v.need = q.all_groups;
    v.cand = a.icand + q.icand_first;
    v.n = v.dense ? a.n_docs : a.icount[blockIdx.x];
    if (threadIdx.x == 0) {
        s_count = 0;
        s_max = 0;
        s_written = 0;
    }
    __syncthreads();
    unsigned long long cnt = 0;
    double mx = 0;
    for (uint64_t i = threadIdx.x; i < v.n; i += THREADS) {
        double w;
        if (item(v, i, &w)) {
            ++cnt;
            mx = w > mx ? w : mx;
        }
    }
    for (int o = 16; o; o >>= 1) {
        cnt += __shfl_down_sync(0xFFFFFFFFu, cnt, o);
        double t = __shfl_down_sync(0xFFFFFFFFu, mx, o);
        mx = t > mx ? t : mx;
    }
    if ((threadIdx.x & 31u) == 0) {
        atomicAdd(&s_count, cnt);
        /* weights are >= 0: their bit patterns order as integers */
        atomicMax((unsigned long long *)&s_max,
                  (unsigned long long)__double_as_longlong(mx));
    }
    __syncthreads();
    const unsigned long long m = s_count;
    const double S = s_max;
    const uint32_t cap = q.cand_cap;
    if (threadIdx.x == 0) {
        s_thr = -1.0;
        s_lo = 0;
        s_hi = S;
        s_above = 0;
        s_done = m <= cap / 2 || m <= q.k;
    }
    __syncthreads();
    for (int round = 0; round < 3 && !s_done; ++round) {
        for (uint32_t b = threadIdx.x; b < BINS; b += THREADS) hist[b] = 0;
        __syncthreads();
        const double lo = s_lo, hi = s_hi, width = (hi - lo) / BINS;
        for (uint64_t i = threadIdx.x; i < v.n; i += THREADS) {
            double w;
            if (!item(v, i, &w) || w < lo || w > hi) continue;
            int b = width > 0 ? (int)((w - lo) / width) : BINS - 1;
            atomicAdd(&hist[b < BINS ? b : BINS - 1], 1u);
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            unsigned long long cum = s_above;
            int kb = 0;
            for (int b = BINS - 1; b >= 0; --b) {
                cum += hist[b];
                if (cum >= q.k) { kb = b; break; }
            }
            const double edge = lo + kb * width;
            s_thr = edge;
            if (cum <= cap / 2 || width <= S * 1e-15) {
                s_done = 1;
            } else {
                s_above = cum - hist[kb];
                s_lo = edge;
                s_hi = kb == BINS - 1 ? hi : edge + width;
            }
        }
        __syncthreads();
    }
    const double thr = s_thr < 0 ? -1.0 : s_thr - S * a.rel_margin;
    for (uint64_t i = threadIdx.x; i < v.n; i += THREADS) {
        double w;
        if (!item(v, i, &w) || w < thr) continue;
        const unsigned slot = atomicAdd(&s_written, 1u);
        if (slot < cap) {
            struct xg_dcand c;
            c.doc = v.dense ? (uint32_t)i : v.cand[i].doc;
            c.matched = v.dense ? 0u : 1u;
            c.weight = w;
            a.out[q.cand_first + slot] = c;
        }
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        struct xg_dqresult r;
        r.matched = m;
        r.n_cand = s_written < cap ? s_written : cap;
        r.overflow = s_written > cap;
        r.max_score = S;
        r.threshold = thr;
        a.res[blockIdx.x] = r;
    }
}

extern "C" int xg_select_gpu(const struct xg_select_args *a, uint32_t n_queries,
                             cudaStream_t stream)
{
    if (!n_queries) return cudaSuccess;
    select_kernel<<<n_queries, THREADS, 0, stream>>>(*a);
    return (int)cudaPeekAtLastError();
}

/* Offsets of each query's candidates once packed back to back (one block;
 * a batch has at most a few thousand queries). */
static __global__ void pack_offsets_kernel(const struct xg_dqresult *res,
                                           uint32_t n, uint64_t *off)
{
    if (threadIdx.x != 0) return;
    uint64_t o = 0;
    for (uint32_t i = 0; i < n; ++i) {
        off[i] = o;
        o += res[i].n_cand;
    }
    off[n] = o;
}

static __global__ void pack_kernel(const struct xg_dquery *queries,
                                   const struct xg_dqresult *res,
                                   const struct xg_dcand *cand,
                                   const uint64_t *off, struct xg_dcand *out)
{
    const struct xg_dquery &q = queries[blockIdx.x];
    const uint32_t n = res[blockIdx.x].n_cand;
    for (uint32_t i = threadIdx.x; i < n; i += blockDim.x)
        out[off[blockIdx.x] + i] = cand[q.cand_first + i];
}

extern "C" int xg_pack_gpu(const struct xg_dquery *d_queries,
                           const struct xg_dqresult *d_res,
                           const struct xg_dcand *d_cand, uint32_t n_queries,
                           uint64_t *d_off, struct xg_dcand *d_packed,
                           cudaStream_t stream)
{
    if (!n_queries) return cudaSuccess;
    pack_offsets_kernel<<<1, 32, 0, stream>>>(d_res, n_queries, d_off);
    pack_kernel<<<n_queries, 128, 0, stream>>>(d_queries, d_res, d_cand, d_off,
                                               d_packed);
    return (int)cudaPeekAtLastError();
}
