/** @file wt.cu
 *  @brief The weight pipeline's kernels (seed 000 §4 on CUB): word starts
 *         by compact (DeviceSelect), doc ids by scan (DeviceScan), doc
 *         lengths by count, hashes and term ids per word, sorts
 *         (DeviceRadixSort), tf by run-length encoding
 *         (DeviceRunLengthEncode), df by a scan of new-document flags, and
 *         the weights.  The CPU twin is wt_ref.c; the host side that
 *         sequences these per chunk is wt_cuda_pass.c.  Built with
 *         --fmad=false: the weights are bit-identical to the twin's.
 */
#include <cub/cub.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "wt_formula.h"
#include "../runtime/kern_util.cuh"
#include "../text/hash.h"
#include "wt_kern.h"

typedef thrust::counting_iterator<uint32_t> count_it;

namespace {

struct is_start {
    const unsigned char *t;
    __device__ bool operator()(uint32_t p) const
    {
        return t[p] != '\n' && (p == 0 || t[p - 1] == '\n');
    }
};

struct is_run_start {
    const uint64_t *k;
    __device__ bool operator()(uint32_t j) const
    {
        return j == 0 || k[j] != k[j - 1];
    }
};

} // namespace

static __device__ __forceinline__ uint32_t word_len(const unsigned char *t, uint32_t s)
{
    uint32_t e = s;
    while (t[e] != '\n') ++e;
    return e - s;
}

static __device__ __forceinline__ uint32_t doc_flag(const unsigned char *t, uint32_t i,
                                             uint32_t s)
{
    return i == 0 || (s >= 2 && t[s - 1] == '\n' && t[s - 2] == '\n');
}

static __global__ void words_kernel(const unsigned char *t, const uint32_t *start,
                             uint32_t n, uint64_t mask, uint32_t *len,
                             uint64_t *hash, uint32_t *idx, uint32_t *flag)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const uint32_t s = start[i];
    const uint32_t l = word_len(t, s);
    len[i] = l;
    hash[i] = xg_text_hash(t + s, l, mask);
    idx[i] = i;
    flag[i] = doc_flag(t, i, s);
}

static __global__ void ids_kernel(const unsigned char *t, const uint32_t *start,
                           uint32_t n, uint64_t mask, xg_wt_dtable tab,
                           uint32_t *id, uint32_t *flag, uint32_t *err)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const uint32_t s = start[i];
    const uint64_t h = xg_text_hash(t + s, word_len(t, s), mask);
    uint32_t found = UINT32_MAX;
    for (uint64_t j = h & (tab.cap - 1);; j = (j + 1) & (tab.cap - 1)) {
        const uint32_t v = tab.id[j];
        if (v == UINT32_MAX) break;
        if (tab.key[j] == h) { found = v; break; }
    }
    if (found == UINT32_MAX) { atomicExch(err, 1u); found = 0; }
    id[i] = found;
    flag[i] = doc_flag(t, i, s);
}

static __global__ void first_kernel(const uint32_t *doc1, uint32_t n, uint32_t *first)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if (i == 0 || doc1[i] != doc1[i - 1]) first[doc1[i] - 1] = i;
}

static __global__ void doclen_kernel(const uint32_t *first, uint32_t n,
                              uint32_t n_docs, uint32_t *doclen)
{
    const uint32_t d = blockIdx.x * blockDim.x + threadIdx.x;
    if (d >= n_docs) return;
    doclen[d] = (d + 1 < n_docs ? first[d + 1] : n) - first[d];
}

