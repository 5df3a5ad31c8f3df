/** @file finish.cu
 *  @brief The exact finish (DESIGN.md, exactness contract): every candidate
 *         of a DENSE-path query is rescored exactly: its wdf in each of the
 *         query's lists, each leaf's BM25 sumpart, added in the order of
 *         its shard's plan.  Twin: finish_ref.c (which match_ref.c's
 *         scoring mirrors), which looks each wdf up in its list.
 *
 *  The kernels find a query's wdfs one of two ways, by cost (finish.h).
 *  Gathered: each candidate marks its cell of its query's row (the
 *  selection's keep pass does, in the engine; mark_kernel where no
 *  selection ran before), the query's lists are decoded again whole, a
 *  warp a 128-posting block as the accumulation does, and every posting
 *  of a marked document leaves its wdf in the candidate's entry of a
 *  table: a top-1000 real-text OR run took 0.025 s of device time where
 *  looking up took 0.035 s.  Looked up: a warp a candidate and list (a
 *  skip search, then a block decoded for one document), where the
 *  candidates are few and the lists long: a top 10 over 10^6 synthetic
 *  documents gathered about 3,900 blocks a query for about 50
 *  candidates, two fifths of the kernels' time (docs/gpu.md).
 */
#include <cub/block/block_scan.cuh>
#include <cuda_runtime.h>

#include "../bm25.h"
#include "decode_dev.cuh"
#include "finish.h"
#include "member.h"
#include "plan_eval.h"
#include "../runtime/knobs.h"
#include "../runtime/tuning.h"

#define MARK_THREADS 256
#define MARK_SPLIT 4
#define WARPS XG_DECODE_WARPS
/* Queries each thread adds up in a block's scan of the candidate counts:
 * a launch finishes at most XG_FINISH_THREADS * FINISH_SCAN_ITEMS. */
#define FINISH_SCAN_ITEMS 8
#define FINISH_MAX_QUERIES (XG_FINISH_THREADS * FINISH_SCAN_ITEMS)

static __global__ void __launch_bounds__(MARK_THREADS)
mark_kernel(struct xg_finish_args a, uint32_t n_docs)
{
    const struct xg_dquery &q = a.queries[blockIdx.x];
    if (q.path != XG_DPATH_DENSE) return;
    const uint32_t n = a.res[blockIdx.x].n_cand;
    uint32_t *row = a.mask + q.slot * (uint64_t)n_docs;
    for (uint32_t s = blockIdx.y * MARK_THREADS + threadIdx.x; s < n;
         s += gridDim.y * MARK_THREADS) {
        row[a.cand[q.cand_first + s].doc] = XG_CAND_MARK | s;
        a.cand_in[q.cand_first + s] = 0;
    }
}

/* Whether query q's wdfs are looked up rather than gathered (finish.h):
 * the gather kernel and the lookup kernel ask the same. */
static __device__ __forceinline__ bool
by_lookup(const struct xg_finish_args &a, const struct xg_dquery &q,
          uint32_t n_cand)
{
    if (a.wdfs_by != XG_FINISH_BY_COST) return a.wdfs_by == XG_FINISH_LOOKUP;
    const struct xg_dlist &first = a.lists[q.list_first];
    const struct xg_dlist &last = a.lists[q.list_first + q.n_lists - 1];
    const uint64_t blocks = last.block_start + last.n_blocks -
                            first.block_start;
    return (uint64_t)n_cand * q.n_lists * XG_FINISH_LOOKUP_COST < blocks;
}

/* The lookup and the rescoring take the launch's work items (candidates,
 * or candidate and list pairs of the queries that look up) in one
 * sequence, whatever query they belong to: each block first adds up the
 * queries' counts, known only on the device. */
enum item_kind { ITEMS_CANDIDATES, ITEMS_LOOKUPS };
typedef cub::BlockScan<uint32_t, XG_FINISH_THREADS> ItemScan;
struct item_starts {
    typename ItemScan::TempStorage scan;
    uint32_t first[FINISH_MAX_QUERIES];     /* each query's first item */
};

/* Fills starts->first for the launch's queries; returns the items' total. */
static __device__ __forceinline__ uint32_t
add_up_items(const struct xg_finish_args &a, uint32_t n_queries,
             enum item_kind kind, struct item_starts *starts)
{
    uint32_t v[FINISH_SCAN_ITEMS], total;
    for (uint32_t i = 0; i < FINISH_SCAN_ITEMS; ++i) {
        const uint32_t qi = threadIdx.x * FINISH_SCAN_ITEMS + i;
        v[i] = 0;
        if (qi >= n_queries || a.queries[qi].path != XG_DPATH_DENSE) continue;
        const uint32_t n = a.res[qi].n_cand;
        if (kind == ITEMS_CANDIDATES)
            v[i] = n;
        else if (n && by_lookup(a, a.queries[qi], n))
            v[i] = n * a.queries[qi].n_lists;
    }
    ItemScan(starts->scan).ExclusiveSum(v, v, total);
    for (uint32_t i = 0; i < FINISH_SCAN_ITEMS; ++i)
        starts->first[threadIdx.x * FINISH_SCAN_ITEMS + i] = v[i];
    __syncthreads();
    return total;
}

