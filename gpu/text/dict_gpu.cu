/** @file dict_gpu.cu
 *  @brief The GPU dictionary's kernels and CUB calls (text/dict_gpu.h): word
 *         starts, keys, hashed key runs checked byte by byte, ranking rounds
 *         of big-endian byte keys, term ids or sorted pairs.  Each kernel's body is an
 *         item function of text/dict_gpu_items.h (shared with the host emulation,
 *         tests/qlm_emul.c).  Sequenced by text/dict_gpu_cuda.c; the twin is the
 *         host dictionary.
 */
#include <cub/cub.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "dict_gpu_items.h"
#include "../runtime/kern_util.cuh"

typedef thrust::counting_iterator<uint32_t> count_it;

#define LAUNCH_TRY() CUB_TRY(cudaPeekAtLastError())
#define GRID(n) (((n) + 255) / 256), 256

#define ITEM(n) const uint32_t i_ = blockIdx.x * blockDim.x + threadIdx.x; \
    if (i_ >= (n)) return

/* Word starts by tiles of START_TILE bytes, 16 per thread: a tile's
 * count (start_counts), the tiles' exclusive sum, then each tile writes
 * its starts in order from there (start_write).  The text is read twice
 * by 16-byte loads and no per-byte flags are written: a third of the
 * traffic of a flag per byte and a select over them. */
#define START_THREADS 256
#define START_TILE (16 * START_THREADS)

/* Bit k of the result: byte base + k starts a word (bytes past n are
 * newlines). */
static __device__ uint32_t start_bits(const unsigned char *t, uint32_t n, uint32_t base)
{
    unsigned char b[16];
    if ((uint64_t)base + 16 <= n) {
        const uint4 v = *(const uint4 *)(t + base);
        memcpy(b, &v, 16);
    } else {
        for (uint32_t k = 0; k < 16; ++k) b[k] = (uint64_t)base + k < n ? t[base + k] : '\n';
    }
    unsigned char prev = base ? t[base - 1] : '\n';
    uint32_t bits = 0;
    for (uint32_t k = 0; k < 16; ++k) {
        bits |= xg_gdict_starts(prev, b[k]) << k;
        prev = b[k];
    }
    return bits;
}

static __global__ void start_counts(const unsigned char *t, uint32_t n, uint32_t *tile_count)
{
    typedef cub::BlockReduce<uint32_t, START_THREADS> reduce;
    __shared__ typename reduce::TempStorage tmp;
    const uint64_t base = (uint64_t)blockIdx.x * START_TILE + threadIdx.x * 16;
    const uint32_t c = base < n ? __popc(start_bits(t, n, (uint32_t)base)) : 0;
    const uint32_t sum = reduce(tmp).Sum(c);
    if (threadIdx.x == 0) tile_count[blockIdx.x] = sum;
}

static __global__ void start_write(const unsigned char *t, uint32_t n, const uint32_t *tile_off,
                                   const uint32_t *tile_count, uint32_t tiles, uint32_t *start,
                                   uint32_t *count)
{
    typedef cub::BlockScan<uint32_t, START_THREADS> scan;
    __shared__ typename scan::TempStorage tmp;
    const uint64_t base = (uint64_t)blockIdx.x * START_TILE + threadIdx.x * 16;
    uint32_t bits = base < n ? start_bits(t, n, (uint32_t)base) : 0, at = 0;
    scan(tmp).ExclusiveSum((uint32_t)__popc(bits), at);
    at += tile_off[blockIdx.x];
    while (bits) {
        start[at++] = (uint32_t)base + (uint32_t)__ffs(bits) - 1;
        bits &= bits - 1;
    }
    if (blockIdx.x + 1 == tiles && threadIdx.x == 0)
        *count = tile_off[blockIdx.x] + tile_count[blockIdx.x];
}

static __global__ void words(const unsigned char *t, uint32_t n, const uint32_t *start,
                             uint32_t nw, uint64_t mask, uint32_t *len, uint64_t *key,
                             uint32_t *idx, uint8_t *docflag)
{
    ITEM(nw);
    xg_gdict_i_word(t, n, start, mask, len, key, idx, docflag, i_);
}

static __global__ void doc_lengths(const uint32_t *dstart, uint32_t nd, uint32_t nw,
                                   uint32_t *doclen)
{
    ITEM(nd);
    xg_gdict_i_doclen(dstart, nd, nw, doclen, i_);
}