static __global__ void mark_kernel(const unsigned char *t, const uint32_t *start,
                            const uint32_t *len, const uint64_t *hash,
                            const uint32_t *idx, const uint32_t *doc1,
                            uint32_t n, uint32_t *newdoc, uint32_t *err)
{
    const uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n) return;
    const uint32_t w = idx[j];
    if (j == 0 || hash[j] != hash[j - 1]) { newdoc[j] = 1; return; }
    const uint32_t v = idx[j - 1];
    newdoc[j] = doc1[w] != doc1[v];
    /* Equal hashes: the words must be equal, byte for byte. */
    const uint32_t l = len[w];
    bool same = l == len[v];
    const unsigned char *a = t + start[w], *b = t + start[v];
    for (uint32_t k = 0; same && k < l; ++k) same = a[k] == b[k];
    if (!same) atomicExch(err, 1u);
}

static __global__ void terms_kernel(const uint32_t *cum, uint32_t n,
                             const uint32_t *tfirst, uint32_t nt,
                             const uint64_t *hash, const uint32_t *idx,
                             const uint32_t *start, const uint32_t *len,
                             uint64_t *ohash, uint32_t *ostart, uint32_t *olen,
                             uint32_t *odf)
{
    const uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= nt) return;
    const uint32_t first = tfirst[k];
    const uint32_t last = (k + 1 < nt ? tfirst[k + 1] : n) - 1;
    const uint32_t w = idx[first];
    ohash[k] = hash[first];
    ostart[k] = start[w];
    olen[k] = len[w];
    odf[k] = cum[last] - (first ? cum[first - 1] : 0);
}

static __global__ void keys_kernel(const uint32_t *id, const uint32_t *doc1,
                            uint32_t n, int dbits, uint64_t *key)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    key[i] = ((uint64_t)id[i] << dbits) | (uint64_t)(doc1[i] - 1);
}

static __global__ void weights_kernel(const uint64_t *uniq, const uint32_t *tf,
                               uint32_t np, int dbits, xg_wt_dconst c,
                               uint32_t *term, uint32_t *doc, double *w)
{
    const uint32_t r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= np) return;
    const uint64_t k = uniq[r];
    const uint32_t t = (uint32_t)(k >> dbits);
    const uint32_t d = (uint32_t)(k & ((1ull << dbits) - 1));
    const uint64_t g = c.doc_base + d;
    if (term) term[r] = t;
    doc[r] = d;
    const double tw = c.first ? c.tw[c.first[t + 1] - c.first[t]] : c.tw[t];
    w[r] = xg_wt_weight(c.seed, c.k1p1, tw, c.kd[g], c.extra ? c.extra[g] : 0.0, tf[r]);
}

static __global__ void first_of_term_kernel(const uint64_t *uniq, uint32_t np, int dbits,
                                            uint32_t *first)
{
    const uint32_t r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= np) return;
    const uint64_t t = uniq[r] >> dbits;
    if (r == 0 || (uniq[r - 1] >> dbits) != t) first[t] = r;
}

/* One thread per term and one for the end; a warp's largest df and
 * empty flag go out by one atomic each. */
static __global__ void terms_out_kernel(uint32_t *first, uint32_t nt, uint32_t np,
                                        const uint32_t *toff, uint64_t base, uint64_t *off,
                                        uint64_t *ptr, uint32_t *stat)
{
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t df = 0, empty = 0;
    if (t < nt) {
        const uint32_t lo = first[t], hi = t + 1 < nt ? first[t + 1] : np;
        df = hi > lo ? hi - lo : 0;
        empty = df == 0;
        off[t] = lo;
        ptr[t] = base + toff[t];
    } else if (t == nt) {
        off[nt] = np;
        first[nt] = np;
    }
    const uint32_t most = __reduce_max_sync(0xffffffffu, df);
    const uint32_t any_empty = __reduce_or_sync(0xffffffffu, empty);
    if ((threadIdx.x & 31) == 0) {
        if (most) atomicMax(&stat[0], most);
        if (any_empty) atomicOr(&stat[1], 1u);
    }
}

static __global__ void docids_out_kernel(uint32_t *doc, uint32_t np, const uint32_t *map)
{
    const uint32_t r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= np) return;
    doc[r] = map ? map[doc[r]] : doc[r] + 1;
}

/* ---- placement of a run in chunks ---- */

