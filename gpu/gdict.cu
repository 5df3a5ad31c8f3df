/** @file gdict.cu
 *  @brief The GPU dictionary's kernels and CUB calls (gdict.h): word
 *         starts, hashes, hash runs checked byte by byte, ranking rounds
 *         of 4-byte big-endian keys, term ids.  Sequenced by gdict_cuda.c;
 *         the twin is the host dictionary.
 */
#include <cub/cub.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "kern_util.cuh"
#include "wt_hash.h"

typedef thrust::counting_iterator<uint32_t> count_it;

#define LAUNCH_TRY() CUB_TRY(cudaPeekAtLastError())
#define GRID(n) (((n) + 255) / 256), 256

static __global__ void mark_starts(const unsigned char *t, uint32_t n, uint8_t *flag)
{
    const uint32_t p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p < n) flag[p] = t[p] != '\n' && (p == 0 || t[p - 1] == '\n');
}

/* Length, hash and document flag of word i (documents start at the first
 * word and after an empty line). */
static __global__ void words(const unsigned char *t, uint32_t n, const uint32_t *start,
                      uint32_t nw, uint32_t *len, uint64_t *hash, uint32_t *idx,
                      uint8_t *docflag)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nw) return;
    const uint32_t s = start[i];
    uint32_t e = s;
    while (e < n && t[e] != '\n') ++e;
    len[i] = e - s;
    hash[i] = xg_wt_hash(t + s, e - s, UINT64_MAX);
    idx[i] = i;
    docflag[i] = i == 0 || (s >= 2 && t[s - 1] == '\n' && t[s - 2] == '\n');
}

static __global__ void doc_lengths(const uint32_t *dstart, uint32_t nd, uint32_t nw,
                            uint32_t *doclen)
{
    const uint32_t d = blockIdx.x * blockDim.x + threadIdx.x;
    if (d < nd) doclen[d] = (d + 1 < nd ? dstart[d + 1] : nw) - dstart[d];
}

static __global__ void run_heads(const uint64_t *key, uint32_t n, uint32_t *head)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) head[i] = i == 0 || key[i] != key[i - 1];
}

/* Each sorted word against its hash run's first word (rep of its term). */
static __global__ void check_runs(const unsigned char *t, const uint32_t *start,
                           const uint32_t *len, const uint32_t *sidx,
                           const uint32_t *gid, const uint32_t *rep, uint32_t n,
                           uint32_t *err)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const uint32_t w = sidx[i], r = rep[gid[i] - 1];
    if (w == r) return;
    const uint32_t l = len[w];
    int same = len[r] == l;
    for (uint32_t k = 0; same && k < l; ++k) same = t[start[w] + k] == t[start[r] + k];
    if (!same) atomicExch(err, 1u);
}

/* Round r's key of the term at position j: its group, then bytes
 * [4r, 4r + 4) of the term, big-endian, zero past its end. */
static __global__ void round_keys(const unsigned char *t, const uint32_t *start,
                           const uint32_t *len, const uint32_t *rep,
                           const uint32_t *perm, const uint32_t *group, uint32_t nt,
                           uint32_t r, int by_length, uint64_t *key)
{
    const uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= nt) return;
    const uint32_t w = rep[perm[j]], l = len[w];
    uint32_t c = 0;
    if (by_length) {
        c = l;
    } else {
        for (uint32_t k = 0; k < 4; ++k) {
            const uint32_t at = 4 * r + k;
            c = (c << 8) | (at < l ? t[start[w] + at] : 0u);
        }
    }
    key[j] = (uint64_t)group[j] << 32 | c;
}

/* Terms still tied with a neighbour and longer than the bytes compared. */
static __global__ void unresolved(const uint64_t *key, const uint32_t *len,
                           const uint32_t *rep, const uint32_t *perm, uint32_t nt,
                           uint32_t compared, uint32_t *count)
{
    const uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= nt) return;
    const int tied = (j > 0 && key[j] == key[j - 1]) || (j + 1 < nt && key[j] == key[j + 1]);
    if (tied && len[rep[perm[j]]] > compared) atomicAdd(count, 1u);
}