/* The query whose items hold g: the last start <= g. */
static __device__ __forceinline__ uint32_t
query_of_item(const uint32_t *start, uint32_t n_queries, uint32_t g)
{
    uint32_t lo = 0, hi = n_queries;
    while (hi - lo > 1) {
        const uint32_t mid = (lo + hi) >> 1;
        if (start[mid] <= g) lo = mid; else hi = mid;
    }
    return lo;
}

/* The gather: a warp a block of the batch's DENSE lists, as the
 * accumulation; a block of a query that looks its wdfs up is passed
 * over.  (A loop over the queries in each warp instead, to pass such a
 * query at once, made real-text batches, whose queries mostly gather,
 * take 2.3 times the device time: every warp read every query.) */
static __global__ void __launch_bounds__(WARPS * 32)
gather_kernel(struct xg_dindex ix, struct xg_finish_args a)
{
    __shared__ uint32_t s_docs[WARPS][128], s_wdfs[WARPS][128];
    const uint32_t warp = threadIdx.x >> 5, lane = threadIdx.x & 31u;
    for (uint64_t g = (uint64_t)blockIdx.x * WARPS + warp; g < a.dense_blocks;
         g += (uint64_t)gridDim.x * WARPS) {
        const uint32_t li = xg_list_of_block(a.lists, 0, a.n_dense_lists, g);
        const struct xg_dlist &l = a.lists[li];
        const struct xg_dquery &q = a.queries[l.query];
        const uint32_t n_cand = a.res[l.query].n_cand;
        if (!n_cand || by_lookup(a, q, n_cand))
            continue;           /* the whole warp alike */
        const uint32_t n = xg_warp_decode_block(
            ix, l.term, (uint32_t)(g - l.block_start), s_docs[warp],
            s_wdfs[warp]);
        const uint32_t *row = a.mask + q.slot * (uint64_t)ix.n_docs;
        const uint32_t j = li - q.list_first;
        for (uint32_t i = lane; i < n; i += 32u) {
            const uint32_t doc = s_docs[warp][i], m = row[doc];
            /* A cell the selection left with XG_CAND_MARK's bit set (an
             * impact bound, AND's 32nd group) names a slot whose
             * candidate is another document: every mark is checked
             * against the candidate's document. */
            const uint32_t s = m & ~XG_CAND_MARK;
            if (!(m & XG_CAND_MARK) || s >= n_cand ||
                a.cand[q.cand_first + s].doc != doc)
                continue;
            a.cand_wdf[q.wdf_first + (uint64_t)s * q.n_lists + j] = s_wdfs[warp][i];
            atomicOr(&a.cand_in[q.cand_first + s], 1ull << j);
        }
        __syncwarp();
    }
}

/* The wdfs of the queries that look them up: a warp a candidate and
 * list (add_up_items), the list's block that can hold the document found
 * in its skip entries and decoded.  The cand_wdf/cand_in entries are the
 * gather's. */
static __global__ void __launch_bounds__(XG_FINISH_THREADS)
lookup_kernel(struct xg_dindex ix, struct xg_finish_args a, uint32_t n_queries)
{
    enum { LOOKUP_WARPS = XG_FINISH_THREADS / 32 };
    __shared__ struct item_starts starts;
    __shared__ uint32_t s_docs[LOOKUP_WARPS][128], s_wdfs[LOOKUP_WARPS][128];
    const uint32_t total = add_up_items(a, n_queries, ITEMS_LOOKUPS, &starts);
    const uint32_t warp = threadIdx.x >> 5, lane = threadIdx.x & 31u;
    for (uint32_t g = blockIdx.x * LOOKUP_WARPS + warp; g < total;
         g += gridDim.x * LOOKUP_WARPS) {
        const uint32_t qi = query_of_item(starts.first, n_queries, g);
        const struct xg_dquery &q = a.queries[qi];
        const uint32_t pair = g - starts.first[qi];
        const uint32_t s = pair / q.n_lists, j = pair % q.n_lists;
        const uint32_t doc = a.cand[q.cand_first + s].doc;
        const uint32_t term = a.lists[q.list_first + j].term;
        const int64_t blk = xg_block_of(&ix, term, doc);
        if (blk < 0) continue;  /* the whole warp alike */
        const uint32_t n = xg_warp_decode_block(ix, term, (uint32_t)blk,
                                                s_docs[warp], s_wdfs[warp]);
        for (uint32_t i = lane; i < n; i += 32u)
            if (s_docs[warp][i] == doc) {
                a.cand_wdf[q.wdf_first + (uint64_t)s * q.n_lists + j] =
                    s_wdfs[warp][i];
                atomicOr(&a.cand_in[q.cand_first + s], 1ull << j);
            }
        __syncwarp();
    }
}

