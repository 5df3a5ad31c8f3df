/** @file topk.cu
 *  @brief Candidate selection: for each query, every matching document
 *         whose (approximate) weight can still be in the top k.
 *
 *  Each query's items (a row's documents, a sparse query's touched list's,
 *  or an intersection's matches) are cut into slices, one block each (so
 *  one query alone still fills the GPU).  Pass 1 counts the matches, finds
 *  the largest weight S and builds the first of up to three 2048-bin
 *  histograms, on a log scale (topk.h).  If the matches are too many to
 *  keep, that round and up to two more over equal bins of the chosen bin's
 *  range narrow down the bin that holds the k-th largest weight (a radix
 *  select on value ranges); its lower edge T is the threshold.  The last
 *  pass keeps every match with weight >= T - margin, where
 *  margin = S * rel_margin + the query's own margin: the approximate sums
 *  differ from the exact ones by less than the first (docs/gpu.md),
 *  impact bounds by less than both (impact.h), so the exact top k is
 *  inside.  If even that is more than the query's candidate room,
 *  `overflow` sends the query to the CPU matcher (a query on impact bounds
 *  first runs again on exact sums: engine.c).  Twin: topk_ref.c.
 *
 *  Keep also writes each DENSE candidate's mark for the finish
 *  (XG_CAND_MARK, xg_select_args.marks).
 *
 *  Four launches (count, two histogram rounds, keep): the steps that
 *  need a whole pass (begin, decide, end) run in the last of the query's
 *  blocks to finish it, which small batches, where launches are most of
 *  the time, do not wait a launch for.
 */
#include <cuda_runtime.h>

#include "topk.h"
#include "../runtime/kern_util.cuh"

#define BINS XG_SELECT_BINS
#if BINS % THREADS
#error decide() gives each thread BINS / THREADS bins
#endif

/* Work splits: every query's items are cut into `split` slices, one block
 * each, so a single query still uses the whole GPU. */
struct view {
    const double *acc;
    const uint32_t *mask;
    const uint32_t *touched;    /* DENSE, sparse: the items' documents */
    uint32_t need;              /* DENSE: mask test */
    bool irow;                  /* DENSE: the mask row holds impact bounds */
    const struct xg_dcand *cand;
    uint64_t n;
    bool dense;
};

static __device__ __forceinline__ view make_view(const struct xg_select_args &a,
                                                 uint32_t qi)
{
    const struct xg_dquery &q = a.queries[qi];
    view v;
    v.dense = q.path == XG_DPATH_DENSE;
    v.acc = a.acc + q.slot * a.n_docs;
    v.mask = a.mask + q.slot * a.n_docs;
    v.need = q.all_groups;
    v.irow = xg_select_irow(&q);
    v.cand = a.icand + q.icand_first;
    v.touched = q.sparse ? a.touched + q.touch_first : NULL;
    v.n = xg_select_items(&a, &q, qi);
    return v;
}

/* Item i's document: a DENSE row's i-th, or its touched list's. */
static __device__ __forceinline__ uint64_t item_doc(const view &v, uint64_t i)
{
    return v.touched ? v.touched[i] : i;
}

static __device__ __forceinline__ bool item(const view &v, uint64_t i,
                                            double *w)
{
    if (v.dense) {
        const uint64_t d = item_doc(v, i);
        const uint32_t m = v.mask[d];
        if (v.irow) {
            /* Integer bounds: nonzero is matched (impact.h). */
            *w = (double)m;
            return m != 0;
        }
        const double acc = v.acc[d];
        /* OR (need 0): any contribution or a mask bit; AND: every bit. */
        if (v.need ? (m & v.need) != v.need : (!m && acc == 0.0)) return false;
        *w = acc;
        return true;
    }
    *w = v.cand[i].weight;
    return true;
}

/* A thread reads UNROLL items, THREADS apart from item i, before it
 * works on any: a block of a large row walks tens of thousands of items,
 * and loading each only after the previous one's atomic left the loop
 * waiting on memory. */
#define UNROLL 4

static __device__ __forceinline__ void load_items(const view &v, uint64_t i,
                                                  uint64_t hi,
                                                  double w[UNROLL],
                                                  bool m[UNROLL])
{
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
        const uint64_t j = i + (uint64_t)u * THREADS;
        w[u] = 0;
        m[u] = j < hi && item(v, j, &w[u]);
    }
}

