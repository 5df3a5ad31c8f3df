/** @file accumulate_ref.c
 *  @brief CPU twin of accumulate.cu: the same contributions, added list by
 *         list in posting order (the kernel adds them in any order, so the
 *         two sums may differ in the last bits; the masks are equal).
 */
#include "accumulate.h"

#include "../bm25.h"
#include "../runtime/error.h"
#include "../index/impact.h"

int xg_dindex_block_ref(const struct xg_dindex *ix, uint32_t t, uint32_t blk,
                        uint32_t *docs, uint32_t *wdfs, uint32_t *n);

int xg_accumulate_ref(const struct xg_dindex *ix,
                      const struct xg_dlist *lists,
                      const struct xg_dquery *queries, uint32_t list_lo,
                      uint32_t list_hi, double *acc, uint32_t *mask,
                      uint32_t *touched, uint32_t *tcount)
{
    uint32_t docs[XG_FMT_BLOCK], wdfs[XG_FMT_BLOCK], n;
    for (uint32_t li = list_lo; li < list_hi; ++li) {
        const struct xg_dlist *l = &lists[li];
        uint64_t row = queries[l->query].slot * (uint64_t)ix->n_docs;
        int need_mask = queries[l->query].all_groups != 0;
        for (uint32_t b = 0; b < l->n_blocks; ++b) {
            int rc = xg_dindex_block_ref(ix, l->term, b, docs, wdfs, &n);
            if (rc) return rc;
            const struct xg_dquery *q = &queries[l->query];
            if (q->impact_row) {
                const uint8_t *codes = ix->impact_codes +
                                       ix->impacts[l->term].code_offset +
                                       (uint64_t)b * XG_FMT_BLOCK;
                for (uint32_t i = 0; i < n; ++i) {
                    uint32_t *cell = &mask[row + docs[i]];
                    if (q->sparse && !*cell)
                        touched[q->touch_first + tcount[l->query]++] = docs[i];
                    *cell += xg_impact_add(l->imp_mult, codes[i]);
                }
                continue;
            }
            for (uint32_t i = 0; i < n; ++i) {
                double c = xg_bm25_sumpart_kd(l->weight, ix->kd[docs[i]],
                                              wdfs[i]);
                acc[row + docs[i]] += c;
                if (need_mask || c == 0.0) mask[row + docs[i]] |= l->group_mask;
            }
        }
    }
    return XG_OK;
}
