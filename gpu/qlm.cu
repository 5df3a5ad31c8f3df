/** @file qlm.cu
 *  @brief The qlm pipeline's kernels (seed 002 §4 on CUB): documents by
 *         scan, the suffix sort by prefix doubling (Algorithm 1: stable
 *         radix sorts of (rank, rank k words on) inside the active
 *         segments, re-ranking by a max-scan of run heads, segments of one
 *         item dropped by select) or by LSD radix sorts of sigma-word keys,
 *         the neighbours' shared words, the n-groups of each level (select,
 *         scan), the per-group sort of documents and the counts f(x, d) by
 *         run-length encoding, and eq. 2 (Algorithm 2) with f(h, d) found
 *         by binary search among the previous level's rows.
 *
 *  The CPU twins are qlm_sort.c and qlm_count.c; the host side that
 *  sequences these per chunk is qlm_cuda.c.  Built with --fmad=false, so
 *  xg_qlm_prob (qlm_formula.h) gives the twin's bits.
 */
#include <cub/cub.cuh>
#include <cuda/functional>
#include <thrust/iterator/counting_iterator.h>

#include "kern_util.cuh"
#include "qlm_formula.h"
#include "qlm_kern.h"

typedef thrust::counting_iterator<uint32_t> count_it;

#define LAUNCH_TRY() CUB_TRY(cudaPeekAtLastError())

namespace {

struct at_least {
    const uint8_t *lenv;
    uint8_t n;
    __device__ bool operator()(uint32_t i) const { return lenv[i] >= n; }
};

} // namespace

static __device__ __forceinline__ uint32_t len_at(const uint32_t *doc,
                                                  const uint32_t *doc_end, uint32_t p)
{
    return doc_end[doc[p]] - p;
}

/* ---- workspace ------------------------------------------------------ */

extern "C" int xg_qlm_tmp_bytes(uint32_t n, size_t *bytes)
{
    size_t m = 0, b = 0;
    cub::DoubleBuffer<uint64_t> k64(nullptr, nullptr);
    cub::DoubleBuffer<uint32_t> k32(nullptr, nullptr), v32(nullptr, nullptr);
    CUB_TRY(cub::DeviceRadixSort::SortPairs(nullptr, b, k64, v32, n, 0, 64));
    m = b > m ? b : m;
    CUB_TRY(cub::DeviceRadixSort::SortPairs(nullptr, b, k32, v32, n, 0, 32));
    m = b > m ? b : m;
    CUB_TRY(cub::DeviceRadixSort::SortKeys(nullptr, b, k64, n, 0, 64));
    m = b > m ? b : m;
    uint32_t *u = nullptr;
    uint64_t *u64 = nullptr;
    CUB_TRY(cub::DeviceScan::InclusiveSum(nullptr, b, u, u, n));
    m = b > m ? b : m;
    CUB_TRY(cub::DeviceScan::InclusiveScan(nullptr, b, u, u, cuda::maximum<uint32_t>(), n));
    m = b > m ? b : m;
    CUB_TRY(cub::DeviceSelect::Flagged(nullptr, b, u, u, u, u, n));
    m = b > m ? b : m;
    CUB_TRY(cub::DeviceSelect::Flagged(nullptr, b, count_it(0), u, u, u, n));
    m = b > m ? b : m;
    CUB_TRY(cub::DeviceSelect::If(nullptr, b, count_it(0), u, u, n, at_least{nullptr, 1}));
    m = b > m ? b : m;
    CUB_TRY(cub::DeviceRunLengthEncode::Encode(nullptr, b, u64, u64, u, u, n));
    m = b > m ? b : m;
    *bytes = m;
    return 0;
}

/* ---- documents ------------------------------------------------------ */

static __global__ void doc_marks(const uint32_t *doc_end, uint32_t n_docs, uint32_t n,
                                 uint32_t *mark)
{
    const uint32_t d = blockIdx.x * blockDim.x + threadIdx.x;
    /* An empty document ends where the one before it does: marks add up. */
    if (d < n_docs && doc_end[d] < n) atomicAdd(&mark[doc_end[d]], 1u);
}