/* This block's slice [lo, hi) of the query's items. */
static __device__ __forceinline__ void slice(const view &v, uint64_t *lo,
                                             uint64_t *hi)
{
    const uint64_t per = (v.n + gridDim.y - 1) / gridDim.y;
    *lo = per * blockIdx.y;
    *hi = *lo + per < v.n ? *lo + per : v.n;
}

/* A DENSE impact row read whole: its cells are the items, four to a
 * 16-byte load.  One cell a load left a block's pass over its slice
 * waiting on memory round after round (ncu: a quarter of the DRAM's
 * bandwidth, most warps stalled on the loads' results). */
static __device__ __forceinline__ bool row4(const view &v)
{
    return v.dense && v.irow && !v.touched;
}

/* Call f(i, w, matched) for every item i of [lo, hi), in lockstep: every
 * thread of a warp makes the same number of calls (unmatched ones pad),
 * so f may vote across the warp.  A row4 view takes the row's cells four
 * to a load; the few before the first 16-byte boundary and after the
 * last go to the first warp, one a lane. */
template <class F>
static __device__ __forceinline__ void scan_items(const view &v, uint64_t lo,
                                                  uint64_t hi, F f)
{
    /* A slice of one load round a thread (a batch of one query's) gains
     * nothing from wider loads, and the head would cost warp 0 a round. */
    if (!row4(v) || hi - lo < 4 * THREADS) {
        for (uint64_t base = lo + threadIdx.x; base - threadIdx.x < hi;
             base += UNROLL * THREADS) {
            double w[UNROLL];
            bool m[UNROLL];
            load_items(v, base, hi, w, m);
#pragma unroll
            for (int u = 0; u < UNROLL; ++u)
                f(base + (uint64_t)u * THREADS, w[u], m[u]);
        }
        return;
    }
    const uint64_t mis = ((uintptr_t)(v.mask + lo) & 15u) / 4u;
    uint64_t a0 = lo + (mis ? 4 - mis : 0);
    if (a0 > hi) a0 = hi;
    const uint64_t a1 = a0 + ((hi - a0) & ~(uint64_t)3);
    if (threadIdx.x < 32) {
        /* The head [lo, a0) and the tail [a1, hi): at most 6 cells. */
        const uint64_t nh = a0 - lo, l = threadIdx.x;
        const uint64_t i = l < nh ? lo + l : a1 + (l - nh);
        const bool in = l < nh + (hi - a1);
        const uint32_t c = in ? v.mask[i] : 0u;
        f(i, (double)c, c != 0);
    }
    const uint4 *row = (const uint4 *)(v.mask + a0);
    const uint64_t n4 = (a1 - a0) / 4;
    for (uint64_t base = threadIdx.x; base - threadIdx.x < n4;
         base += UNROLL * THREADS) {
        uint4 c[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            const uint64_t j = base + (uint64_t)u * THREADS;
            c[u] = j < n4 ? row[j] : make_uint4(0, 0, 0, 0);
        }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            const uint64_t i = a0 + 4 * (base + (uint64_t)u * THREADS);
            f(i, (double)c[u].x, c[u].x != 0);
            f(i + 1, (double)c[u].y, c[u].y != 0);
            f(i + 2, (double)c[u].z, c[u].z != 0);
            f(i + 3, (double)c[u].w, c[u].w != 0);
        }
    }
}

/* True, in every thread of the block, for the last of a query's blocks
 * to finish a pass: the pass's global writes of the others are visible to
 * it (read them volatile), so it can run the step that needs all of them,
 * which would otherwise be a launch of its own. */
static __device__ __forceinline__ bool last_block(uint32_t *count)
{
    __shared__ bool last;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) {
        last = atomicAdd(count, 1u) == gridDim.y - 1;
        if (last) *count = 0;           /* ready for the next pass */
    }
    __syncthreads();
    return last;
}

/* Decide whether histograms are needed; set the range. */
static __device__ void begin(const struct xg_select_args &a, uint32_t qi)
{
    struct xg_select_state &st = a.state[qi];
    const struct xg_dquery &q = a.queries[qi];
    const unsigned long long matched =
        *(volatile unsigned long long *)&st.matched;
    st.lo = 0;
    st.hi = __longlong_as_double(
        (long long)*(volatile unsigned long long *)&st.max_bits);
    st.above = 0;
    st.thr = -1.0;
    st.done = matched <= q.cand_cap / 2 || matched <= q.k;
}

