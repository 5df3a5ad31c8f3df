/** @file impact.h
 *  @brief Quantized impacts (seed 003 §8.3): the one encoder of a list's
 *         codes and the bound a matcher may draw from them (format.h,
 *         struct xg_fmt_impact; docs/format.md).
 */
#ifndef XG_IMPACT_H
#define XG_IMPACT_H

#include <stdint.h>

#include "format.h"
#include "../runtime/host_device.h"

#define XG_IMPACT_MAX 255u

/* Codes for the n parts g[i] (each in [0, 1)) of one list, and the list's
 * scale: the smallest c with g <= c * scale, so that
 * (c - 1) * scale < g <= c * scale holds in double arithmetic.  A list
 * whose parts are all 0 gets scale 0 and codes 0. */
void xg_impact_encode(const double *g, uint32_t n, uint8_t *codes,
                      double *scale);

struct xg_buf;

/* Append the codes of one list (dense numbers ascending, their wdfs) to
 * `codes` and fill its entry; kd[d] is xg_bm25_kd() of dense document d
 * for the header's parameters.  XG_OK or XG_ERR_NOMEM. */
int xg_impact_list(const uint32_t *dense, const uint32_t *wdfs, uint32_t n,
                   const double *kd, struct xg_buf *codes,
                   struct xg_fmt_impact *entry);

/* A query's integer bound (the GPU engine's impact rows).  List l of n
 * contributes code * mult[l] + 1 to a document's uint32 row for each of
 * its postings: in units of u = 255 * sum(weight * scale) / 2^31, mult[l]
 * = ceil(weight[l] * scale[l] / u), so the row is an upper bound of the
 * document's weight / u, below 2^32 for up to 64 lists, nonzero exactly
 * when the document matches (the + 1), and at most
 * *margin = sum(mult[l] + 257) units above it.  All mult are 0 (and the
 * rows count matching lists) when every weight * scale is 0.  *unit = u. */
void xg_impact_units(const double *weight, const double *scale, uint32_t n,
                     uint32_t *mult, double *margin, double *unit);

/* One posting's contribution to an impact row. */
XG_HOST_DEVICE static inline uint32_t xg_impact_add(uint32_t mult,
                                                    uint32_t code)
{
    return code * mult + 1u;
}

#endif