extern "C" int xg_qlm_docs_gpu(const uint32_t *d_doc_end, uint32_t n_docs, uint32_t n,
                               uint32_t *d_doc, struct xg_qlm_scratch s,
                               cudaStream_t stream)
{
    CUB_TRY(cudaMemsetAsync(s.s0, 0, (size_t)n * 4, stream));
    doc_marks<<<blocks(n_docs), THREADS, 0, stream>>>(d_doc_end, n_docs, n, s.s0);
    LAUNCH_TRY();
    CUB_TRY(cub::DeviceScan::InclusiveSum(s.tmp, s.tmp_bytes, s.s0, d_doc, n, stream));
    return 0;
}

/* ---- prefix doubling ------------------------------------------------ */

static __global__ void first_keys(const uint32_t *ids, uint32_t n, uint64_t *k, uint32_t *v)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    k[i] = (uint64_t)ids[i] + 1;
    v[i] = i;
}

/* act == NULL: the active items are 0..na-1. */
static __device__ __forceinline__ uint32_t act_at(const uint32_t *act, uint32_t j)
{
    return act ? act[j] : j;
}

/* Sorted item j goes to the j-th active slot; heads carry their slot. */
static __global__ void place(const uint32_t *act, uint32_t na, const uint64_t *sk,
                             const uint32_t *sv, uint32_t *sa, uint32_t *hv)
{
    const uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= na) return;
    const uint32_t a = act_at(act, j);
    sa[a] = sv[j];
    hv[j] = j == 0 || sk[j] != sk[j - 1] ? a : 0;
}

/* New ranks (head slot + 1) and which items stay in a run of more than
 * one (the next round's segments). */
static __global__ void rerank(uint32_t na, const uint64_t *sk, const uint32_t *sv,
                              const uint32_t *head, uint32_t *rank, uint32_t *keep)
{
    const uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= na) return;
    rank[sv[j]] = head[j] + 1;
    keep[j] = (j > 0 && sk[j] == sk[j - 1]) || (j + 1 < na && sk[j] == sk[j + 1]);
}

/* After the sort of one round: sa, ranks and the next active list. */
static int finish_round(const uint32_t *act, uint32_t na, const uint64_t *sk,
                        const uint32_t *sv, uint32_t *sa, uint32_t *rank,
                        uint32_t *act_out, uint32_t *count, struct xg_qlm_scratch s,
                        cudaStream_t stream)
{
    place<<<blocks(na), THREADS, 0, stream>>>(act, na, sk, sv, sa, s.s1);
    LAUNCH_TRY();
    CUB_TRY(cub::DeviceScan::InclusiveScan(s.tmp, s.tmp_bytes, s.s1, s.s2,
                                           cuda::maximum<uint32_t>(), na, stream));
    rerank<<<blocks(na), THREADS, 0, stream>>>(na, sk, sv, s.s2, rank, s.s1);
    LAUNCH_TRY();
    if (act)
        CUB_TRY(cub::DeviceSelect::Flagged(s.tmp, s.tmp_bytes, act, s.s1, act_out, count,
                                           na, stream));
    else
        CUB_TRY(cub::DeviceSelect::Flagged(s.tmp, s.tmp_bytes, count_it(0), s.s1, act_out,
                                           count, na, stream));
    return 0;
}

extern "C" int xg_qlm_dbl_first_gpu(const uint32_t *d_ids, uint32_t n, int id_bits,
                                    uint32_t *d_sa, uint32_t *d_rank, uint32_t *d_act,
                                    uint32_t *d_count, struct xg_qlm_scratch s,
                                    cudaStream_t stream)
{
    first_keys<<<blocks(n), THREADS, 0, stream>>>(d_ids, n, s.k0, s.v0);
    LAUNCH_TRY();
    cub::DoubleBuffer<uint64_t> k(s.k0, s.k1);
    cub::DoubleBuffer<uint32_t> v(s.v0, s.v1);
    CUB_TRY(cub::DeviceRadixSort::SortPairs(s.tmp, s.tmp_bytes, k, v, n, 0,
                                            id_bits > 0 ? id_bits : 1, stream));
    return finish_round(nullptr, n, k.Current(), v.Current(), d_sa, d_rank, d_act,
                        d_count, s, stream);
}