/* The round's outcome: kb the bin that holds the k-th largest weight,
 * cum the matches at or above its lower edge (plus those above the
 * range): narrow to that bin, or stop there.  The first round's bins are
 * topk.h's log scale, the others equal parts of [lo, hi]. */
static __device__ void settle(struct xg_select_state &st,
                              const struct xg_dquery &q, const uint32_t *h,
                              int kb, unsigned long long cum, bool first)
{
    const double S = __longlong_as_double((long long)st.max_bits);
    double edge, next, width;
    if (first) {
        xg_select_log_range((uint32_t)kb, xg_select_irow(&q), S, &edge,
                            &next);
        width = next - edge;
    } else {
        width = (st.hi - st.lo) / BINS;
        edge = st.lo + kb * width;
        next = kb == BINS - 1 ? st.hi : edge + width;
    }
    st.thr = edge;
    if (cum <= q.cand_cap / 2 || width <= S * 1e-15) {
        st.done = 1;
    } else {
        st.above = cum - h[kb];
        st.lo = edge;
        st.hi = next;
    }
}

/* Find the bin holding the k-th largest weight, counting down from the
 * top bin (the first bin where the matches above the range plus those
 * from the top down reach k; bin 0 if none), and clear the histogram for
 * the next round.  The whole block: each thread sums BINS / THREADS bins
 * from the top, a scan over the threads finds the one whose bins hold the
 * k-th, and it walks them. */
static __device__ void decide(const struct xg_select_args &a, uint32_t qi,
                              uint32_t *h, bool first)
{
    __shared__ unsigned long long warp_sum[THREADS / 32];
    __shared__ int found;
    struct xg_select_state &st = a.state[qi];
    const struct xg_dquery &q = a.queries[qi];
    volatile uint32_t *g = a.hist + (uint64_t)qi * BINS;
    for (uint32_t b = threadIdx.x; b < BINS; b += THREADS) {
        h[b] = g[b];
        g[b] = 0;
    }
    if (threadIdx.x == 0) found = 0;
    __syncthreads();
    const uint32_t per = BINS / THREADS, lane = threadIdx.x & 31u;
    const int top = BINS - 1 - (int)(threadIdx.x * per);
    unsigned long long sum = 0;
    for (uint32_t j = 0; j < per; ++j) sum += h[top - (int)j];
    unsigned long long inc = sum;
    for (uint32_t o = 1; o < 32; o <<= 1) {
        const unsigned long long y = __shfl_up_sync(0xFFFFFFFFu, inc, o);
        if (lane >= o) inc += y;
    }
    if (lane == 31) warp_sum[threadIdx.x >> 5] = inc;
    __syncthreads();
    unsigned long long before = 0, total = 0;
    for (uint32_t w = 0; w < THREADS / 32; ++w) {
        if (w < (threadIdx.x >> 5)) before += warp_sum[w];
        total += warp_sum[w];
    }
    const unsigned long long base = st.above + before + inc - sum;
    __syncthreads();            /* every base read before settle() writes */
    if ((threadIdx.x == 0 || base < q.k) && base + sum >= q.k) {
        unsigned long long cum = base;
        int kb = top;
        for (uint32_t j = 0; j < per; ++j) {
            cum += h[top - (int)j];
            if (cum >= q.k) {
                kb = top - (int)j;
                break;
            }
        }
        settle(st, q, h, kb, cum, first);
        found = 1;
    }
    __syncthreads();
    if (threadIdx.x == 0 && !found)
        settle(st, q, h, 0, st.above + total, first);
}

/* The block's histogram into the query's (only its nonzero bins). */
static __device__ __forceinline__ void flush_hist(const uint32_t *h,
                                                  uint32_t *g)
{
    for (uint32_t b = threadIdx.x; b < BINS; b += THREADS)
        if (h[b]) atomicAdd(&g[b], h[b]);
}

/* Pass 1: matches, the largest weight and the first round's histogram;
 * its last block decides whether rounds are needed and runs the first.
 * Rounds need more matches than half the room (begin()), so a query with
 * no more items than that (most ANDs' intersections), or whose lists hold
 * no more documents, builds none (were the bound wrong, it keeps every
 * match: never a wrong threshold). */
