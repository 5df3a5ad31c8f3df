/** @file intersect.cu
 *  @brief AND of single terms: one thread per posting of the query's
 *         shortest list (seed 004 ch. 3: one thread per docid of the
 *         shortest list across the whole batch) tests membership in every
 *         other decoded list (member.h), and a document in all of them is
 *         scored exactly with the shard's plan, after its position
 *         filters (filter_dev.h).  Twin: intersect_ref.c.
 */
#include <cuda_runtime.h>

#include "../bm25.h"
#include "intersect.h"
#include "filter_dev.h"
#include "member.h"
#include "plan_eval.h"
#include "../runtime/kern_util.cuh"

static __global__ void __launch_bounds__(THREADS)
intersect_kernel(struct xg_dindex ix, struct xg_intersect_args a)
{
    const uint64_t total = a.iprefix[a.n_iq];
    /* Every lane of the warp runs every iteration, so the warp can append
     * its matches with one atomic per query instead of one per match. */
    const uint64_t rounds = (total + (uint64_t)gridDim.x * THREADS - 1) /
                            ((uint64_t)gridDim.x * THREADS);
    for (uint64_t r = 0; r < rounds; ++r) {
        const uint64_t g = (r * gridDim.x + blockIdx.x) * THREADS + threadIdx.x;
        bool hit = false;
        uint32_t qi = 0, doc = 0;
        double weight = 0;
        if (g < total) {
            const uint32_t lo = xg_prefix_owner(a.iprefix, a.n_iq, g);
            qi = a.iq[lo];
            const struct xg_dquery &q = a.queries[qi];
            const uint64_t i = g - a.iprefix[lo];
            const struct xg_dlist &s = a.lists[q.list_first + q.shortest];
            doc = a.docs[s.decoded + i];
            uint32_t wdf[XG_GPU_MAX_LEAVES], place[XG_GPU_MAX_LEAVES];
            bool all = true;
            for (uint32_t j = 0; j < q.n_lists && all; ++j) {
                const struct xg_dlist &l = a.lists[q.list_first + j];
                if (j == q.shortest) {
                    wdf[j] = a.wdfs[s.decoded + i];
                    place[j] = (uint32_t)i;
                    continue;
                }
                int64_t at = xg_member_at(&ix, &l, a.docs, a.mpos, i, doc);
                if (at < 0) all = false;
                else wdf[j] = a.wdfs[l.decoded + (uint64_t)at];
                place[j] = (uint32_t)at;
            }
            uint8_t passed[XG_GPU_MAX_FILTERS] = {0};
            if (all && q.n_filters &&
                xg_dfilters_eval(&ix, &q, a.filters, a.lists, a.leaf_list,
                                 place, passed)) {
                a.ifail[qi] = 1;   /* the query goes to the CPU matcher */
                all = false;
            }
            if (all) {
                uint8_t matched[XG_GPU_MAX_LEAVES], sm[XG_GPU_MAX_LEAVES];
                double w[XG_GPU_MAX_LEAVES], sw[XG_GPU_MAX_LEAVES];
                const double kd = ix.kd[doc];
                for (uint32_t l = 0; l < q.n_leaves; ++l) {
                    const uint32_t li = a.leaf_list[q.leaf_first + l];
                    matched[l] = 1;
                    w[l] = xg_bm25_sumpart_kd(a.leaf_tw[q.leaf_first + l], kd,
                                              wdf[li]);
                }
                const uint32_t shard = (ix.docids[doc] - 1) % ix.n_shards;
                hit = xg_plan_eval(a.plan + q.plan_first +
                                       shard * q.plan_stride,
                                   q.plan_len, matched, w, passed, sm, sw, &weight);
                if (hit && a.bm25.k2 != 0)
                    weight = weight + xg_bm25_sumextra(&a.bm25, ix.doclens[doc]);
            }
        }
        /* Warp-aggregated append: lanes with a match group by query. */
        const uint32_t want = __ballot_sync(0xFFFFFFFFu, hit);
        if (!hit) continue;
        const uint32_t peers = __match_any_sync(want, qi);
        const uint32_t lane = threadIdx.x & 31u;
        const uint32_t leader = __ffs(peers) - 1;
        uint32_t base = 0;
        if (lane == leader) base = atomicAdd(&a.icount[qi], __popc(peers));
        base = __shfl_sync(peers, base, leader);
        const uint32_t slot = base + __popc(peers & ((1u << lane) - 1u));
        struct xg_dcand c;
        c.doc = doc;
        c.matched = 1;
        c.weight = weight;
        a.icand[a.queries[qi].icand_first + slot] = c;
    }
}

extern "C" int xg_intersect_gpu(const struct xg_dindex *ix,
                                const struct xg_intersect_args *a,
                                uint64_t total, cudaStream_t stream)
{
    if (!total) return cudaSuccess;
    uint64_t blocks = (total + THREADS - 1) / THREADS;
    unsigned grid = (unsigned)(blocks < 65535u * 16u ? blocks : 65535u * 16u);
    intersect_kernel<<<grid, THREADS, 0, stream>>>(*ix, *a);
    return (int)cudaPeekAtLastError();
}