static __global__ void minus_one(uint32_t *a, uint32_t n)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] -= 1;
}

static __global__ void iota(uint32_t *a, uint32_t n)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = i;
}

/* rank[term] = its position; the ranked terms' offsets and lengths. */
static __global__ void ranks(const uint32_t *perm, const uint32_t *rep, const uint32_t *start,
                      const uint32_t *len, uint32_t nt, uint32_t *rank,
                      uint32_t *term_off, uint32_t *term_len)
{
    const uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= nt) return;
    const uint32_t tm = perm[j], w = rep[tm];
    rank[tm] = j;
    term_off[j] = start[w];
    term_len[j] = len[w];
}

static __global__ void word_ids(const uint32_t *sidx, const uint32_t *gid, const uint32_t *rank,
                         uint32_t n, uint32_t *ids)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) ids[sidx[i]] = rank[gid[i] - 1];
}

/* Workspace for n items of every CUB call below. */
extern "C" int xg_gdict_tmp_bytes(uint32_t n, size_t *bytes)
{
    size_t m = 0, b = 0;
    uint32_t *u = nullptr;
    uint8_t *f = nullptr;
    cub::DoubleBuffer<uint64_t> k64(nullptr, nullptr);
    cub::DoubleBuffer<uint32_t> v32(nullptr, nullptr);
    CUB_TRY(cub::DeviceSelect::Flagged(nullptr, b, count_it(0), f, u, u, n));
    m = b > m ? b : m;
    CUB_TRY(cub::DeviceRadixSort::SortPairs(nullptr, b, k64, v32, n, 0, 64));
    m = b > m ? b : m;
    CUB_TRY(cub::DeviceScan::InclusiveSum(nullptr, b, u, u, n));
    m = b > m ? b : m;
    CUB_TRY(cub::DeviceSelect::Flagged(nullptr, b, u, u, u, u, n));
    m = b > m ? b : m;
    *bytes = m;
    return 0;
}

/* Word starts of t[0, n): d_start[0, *d_count). */
extern "C" int xg_gdict_starts_gpu(const unsigned char *t, uint32_t n, uint8_t *flag,
                                   uint32_t *d_start, uint32_t *d_count, void *tmp,
                                   size_t tmp_bytes, cudaStream_t st)
{
    mark_starts<<<GRID(n), 0, st>>>(t, n, flag);
    LAUNCH_TRY();
    CUB_TRY(cub::DeviceSelect::Flagged(tmp, tmp_bytes, count_it(0), flag, d_start,
                                       d_count, n, st));
    return 0;
}

/* Per word: length, hash, index, document flag; then the documents'
 * first words (select) into d_dstart, their count into d_count. */
extern "C" int xg_gdict_words_gpu(const unsigned char *t, uint32_t n, const uint32_t *start,
                                  uint32_t nw, uint32_t *len, uint64_t *hash, uint32_t *idx,
                                  uint8_t *docflag, uint32_t *d_dstart, uint32_t *d_count,
                                  void *tmp, size_t tmp_bytes, cudaStream_t st)
{
    words<<<GRID(nw), 0, st>>>(t, n, start, nw, len, hash, idx, docflag);
    LAUNCH_TRY();
    CUB_TRY(cub::DeviceSelect::Flagged(tmp, tmp_bytes, count_it(0), docflag, d_dstart,
                                       d_count, nw, st));
    return 0;
}

extern "C" int xg_gdict_doclen_gpu(const uint32_t *dstart, uint32_t nd, uint32_t nw,
                                   uint32_t *doclen, cudaStream_t st)
{
    doc_lengths<<<GRID(nd), 0, st>>>(dstart, nd, nw, doclen);
    LAUNCH_TRY();
    return 0;
}

/* Sort (key, value) pairs of n items on bits [0, bits); the result is in
 * k->Current(), v->Current(). */
extern "C" int xg_gdict_sort_gpu(uint64_t *k0, uint64_t *k1, uint32_t *v0, uint32_t *v1,
                                 uint32_t n, int bits, int *in_second, void *tmp,
                                 size_t tmp_bytes, cudaStream_t st)
{
    cub::DoubleBuffer<uint64_t> k(k0, k1);
    cub::DoubleBuffer<uint32_t> v(v0, v1);
    CUB_TRY(cub::DeviceRadixSort::SortPairs(tmp, tmp_bytes, k, v, n, 0, bits, st));
    *in_second = k.selector;
    if (k.selector != v.selector) return (int)cudaErrorUnknown;
    return 0;
}

