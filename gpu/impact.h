/** @file impact.h
 *  @brief Quantized impacts (seed 003 §8.3): the one encoder of a list's
 *         codes and the bound a matcher may draw from them (format.h,
 *         struct xg_fmt_impact; docs/format.md).
 */
#ifndef XG_IMPACT_H
#define XG_IMPACT_H

#include <stdint.h>

#include "format.h"
#include "host_device.h"

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

/* A list's contribution bound: termweight * (code * scale) >= the exact
 * termweight * g, and at most termweight * scale above it (up to
 * rounding, which the matcher's relative margin covers). */
XG_HOST_DEVICE static inline double xg_impact_bound(double termweight, double scale,
                                     uint32_t code)
{
    return termweight * ((double)code * scale);
}

#endif
