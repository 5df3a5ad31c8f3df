/** @file finish.cu
 *  @brief The exact finish (DESIGN.md, exactness contract): every candidate
 *         of a DENSE-path query is rescored exactly: its wdf in each of the
 *         query's lists (a lookup in the compressed list), each leaf's
 *         BM25 sumpart, added in the order of its shard's plan.  Twin:
 *         finish_ref.c (which match_ref.c's scoring mirrors).
 */
#include <cub/block/block_scan.cuh>
#include <cuda_runtime.h>

#include "../bm25.h"
#include "decode_dev.cuh"
#include "finish.h"
#include "plan_eval.h"
#include "../runtime/tuning.h"

#define FINISH_WARPS (XG_FINISH_THREADS / 32)
/* Queries each thread adds up in a block's scan of the candidate counts:
 * a launch finishes at most XG_FINISH_THREADS * FINISH_SCAN_ITEMS. */
#define FINISH_SCAN_ITEMS 8
#define FINISH_MAX_QUERIES (XG_FINISH_THREADS * FINISH_SCAN_ITEMS)

/* A warp per candidate (the wdf lookups need the whole warp: one thread
 * walking a block's gaps serially was most of a batch's device time).
 * The warps take the batch's candidates in one sequence, whatever query
 * they belong to: each block first adds up the queries' candidate counts
 * (known only on the device).  With a fixed share of warps per query
 * instead, the query with the most candidates (up to the room's 4,096,
 * where the average is about 160) set the kernel's time: ncu found 11%
 * of the SMs' warp slots busy where the registers allow 62% (a 40-query
 * real-text OR batch). */
static __global__ void __launch_bounds__(XG_FINISH_THREADS)
finish_kernel(struct xg_dindex ix, struct xg_finish_args a, uint32_t n_queries)
{
    typedef cub::BlockScan<uint32_t, XG_FINISH_THREADS> Scan;
    __shared__ typename Scan::TempStorage scan_tmp;
    __shared__ uint32_t start[FINISH_MAX_QUERIES];
    __shared__ uint32_t docs[FINISH_WARPS][128];
    uint32_t v[FINISH_SCAN_ITEMS], total;
    for (uint32_t i = 0; i < FINISH_SCAN_ITEMS; ++i) {
        const uint32_t qi = threadIdx.x * FINISH_SCAN_ITEMS + i;
        v[i] = qi < n_queries && a.queries[qi].path == XG_DPATH_DENSE
                   ? a.res[qi].n_cand : 0u;
    }
    Scan(scan_tmp).ExclusiveSum(v, v, total);
    for (uint32_t i = 0; i < FINISH_SCAN_ITEMS; ++i)
        start[threadIdx.x * FINISH_SCAN_ITEMS + i] = v[i];
    __syncthreads();
    const uint32_t warp = threadIdx.x >> 5, lane = threadIdx.x & 31u;
    for (uint32_t g = blockIdx.x * FINISH_WARPS + warp; g < total;
         g += gridDim.x * FINISH_WARPS) {
        /* The query whose candidates hold g: the last start <= g. */
        uint32_t lo = 0, hi = n_queries;
        while (hi - lo > 1) {
            const uint32_t mid = (lo + hi) >> 1;
            if (start[mid] <= g) lo = mid; else hi = mid;
        }
        const struct xg_dquery &q = a.queries[lo];
        struct xg_dcand &cand = a.cand[q.cand_first + (g - start[lo])];
        const uint32_t doc = cand.doc;
        uint32_t wdf[XG_GPU_MAX_LEAVES];
        uint8_t found[XG_GPU_MAX_LEAVES];
        for (uint32_t j = 0; j < q.n_lists; ++j) {
            int f;
            wdf[j] = xg_warp_lookup_wdf(ix, a.lists[q.list_first + j].term,
                                        doc, docs[warp], &f);
            found[j] = (uint8_t)f;
        }
        if (lane) continue;
        uint8_t matched[XG_GPU_MAX_LEAVES], sm[XG_GPU_MAX_LEAVES];
        double w[XG_GPU_MAX_LEAVES], sw[XG_GPU_MAX_LEAVES];
        const double kd = ix.kd[doc];
        uint32_t n_matched = 0;
        for (uint32_t l = 0; l < q.n_leaves; ++l) {
            const uint32_t li = a.leaf_list[q.leaf_first + l];
            matched[l] = li < q.n_lists && found[li];
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
                             uint32_t n_queries, cudaStream_t stream)
{
    for (uint32_t q0 = 0; q0 < n_queries; q0 += FINISH_MAX_QUERIES) {
        const uint32_t n = n_queries - q0 < FINISH_MAX_QUERIES
                               ? n_queries - q0 : FINISH_MAX_QUERIES;
        /* XG_FINISH_SPLIT blocks a query; a small batch spreads wider,
         * at least XG_SMALL_BATCH_BLOCKS blocks, at most 64 a query. */
        uint32_t split = (XG_SMALL_BATCH_BLOCKS + n - 1) / n;
        if (split < XG_FINISH_SPLIT) split = XG_FINISH_SPLIT;
        if (split > 64) split = 64;
        struct xg_finish_args part = *a;
        part.queries += q0;
        part.res += q0;
        finish_kernel<<<n * split, XG_FINISH_THREADS, 0, stream>>>(*ix, part,
                                                                   n);
        const cudaError_t e = cudaPeekAtLastError();
        if (e != cudaSuccess) return (int)e;
    }
    return cudaSuccess;
}