static __global__ void round_keys(const uint32_t *doc, const uint32_t *doc_end, uint32_t k,
                                  int pos_bits, const uint32_t *sa, const uint32_t *rank,
                                  const uint32_t *act, uint32_t na, uint64_t *key,
                                  uint32_t *val)
{
    const uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= na) return;
    const uint32_t p = sa[act[j]];
    const uint64_t k2 = len_at(doc, doc_end, p) > k ? rank[p + k] : 0;
    key[j] = (uint64_t)rank[p] << pos_bits | k2;
    val[j] = p;
}

extern "C" int xg_qlm_dbl_round_gpu(const uint32_t *d_doc, const uint32_t *d_doc_end,
                                    uint32_t k, int pos_bits, uint32_t *d_sa,
                                    uint32_t *d_rank, const uint32_t *d_act,
                                    uint32_t n_act, uint32_t *d_act_out,
                                    uint32_t *d_count, struct xg_qlm_scratch s,
                                    cudaStream_t stream)
{
    round_keys<<<blocks(n_act), THREADS, 0, stream>>>(d_doc, d_doc_end, k, pos_bits, d_sa,
                                                      d_rank, d_act, n_act, s.k0, s.v0);
    LAUNCH_TRY();
    /* Ranks are head slots + 1, so sorting by (rank, next rank) keeps every
     * segment in its place and sorts inside it; the sort is stable and
     * segments are in position order, so ties stay by position. */
    cub::DoubleBuffer<uint64_t> kb(s.k0, s.k1);
    cub::DoubleBuffer<uint32_t> vb(s.v0, s.v1);
    CUB_TRY(cub::DeviceRadixSort::SortPairs(s.tmp, s.tmp_bytes, kb, vb, n_act, 0,
                                            2 * pos_bits, stream));
    return finish_round(d_act, n_act, kb.Current(), vb.Current(), d_sa, d_rank, d_act_out,
                        d_count, s, stream);
}

/* ---- the plain sort of sigma-word keys ------------------------------ */

static __global__ void iota(uint32_t *a, uint32_t n)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = i;
}

static __global__ void word_keys(const uint32_t *ids, const uint32_t *doc,
                                 const uint32_t *doc_end, const uint32_t *sa, uint32_t n,
                                 uint32_t w, uint32_t *key, uint32_t *val)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const uint32_t p = sa[i];
    key[i] = len_at(doc, doc_end, p) > w ? ids[p + w] + 1 : 0;
    val[i] = p;
}

extern "C" int xg_qlm_key_sort_gpu(const uint32_t *d_ids, const uint32_t *d_doc,
                                   const uint32_t *d_doc_end, uint32_t n, uint32_t sigma,
                                   int id_bits, uint32_t *d_sa, struct xg_qlm_scratch s,
                                   cudaStream_t stream)
{
    iota<<<blocks(n), THREADS, 0, stream>>>(d_sa, n);
    LAUNCH_TRY();
    uint32_t *ka = (uint32_t *)s.k0, *kb = (uint32_t *)s.k1;
    for (uint32_t w = sigma; w-- > 0;) {
        word_keys<<<blocks(n), THREADS, 0, stream>>>(d_ids, d_doc, d_doc_end, d_sa, n, w,
                                                     ka, s.v0);
        LAUNCH_TRY();
        cub::DoubleBuffer<uint32_t> k(ka, kb), v(s.v0, s.v1);
        CUB_TRY(cub::DeviceRadixSort::SortPairs(s.tmp, s.tmp_bytes, k, v, n, 0,
                                                id_bits > 0 ? id_bits : 1, stream));
        CUB_TRY(cudaMemcpyAsync(d_sa, v.Current(), (size_t)n * 4, cudaMemcpyDeviceToDevice,
                                stream));
    }
    return 0;
}

/* ---- shared words of neighbours ------------------------------------- */

static __global__ void lcp_kernel(const uint32_t *ids, const uint32_t *doc,
                                  const uint32_t *doc_end, const uint32_t *sa, uint32_t n,
                                  uint32_t sigma, uint8_t *lenv, uint8_t *lcp)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const uint32_t y = sa[i], ly = len_at(doc, doc_end, y);
    lenv[i] = (uint8_t)(ly < sigma ? ly : sigma);
    if (i == 0) { lcp[0] = 0; return; }
    const uint32_t x = sa[i - 1], lx = len_at(doc, doc_end, x);
    uint32_t m = sigma;
    if (lx < m) m = lx;
    if (ly < m) m = ly;
    uint32_t l = 0;
    while (l < m && ids[x + l] == ids[y + l]) ++l;
    lcp[i] = (uint8_t)l;
}

