/** @file select_cases.h
 *  @brief Selection inputs that stress topk's bins, and the check of a
 *         selection's output against brute force.  tests/test_select.c
 *         runs the twin on them; tests/gpu/test_kernel_topk.c the kernel
 *         against the twin.  Header-only, no harness of its own: the
 *         caller passes its random source and reports the failure.
 *
 *  The cases: impact rows of random 32-bit bounds, of a log bin's lower
 *  half under 8 values on the next bin's edge, of small integers with
 *  heavy ties, of values near 2^32; exact rows of BM25-sized sums, of sums
 *  past the top log bin, of sums below its bottom (and matches of weight
 *  0), of a bin's lower half under the next edge; an AND row;
 *  intersection candidates, many and few; a row that needs no round.
 *  Several have a candidate room of 64, so the rounds go as deep as they
 *  can.  Three impact rows (1, 2, 11) are sparse: the selection reads
 *  their nonzero documents from a touched list, shuffled.
 */
#ifndef XG_TESTS_SELECT_CASES_H
#define XG_TESTS_SELECT_CASES_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../gpu/query/topk.h"

#define SC_DOCS 100003u         /* odd: rows start at every offset mod 4 */
#define SC_QUERIES 12u
#define SC_ICAND 50000u         /* intersection items of each such query */

struct select_case {
    struct xg_dquery q[SC_QUERIES];
    int must_fit[SC_QUERIES];   /* 1: the selection may not overflow */
    double *acc;                /* SC_QUERIES rows of SC_DOCS */
    uint32_t *mask;
    uint32_t icount[SC_QUERIES];
    struct xg_dcand *icand;     /* SC_ICAND a query, at icand_first */
    uint32_t *touched;          /* sparse: SC_DOCS a query, at touch_first */
    uint64_t cand_room;         /* candidates of all queries */
};

/* Log bin b's lower edge (topk.h's first round). */
static inline double sc_edge_of(uint32_t b, int irow)
{
    double lo, hi;
    xg_select_log_range(b, irow, INFINITY, &lo, &hi);
    return lo;
}

/* The weight of item i of query qi (dense: document i), 0 if unmatched. */
static inline int sc_item(const struct select_case *c, uint32_t qi,
                          uint64_t i, double *w, uint32_t *doc)
{
    const struct xg_dquery *q = &c->q[qi];
    if (q->path != XG_DPATH_DENSE) {
        *w = c->icand[q->icand_first + i].weight;
        *doc = c->icand[q->icand_first + i].doc;
        return 1;
    }
    const uint32_t d = q->sparse ? c->touched[q->touch_first + i] : (uint32_t)i;
    const uint32_t m = c->mask[q->slot * SC_DOCS + d];
    *doc = d;
    if (q->impact_row) {
        *w = m;
        return m != 0;
    }
    const double a = c->acc[q->slot * SC_DOCS + d];
    if (q->all_groups ? (m & q->all_groups) != q->all_groups
                      : (!m && a == 0.0))
        return 0;
    *w = a;
    return 1;
}

static inline uint64_t sc_items(const struct select_case *c, uint32_t qi)
{
    return c->q[qi].path == XG_DPATH_DENSE && !c->q[qi].sparse ? SC_DOCS
                                                               : c->icount[qi];
}

/* Fill c with the cases; r returns 64 random bits.  0, or -1 without
 * memory. */
