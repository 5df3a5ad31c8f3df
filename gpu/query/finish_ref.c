/** @file finish_ref.c
 *  @brief CPU twin of finish.cu: exact rescoring of DENSE-path candidates.
 */
#include "finish.h"

#include "../runtime/error.h"
#include "member.h"
#include "plan_eval.h"

int xg_dindex_block_ref(const struct xg_dindex *ix, uint32_t t, uint32_t blk,
                        uint32_t *docs, uint32_t *wdfs, uint32_t *n);

/* The wdf of doc in term t's list; *found says whether it is there. */
static int lookup(const struct xg_dindex *ix, uint32_t t, uint32_t doc,
                  uint32_t *wdf, int *found)
{
    const int64_t lo = xg_block_of(ix, t, doc);
    *found = 0;
    *wdf = 0;
    if (lo < 0) return XG_OK;
    uint32_t docs[XG_FMT_BLOCK], wdfs[XG_FMT_BLOCK], n;
    int rc = xg_dindex_block_ref(ix, t, (uint32_t)lo, docs, wdfs, &n);
    if (rc) return rc;
    for (uint32_t i = 0; i < n; ++i)
        if (docs[i] == doc) {
            *found = 1;
            *wdf = wdfs[i];
        }
    return XG_OK;
}

int xg_finish_ref(const struct xg_dindex *ix, const struct xg_finish_args *a,
                  uint32_t n_queries)
{
    for (uint32_t qi = 0; qi < n_queries; ++qi) {
        const struct xg_dquery *q = &a->queries[qi];
        if (q->path != XG_DPATH_DENSE) continue;
        for (uint32_t c = 0; c < a->res[qi].n_cand; ++c) {
            struct xg_dcand *cand = &a->cand[q->cand_first + c];
            uint32_t wdf[XG_GPU_MAX_LEAVES];
            int found[XG_GPU_MAX_LEAVES];
            for (uint32_t j = 0; j < q->n_lists; ++j) {
                int rc = lookup(ix, a->lists[q->list_first + j].term,
                                cand->doc, &wdf[j], &found[j]);
                if (rc) return rc;
            }
            uint8_t matched[XG_GPU_MAX_LEAVES], sm[XG_GPU_MAX_LEAVES];
            double w[XG_GPU_MAX_LEAVES], sw[XG_GPU_MAX_LEAVES], weight;
            double kd = ix->kd[cand->doc];
            uint32_t n_matched = 0;
            for (uint32_t l = 0; l < q->n_leaves; ++l) {
                uint32_t li = a->leaf_list[q->leaf_first + l];
                matched[l] = li < q->n_lists && found[li];
                n_matched += matched[l];
                w[l] = matched[l] ? xg_bm25_sumpart_kd(
                                        a->leaf_tw[q->leaf_first + l], kd,
                                        wdf[li])
                                  : 0.0;
            }
            uint32_t shard = (ix->docids[cand->doc] - 1) % ix->n_shards;
            int ok = xg_plan_eval(a->plan + q->plan_first +
                                      shard * q->plan_stride,
                                  q->plan_len, matched, w, NULL, sm, sw, &weight);
            if (ok && a->bm25.k2 != 0)
                weight = weight + xg_bm25_sumextra(&a->bm25,
                                                   ix->doclens[cand->doc]);
            cand->matched = ok ? 1u + n_matched : 0u;
            cand->weight = weight;
        }
    }
    return XG_OK;
}