/* Run k's term gets this chunk's shift and its cursor moves past the
 * run; the runs of one chunk have distinct terms, so no two threads
 * touch one term. */
static __global__ void place_runs_kernel(const uint32_t *run_term, const uint32_t *run_len,
                                         const uint32_t *run_start, const uint32_t *nr,
                                         struct xg_wt_place p)
{
    const uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= *nr) return;
    const uint32_t t = run_term[k];
    if (t >= p.nt) {
        atomicOr(p.err, 1u);
        return;
    }
    const uint64_t at = p.cur[t];
    p.shift[t] = at - run_start[k];
    p.cur[t] = at + run_len[k];
    if (at + run_len[k] > p.toff[t + 1]) atomicOr(p.err, 1u);
}

/* Posting i at its term's shift + i: consecutive postings of a run are
 * consecutive in the result, so a warp's writes over the bus come in
 * runs, not one posting each. */
static __global__ void place_kernel(const uint32_t *term, const uint32_t *doc, const double *w,
                                    uint32_t np, struct xg_wt_place p)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= np) return;
    const uint32_t t = term[i];
    if (t >= p.nt) return;                  /* flagged by place_runs_kernel */
    const uint64_t at = p.shift[t] + i;
    if (at >= p.toff[t + 1]) return;        /* flagged by place_runs_kernel */
    const uint64_t d = p.doc_base + doc[i];
    p.out_doc[at] = p.map ? p.map[d] : (uint32_t)(d + 1);
    p.out_w[at] = w[i];
}

static __global__ void place_check_kernel(struct xg_wt_place p)
{
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < p.nt && p.cur[t] != p.toff[t + 1]) atomicOr(p.err, 2u);
}

/* ---- the device dictionary of a run in chunks ---- */

static __global__ void dd_insert_kernel(const uint64_t *hash, uint32_t n, uint64_t *key,
                                        uint32_t *val, uint64_t cap, uint32_t *err)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const uint64_t h = hash[i];
    if (h == XG_WT_EMPTY) { atomicOr(err, 2u); return; }
    uint64_t j = h & (cap - 1);
    for (uint32_t probes = 0; probes < XG_WT_MAX_PROBES; ++probes, j = (j + 1) & (cap - 1)) {
        const uint64_t k = key[j];
        if (k == h) return;
        if (k != XG_WT_EMPTY) continue;
        const unsigned long long old = atomicCAS((unsigned long long *)&key[j],
                                                 (unsigned long long)XG_WT_EMPTY,
                                                 (unsigned long long)h);
        if (old == XG_WT_EMPTY) {           /* this word's slot */
            val[j] = i | XG_WT_FRESH;
            return;
        }
        if (old == h) return;               /* another word of this hash won */
    }
    atomicOr(err, 1u);
}

static __global__ void dd_fresh_kernel(const uint64_t *key, const uint32_t *val, uint64_t cap,
                                       uint32_t *fresh, uint32_t *n_fresh)
{
    const uint64_t j = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= cap || key[j] == XG_WT_EMPTY || !(val[j] & XG_WT_FRESH)) return;
    fresh[atomicAdd(n_fresh, 1u)] = (uint32_t)j;
}

static __global__ void dd_new_lens_kernel(const uint32_t *fresh, uint32_t m, const uint32_t *val,
                                          const uint32_t *len, uint32_t *lens)
{
    const uint32_t p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= m) return;
    lens[p] = len[val[fresh[p]] & ~XG_WT_FRESH];
}

static __global__ void dd_assign_kernel(const unsigned char *text, const uint32_t *start,
                                        const uint32_t *len, uint64_t base,
                                        const uint32_t *fresh, uint32_t m, uint32_t n_terms,
                                        const uint32_t *offs, uint64_t arena_used,
                                        uint32_t *val, xg_wt_dd_terms t)
{
    const uint32_t p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= m) return;
    const uint32_t slot = fresh[p], w = val[slot] & ~XG_WT_FRESH, term = n_terms + p;
    const uint32_t l = len[w];
    const uint64_t at = arena_used + offs[p];
    t.goff[term] = base + start[w];
    t.len[term] = l;
    t.aoff[term] = (uint32_t)at;
    t.df[term] = 0;
    for (uint32_t k = 0; k < l; ++k) t.arena[at + k] = text[start[w] + k];
    val[slot] = term;
}

