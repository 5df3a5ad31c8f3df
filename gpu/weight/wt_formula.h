/** @file wt_formula.h
 *  @brief The two per-posting formulas of the weight pipeline, shared by
 *         the CPU twin and the kernel, and their host-side constants.
 *
 *  xapian: BM25Weight of Xapian 1.4.22 through gpu/bm25.h (the one BM25):
 *  termweight per term (glibc log, host), K_d per document (host),
 *  w = termweight * (tf / (K_d + tf)) [+ sumextra(len) when k2 != 0].
 *  seed: seed 000 eq. 1 in this operation order:
 *  idf = log((N + 0.5) / (df + 0.5))            per term, host
 *  K_d = k1 * ((1 - b) + b * (L_d / L_ave))     per document, host
 *  w   = (idf * ((k1 + 1) * tf)) / (K_d + tf)   per posting
 *  Kernels are built with --fmad=false, so both engines give the same bits.
 */
#ifndef XG_WT_FORMULA_H
#define XG_WT_FORMULA_H

#include "../bm25.h"
#include "../runtime/host_device.h"

/* One posting's weight: tw and kd from the host tables, extra per
 * document (0 unless the xapian formula has k2 != 0). */
XG_HOST_DEVICE static inline double
xg_wt_weight(int seed, double k1p1, double tw, double kd, double extra,
             uint32_t tf)
{
    if (seed) {
        double tf_double = tf;
        return (tw * (k1p1 * tf_double)) / (kd + tf_double);
    }
    double w = xg_bm25_sumpart_kd(tw, kd, tf);
    if (extra != 0) w = w + extra;
    return w;
}

#ifndef __CUDACC__
#include <math.h>

/* Per term (df = documents containing it). */
static inline double xg_wt_term_const(int seed, const struct xg_bm25_params *p,
                                      uint64_t n_docs, uint64_t df)
{
    if (seed) return log(((double)n_docs + 0.5) / ((double)df + 0.5));
    return xg_bm25_termweight(p, n_docs, df, 1, 1.0);
}

/* Per document of `len` words: K_d, and the k2 extra part (or 0). */
static inline double xg_wt_doc_const(int seed, const struct xg_bm25_params *p,
                                     const struct xg_bm25_query *q,
                                     double avlen, uint32_t len, double *extra)
{
    *extra = 0;
    if (seed) return p->k1 * ((1 - p->b) + p->b * ((double)len / avlen));
    if (p->k2 != 0) *extra = xg_bm25_sumextra(q, len);
    return xg_bm25_kd(q, len);
}
#endif
#endif