extern "C" int xg_qlm_lcp_gpu(const uint32_t *d_ids, const uint32_t *d_doc,
                              const uint32_t *d_doc_end, const uint32_t *d_sa, uint32_t n,
                              uint32_t sigma, uint8_t *d_lenv, uint8_t *d_lcp,
                              cudaStream_t stream)
{
    lcp_kernel<<<blocks(n), THREADS, 0, stream>>>(d_ids, d_doc, d_doc_end, d_sa, n, sigma,
                                                  d_lenv, d_lcp);
    LAUNCH_TRY();
    return 0;
}

/* ---- levels: groups, documents, counts ------------------------------ */

extern "C" int xg_qlm_level_items_gpu(const uint8_t *d_lenv, uint32_t n_words, uint32_t n,
                                      uint32_t *d_L, uint32_t *d_count,
                                      struct xg_qlm_scratch s, cudaStream_t stream)
{
    CUB_TRY(cub::DeviceSelect::If(s.tmp, s.tmp_bytes, count_it(0), d_L, d_count, n_words,
                                  at_least{d_lenv, (uint8_t)n}, stream));
    return 0;
}

static __global__ void heads(const uint32_t *L, uint32_t nL, uint32_t n, const uint8_t *lcp,
                             uint32_t *head)
{
    const uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < nL) head[j] = j == 0 || lcp[L[j]] < n;
}

static __global__ void groups(const uint32_t *L, uint32_t nL, const uint32_t *head,
                              const uint32_t *gid1, const uint32_t *sa, const uint32_t *doc,
                              int dbits, uint32_t *gstart, uint32_t *G, uint32_t *count,
                              uint64_t *key)
{
    const uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= nL) return;
    const uint32_t g = gid1[j] - 1;
    if (head[j]) gstart[g] = j;
    if (j == nL - 1) {
        gstart[g + 1] = nL;
        count[1] = g + 1;
    }
    G[L[j]] = g;
    key[j] = (uint64_t)g << dbits | doc[sa[L[j]]];
}

extern "C" int xg_qlm_level_groups_gpu(const uint32_t *d_L, uint32_t nL, uint32_t n,
                                       const uint8_t *d_lcp, const uint32_t *d_sa,
                                       const uint32_t *d_doc, int dbits,
                                       uint32_t *d_gstart, uint32_t *d_G,
                                       uint32_t *d_count, struct xg_qlm_scratch s,
                                       cudaStream_t stream)
{
    heads<<<blocks(nL), THREADS, 0, stream>>>(d_L, nL, n, d_lcp, s.s0);
    LAUNCH_TRY();
    CUB_TRY(cub::DeviceScan::InclusiveSum(s.tmp, s.tmp_bytes, s.s0, s.s1, nL, stream));
    groups<<<blocks(nL), THREADS, 0, stream>>>(d_L, nL, s.s0, s.s1, d_sa, d_doc, dbits,
                                               d_gstart, d_G, d_count, s.k0);
    LAUNCH_TRY();
    return 0;
}

static __global__ void row_starts(uint32_t limit, const uint32_t *count, uint32_t ng,
                                  const uint64_t *ukey, int dbits, uint32_t *rowstart)
{
    const uint32_t r = blockIdx.x * blockDim.x + threadIdx.x;
    const uint32_t R = count[2];
    if (r >= limit || r >= R) return;
    const uint64_t g = ukey[r] >> dbits;
    if (r == 0 || g != ukey[r - 1] >> dbits) rowstart[g] = r;
    if (r == R - 1) rowstart[ng] = R;
}

extern "C" int xg_qlm_level_rows_gpu(uint32_t nL, uint32_t ng, int bits, int dbits,
                                     uint64_t *d_ukey, uint32_t *d_ucnt,
                                     uint32_t *d_rowstart, uint32_t *d_count,
                                     struct xg_qlm_scratch s, cudaStream_t stream)
{
    cub::DoubleBuffer<uint64_t> k(s.k0, s.k1);
    CUB_TRY(cub::DeviceRadixSort::SortKeys(s.tmp, s.tmp_bytes, k, nL, 0,
                                           bits > 0 ? bits : 1, stream));
    CUB_TRY(cub::DeviceRunLengthEncode::Encode(s.tmp, s.tmp_bytes, k.Current(), d_ukey,
                                               d_ucnt, d_count + 2, nL, stream));
    row_starts<<<blocks(nL), THREADS, 0, stream>>>(nL, d_count, ng, d_ukey, dbits,
                                                   d_rowstart);
    LAUNCH_TRY();
    return 0;
}