static __global__ void dd_lookup_kernel(const unsigned char *text, const uint32_t *start,
                                        const uint32_t *len, const uint64_t *hash, uint32_t n,
                                        const uint64_t *key, const uint32_t *val, uint64_t cap,
                                        xg_wt_dd_terms t, uint32_t *term, uint32_t *err)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const uint64_t h = hash[i];
    uint64_t j = h & (cap - 1);
    uint64_t probes = 0;
    while (key[j] != h && probes++ < cap) j = (j + 1) & (cap - 1);
    if (key[j] != h) { atomicOr(err, 4u); term[i] = 0; return; }
    const uint32_t v = val[j], l = len[i];
    term[i] = v;
    bool same = t.len[v] == l;
    const unsigned char *a = text + start[i], *b = t.arena + t.aoff[v];
    for (uint32_t k = 0; same && k < l; ++k) same = a[k] == b[k];
    if (!same) atomicOr(err, 4u);
}

static __global__ void dd_df_kernel(const uint64_t *uniq, uint32_t np, int dbits, uint32_t *df)
{
    const uint32_t r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= np) return;
    atomicAdd(&df[uniq[r] >> dbits], 1u);
}

static __global__ void dd_rehash_kernel(const uint64_t *key, const uint32_t *val, uint64_t cap,
                                        uint64_t *nkey, uint32_t *nval, uint64_t ncap)
{
    const uint64_t j = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= cap) return;
    const uint64_t h = key[j];
    if (h == XG_WT_EMPTY) return;
    for (uint64_t q = h & (ncap - 1);; q = (q + 1) & (ncap - 1))
        if (atomicCAS((unsigned long long *)&nkey[q], (unsigned long long)XG_WT_EMPTY,
                      (unsigned long long)h) == XG_WT_EMPTY) {
            nval[q] = val[j];
            return;
        }
}

static __global__ void dd_ids_kernel(const uint64_t *key, uint32_t *val, uint64_t cap,
                                     const uint32_t *rank)
{
    const uint64_t j = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= cap) return;
    val[j] = key[j] == XG_WT_EMPTY ? UINT32_MAX : rank[val[j]];
}

static __global__ void dd_by_id_kernel(const uint32_t *rank, uint32_t nt, xg_wt_dd_terms t,
                                       uint64_t *goff, uint32_t *len, uint32_t *df)
{
    const uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= nt) return;
    const uint32_t id = rank[k];
    goff[id] = t.goff[k];
    len[id] = t.len[k];
    df[id] = t.df[k];
}

extern "C" int xg_wt_tmp_bytes(uint32_t len, uint32_t words, size_t *bytes)
{
    size_t b[7] = {0};
    uint32_t *u = nullptr;
    uint64_t *k = nullptr;
    cub::DoubleBuffer<uint64_t> kb(k, k);
    cub::DoubleBuffer<uint32_t> vb(u, u);
    CUB_TRY(cub::DeviceSelect::If(nullptr, b[0], count_it(0), u, u, len,
                                  is_start{nullptr}));
    CUB_TRY(cub::DeviceSelect::If(nullptr, b[1], count_it(0), u, u, words,
                                  is_run_start{nullptr}));
    CUB_TRY(cub::DeviceScan::InclusiveSum(nullptr, b[2], u, u, words));
    CUB_TRY(cub::DeviceRadixSort::SortPairs(nullptr, b[3], kb, vb, words, 0, 64));
    CUB_TRY(cub::DeviceRadixSort::SortKeys(nullptr, b[4], kb, words, 0, 64));
    CUB_TRY(cub::DeviceRunLengthEncode::Encode(nullptr, b[5], k, k, u, u, words));
    CUB_TRY(cub::DeviceRunLengthEncode::Encode(nullptr, b[6], u, u, u, u, words));
    size_t m = 0;
    for (int i = 0; i < 7; ++i) m = b[i] > m ? b[i] : m;
    *bytes = m;
    return 0;
}