static __global__ void run_heads(const uint64_t *key, uint32_t n, uint32_t *head)
{
    ITEM(n);
    head[i_] = xg_gdict_i_head(key, i_);
}

static __global__ void check_runs(const unsigned char *t, const uint32_t *start,
                                  const uint32_t *len, const uint64_t *key,
                                  const uint32_t *sidx, const uint32_t *gid,
                                  const uint32_t *rep, uint32_t n, uint32_t *err)
{
    ITEM(n);
    if (xg_gdict_i_collides(t, start, len, key, sidx, gid, rep, i_)) atomicExch(err, 1u);
}

static __global__ void round_keys(const unsigned char *t, const uint32_t *start,
                                  const uint32_t *len, const uint32_t *rep,
                                  const uint32_t *perm, const uint32_t *group, uint32_t nt,
                                  uint32_t r, int by_length, uint64_t *key)
{
    ITEM(nt);
    key[i_] = xg_gdict_i_round_key(t, start, len, rep, perm, group, r, by_length, i_);
}

static __global__ void unresolved(const uint64_t *key, const uint32_t *len,
                                  const uint32_t *rep, const uint32_t *perm, uint32_t nt,
                                  uint32_t compared, uint32_t *count)
{
    ITEM(nt);
    const int f = xg_gdict_i_unresolved(key, len, rep, perm, nt, compared, i_);
    if (f & 1) atomicAdd(&count[0], 1u);
    if (f & 2) atomicAdd(&count[1], 1u);
}

static __global__ void minus_one(uint32_t *a, uint32_t n)
{
    ITEM(n);
    a[i_] -= 1;
}

static __global__ void iota(uint32_t *a, uint32_t n)
{
    ITEM(n);
    a[i_] = i_;
}

static __global__ void ranks(const uint32_t *perm, const uint32_t *rep, const uint32_t *start,
                             const uint32_t *len, uint32_t nt, uint32_t *rank,
                             uint32_t *term_off, uint32_t *term_len)
{
    ITEM(nt);
    xg_gdict_i_rank(perm, rep, start, len, rank, term_off, term_len, i_);
}

static __global__ void word_ids(const uint32_t *sidx, const uint32_t *gid,
                                const uint32_t *rank, uint32_t n, uint32_t *ids)
{
    ITEM(n);
    xg_gdict_i_id(sidx, gid, rank, ids, i_);
}

static __global__ void run_starts(const uint32_t *gid, uint32_t nw, uint32_t *run_start)
{
    ITEM(nw);
    xg_gdict_i_run_start(gid, run_start, i_);
}

static __global__ void rank_counts(const uint32_t *run_start, const uint32_t *rank,
                                   uint32_t nt, uint32_t nw, uint32_t *count)
{
    ITEM(nt);
    xg_gdict_i_rank_count(run_start, rank, nt, nw, count, i_);
}

static __global__ void sorted_pairs(const uint32_t *sidx, const uint32_t *gid,
                                    const uint32_t *rank, const uint32_t *run_start,
                                    const uint32_t *out_start, const uint32_t *dstart,
                                    uint32_t nd, uint32_t nw, int dbits, uint64_t *key)
{
    ITEM(nw);
    xg_gdict_i_sorted_pair(sidx, gid, rank, run_start, out_start, dstart, nd, dbits, key, i_);
}

static __global__ void invert(const uint32_t *perm, uint32_t nt, uint32_t *rank)
{
    ITEM(nt);
    xg_gdict_i_invert(perm, rank, i_);
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
    CUB_TRY(cub::DeviceScan::ExclusiveSum(nullptr, b, u, u, n));
    m = b > m ? b : m;
    CUB_TRY(cub::DeviceSelect::Flagged(nullptr, b, u, u, u, u, n));
    m = b > m ? b : m;
    *bytes = m;
    return 0;
}

extern "C" uint32_t xg_gdict_start_tiles(uint32_t n)
{
    return (uint32_t)(((uint64_t)n + START_TILE - 1) / START_TILE);
}

/* Word starts of t[0, n) (t 16-byte aligned): d_start[0, *d_count);
 * tiles: 2 * xg_gdict_start_tiles(n) entries of scratch. */
