/** @file merge_ref.c
 *  @brief CPU twins of merge.cu: the same block marks, the same merge
 *         walks (XG_MERGE_CHUNK steps at a time, so seams are exercised).
 */
#include "merge.h"

#include "../runtime/error.h"
#include "member.h"
#include "merge_step.h"

int xg_block_select_ref(const struct xg_dindex *ix,
                        const struct xg_merge_args *a)
{
    for (uint32_t qn = 0; qn < a->n_iq; ++qn) {
        const struct xg_dquery *q = &a->queries[a->iq[qn]];
        const struct xg_dlist *s = &a->lists[q->list_first + q->shortest];
        for (uint64_t i = 0; i < s->df; ++i) {
            const uint32_t doc = a->docs[s->decoded + i];
            for (uint32_t j = 0; j < q->n_lists; ++j) {
                const struct xg_dlist *l = &a->lists[q->list_first + j];
                if (j == q->shortest ||
                    (l->method & XG_MEMBER_KIND) != XG_MEMBER_BLOCK)
                    continue;
                const int64_t b = xg_block_of(ix, l->term, doc);
                if (b >= 0) a->bsel[l->block_start + (uint64_t)b] = 1;
            }
        }
    }
    return XG_OK;
}

int xg_mergepath_ref(const struct xg_merge_args *a)
{
    for (uint32_t m = 0; m < a->n_ml; ++m) {
        const struct xg_dlist *l = &a->lists[a->mlist[m]];
        const struct xg_dquery *q = &a->queries[l->query];
        const struct xg_dlist *s = &a->lists[q->list_first + q->shortest];
        const uint64_t end = (uint64_t)s->df + l->df;
        /* Thread by thread, on the whole lists (no tiles): the same
         * positions, whatever the partition. */
        for (uint64_t d0 = 0; d0 < end; d0 += XG_MERGE_CHUNK)
            xg_merge_walk(a->docs + s->decoded, s->df, a->docs + l->decoded,
                          l->df, l->df, 0, d0,
                          d0 + XG_MERGE_CHUNK < end ? d0 + XG_MERGE_CHUNK
                                                    : end,
                          a->mpos + l->mpos);
    }
    return XG_OK;
}