extern "C" int xg_wt_starts_gpu(const char *d_text, uint32_t len,
                                uint32_t *d_start, uint32_t *d_n, void *d_tmp,
                                size_t tmp_bytes, cudaStream_t stream)
{
    return (int)cub::DeviceSelect::If(d_tmp, tmp_bytes, count_it(0), d_start,
        d_n, len, is_start{(const unsigned char *)d_text}, stream);
}

extern "C" int xg_wt_words_gpu(const char *d_text, const uint32_t *d_start,
                               uint32_t n, uint64_t mask, uint32_t *d_len,
                               uint64_t *d_hash, uint32_t *d_idx,
                               uint32_t *d_flag, cudaStream_t stream)
{
    if (!n) return 0;
    words_kernel<<<blocks(n), THREADS, 0, stream>>>(
        (const unsigned char *)d_text, d_start, n, mask, d_len, d_hash, d_idx,
        d_flag);
    return (int)cudaPeekAtLastError();
}

extern "C" int xg_wt_ids_gpu(const char *d_text, const uint32_t *d_start,
                             uint32_t n, uint64_t mask, xg_wt_dtable t,
                             uint32_t *d_id, uint32_t *d_flag, uint32_t *d_err,
                             cudaStream_t stream)
{
    if (!n) return 0;
    ids_kernel<<<blocks(n), THREADS, 0, stream>>>(
        (const unsigned char *)d_text, d_start, n, mask, t, d_id, d_flag, d_err);
    return (int)cudaPeekAtLastError();
}

extern "C" int xg_wt_docids_gpu(const uint32_t *d_flag, uint32_t *d_doc1,
                                uint32_t n, void *d_tmp, size_t tmp_bytes,
                                cudaStream_t stream)
{
    return (int)cub::DeviceScan::InclusiveSum(d_tmp, tmp_bytes, d_flag, d_doc1,
                                              n, stream);
}

extern "C" int xg_wt_doclen_gpu(const uint32_t *d_doc1, uint32_t n,
                                uint32_t n_docs, uint32_t *d_first,
                                uint32_t *d_doclen, cudaStream_t stream)
{
    if (!n || !n_docs) return 0;
    first_kernel<<<blocks(n), THREADS, 0, stream>>>(d_doc1, n, d_first);
    doclen_kernel<<<blocks(n_docs), THREADS, 0, stream>>>(d_first, n, n_docs,
                                                          d_doclen);
    return (int)cudaPeekAtLastError();
}

extern "C" int xg_wt_sort_hash_gpu(uint64_t *d_k0, uint64_t *d_k1,
                                   uint32_t *d_v0, uint32_t *d_v1, uint32_t n,
                                   int lo, int hi, int *sel, void *d_tmp,
                                   size_t tmp_bytes, cudaStream_t stream)
{
    cub::DoubleBuffer<uint64_t> k(d_k0, d_k1);
    cub::DoubleBuffer<uint32_t> v(d_v0, d_v1);
    cudaError_t e = cub::DeviceRadixSort::SortPairs(d_tmp, tmp_bytes, k, v, n,
                                                    lo, hi, stream);
    *sel = k.selector;
    return (int)e;
}

