/** @file topk_ref.c
 *  @brief CPU twin of topk.cu: the same counts, the same histogram rounds
 *         and threshold, so the same candidate set.
 */
#include "topk.h"

#include <string.h>

#include "../runtime/error.h"

static int item(const struct xg_select_args *a, const struct xg_dquery *q,
                uint64_t i, double *w, uint32_t *doc)
{
    if (q->path == XG_DPATH_DENSE) {
        const uint32_t d =
            q->sparse ? a->touched[q->touch_first + i] : (uint32_t)i;
        uint32_t m = a->mask[q->slot * a->n_docs + d];
        *doc = d;
        if (q->impact_row) {
            /* Integer bounds: nonzero is matched (impact.h). */
            *w = m;
            return m != 0;
        }
        double acc = a->acc[q->slot * a->n_docs + d];
        if (q->all_groups ? (m & q->all_groups) != q->all_groups
                          : (!m && acc == 0.0))
            return 0;
        *w = acc;
        return 1;
    }
    *w = a->icand[q->icand_first + i].weight;
    *doc = a->icand[q->icand_first + i].doc;
    return 1;
}

int xg_select_ref(const struct xg_select_args *a, uint32_t n_queries)
{
    uint32_t hist[XG_SELECT_BINS];  /* not static: two lanes run it */
    for (uint32_t qi = 0; qi < n_queries; ++qi) {
        const struct xg_dquery *q = &a->queries[qi];
        const int dense = q->path == XG_DPATH_DENSE;
        const int irow = xg_select_irow(q);
        uint64_t n = xg_select_items(a, q, qi);
        uint64_t m = 0;
        double S = 0, w;
        uint32_t doc;
        /* Pass 1: the matches, the largest weight, the first round. */
        memset(hist, 0, sizeof hist);
        for (uint64_t i = 0; i < n; ++i)
            if (item(a, q, i, &w, &doc)) {
                ++m;
                if (w > S) S = w;
                ++hist[xg_select_log_bin(w, irow)];
            }
        /* The kernel builds no histograms for a query its lists' bound
         * says needs none: a bound below the matches is a batch bug. */
        if (dense && m > q->match_bound)
            return xg_set_error(XG_ERR_ARG, "selection: query %u matched %llu "
                                "documents, its lists hold at most %llu", qi,
                                (unsigned long long)m,
                                (unsigned long long)q->match_bound);
        double thr = -1.0, lo = 0, hi = S;
        uint64_t above = 0;
        int done = m <= q->cand_cap / 2 || m <= q->k;
        for (int round = 0; round <= XG_SELECT_ROUNDS && !done; ++round) {
            double width = (hi - lo) / XG_SELECT_BINS;
            if (round) {
                memset(hist, 0, sizeof hist);
                for (uint64_t i = 0; i < n; ++i) {
                    if (!item(a, q, i, &w, &doc) || w < lo || w > hi)
                        continue;
                    int b = width > 0 ? (int)((w - lo) / width)
                                      : XG_SELECT_BINS - 1;
                    ++hist[b < XG_SELECT_BINS ? b : XG_SELECT_BINS - 1];
                }
            }
            uint64_t cum = above;
            int kb = 0;
            for (int b = XG_SELECT_BINS - 1; b >= 0; --b) {
                cum += hist[b];
                if (cum >= q->k) { kb = b; break; }
            }
            double edge, next;
            if (round) {
                edge = lo + kb * width;
                next = kb == XG_SELECT_BINS - 1 ? hi : edge + width;
            } else {
                xg_select_log_range((uint32_t)kb, irow, S, &edge, &next);
                width = next - edge;
            }
            thr = edge;
            if (cum <= q->cand_cap / 2 || width <= S * 1e-15) {
                done = 1;
            } else {
                above = cum - hist[kb];
                lo = edge;
                hi = next;
            }
        }
        thr = xg_select_cut(thr, S, a->rel_margin, q->margin);
        uint32_t written = 0;
        for (uint64_t i = 0; i < n; ++i) {
            if (!item(a, q, i, &w, &doc) || w < thr) continue;
            if (written < q->cand_cap) {
                struct xg_dcand *c = &a->out[q->cand_first + written];
                c->doc = doc;
                c->matched = q->path == XG_DPATH_DENSE ? 0u : 1u;
                c->weight = w;
            }
            ++written;
        }
        a->res[qi].matched = m;
        a->res[qi].n_cand = written < q->cand_cap ? written : q->cand_cap;
        a->res[qi].overflow = written > q->cand_cap ||
                              (a->ifail && a->ifail[qi]);
        a->res[qi].max_score = S;
        a->res[qi].threshold = thr;
    }
    return XG_OK;
}
