/** @file value_range.c
 *  @brief See value_range.h.  The choices and the estimate follow
 *         QueryValueRange::postlist (and _GE's, _LE's) in api/
 *         queryinternal.cc and ValueRangePostList::get_termfreq_est in
 *         matcher/valuerangepostlist.cc at v1.4.22.
 */
#include "value_range.h"

#include <string.h>

#include "../runtime/error.h"

/* std::string's operator< in byte order: <0, 0, >0. */
static int cmp_bytes(const void *a, uint32_t na, const void *b, uint32_t nb)
{
    const int c = memcmp(a, b, na < nb ? na : nb);
    if (c) return c;
    return na < nb ? -1 : na > nb;
}

int xg_value_range_holds(const struct xg_index *ix,
                         const struct xg_fmt_value_slot *e,
                         const struct xg_qrange *r, uint32_t d)
{
    const uint32_t n = e ? xg_fmt_value_len(ix, e, d) : 0;
    if (!n) return 0;
    const uint8_t *v = xg_fmt_value_key(ix, e, d);
    if (cmp_bytes(v, n, r->begin, r->begin_len) < 0) return 0;
    return r->kind == XG_QR_GE || cmp_bytes(v, n, r->end, r->end_len) <= 0;
}

/* string_frac(): the bytes after `prefix` as a fraction in [0, 1). */
static double string_frac(const uint8_t *s, uint32_t n, uint32_t prefix)
{
    double f = 1.0, x = 0;
    for (uint32_t i = prefix; i < n; ++i) {
        f /= 256.0;
        x += s[i] * f;
    }
    return x;
}

/* ValueRangePostList::get_termfreq_est(), begin..end (has_end 0: a
 * ValueGePostList), the values spread evenly between the bounds. */
static uint32_t range_est(const struct xg_fmt_value_bounds *b,
                          const uint8_t *begin, uint32_t nb,
                          const uint8_t *end, uint32_t ne, int has_end)
{
    uint32_t cp = 0;
    for (;; ++cp) {
        if (cp == b->lo_len) {
            if (cp != b->hi_len) break;
            return b->freq;     /* one value */
        }
        if (b->lo[cp] != b->hi[cp]) break;
    }
    const double l = string_frac(b->lo, b->lo_len, cp);
    const double h = string_frac(b->hi, b->hi_len, cp);
    const double denom = h - l;
    if (denom == 0.0) {
        if (cmp_bytes(begin, nb, b->lo, b->lo_len) <= 0 &&
            (!has_end || !ne || cmp_bytes(b->hi, b->hi_len, end, ne) <= 0))
            return b->freq;
        return b->freq / 2;
    }
    double x = l, y = h;
    if (cmp_bytes(begin, nb, b->lo, b->lo_len) > 0)
        x = string_frac(begin, nb, cp);
    if (has_end && ne && cmp_bytes(end, ne, b->hi, b->hi_len) < 0)
        y = string_frac(end, ne, cp);
    const double est = (y - x) / denom * b->freq;
    return (uint32_t)(est + 0.5);
}

int xg_value_range_open(const struct xg_index *ix, const struct xg_qrange *r,
                        uint32_t shard, uint32_t shard_doccount, int *list,
                        uint32_t *est)
{
    const struct xg_fmt_value_slot *e;
    *list = XG_VR_EMPTY;
    *est = 0;
    int rc = xg_fmt_value_slot(ix, r->slot, &e);
    if (rc || !e) return rc;
    const struct xg_fmt_value_bounds *b =
        &ix->value_bounds[e->bounds_first + shard];
    if (b->lo_len == 0) return XG_OK;   /* no value on this shard */
    const uint8_t *lo = b->lo, *hi = b->hi;
    const uint8_t *begin = (const uint8_t *)r->begin;
    const uint8_t *end = (const uint8_t *)r->end;
    const uint32_t nb = r->begin_len, ne = r->end_len;
    const int all_have = b->freq == shard_doccount;
    int values_ge = 0;      /* a ValueGePostList from begin */
    if (r->kind == XG_QR_GE) {
        if (cmp_bytes(begin, nb, hi, b->hi_len) > 0) return XG_OK;
        if (cmp_bytes(begin, nb, lo, b->lo_len) <= 0 && all_have) {
            *list = XG_VR_ALL;
            *est = shard_doccount;
            return XG_OK;
        }
        values_ge = 1;
    } else if (r->kind == XG_QR_LE) {
        if (cmp_bytes(end, ne, lo, b->lo_len) < 0) return XG_OK;
        if (cmp_bytes(end, ne, hi, b->hi_len) >= 0 && all_have) {
            *list = XG_VR_ALL;
            *est = shard_doccount;
            return XG_OK;
        }
    } else {
        if (cmp_bytes(end, ne, lo, b->lo_len) < 0 ||
            cmp_bytes(begin, nb, hi, b->hi_len) > 0)
            return XG_OK;
        if (cmp_bytes(end, ne, hi, b->hi_len) >= 0) {
            if (cmp_bytes(begin, nb, lo, b->lo_len) <= 0) {
                if (all_have) {
                    *list = XG_VR_ALL;
                    *est = shard_doccount;
                    return XG_OK;
                }
            }
            values_ge = 1;
        }
    }
    *list = XG_VR_VALUES;
    *est = values_ge ? range_est(b, begin, nb, NULL, 0, 0)
                     : range_est(b, begin, nb, end, ne, 1);
    return XG_OK;
}