extern "C" int xg_wt_mark_gpu(const char *d_text, const uint32_t *d_start,
                              const uint32_t *d_len, const uint64_t *d_hash,
                              const uint32_t *d_idx, const uint32_t *d_doc1,
                              uint32_t n, uint32_t *d_newdoc,
                              uint32_t *d_tfirst, uint32_t *d_nt,
                              uint32_t *d_err, void *d_tmp, size_t tmp_bytes,
                              cudaStream_t stream)
{
    if (n)
        mark_kernel<<<blocks(n), THREADS, 0, stream>>>(
            (const unsigned char *)d_text, d_start, d_len, d_hash, d_idx,
            d_doc1, n, d_newdoc, d_err);
    CUB_TRY(cudaPeekAtLastError());
    return (int)cub::DeviceSelect::If(d_tmp, tmp_bytes, count_it(0), d_tfirst,
                                      d_nt, n, is_run_start{d_hash}, stream);
}

extern "C" int xg_wt_terms_gpu(const uint32_t *d_newdoc, uint32_t *d_cum,
                               uint32_t n, const uint32_t *d_tfirst,
                               uint32_t nt, const uint64_t *d_hash,
                               const uint32_t *d_idx, const uint32_t *d_start,
                               const uint32_t *d_len, uint64_t *d_ohash,
                               uint32_t *d_ostart, uint32_t *d_olen,
                               uint32_t *d_odf, void *d_tmp, size_t tmp_bytes,
                               cudaStream_t stream)
{
    CUB_TRY(cub::DeviceScan::InclusiveSum(d_tmp, tmp_bytes, d_newdoc, d_cum, n,
                                          stream));
    if (!nt) return 0;
    terms_kernel<<<blocks(nt), THREADS, 0, stream>>>(d_cum, n, d_tfirst, nt,
        d_hash, d_idx, d_start, d_len, d_ohash, d_ostart, d_olen, d_odf);
    return (int)cudaPeekAtLastError();
}

extern "C" int xg_wt_sort_keys_gpu(const uint32_t *d_id, const uint32_t *d_doc1,
                                   uint32_t n, int dbits, int bits,
                                   uint64_t *d_k0, uint64_t *d_k1, int *sel,
                                   void *d_tmp, size_t tmp_bytes,
                                   cudaStream_t stream)
{
    *sel = 0;
    if (!n) return 0;
    keys_kernel<<<blocks(n), THREADS, 0, stream>>>(d_id, d_doc1, n, dbits, d_k0);
    CUB_TRY(cudaPeekAtLastError());
    cub::DoubleBuffer<uint64_t> k(d_k0, d_k1);
    cudaError_t e = cub::DeviceRadixSort::SortKeys(d_tmp, tmp_bytes, k, n, 0,
                                                   bits, stream);
    *sel = k.selector;
    return (int)e;
}

extern "C" int xg_wt_tf_gpu(const uint64_t *d_keys, uint32_t n,
                            uint64_t *d_uniq, uint32_t *d_tf, uint32_t *d_np,
                            void *d_tmp, size_t tmp_bytes, cudaStream_t stream)
{
    return (int)cub::DeviceRunLengthEncode::Encode(d_tmp, tmp_bytes, d_keys,
        d_uniq, d_tf, d_np, n, stream);
}

extern "C" int xg_wt_weights_gpu(const uint64_t *d_uniq, const uint32_t *d_tf,
                                 uint32_t np, int dbits, xg_wt_dconst c,
                                 uint32_t *d_term, uint32_t *d_doc, double *d_w,
                                 cudaStream_t stream)
{
    if (!np) return 0;
    weights_kernel<<<blocks(np), THREADS, 0, stream>>>(d_uniq, d_tf, np, dbits,
                                                       c, d_term, d_doc, d_w);
    return (int)cudaPeekAtLastError();
}

extern "C" int xg_wt_term_first_gpu(const uint64_t *d_uniq, uint32_t np, int dbits,
                                    uint32_t *d_first, cudaStream_t stream)
{
    if (!np) return 0;
    first_of_term_kernel<<<blocks(np), THREADS, 0, stream>>>(d_uniq, np, dbits, d_first);
    return (int)cudaPeekAtLastError();
}

