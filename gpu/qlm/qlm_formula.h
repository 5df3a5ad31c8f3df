/** @file qlm_formula.h
 *  @brief Eq. 2 of seed 002, one definition for the CPU twin, the future
 *         kernel and (spelled the same way) the tests' Python reference.
 *
 *  P = lambda * (x / y) + (1 - lambda) * (z / w), in double, in exactly
 *  this order: the two quotients, the two products, the sum.  No fused
 *  multiply-add (the host build targets x86-64 without FMA; nvcc must run
 *  with --fmad=false) and no reassociation, so every engine and Python's
 *  floats give the same bits.
 */
#ifndef XG_QLM_FORMULA_H
#define XG_QLM_FORMULA_H

#include <stdint.h>

#include "../runtime/host_device.h"

/* x = f(t_1^n, d), y = f(t_1^{n-1}, d), z = f(t_1^n, C),
 * w = f(t_1^{n-1}, C); y, w > 0 whenever x > 0. */
XG_HOST_DEVICE static inline double
xg_qlm_prob(double lambda, uint64_t x, uint64_t y, uint64_t z, uint64_t w)
{
    const double doc = (double)x / (double)y;
    const double col = (double)z / (double)w;
    const double a = lambda * doc;
    const double b = (1.0 - lambda) * col;
    return a + b;
}

#endif
