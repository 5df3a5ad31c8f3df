/** @file impact.c
 *  @brief The impact encoder (see impact.h).
 */
#include "impact.h"

#include <math.h>
#include <stdlib.h>

#include "../bm25.h"
#include "../runtime/buf.h"
#include "../runtime/error.h"

void xg_impact_encode(const double *g, uint32_t n, uint8_t *codes,
                      double *scale)
{
    double gmax = 0;
    for (uint32_t i = 0; i < n; ++i)
        if (g[i] > gmax) gmax = g[i];
    double s = gmax / XG_IMPACT_MAX;
    /* Rounding may leave 255 * s just below gmax: nudge s up. */
    while (s > 0 && XG_IMPACT_MAX * s < gmax) s = nextafter(s, 1.0);
    *scale = s;
    for (uint32_t i = 0; i < n; ++i) {
        if (s == 0 || g[i] <= 0) {
            codes[i] = 0;
            continue;
        }
        uint32_t c = (uint32_t)ceil(g[i] / s);
        if (c > XG_IMPACT_MAX) c = XG_IMPACT_MAX;
        /* The smallest c with c * s >= g, checked in the arithmetic the
         * matcher uses (the division above may be one off either way). */
        while (c > 1 && (double)(c - 1) * s >= g[i]) --c;
        while ((double)c * s < g[i]) ++c;
        codes[i] = (uint8_t)c;
    }
}

int xg_impact_list(const uint32_t *dense, const uint32_t *wdfs, uint32_t n,
                   const double *kd, struct xg_buf *codes,
                   struct xg_fmt_impact *entry)
{
    int rc = xg_buf_reserve(codes, n);
    if (rc) return rc;
    double *g = malloc((n ? n : 1) * sizeof *g);
    if (!g) return xg_set_error(XG_ERR_NOMEM, "out of memory (impacts)");
    for (uint32_t i = 0; i < n; ++i)
        g[i] = xg_bm25_wdf_part(kd[dense[i]], wdfs[i]);
    entry->code_offset = codes->len;
    xg_impact_encode(g, n, codes->data + codes->len, &entry->scale);
    codes->len += n;
    free(g);
    return XG_OK;
}

void xg_impact_units(const double *weight, const double *scale, uint32_t n,
                     uint32_t *mult, double *margin, double *unit)
{
    double sum = 0;
    for (uint32_t l = 0; l < n; ++l) sum += weight[l] * scale[l];
    const double u = sum * XG_IMPACT_MAX / 2147483648.0;
    *unit = u;
    *margin = 0;
    for (uint32_t l = 0; l < n; ++l) {
        const double ws = weight[l] * scale[l];
        double m = u > 0 ? ceil(ws / u) : 0;
        while (m * u < ws) ++m;   /* the division may round down */
        mult[l] = (uint32_t)m;
        /* Per list, code * mult exceeds weight * g / u by less than
         * mult + 255 * (mult - weight * scale / u) <= mult + 256 (the
         * division's slack); + 1 for the match bit. */
        *margin += m + XG_IMPACT_MAX + 2;
    }
}