static __global__ void grams_kernel(uint32_t ng, const uint32_t *gstart,
                                    const uint32_t *rowstart, const uint32_t *L,
                                    const uint32_t *sa, uint64_t word_base, uint64_t row_base,
                                    uint64_t *pos, uint64_t *z, uint64_t *df, uint64_t *off)
{
    const uint32_t g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= ng) return;
    pos[g] = word_base + sa[L[gstart[g]]];
    if (z) z[g] = gstart[g + 1] - gstart[g];
    if (df) df[g] = rowstart[g + 1] - rowstart[g];
    if (off) off[g] = row_base + rowstart[g];
}

extern "C" int xg_qlm_grams_gpu(uint32_t ng, const uint32_t *d_gstart,
                                const uint32_t *d_rowstart, const uint32_t *d_L,
                                const uint32_t *d_sa, uint64_t word_base, uint64_t row_base,
                                uint64_t *d_pos, uint64_t *d_z, uint64_t *d_df,
                                uint64_t *d_off, cudaStream_t stream)
{
    grams_kernel<<<blocks(ng), THREADS, 0, stream>>>(ng, d_gstart, d_rowstart, d_L, d_sa,
                                                     word_base, row_base, d_pos, d_z, d_df,
                                                     d_off);
    LAUNCH_TRY();
    return 0;
}

/* ---- eq. 2 ---------------------------------------------------------- */

static __global__ void probs(xg_qlm_level cur, xg_qlm_level prev, xg_qlm_rowargs a,
                             uint32_t *odoc, double *oprob, uint64_t *ocounts,
                             uint32_t *count)
{
    const uint32_t r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= cur.R) return;
    const uint64_t key = cur.ukey[r];
    const uint32_t g = (uint32_t)(key >> a.dbits);
    const uint32_t d = (uint32_t)(key & ((1ull << a.dbits) - 1));
    const uint64_t x = cur.ucnt[r];
    uint64_t y, w;
    if (a.n == 1) {
        y = a.doc_end[d] - (d ? a.doc_end[d - 1] : 0);
        w = a.n_words;
    } else {
        /* The group's history is the (n-1)-group of its first item. */
        const uint32_t p = prev.G[cur.L[cur.gstart[g]]];
        const uint64_t target = (uint64_t)p << a.dbits | d;
        uint32_t lo = 0, hi = prev.R;
        while (lo < hi) {
            const uint32_t mid = lo + (hi - lo) / 2;
            if (prev.ukey[mid] < target) lo = mid + 1; else hi = mid;
        }
        if (lo == prev.R || prev.ukey[lo] != target) {
            count[3] = 1;
            y = 1;
        } else {
            y = prev.ucnt[lo];
        }
        w = prev.gstart[p + 1] - prev.gstart[p];
    }
    const uint64_t z = a.z ? a.z[g] : cur.gstart[g + 1] - cur.gstart[g];
    if (a.w) w = a.w[g];
    odoc[r] = a.docids ? a.docids[d] : (uint32_t)(a.doc_base + d + 1);
    oprob[r] = xg_qlm_prob(a.lambda, x, y, z, w);
    if (ocounts) {
        ocounts[4 * (uint64_t)r] = x;
        ocounts[4 * (uint64_t)r + 1] = y;
        ocounts[4 * (uint64_t)r + 2] = z;
        ocounts[4 * (uint64_t)r + 3] = w;
    }
}

extern "C" int xg_qlm_probs_gpu(struct xg_qlm_level cur, struct xg_qlm_level prev,
                                struct xg_qlm_rowargs a, uint32_t *d_odoc, double *d_oprob,
                                uint64_t *d_ocounts, uint32_t *d_count, cudaStream_t stream)
{
    probs<<<blocks(cur.R), THREADS, 0, stream>>>(cur, prev, a, d_odoc, d_oprob, d_ocounts,
                                                 d_count);
    LAUNCH_TRY();
    return 0;
}
