/** @file finish.cu
 *  @brief The exact finish (DESIGN.md, exactness contract): every candidate
 *         of a DENSE-path query is rescored exactly: its wdf in each of the
 *         query's lists (a lookup in the compressed list), each leaf's
 *         BM25 sumpart, added in the order of its shard's plan.  Twin:
 *         finish_ref.c (which match_ref.c's scoring mirrors).
 */
#include <cuda_runtime.h>

#include "../bm25.h"
#include "decode_dev.cuh"
#include "finish.h"
#include "plan_eval.h"
#include "../runtime/tuning.h"

#define FINISH_WARPS (XG_FINISH_THREADS / 32)

/* A warp per candidate (the wdf lookups need the whole warp: one thread
 * walking a block's gaps serially was most of a batch's device time), so
 * each query's candidates spread over gridDim.y blocks. */
static __global__ void __launch_bounds__(XG_FINISH_THREADS)
finish_kernel(struct xg_dindex ix, struct xg_finish_args a)
{
    __shared__ uint32_t docs[FINISH_WARPS][128];
    const struct xg_dquery &q = a.queries[blockIdx.x];
    if (q.path != XG_DPATH_DENSE) return;
    const uint32_t n = a.res[blockIdx.x].n_cand;
    const uint32_t warp = threadIdx.x >> 5, lane = threadIdx.x & 31u;
    for (uint32_t c = blockIdx.y * FINISH_WARPS + warp; c < n;
         c += gridDim.y * FINISH_WARPS) {
        struct xg_dcand &cand = a.cand[q.cand_first + c];
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
    if (!n_queries) return cudaSuccess;
    /* A small batch spreads wider: at least XG_SMALL_BATCH_BLOCKS
     * blocks, at most 64 a query (a warp for each of 256 candidates). */
    uint32_t split = (XG_SMALL_BATCH_BLOCKS + n_queries - 1) / n_queries;
    if (split < XG_FINISH_SPLIT) split = XG_FINISH_SPLIT;
    if (split > 64) split = 64;
    dim3 grid(n_queries, split);
    finish_kernel<<<grid, XG_FINISH_THREADS, 0, stream>>>(*ix, *a);
    return (int)cudaPeekAtLastError();
}