extern "C" int xg_wt_terms_out_gpu(uint32_t *d_first, uint32_t nt, uint32_t np,
                                   const uint32_t *d_toff, uint64_t base, uint64_t *d_off,
                                   uint64_t *d_ptr, uint32_t *d_stat, cudaStream_t stream)
{
    terms_out_kernel<<<blocks((uint64_t)nt + 1), THREADS, 0, stream>>>(
        d_first, nt, np, d_toff, base, d_off, d_ptr, d_stat);
    return (int)cudaPeekAtLastError();
}

extern "C" int xg_wt_docids_out_gpu(uint32_t *d_doc, uint32_t np, const uint32_t *d_map,
                                    cudaStream_t stream)
{
    if (!np) return 0;
    docids_out_kernel<<<blocks(np), THREADS, 0, stream>>>(d_doc, np, d_map);
    return (int)cudaPeekAtLastError();
}

extern "C" int xg_wt_place_gpu(const uint32_t *d_term, const uint32_t *d_doc,
                               const double *d_w, uint32_t np, const uint32_t *d_run_term,
                               const uint32_t *d_run_len, const uint32_t *d_run_start,
                               const uint32_t *d_nr, struct xg_wt_place p,
                               cudaStream_t stream)
{
    if (!np) return 0;
    /* nr <= np: the grid covers every run without reading nr back. */
    place_runs_kernel<<<blocks(np), THREADS, 0, stream>>>(d_run_term, d_run_len, d_run_start,
                                                          d_nr, p);
    place_kernel<<<blocks(np), THREADS, 0, stream>>>(d_term, d_doc, d_w, np, p);
    return (int)cudaPeekAtLastError();
}

extern "C" int xg_wt_place_check_gpu(struct xg_wt_place p, cudaStream_t stream)
{
    if (!p.nt) return 0;
    place_check_kernel<<<blocks(p.nt), THREADS, 0, stream>>>(p);
    return (int)cudaPeekAtLastError();
}

extern "C" int xg_wt_dd_insert_gpu(const uint64_t *d_hash, uint32_t n, uint64_t *d_key,
                                   uint32_t *d_val, uint64_t cap, uint32_t *d_err,
                                   cudaStream_t stream)
{
    if (!n) return 0;
    dd_insert_kernel<<<blocks(n), THREADS, 0, stream>>>(d_hash, n, d_key, d_val, cap, d_err);
    return (int)cudaPeekAtLastError();
}

extern "C" int xg_wt_dd_fresh_gpu(const uint64_t *d_key, const uint32_t *d_val, uint64_t cap,
                                  uint32_t *d_new, uint32_t *d_n_new, cudaStream_t stream)
{
    dd_fresh_kernel<<<blocks(cap), THREADS, 0, stream>>>(d_key, d_val, cap, d_new, d_n_new);
    return (int)cudaPeekAtLastError();
}

extern "C" int xg_wt_dd_new_lens_gpu(const uint32_t *d_new, uint32_t m, const uint32_t *d_val,
                                     const uint32_t *d_len, uint32_t *d_lens, void *d_tmp,
                                     size_t tmp_bytes, uint32_t *d_offs, cudaStream_t stream)
{
    if (!m) return 0;
    dd_new_lens_kernel<<<blocks(m), THREADS, 0, stream>>>(d_new, m, d_val, d_len, d_lens);
    CUB_TRY(cudaPeekAtLastError());
    return (int)cub::DeviceScan::ExclusiveSum(d_tmp, tmp_bytes, d_lens, d_offs, m, stream);
}

extern "C" int xg_wt_dd_assign_gpu(const char *d_text, const uint32_t *d_start,
                                   const uint32_t *d_len, uint64_t base, const uint32_t *d_new,
                                   uint32_t m, uint32_t n_terms, const uint32_t *d_offs,
                                   uint64_t arena_used, uint32_t *d_val, xg_wt_dd_terms t,
                                   cudaStream_t stream)
{
    if (!m) return 0;
    dd_assign_kernel<<<blocks(m), THREADS, 0, stream>>>((const unsigned char *)d_text, d_start,
        d_len, base, d_new, m, n_terms, d_offs, arena_used, d_val, t);
    return (int)cudaPeekAtLastError();
}

