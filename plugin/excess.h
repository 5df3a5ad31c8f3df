/** @file excess.h
 *  @brief The GPU's measured excess wait (dispatch.c, docs/plugin.md): how
 *         much longer than the cost model predicted recent GPU-routed
 *         queries took from submit to their caller running again.  The
 *         planner adds it to the GPU's predicted latency.
 *
 *  Each sample moves the estimate a quarter of the way to the sample's
 *  excess; without samples it halves every XG_EXCESS_HALF_LIFE seconds,
 *  so a GPU that stopped getting queries is tried again.  Lock-free:
 *  racing updates may lose a sample, which an estimate can afford.
 */
#ifndef XG_EXCESS_H
#define XG_EXCESS_H

#include <stdatomic.h>
#include <stdint.h>

#define XG_EXCESS_HALF_LIFE 0.05   /* seconds */

struct xg_excess {
    _Atomic int64_t ns;             /* the estimate, nanoseconds */
    _Atomic uint64_t at_ns;         /* when it was last updated */
};

/* The estimate as of t (seconds on one clock), decayed since its last
 * update; 0 before the first sample (a zeroed struct). */
double xg_excess_at(struct xg_excess *x, double t);

/* A query came back `waited` seconds after its submit at t - waited; the
 * model had predicted `predicted`. */
void xg_excess_note(struct xg_excess *x, double t, double waited, double predicted);

#endif