extern "C" int xg_gdict_starts_gpu(const unsigned char *t, uint32_t n, uint32_t *tiles,
                                   uint32_t *d_start, uint32_t *d_count, void *tmp,
                                   size_t tmp_bytes, cudaStream_t st)
{
    const uint32_t k = xg_gdict_start_tiles(n);
    if (!k) return (int)cudaMemsetAsync(d_count, 0, sizeof *d_count, st);
    start_counts<<<k, START_THREADS, 0, st>>>(t, n, tiles);
    LAUNCH_TRY();
    CUB_TRY(cub::DeviceScan::ExclusiveSum(tmp, tmp_bytes, tiles, tiles + k, k, st));
    start_write<<<k, START_THREADS, 0, st>>>(t, n, tiles + k, tiles, k, d_start, d_count);
    LAUNCH_TRY();
    return 0;
}

/* Per word: length, key, index, document flag; then the documents'
 * first words (select) into d_dstart, their count into d_count. */
extern "C" int xg_gdict_words_gpu(const unsigned char *t, uint32_t n, const uint32_t *start,
                                  uint32_t nw, uint64_t mask, uint32_t *len, uint64_t *key,
                                  uint32_t *idx, uint8_t *docflag, uint32_t *d_dstart,
                                  uint32_t *d_count, void *tmp, size_t tmp_bytes,
                                  cudaStream_t st)
{
    words<<<GRID(nw), 0, st>>>(t, n, start, nw, mask, len, key, idx, docflag);
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
                                  const uint32_t *len, const uint64_t *key,
                                  const uint32_t *sidx, const uint32_t *gid,
                                  const uint32_t *rep, uint32_t n, uint32_t *err,
                                  cudaStream_t st)
{
    check_runs<<<GRID(n), 0, st>>>(t, start, len, key, sidx, gid, rep, n, err);
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

/* After a round's sort: groups (0-based ranks of distinct keys), the
 * count of terms still unresolved in d_count[0] and of those tied in
 * d_count[1]. */
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
    CUB_TRY(cudaMemsetAsync(d_count, 0, 2 * sizeof *d_count, st));
    unresolved<<<GRID(nt), 0, st>>>(key, len, rep, perm, nt, compared, d_count);
    LAUNCH_TRY();
    return 0;
}

/* Each term's rank (by term), and the ranked terms' offsets and lengths. */
extern "C" int xg_gdict_ranks_gpu(const uint32_t *perm, const uint32_t *rep,
                                  const uint32_t *start, const uint32_t *len, uint32_t nt,
                                  uint32_t *rank, uint32_t *term_off, uint32_t *term_len,
                                  cudaStream_t st)
{
    ranks<<<GRID(nt), 0, st>>>(perm, rep, start, len, nt, rank, term_off, term_len);
    LAUNCH_TRY();
    return 0;
}

/* Each word's term id, by word. */
extern "C" int xg_gdict_ids_gpu(const uint32_t *sidx, const uint32_t *gid,
                                const uint32_t *rank, uint32_t nw, uint32_t *ids,
                                cudaStream_t st)
{
    word_ids<<<GRID(nw), 0, st>>>(sidx, gid, rank, nw, ids);
    LAUNCH_TRY();
    return 0;
}

/* The (term, document) pairs in order (xg_gdict_i_sorted_pair), with
 * scratch run_start, count and out_start of nt entries. */
extern "C" int xg_gdict_sorted_pairs_gpu(const uint32_t *sidx, const uint32_t *gid,
                                         const uint32_t *rank, const uint32_t *dstart,
                                         uint32_t nd, uint32_t nw, uint32_t nt, int dbits,
                                         uint32_t *run_start, uint32_t *count,
                                         uint32_t *out_start, uint64_t *key, void *tmp,
                                         size_t tmp_bytes, cudaStream_t st)
{
    run_starts<<<GRID(nw), 0, st>>>(gid, nw, run_start);
    LAUNCH_TRY();
    rank_counts<<<GRID(nt), 0, st>>>(run_start, rank, nt, nw, count);
    LAUNCH_TRY();
    CUB_TRY(cub::DeviceScan::ExclusiveSum(tmp, tmp_bytes, count, out_start, nt, st));
    sorted_pairs<<<GRID(nw), 0, st>>>(sidx, gid, rank, run_start, out_start, dstart, nd, nw,
                                      dbits, key);
    LAUNCH_TRY();
    return 0;
}

extern "C" int xg_gdict_invert_gpu(const uint32_t *perm, uint32_t nt, uint32_t *rank,
                                   cudaStream_t st)
{
    invert<<<GRID(nt), 0, st>>>(perm, nt, rank);
    LAUNCH_TRY();
    return 0;
}