/* Run heads of sorted keys, their inclusive sum (1-based group ids) in gid,
 * and (with rep) the values at the heads. */
extern "C" int xg_gdict_groups_gpu(const uint64_t *key, const uint32_t *val, uint32_t n,
                                   uint32_t *head, uint32_t *gid, uint32_t *rep,
                                   uint32_t *d_count, void *tmp, size_t tmp_bytes,
                                   cudaStream_t st)
{
    run_heads<<<GRID(n), 0, st>>>(key, n, head);
    LAUNCH_TRY();
    if (rep)
        CUB_TRY(cub::DeviceSelect::Flagged(tmp, tmp_bytes, val, head, rep, d_count, n, st));
    CUB_TRY(cub::DeviceScan::InclusiveSum(tmp, tmp_bytes, head, gid, n, st));
    return 0;
}

extern "C" int xg_gdict_check_gpu(const unsigned char *t, const uint32_t *start,
                                  const uint32_t *len, const uint32_t *sidx,
                                  const uint32_t *gid, const uint32_t *rep, uint32_t n,
                                  uint32_t *err, cudaStream_t st)
{
    check_runs<<<GRID(n), 0, st>>>(t, start, len, sidx, gid, rep, n, err);
    LAUNCH_TRY();
    return 0;
}

extern "C" int xg_gdict_iota_gpu(uint32_t *a, uint32_t n, cudaStream_t st)
{
    iota<<<GRID(n), 0, st>>>(a, n);
    LAUNCH_TRY();
    return 0;
}

extern "C" int xg_gdict_round_keys_gpu(const unsigned char *t, const uint32_t *start,
                                       const uint32_t *len, const uint32_t *rep,
                                       const uint32_t *perm, const uint32_t *group,
                                       uint32_t nt, uint32_t r, int by_length,
                                       uint64_t *key, cudaStream_t st)
{
    round_keys<<<GRID(nt), 0, st>>>(t, start, len, rep, perm, group, nt, r, by_length, key);
    LAUNCH_TRY();
    return 0;
}

/* After a round's sort: groups (0-based ranks of distinct keys) and the
 * count of terms still unresolved. */
extern "C" int xg_gdict_regroup_gpu(const uint64_t *key, const uint32_t *len,
                                    const uint32_t *rep, const uint32_t *perm,
                                    uint32_t nt, uint32_t compared, uint32_t *head,
                                    uint32_t *group, uint32_t *d_count, void *tmp,
                                    size_t tmp_bytes, cudaStream_t st)
{
    run_heads<<<GRID(nt), 0, st>>>(key, nt, head);
    LAUNCH_TRY();
    CUB_TRY(cub::DeviceScan::InclusiveSum(tmp, tmp_bytes, head, group, nt, st));
    minus_one<<<GRID(nt), 0, st>>>(group, nt);
    LAUNCH_TRY();
    CUB_TRY(cudaMemsetAsync(d_count, 0, sizeof *d_count, st));
    unresolved<<<GRID(nt), 0, st>>>(key, len, rep, perm, nt, compared, d_count);
    LAUNCH_TRY();
    return 0;
}

extern "C" int xg_gdict_ids_gpu(const uint32_t *perm, const uint32_t *rep,
                                const uint32_t *start, const uint32_t *len, uint32_t nt,
                                const uint32_t *sidx, const uint32_t *gid, uint32_t nw,
                                uint32_t *rank, uint32_t *term_off, uint32_t *term_len,
                                uint32_t *ids, cudaStream_t st)
{
    ranks<<<GRID(nt), 0, st>>>(perm, rep, start, len, nt, rank, term_off, term_len);
    LAUNCH_TRY();
    word_ids<<<GRID(nw), 0, st>>>(sidx, gid, rank, nw, ids);
    LAUNCH_TRY();
    return 0;
}
