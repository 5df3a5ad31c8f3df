/** @file qlm_score.cu
 *  @brief Query-time n-gram query likelihood on the GPU (qlm_score.h):
 *         the candidates (the query's unigram rows gathered by a prefix
 *         search, radix-sorted, made unique), one thread per candidate
 *         summing its words' log factors in query order, and the ranking
 *         by a stable descending radix sort.  The CPU twin is
 *         qlm_score_ref.c; the logs come from the host (qlm_score_cuda.c),
 *         so the sums are the twin's bit for bit.
 */
#include <cub/cub.cuh>

#include "../runtime/kern_util.cuh"
#include "qlm_items.h"
#include "qlm_kern.h"

extern "C" int xg_qlm_qtmp_bytes(uint32_t n, size_t *bytes)
{
    size_t m = 0, b = 0;
    cub::DoubleBuffer<uint32_t> k32(nullptr, nullptr);
    CUB_TRY(cub::DeviceRadixSort::SortKeys(nullptr, b, k32, n));
    m = b > m ? b : m;
    uint32_t *u = nullptr;
    CUB_TRY(cub::DeviceSelect::Unique(nullptr, b, u, u, u, n));
    m = b > m ? b : m;
    double *f = nullptr;
    CUB_TRY(cub::DeviceRadixSort::SortPairsDescending(nullptr, b, f, f, u, u, n));
    m = b > m ? b : m;
    *bytes = m;
    return 0;
}

static __global__ void gather(const uint32_t *docid, const uint64_t *start,
                              const uint64_t *prefix, uint32_t n_ranges, uint32_t total,
                              uint32_t *out)
{
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < total) xg_qlm_i_gather(docid, start, prefix, n_ranges, out, t);
}

extern "C" int xg_qlm_cands_gpu(const uint32_t *d_docid, const uint64_t *d_start,
                                const uint64_t *d_prefix, uint32_t n_ranges, uint32_t total,
                                uint32_t *d_c0, uint32_t *d_c1, uint32_t *d_out,
                                uint32_t *d_nd, void *d_tmp, size_t tmp_bytes,
                                cudaStream_t stream)
{
    gather<<<blocks(total), THREADS, 0, stream>>>(d_docid, d_start, d_prefix, n_ranges, total,
                                                  d_c0);
    CUB_TRY(cudaPeekAtLastError());
    cub::DoubleBuffer<uint32_t> k(d_c0, d_c1);
    CUB_TRY(cub::DeviceRadixSort::SortKeys(d_tmp, tmp_bytes, k, total, 0, 32, stream));
    CUB_TRY(cub::DeviceSelect::Unique(d_tmp, tmp_bytes, k.Current(), d_out, d_nd, total,
                                      stream));
    return 0;
}

static __global__ void score(const uint32_t *cand, uint32_t nd, const xg_qlm_qword *words,
                             uint32_t m, const uint32_t *docid, const double *logp,
                             double *out)
{
    const uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < nd) xg_qlm_i_score(cand, words, m, docid, logp, out, j);
}

extern "C" int xg_qlm_qscore_gpu(const uint32_t *d_cand, uint32_t nd,
                                 const xg_qlm_qword *d_words, uint32_t m,
                                 const uint32_t *d_docid, const double *d_logp, double *d_s0,
                                 uint32_t *d_rank_doc, double *d_rank_score, void *d_tmp,
                                 size_t tmp_bytes, cudaStream_t stream)
{
    score<<<blocks(nd), THREADS, 0, stream>>>(d_cand, nd, d_words, m, d_docid, d_logp, d_s0);
    CUB_TRY(cudaPeekAtLastError());
    /* Stable: equal scores keep the candidates' docid order. */
    CUB_TRY(cub::DeviceRadixSort::SortPairsDescending(d_tmp, tmp_bytes, d_s0, d_rank_score,
                                                      d_cand, d_rank_doc, nd, 0, 64, stream));
    return 0;
}