static __global__ void __launch_bounds__(THREADS)
count_kernel(struct xg_select_args a)
{
    __shared__ uint32_t h[BINS];
    const view v = make_view(a, blockIdx.x);
    const struct xg_dquery &q = a.queries[blockIdx.x];
    const uint64_t most = v.dense && q.match_bound < v.n ? q.match_bound
                                                         : v.n;
    const bool rounds = most > q.cand_cap / 2 && most > q.k;
    uint64_t lo, hi;
    slice(v, &lo, &hi);
    if (rounds)
        for (uint32_t b = threadIdx.x; b < BINS; b += THREADS) h[b] = 0;
    __syncthreads();
    unsigned long long cnt = 0;
    double mx = 0;
    scan_items(v, lo, hi, [&](uint64_t, double w, bool m) {
        if (!m) return;
        ++cnt;
        mx = w > mx ? w : mx;
        if (rounds) atomicAdd(&h[xg_select_log_bin(w, v.irow)], 1u);
    });
    for (int o = 16; o; o >>= 1) {
        cnt += __shfl_down_sync(0xFFFFFFFFu, cnt, o);
        double t = __shfl_down_sync(0xFFFFFFFFu, mx, o);
        mx = t > mx ? t : mx;
    }
    struct xg_select_state &st = a.state[blockIdx.x];
    if ((threadIdx.x & 31u) == 0 && cnt) {
        atomicAdd(&st.matched, cnt);
        /* weights are >= 0: their bit patterns order as integers */
        atomicMax(&st.max_bits, (unsigned long long)__double_as_longlong(mx));
    }
    uint32_t *g = a.hist + (uint64_t)blockIdx.x * BINS;
    if (rounds) {
        __syncthreads();
        flush_hist(h, g);
    }
    if (!last_block(&st.blocks)) return;
    __shared__ bool done;
    if (threadIdx.x == 0) {
        begin(a, blockIdx.x);
        done = st.done;
    }
    __syncthreads();
    if (!done && rounds) {
        decide(a, blockIdx.x, h, true);
        return;
    }
    if (!done && threadIdx.x == 0) {
        st.done = 1;
        st.thr = -1.0;
    }
    /* No rounds: leave the histogram zero for the next batch. */
    if (rounds)
        for (uint32_t b = threadIdx.x; b < BINS; b += THREADS)
            ((volatile uint32_t *)g)[b] = 0;
}

/* One round of equal bins over [lo, hi]; its last block decides. */
static __global__ void __launch_bounds__(THREADS)
hist_kernel(struct xg_select_args a)
{
    __shared__ uint32_t h[BINS];
    struct xg_select_state &st = a.state[blockIdx.x];
    if (st.done) return;        /* every block of the query alike */
    const view v = make_view(a, blockIdx.x);
    uint64_t lo_i, hi_i;
    slice(v, &lo_i, &hi_i);
    for (uint32_t b = threadIdx.x; b < BINS; b += THREADS) h[b] = 0;
    __syncthreads();
    const double lo = st.lo, hi = st.hi, width = (hi - lo) / BINS;
    scan_items(v, lo_i, hi_i, [&](uint64_t, double w, bool m) {
        if (!m || w < lo || w > hi) return;
        const int b = width > 0 ? (int)((w - lo) / width) : BINS - 1;
        atomicAdd(&h[b < BINS ? b : BINS - 1], 1u);
    });
    __syncthreads();
    flush_hist(h, a.hist + (uint64_t)blockIdx.x * BINS);
    if (last_block(&st.blocks)) decide(a, blockIdx.x, h, false);
}

/* The query's result, from its finished state. */
static __device__ void end(const struct xg_select_args &a, uint32_t qi)
{
    const struct xg_select_state &st = a.state[qi];
    const struct xg_dquery &q = a.queries[qi];
    const uint32_t written = *(volatile const uint32_t *)&st.written;
    const double S = __longlong_as_double((long long)st.max_bits);
    struct xg_dqresult r;
    r.matched = st.matched;
    r.n_cand = written < q.cand_cap ? written : q.cand_cap;
    r.overflow = written > q.cand_cap || (a.ifail && a.ifail[qi]);
    r.max_score = S;
    r.threshold = xg_select_cut(st.thr, S, a.rel_margin, q.margin);
    a.res[qi] = r;
}

/* Keep every item at or above the threshold minus the margin; the
 * last block writes the result. */