static inline int select_case_make(struct select_case *c,
                                   uint64_t (*r)(void))
{
    memset(c, 0, sizeof *c);
    c->acc = calloc((size_t)SC_QUERIES * SC_DOCS, sizeof *c->acc);
    c->mask = calloc((size_t)SC_QUERIES * SC_DOCS, sizeof *c->mask);
    c->icand = calloc((size_t)SC_QUERIES * SC_ICAND, sizeof *c->icand);
    c->touched = calloc((size_t)SC_QUERIES * SC_DOCS, sizeof *c->touched);
    if (!c->acc || !c->mask || !c->icand || !c->touched) return -1;
    static const uint32_t caps[SC_QUERIES] = {4096, 64,   4096, 64, 4096, 64,
                                              64,   64,   4096, 64, 64,   4096};
    for (uint32_t qi = 0; qi < SC_QUERIES; ++qi) {
        struct xg_dquery *q = &c->q[qi];
        q->path = qi == 9 || qi == 10 ? XG_DPATH_INTERSECT : XG_DPATH_DENSE;
        q->k = qi == 2 ? 1000 : 10;
        q->slot = qi;
        q->cand_cap = caps[qi];
        q->cand_first = c->cand_room;
        c->cand_room += q->cand_cap;
        q->icand_first = (uint64_t)qi * SC_ICAND;
        q->impact_row = qi <= 3 || qi == 11;
        q->margin = qi == 0 ? 300.0 : 0.0;
        q->all_groups = qi == 8 ? 3u : 0u;
        /* The lists' bound (xg_dquery): none, but case 11's is tight. */
        q->match_bound = qi == 11 ? (SC_DOCS + 99) / 100 : SC_DOCS;
        c->must_fit[qi] = qi != 2;
        /* Cases 1 and 7: a bin B and the next one's edge.  A round that
         * took that edge into B's range would count its 8 twice and cut
         * above all of B's items, the k-th among them. */
        const uint32_t b1 = 1500u + (uint32_t)(r() % 500),
                       b7 = 300u + (uint32_t)(r() % 1500);
        const double edge1_lo = sc_edge_of(b1, 1), edge1_hi = sc_edge_of(b1 + 1, 1),
                     span1 = (edge1_hi - edge1_lo) / 2;
        const double edge7_lo = sc_edge_of(b7, 0), edge7_hi = sc_edge_of(b7 + 1, 0),
                     span7 = (edge7_hi - edge7_lo) / 2;
        double *acc = c->acc + (uint64_t)qi * SC_DOCS;
        uint32_t *mask = c->mask + (uint64_t)qi * SC_DOCS;
        for (uint32_t d = 0; d < SC_DOCS; ++d) {
            const uint64_t x = r(), y = r();
            const uint32_t pct = (uint32_t)(x % 100);
            switch (qi) {
            case 0:     /* random bounds on 40% */
                if (pct < 40) mask[d] = 1u + (uint32_t)(y % 0xFFFFFFFEull);
                break;
            case 1:     /* 8 on a log edge, 5,000 in the lower half of
                         * the bin below (impact.h's integers) */
                if (d < 8) {
                    mask[d] = (uint32_t)edge1_hi;
                } else if (d < 5008) {
                    mask[d] = (uint32_t)(edge1_lo +
                                         (double)(y % (uint64_t)span1));
                }
                break;
            case 2:     /* 1..200 on 90% */
                if (pct < 90) mask[d] = 1u + (uint32_t)(y % 200);
                break;
            case 3:     /* near 2^32 on 50% */
                if (pct < 50) mask[d] = 0xFFFFFFFFu - (uint32_t)(y % (1u << 20));
                break;
            case 4:     /* sums of BM25 weights on half */
                if (pct < 50) {
                    acc[d] = (double)(y >> 11) * 0x1p-53 * 30.0;
                    mask[d] = 1;
                }
                break;
            case 5:     /* past the top log bin, and a few small */
                if (pct < 40) {
                    acc[d] = 4096.0 + (double)(y >> 11) * 0x1p-53 * 1e6;
                    mask[d] = 1;
                } else if (pct < 45) {
                    acc[d] = 1.0 + (double)(y % 100);
                    mask[d] = 1;
                }
                break;
            case 6:     /* below the bottom log bin, and weight 0 */
                if (pct < 40) {
                    acc[d] = 1e-9 * (double)(1 + y % 100000);
                    mask[d] = 1;
                } else if (pct < 50) {
                    mask[d] = 1;
                }
                break;
            case 7:     /* the same with sums of weights */
                if (d < 8) {
                    acc[d] = edge7_hi;
                    mask[d] = 1;
                } else if (d < 5008) {
                    acc[d] = edge7_lo + (double)(y >> 11) * 0x1p-53 * span7;
                    mask[d] = 1;
                }
                break;
            case 8:     /* AND: both groups on 60% of 70% */
                if (pct < 70) {
                    acc[d] = (double)(y >> 11) * 0x1p-53 * 20.0;
                    mask[d] = (y & 7) < 5 ? 3u : 1u;
                }
                break;
            case 11:    /* 1,001 matches: no round */
                if (d % 100 == 0) mask[d] = 1u + (uint32_t)(y % 5000);
                break;
            default:
                break;
            }
        }
        if (qi == 1 || qi == 2 || qi == 11) {
            /* Sparse: the nonzero documents, shuffled (the kernel lists
             * them in any order). */
            q->sparse = 1;
            q->touch_first = (uint64_t)qi * SC_DOCS;
            uint32_t *t = c->touched + q->touch_first, n = 0;
            for (uint32_t d = 0; d < SC_DOCS; ++d)
                if (mask[d]) t[n++] = d;
            for (uint32_t i = n; i > 1; --i) {
                const uint32_t j = (uint32_t)(r() % i), x = t[i - 1];
                t[i - 1] = t[j];
                t[j] = x;
            }
            c->icount[qi] = n;
        }
        if (q->path == XG_DPATH_INTERSECT) {
            c->icount[qi] = qi == 9 ? SC_ICAND : 7;
            struct xg_dcand *ic = c->icand + q->icand_first;
            for (uint32_t i = 0; i < c->icount[qi]; ++i) {
                ic[i].doc = i * 2 + 1;
                ic[i].matched = 1;
                ic[i].weight = (double)(r() >> 11) * 0x1p-53 * 20.0;
            }
        }
    }
    return 0;
}

