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
 *  sequences these per chunk is qlm_cuda.c.  Each kernel's body is an
 *  item function of qlm_items.h (shared with the host emulation that tests
 *  the engine without a device).  Built with --fmad=false, so
 *  xg_qlm_prob (qlm_formula.h) gives the twin's bits.
 */
#include <cub/cub.cuh>
#include <cuda/functional>
#include <thrust/iterator/counting_iterator.h>

#include "../runtime/kern_util.cuh"
#include "qlm_items.h"
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
    if (d < n_docs) xg_qlm_i_doc_mark(doc_end, n, mark, d);
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
    if (i < n) xg_qlm_i_first_keys(ids, k, v, i);
}

static __global__ void place(const uint32_t *act, uint32_t na, const uint64_t *sk,
                             const uint32_t *sv, uint32_t *sa, uint32_t *hv)
{
    const uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < na) xg_qlm_i_place(act, sk, sv, sa, hv, j);
}

static __global__ void rerank(uint32_t na, const uint64_t *sk, const uint32_t *sv,
                              const uint32_t *head, uint32_t *rank, uint32_t *keep)
{
    const uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < na) xg_qlm_i_rerank(na, sk, sv, head, rank, keep, j);
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
    if (j < na) xg_qlm_i_round_keys(doc, doc_end, k, pos_bits, sa, rank, act, key, val, j);
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
    if (i < n) xg_qlm_i_word_keys(ids, doc, doc_end, sa, w, key, val, i);
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
    if (i < n) xg_qlm_i_lcp(ids, doc, doc_end, sa, sigma, lenv, lcp, i);
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
    if (j < nL) xg_qlm_i_head(L, n, lcp, head, j);
}

static __global__ void groups(const uint32_t *L, uint32_t nL, const uint32_t *head,
                              const uint32_t *gid1, const uint32_t *sa, const uint32_t *doc,
                              int dbits, uint32_t *gstart, uint32_t *G, uint32_t *count,
                              uint64_t *key)
{
    const uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < nL) xg_qlm_i_group(L, nL, head, gid1, sa, doc, dbits, gstart, G, count, key, j);
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
    if (r < limit) xg_qlm_i_row_start(count, ng, ukey, dbits, rowstart, r);
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
    if (g < ng)
        xg_qlm_i_gram(gstart, rowstart, L, sa, word_base, row_base, pos, z, df, off, g);
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
    if (r < cur.R) xg_qlm_i_prob(cur, prev, a, odoc, oprob, ocounts, count, r);
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