extern "C" int xg_wt_dd_lookup_gpu(const char *d_text, const uint32_t *d_start,
                                   const uint32_t *d_len, const uint64_t *d_hash, uint32_t n,
                                   const uint64_t *d_key, const uint32_t *d_val, uint64_t cap,
                                   xg_wt_dd_terms t, uint32_t *d_term, uint32_t *d_err,
                                   cudaStream_t stream)
{
    if (!n) return 0;
    dd_lookup_kernel<<<blocks(n), THREADS, 0, stream>>>((const unsigned char *)d_text, d_start,
        d_len, d_hash, n, d_key, d_val, cap, t, d_term, d_err);
    return (int)cudaPeekAtLastError();
}

extern "C" int xg_wt_dd_df_gpu(const uint64_t *d_uniq, uint32_t np, int dbits, uint32_t *d_df,
                               cudaStream_t stream)
{
    if (!np) return 0;
    dd_df_kernel<<<blocks(np), THREADS, 0, stream>>>(d_uniq, np, dbits, d_df);
    return (int)cudaPeekAtLastError();
}

extern "C" int xg_wt_dd_rehash_gpu(const uint64_t *d_key, const uint32_t *d_val, uint64_t cap,
                                   uint64_t *d_nkey, uint32_t *d_nval, uint64_t new_cap,
                                   cudaStream_t stream)
{
    dd_rehash_kernel<<<blocks(cap), THREADS, 0, stream>>>(d_key, d_val, cap, d_nkey, d_nval,
                                                          new_cap);
    return (int)cudaPeekAtLastError();
}

extern "C" int xg_wt_dd_ids_gpu(const uint64_t *d_key, uint32_t *d_val, uint64_t cap,
                                const uint32_t *d_rank, uint32_t nt, xg_wt_dd_terms t,
                                uint64_t *d_id_goff, uint32_t *d_id_len, uint32_t *d_id_df,
                                cudaStream_t stream)
{
    dd_ids_kernel<<<blocks(cap), THREADS, 0, stream>>>(d_key, d_val, cap, d_rank);
    CUB_TRY(cudaPeekAtLastError());
    if (!nt) return 0;
    dd_by_id_kernel<<<blocks(nt), THREADS, 0, stream>>>(d_rank, nt, t, d_id_goff, d_id_len,
                                                        d_id_df);
    return (int)cudaPeekAtLastError();
}

static __global__ void pack_runs_kernel(const uint32_t *term, const uint32_t *start,
                                        const uint32_t *nr, uint64_t *run)
{
    const uint32_t r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= *nr) return;
    run[r] = (uint64_t)term[r] << 32 | start[r];
}

extern "C" int xg_wt_term_runs_gpu(const uint32_t *d_term, uint32_t np, uint32_t *d_run_term,
                                   uint32_t *d_run_len, uint32_t *d_run_start, uint64_t *d_run,
                                   uint32_t *d_nr, void *d_tmp, size_t tmp_bytes,
                                   cudaStream_t stream)
{
    if (!np) return (int)cudaMemsetAsync(d_nr, 0, 4, stream);
    CUB_TRY(cub::DeviceRunLengthEncode::Encode(d_tmp, tmp_bytes, d_term, d_run_term,
                                               d_run_len, d_nr, np, stream));
    /* Over all np entries: the ones past the runs are never read. */
    CUB_TRY(cub::DeviceScan::ExclusiveSum(d_tmp, tmp_bytes, d_run_len, d_run_start, np,
                                          stream));
    pack_runs_kernel<<<blocks(np), THREADS, 0, stream>>>(d_run_term, d_run_start, d_nr, d_run);
    return (int)cudaPeekAtLastError();
}
