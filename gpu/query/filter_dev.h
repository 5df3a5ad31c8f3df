/** @file filter_dev.h
 *  @brief Position filters of an AND of terms on the device: read each
 *         term's positions in the candidate document from the resident
 *         POSITIONS section and decide the filter as the CPU matcher does
 *         (phrase.h).  Shared by intersect.cu and its twin.
 */
#ifndef XG_FILTER_DEV_H
#define XG_FILTER_DEV_H

#include <stdint.h>

#include "../index/positions.h"
#include "engine_types.h"
#include "phrase.h"

/* The positions of posting p of term t (its place in the whole list,
 * which the intersection's membership test gives) into out: their count,
 * or UINT32_MAX where there are more than cap (or the data is bad). */
XG_HOST_DEVICE static inline uint32_t
xg_dpos_read(const struct xg_dindex *ix, uint32_t t, uint32_t p,
             uint32_t *out, uint32_t cap)
{
    const uint64_t g = ix->terms[t].skip_first + p / XG_FMT_BLOCK;
    struct xg_pos_cursor c;
    if (xg_pos_open(&c, ix->pos_data + ix->pos_offsets[g],
                    ix->pos_data + ix->pos_offsets[g + 1], p % XG_FMT_BLOCK) ||
        c.left > cap)
        return UINT32_MAX;
    uint32_t n = 0, v;
    while (xg_pos_next(&c, &v)) out[n++] = v;
    return n;
}

/* passed[f] for each position filter of INTERSECT query q, on the
 * document whose posting in the query's list j is at[j].  0, or -1 when a
 * term has more positions there than the device reads (the query then
 * goes to the CPU matcher). */
XG_HOST_DEVICE static inline int
xg_dfilters_eval(const struct xg_dindex *ix, const struct xg_dquery *q,
                 const struct xg_dfilter *filters,
                 const struct xg_dlist *lists, const uint32_t *leaf_list,
                 const uint32_t *at, uint8_t *passed)
{
    uint32_t buf[XG_GPU_MAX_FILTER_TERMS * XG_GPU_MAX_FILTER_POS];
    const uint32_t *pos[XG_GPU_MAX_FILTER_TERMS];
    uint32_t count[XG_GPU_MAX_FILTER_TERMS], scratch[XG_GPU_MAX_FILTER_TERMS];
    for (uint32_t f = 0; f < q->n_filters; ++f) {
        const struct xg_dfilter *df = &filters[q->filter_first + f];
        for (uint32_t i = 0; i < df->n; ++i) {
            const uint32_t li = leaf_list[q->leaf_first + df->first + i];
            uint32_t *out = buf + i * XG_GPU_MAX_FILTER_POS;
            count[i] = xg_dpos_read(ix, lists[q->list_first + li].term, at[li],
                                    out, XG_GPU_MAX_FILTER_POS);
            if (count[i] == UINT32_MAX) return -1;
            pos[i] = out;
        }
        passed[f] = (uint8_t)xg_filter_holds(df->kind, pos, count, df->n,
                                             df->window, scratch);
    }
    return 0;
}

#endif