/* A thread a candidate, the launch's candidates in one sequence
 * (add_up_items).  With a fixed share per query instead, the query with
 * the most candidates (up to the room's 4,096, where the average is about
 * 160) set the kernel's time. */
static __global__ void __launch_bounds__(XG_FINISH_THREADS)
finish_kernel(struct xg_dindex ix, struct xg_finish_args a, uint32_t n_queries)
{
    __shared__ struct item_starts starts;
    const uint32_t total =
        add_up_items(a, n_queries, ITEMS_CANDIDATES, &starts);
    for (uint32_t g = blockIdx.x * XG_FINISH_THREADS + threadIdx.x; g < total;
         g += gridDim.x * XG_FINISH_THREADS) {
        const uint32_t qi = query_of_item(starts.first, n_queries, g);
        const struct xg_dquery &q = a.queries[qi];
        const uint32_t s = g - starts.first[qi];
        struct xg_dcand &cand = a.cand[q.cand_first + s];
        const uint32_t doc = cand.doc;
        const unsigned long long in = a.cand_in[q.cand_first + s];
        const uint32_t *wdf = a.cand_wdf + q.wdf_first + (uint64_t)s * q.n_lists;
        uint8_t matched[XG_GPU_MAX_LEAVES], sm[XG_GPU_MAX_LEAVES];
        double w[XG_GPU_MAX_LEAVES], sw[XG_GPU_MAX_LEAVES];
        const double kd = ix.kd[doc];
        uint32_t n_matched = 0;
        for (uint32_t l = 0; l < q.n_leaves; ++l) {
            const uint32_t li = a.leaf_list[q.leaf_first + l];
            matched[l] = li < q.n_lists && ((in >> li) & 1u);
            n_matched += matched[l];
            w[l] = matched[l] ? xg_bm25_sumpart_kd(a.leaf_tw[q.leaf_first + l],
                                                   kd, wdf[li])
                              : 0.0;
        }
        const uint32_t shard = (ix.docids[doc] - 1) % ix.n_shards;
        double weight;
        const int ok = xg_plan_eval(a.plan + q.plan_first +
                                        shard * q.plan_stride,
                                    q.plan_len, matched, w, NULL, sm, sw, &weight);
        if (ok && a.bm25.k2 != 0)
            weight = weight + xg_bm25_sumextra(&a.bm25, ix.doclens[doc]);
        cand.matched = ok ? 1u + n_matched : 0u;
        cand.weight = weight;
    }
}

extern "C" int xg_finish_gpu(const struct xg_dindex *ix,
                             const struct xg_finish_args *a,
                             uint32_t n_queries, int marked,
                             cudaStream_t stream)
{
    if (!n_queries || !a->dense_blocks) return cudaSuccess;
    if (!marked)
        mark_kernel<<<dim3(n_queries, MARK_SPLIT), MARK_THREADS, 0, stream>>>(
            *a, ix->n_docs);
    if (a->wdfs_by != XG_FINISH_LOOKUP) {
        const uint64_t warps = (a->dense_blocks + WARPS - 1) / WARPS;
        gather_kernel<<<(unsigned)(warps < 65535u * 8u ? warps : 65535u * 8u),
                        WARPS * 32, 0, stream>>>(*ix, *a);
    }
    for (uint32_t q0 = 0; q0 < n_queries; q0 += FINISH_MAX_QUERIES) {
        const uint32_t n = n_queries - q0 < FINISH_MAX_QUERIES
                               ? n_queries - q0 : FINISH_MAX_QUERIES;
        /* XG_FINISH_SPLIT blocks a query, and at least one an SM. */
        uint32_t blocks = n * XG_FINISH_SPLIT;
        if (blocks < XG_FINISH_MIN_BLOCKS) blocks = XG_FINISH_MIN_BLOCKS;
        struct xg_finish_args part = *a;
        part.queries += q0;
        part.res += q0;
        if (a->wdfs_by != XG_FINISH_GATHER)
            lookup_kernel<<<blocks * XG_FINISH_LOOKUP_SPREAD,
                            XG_FINISH_THREADS, 0, stream>>>(*ix, part, n);
        finish_kernel<<<blocks, XG_FINISH_THREADS, 0, stream>>>(*ix, part, n);
    }
    return (int)cudaPeekAtLastError();
}