static inline void select_case_free(struct select_case *c)
{
    free(c->acc);
    free(c->mask);
    free(c->icand);
    free(c->touched);
    memset(c, 0, sizeof *c);
}

static int sc_by_doc(const void *x, const void *y)
{
    const uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

static int sc_by_weight_desc(const void *x, const void *y)
{
    const double a = *(const double *)x, b = *(const double *)y;
    return a > b ? -1 : a < b;
}

/* Check query qi's result and candidates (out at cand_first) against
 * brute force: the match count and largest weight; the candidates are
 * exactly the items at or above the reported threshold (or, on overflow,
 * their count is over the room); the k-th largest weight is at or above
 * it.  0, or -1 with `why` set. */
static inline int select_case_check(const struct select_case *c, uint32_t qi,
                                    const struct xg_dqresult *res,
                                    const struct xg_dcand *out, char *why,
                                    size_t why_len)
{
    const struct xg_dquery *q = &c->q[qi];
    const uint64_t n = sc_items(c, qi);
    double *ws = malloc(n * sizeof *ws);
    uint32_t *want = malloc(n * sizeof *want), *got = NULL;
    int rc = -1;
    if (!ws || !want) {
        snprintf(why, why_len, "out of memory");
        goto done;
    }
    uint64_t m = 0, w_n = 0;
    double S = 0, w;
    uint32_t doc;
    for (uint64_t i = 0; i < n; ++i)
        if (sc_item(c, qi, i, &w, &doc)) {
            ws[m++] = w;
            if (w > S) S = w;
            if (res->threshold < 0 || w >= res->threshold) want[w_n++] = doc;
        }
    if (res->matched != m || res->max_score != S) {
        snprintf(why, why_len, "q%u: matched %llu, largest %.17g; brute "
                 "force %llu, %.17g", qi, (unsigned long long)res->matched,
                 res->max_score, (unsigned long long)m, S);
        goto done;
    }
    if (res->overflow != (w_n > q->cand_cap) ||
        res->n_cand != (w_n < q->cand_cap ? w_n : q->cand_cap)) {
        snprintf(why, why_len, "q%u: %u candidates, overflow %u; %llu items "
                 "at or above the threshold %.17g, room %u", qi, res->n_cand,
                 res->overflow, (unsigned long long)w_n, res->threshold,
                 q->cand_cap);
        goto done;
    }
    if (res->overflow && c->must_fit[qi]) {
        snprintf(why, why_len, "q%u: overflowed (%llu items at or above the "
                 "threshold %.17g, room %u)", qi, (unsigned long long)w_n,
                 res->threshold, q->cand_cap);
        goto done;
    }
    qsort(ws, m, sizeof *ws, sc_by_weight_desc);
    if (m > q->k && res->threshold >= 0 && ws[q->k - 1] < res->threshold) {
        snprintf(why, why_len, "q%u: the k-th weight %.17g is below the "
                 "threshold %.17g", qi, ws[q->k - 1], res->threshold);
        goto done;
    }
    if (!res->overflow) {
        got = malloc((res->n_cand + 1) * sizeof *got);
        if (!got) {
            snprintf(why, why_len, "out of memory");
            goto done;
        }
        for (uint32_t j = 0; j < res->n_cand; ++j)
            got[j] = out[q->cand_first + j].doc;
        qsort(got, res->n_cand, sizeof *got, sc_by_doc);
        qsort(want, w_n, sizeof *want, sc_by_doc);
        for (uint32_t j = 0; j < res->n_cand; ++j)
            if (got[j] != want[j]) {
                snprintf(why, why_len, "q%u: candidate %u is document %u, "
                         "brute force %u", qi, j, got[j], want[j]);
                goto done;
            }
    }
    rc = 0;
done:
    free(ws);
    free(want);
    free(got);
    return rc;
}

#endif