static __global__ void __launch_bounds__(THREADS)
keep_kernel(struct xg_select_args a)
{
    struct xg_select_state &st = a.state[blockIdx.x];
    const struct xg_dquery &q = a.queries[blockIdx.x];
    const view v = make_view(a, blockIdx.x);
    uint64_t lo, hi;
    slice(v, &lo, &hi);
    const double S = __longlong_as_double((long long)st.max_bits);
    const double thr = xg_select_cut(st.thr, S, a.rel_margin, q.margin);
    const uint32_t lane = threadIdx.x & 31u;
    /* scan_items calls in lockstep: the warp votes on each step. */
    scan_items(v, lo, hi, [&](uint64_t i, double w, bool m) {
        const bool keep = m && w >= thr;
        const uint32_t ballot = __ballot_sync(0xFFFFFFFFu, keep);
        if (!ballot) return;
        uint32_t first = 0;
        if (lane == 0) first = atomicAdd(&st.written, __popc(ballot));
        first = __shfl_sync(0xFFFFFFFFu, first, 0);
        if (!keep) return;
        const uint32_t slot = first + __popc(ballot & ((1u << lane) - 1u));
        if (slot >= q.cand_cap) return;
        struct xg_dcand c;
        c.doc = v.dense ? (uint32_t)item_doc(v, i) : v.cand[i].doc;
        c.matched = v.dense ? 0u : 1u;
        c.weight = w;
        a.out[q.cand_first + slot] = c;
        /* The finish's mark, without a launch of its own: this thread
         * alone read the cell. */
        if (v.dense && a.marks) {
            a.marks[q.slot * a.n_docs + c.doc] = XG_CAND_MARK | slot;
            a.cand_in[q.cand_first + slot] = 0;
        }
    });
    if (last_block(&st.blocks) && threadIdx.x == 0) {
        end(a, blockIdx.x);
        st = xg_select_state();     /* zero for the next batch */
    }
}

extern "C" int xg_select_gpu(const struct xg_select_args *a, uint32_t n_queries,
                             uint64_t max_items, cudaStream_t stream)
{
    if (!n_queries) return cudaSuccess;
    /* About 32K items a block, at most 512 blocks a query; and a small
     * batch at least XG_SMALL_BATCH_BLOCKS blocks in all (while each has
     * a block's width of items). */
    uint64_t split = (max_items + 32767) / 32768;
    const uint64_t fill = (XG_SMALL_BATCH_BLOCKS + n_queries - 1) / n_queries;
    const uint64_t widest = (max_items + THREADS - 1) / THREADS;
    if (split < fill) split = fill < widest ? fill : widest;
    if (split < 1) split = 1;
    if (split > 512) split = 512;
    dim3 grid(n_queries, (unsigned)split);
    count_kernel<<<grid, THREADS, 0, stream>>>(*a);
    for (int r = 0; r < XG_SELECT_ROUNDS; ++r)
        hist_kernel<<<grid, THREADS, 0, stream>>>(*a);
    keep_kernel<<<grid, THREADS, 0, stream>>>(*a);
    return (int)cudaPeekAtLastError();
}

#define PACK_THREADS 128

/* A block a query: its offset is the candidates of the queries before it
 * (summed by the block: a batch has at most a few thousand queries), then
 * its candidates are copied there. */
static __global__ void pack_kernel(const struct xg_dquery *queries,
                                   const struct xg_dqresult *res,
                                   const struct xg_dcand *cand,
                                   struct xg_dcand *out)
{
    __shared__ unsigned long long part[PACK_THREADS / 32];
    unsigned long long o = 0;
    for (uint32_t i = threadIdx.x; i < blockIdx.x; i += PACK_THREADS)
        o += res[i].n_cand;
    for (int d = 16; d; d >>= 1) o += __shfl_down_sync(0xffffffffu, o, d);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = o;
    __syncthreads();
    o = 0;
    for (int w = 0; w < PACK_THREADS / 32; ++w) o += part[w];
    const struct xg_dquery &q = queries[blockIdx.x];
    const uint32_t n = res[blockIdx.x].n_cand;
    for (uint32_t i = threadIdx.x; i < n; i += PACK_THREADS)
        out[o + i] = cand[q.cand_first + i];
}

extern "C" int xg_pack_gpu(const struct xg_dquery *d_queries,
                           const struct xg_dqresult *d_res,
                           const struct xg_dcand *d_cand, uint32_t n_queries,
                           struct xg_dcand *packed, cudaStream_t stream)
{
    if (!n_queries) return cudaSuccess;
    pack_kernel<<<n_queries, PACK_THREADS, 0, stream>>>(d_queries, d_res,
                                                        d_cand, packed);
    return (int)cudaPeekAtLastError();
}
