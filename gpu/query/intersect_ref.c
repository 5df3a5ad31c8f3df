/** @file intersect_ref.c
 *  @brief CPU twin of intersect.cu: the same loop, one posting at a time.
 */
#include "intersect.h"

#include "../runtime/error.h"
#include "filter_dev.h"
#include "member.h"
#include "plan_eval.h"

int xg_intersect_ref(const struct xg_dindex *ix,
                     const struct xg_intersect_args *a)
{
    for (uint32_t qi = 0; qi < a->n_iq; ++qi) {
        const struct xg_dquery *q = &a->queries[a->iq[qi]];
        const struct xg_dlist *s = &a->lists[q->list_first + q->shortest];
        for (uint64_t i = 0; i < a->iprefix[qi + 1] - a->iprefix[qi]; ++i) {
            uint32_t doc = a->docs[s->decoded + i];
            uint32_t wdf[XG_GPU_MAX_LEAVES], place[XG_GPU_MAX_LEAVES];
            int all = 1;
            for (uint32_t j = 0; j < q->n_lists && all; ++j) {
                const struct xg_dlist *l = &a->lists[q->list_first + j];
                if (j == q->shortest) {
                    wdf[j] = a->wdfs[s->decoded + i];
                    place[j] = (uint32_t)i;
                    continue;
                }
                int64_t at = xg_member_at(ix, l, a->docs, a->mpos, i, doc);
                if (at < 0) all = 0;
                else wdf[j] = a->wdfs[l->decoded + (uint64_t)at];
                place[j] = (uint32_t)at;
            }
            if (!all) continue;
            uint8_t passed[XG_GPU_MAX_FILTERS] = {0};
            if (q->n_filters &&
                xg_dfilters_eval(ix, q, a->filters, a->lists, a->leaf_list,
                                 place, passed)) {
                a->ifail[a->iq[qi]] = 1;
                continue;
            }
            uint8_t matched[XG_GPU_MAX_LEAVES], sm[XG_GPU_MAX_LEAVES];
            double w[XG_GPU_MAX_LEAVES], sw[XG_GPU_MAX_LEAVES], weight;
            for (uint32_t l = 0; l < q->n_leaves; ++l) {
                matched[l] = 1;
                w[l] = xg_bm25_sumpart_kd(a->leaf_tw[q->leaf_first + l],
                                          ix->kd[doc],
                                          wdf[a->leaf_list[q->leaf_first + l]]);
            }
            uint32_t shard = (ix->docids[doc] - 1) % ix->n_shards;
            if (!xg_plan_eval(a->plan + q->plan_first + shard * q->plan_stride,
                              q->plan_len, matched, w, passed, sm, sw, &weight))
                continue;
            if (a->bm25.k2 != 0)
                weight = weight + xg_bm25_sumextra(&a->bm25, ix->doclens[doc]);
            uint32_t slot = a->icount[a->iq[qi]]++;
            a->icand[q->icand_first + slot].doc = doc;
            a->icand[q->icand_first + slot].matched = 1;
            a->icand[q->icand_first + slot].weight = weight;
        }
    }
    return XG_OK;
}
