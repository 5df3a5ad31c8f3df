/** @file bm25.h
 *  @brief The one BM25: Xapian 1.4.22's BM25Weight, bit for bit.
 *
 *  Mirrors xapian-core/weight/bm25weight.cc (init, get_sumpart,
 *  get_maxpart, get_sumextra) with the operation order written out in
 *  xapian-notes.md §1.  Every caller (the CPU matcher, the export's block
 *  upper bounds, the GPU kernels and the tests) goes through these
 *  functions; nothing else spells out the formula.
 *
 *  Exactness: compile kernels with --fmad=false; termweight is computed on
 *  the host with glibc log() only (CUDA's log is not bit-identical).
 */
#ifndef XG_BM25_H
#define XG_BM25_H

#include <stdint.h>

#include "query_shape.h"

#include "runtime/host_device.h"

/* Per-query, per-leaf constants (BM25Weight::init(factor)). */
struct xg_bm25_term {
    double termweight;  /* log(tw) * factor * k3 part * (k1 + 1) */
};

/* The collection statistics a query is weighed with when they are not the
 * index's own: a remote client that combines several shards sends the
 * whole collection's with its search (MSG_GETMSET), and every shard weighs
 * with those.  NULL wherever one is taken means the index's own. */
struct xg_weigh_stats {
    uint64_t n_docs, total_length;
    const uint64_t *leaf_termfreq;  /* per leaf of the query */
};

/* Per-query constants shared by every leaf. */
struct xg_bm25_query {
    double k1, k2, b, min_normlen;
    double len_factor;  /* 1/avlen, or 0 (see init) */
    double query_length;/* for k2's sumextra */
};

#ifndef __CUDACC__
#include <math.h>

/* BM25Weight::init(factor) for one leaf: global N, the term's global
 * termfreq, the leaf's wqf and its factor (struct xg_qleaf; 1.0 outside
 * OP_SCALE_WEIGHT), with no relevance set.  Host only (glibc log). */
static inline double xg_bm25_termweight(const struct xg_bm25_params *p,
                                        uint64_t n_docs, uint64_t termfreq,
                                        uint32_t wqf, double factor)
{
    /* (N - tf) is unsigned arithmetic in Xapian, then + 0.5 in double. */
    double tw = (double)(uint32_t)(n_docs - termfreq) + 0.5;
    tw = tw / ((double)termfreq + 0.5);
    if (tw < 2) tw = tw * 0.5 + 1;
    /* The factor scales log(tw) before the wqf and k1 multiplications,
     * as in bm25weight.cc; any other place can differ in the last bit. */
    double termweight = log(tw) * factor;
    if (p->k3 != 0) {
        double wqf_double = wqf;
        termweight *= (p->k3 + 1) * wqf_double / (p->k3 + wqf_double);
    }
    termweight *= (p->k1 + 1);
    return termweight;
}

/* The query-wide part of BM25Weight::init: len_factor from avlen. */
static inline void xg_bm25_query_init(const struct xg_bm25_params *p,
                                      uint64_t n_docs, uint64_t total_length,
                                      uint32_t query_length,
                                      struct xg_bm25_query *q)
{
    q->k1 = p->k1;
    q->k2 = p->k2;
    q->b = p->b;
    q->min_normlen = p->min_normlen;
    q->query_length = query_length;
    if (p->k2 == 0 && (p->b == 0 || p->k1 == 0)) {
        q->len_factor = 0;
    } else {
        /* Weight::Internal::get_average_length(): double(total) / N. */
        double avlen = n_docs ? (double)total_length / (double)n_docs : 0.0;
        q->len_factor = avlen;
        if (q->len_factor != 0) q->len_factor = 1 / q->len_factor;
    }
}
#endif

/* The per-document part of get_sumpart's denominator,
 * K_d = k1 * (max(len * len_factor, min_normlen) * b + (1 - b)),
 * in Xapian's operation order; the GPU precomputes it once per document. */
XG_HOST_DEVICE static inline double
xg_bm25_kd(const struct xg_bm25_query *q, uint32_t doclen)
{
    double normlen = (double)doclen * q->len_factor;
    if (normlen < q->min_normlen) normlen = q->min_normlen;
    return q->k1 * (normlen * q->b + (1 - q->b));
}

/* The query-independent part of get_sumpart, wdf / (K_d + wdf): what the
 * index's impacts quantize (format.h, struct xg_fmt_impact). */
XG_HOST_DEVICE static inline double xg_bm25_wdf_part(double kd, uint32_t wdf)
{
    double wdf_double = wdf;
    double denom = kd + wdf_double;
    return wdf_double / denom;
}

/* BM25Weight::get_sumpart(wdf, len) given K_d: termweight * (wdf / (K_d +
 * wdf)).  Kernels must be built with --fmad=false so no step is fused. */
XG_HOST_DEVICE static inline double
xg_bm25_sumpart_kd(double termweight, double kd, uint32_t wdf)
{
    return termweight * xg_bm25_wdf_part(kd, wdf);
}

/* BM25Weight::get_sumpart(wdf, len). */
XG_HOST_DEVICE static inline double
xg_bm25_sumpart(const struct xg_bm25_query *q, double termweight,
                uint32_t wdf, uint32_t doclen)
{
    return xg_bm25_sumpart_kd(termweight, xg_bm25_kd(q, doclen), wdf);
}

/* BM25Weight::get_maxpart() for a list or block whose wdf never exceeds
 * wdf_max and whose doc lengths are at least doclen_lb.  Upper bound only. */
XG_HOST_DEVICE static inline double
xg_bm25_maxpart(const struct xg_bm25_query *q, double termweight,
                uint32_t wdf_max, uint32_t doclen_lb)
{
    double denom = q->k1;
    if (q->k1 != 0.0 && q->b != 0.0) {
        uint32_t l = wdf_max > doclen_lb ? wdf_max : doclen_lb;
        double normlen_lb = (double)l * q->len_factor;
        if (normlen_lb < q->min_normlen) normlen_lb = q->min_normlen;
        denom *= (normlen_lb * q->b + (1 - q->b));
    }
    denom += wdf_max;
    return termweight * (wdf_max / denom);
}

/* BM25Weight::get_sumextra(len): the term-independent part (k2 != 0). */
XG_HOST_DEVICE static inline double
xg_bm25_sumextra(const struct xg_bm25_query *q, uint32_t doclen)
{
    double normlen = (double)doclen * q->len_factor;
    if (normlen < q->min_normlen) normlen = q->min_normlen;
    return (2.0 * q->k2 * q->query_length) / (1.0 + normlen);
}

#endif
