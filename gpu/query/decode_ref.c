/** @file decode_ref.c
 *  @brief CPU twins of the decoding kernels (decode.cu, decode_dev.cuh):
 *         a block of an xg_dindex, a whole batch of lists, one lookup.
 */
#include "decode.h"

#include <stddef.h>

#include "../runtime/error.h"
#include "../index/pfor.h"

/* Decode block `blk` of term t: docids (prefix-summed) and wdfs. */
int xg_dindex_block_ref(const struct xg_dindex *ix, uint32_t t, uint32_t blk,
                        uint32_t *docs, uint32_t *wdfs, uint32_t *n);
int xg_dindex_block_ref(const struct xg_dindex *ix, uint32_t t, uint32_t blk,
                        uint32_t *docs, uint32_t *wdfs, uint32_t *n)
{
    const struct xg_fmt_term *e = &ix->terms[t];
    const struct xg_fmt_skip *sk = &ix->skip[e->skip_first + blk];
    const uint32_t *w =
        (const uint32_t *)(ix->postings + ix->list_off[t] + sk->offset);
    uint32_t nd, nw, used, used2;
    /* Blocks were verified when the index was loaded; XG_PFOR_MAX_WORDS
     * per stream is all a block can span. */
    if (xg_pfor_decode_ref(w, XG_PFOR_MAX_WORDS, docs, &nd, &used) ||
        xg_pfor_decode_ref(w + used, XG_PFOR_MAX_WORDS, wdfs, &nw, &used2) ||
        nd != nw)
        return xg_set_error(XG_ERR_FORMAT, "term %u block %u is corrupt", t,
                            blk);
    xg_pfor_prefix_sum(docs, nd, sk->first);
    *n = nd;
    return XG_OK;
}

int xg_decode_lists_ref(const struct xg_dindex *ix,
                        const struct xg_dlist *lists, uint32_t list_lo,
                        uint32_t list_hi, const uint8_t *bsel, uint32_t *docs,
                        uint32_t *wdfs)
{
    for (uint32_t l = list_lo; l < list_hi; ++l)
        for (uint32_t b = 0; b < lists[l].n_blocks; ++b) {
            const int is_block =
                (lists[l].method & XG_MEMBER_KIND) == XG_MEMBER_BLOCK;
            if (bsel ? !bsel[lists[l].block_start + b] : is_block) continue;
            uint32_t n;
            uint64_t out = lists[l].decoded + (uint64_t)b * XG_FMT_BLOCK;
            int rc = xg_dindex_block_ref(ix, lists[l].term, b, docs + out,
                                         wdfs + out, &n);
            if (rc) return rc;
        }
    return XG_OK;
}
