/** @file excess.c
 *  @brief The smoothed, decaying excess wait (excess.h).
 */
#include "excess.h"

#include <math.h>

double xg_excess_at(struct xg_excess *x, double t)
{
    const double e = atomic_load_explicit(&x->ns, memory_order_relaxed) * 1e-9;
    const double age = t - atomic_load_explicit(&x->at_ns, memory_order_relaxed) * 1e-9;
    return age > 0 ? e * exp2(-age / XG_EXCESS_HALF_LIFE) : e;
}

void xg_excess_note(struct xg_excess *x, double t, double waited, double predicted)
{
    const double e = (3 * xg_excess_at(x, t) + (waited - predicted)) / 4;
    atomic_store_explicit(&x->ns, (int64_t)(e * 1e9), memory_order_relaxed);
    atomic_store_explicit(&x->at_ns, (uint64_t)(t * 1e9), memory_order_relaxed);
}
