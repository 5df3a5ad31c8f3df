/** @file plan_eval.h
 *  @brief Evaluate a summation plan (query_shape.h) for one document: the one
 *         place that adds leaf weights in Xapian's postlist-tree order.
 *
 *  Used by the CPU matcher (match_ref.c) and by the GPU exact-finish kernel
 *  (finish.cu), so both add in exactly the same order.  The stack depth
 *  never exceeds the number of leaves.
 */
#ifndef XG_PLAN_EVAL_H
#define XG_PLAN_EVAL_H

#include <stdint.h>

#include "../query_shape.h"

#include "../runtime/host_device.h"

/* Returns 1 and *out = the document's weight if it matches, 0 otherwise.
 * matched[i] / w[i]: leaf i matched and its sumpart; passed[f]: position
 * filter f holds for the document (read only where the plan has filters,
 * and only for a filter whose leaves all matched).  `stack_m` and
 * `stack_w` have room for the plan's number of leaves. */
XG_HOST_DEVICE static inline int
xg_plan_eval(const struct xg_plan_op *ops, uint32_t n_ops,
             const uint8_t *matched, const double *w, const uint8_t *passed,
             uint8_t *stack_m, double *stack_w, double *out)
{
    uint32_t sp = 0;
    for (uint32_t i = 0; i < n_ops; ++i) {
        const struct xg_plan_op op = ops[i];
        if (op.kind == XG_PLAN_LEAF) {
            stack_m[sp] = matched[op.arg];
            stack_w[sp] = w[op.arg];
            ++sp;
        } else if (op.kind == XG_PLAN_OR2) {
            /* OrPostList::get_weight: l, r, or l + r. */
            uint8_t lm = stack_m[sp - 2], rm = stack_m[sp - 1];
            double lw = stack_w[sp - 2], rw = stack_w[sp - 1];
            sp -= 2;
            stack_m[sp] = lm | rm;
            stack_w[sp] = lm && rm ? lw + rw : lm ? lw : rw;
            ++sp;
        } else if (op.kind == XG_PLAN_AND_NOT ||
                   op.kind == XG_PLAN_AND_MAYBE) {
            /* AndNotPostList: l's weight; AndMaybePostList: l (+ r). */
            uint8_t lm = stack_m[sp - 2], rm = stack_m[sp - 1];
            double lw = stack_w[sp - 2], rw = stack_w[sp - 1];
            sp -= 2;
            int maybe = op.kind == XG_PLAN_AND_MAYBE;
            stack_m[sp] = lm && (maybe || !rm);
            stack_w[sp] = maybe && rm ? lw + rw : lw;
            ++sp;
        } else if (op.kind == XG_PLAN_SYN) {
            /* Only the tree matcher runs plans with synonyms
             * (xg_match_needs_tree): their weight is not a sum of the
             * leaves' (all 0).  Left as its OR's. */
        } else if (op.kind == XG_PLAN_FILTER) {
            /* A SelectPostList: the weight is its source's. */
            stack_m[sp - 1] = stack_m[sp - 1] && passed[op.arg];
        } else { /* XG_PLAN_AND: MultiAndPostList, 0 + w0 + w1 + ... */
            uint32_t n = op.arg, base = sp - n;
            double s = 0;
            uint8_t all = 1;
            for (uint32_t j = 0; j < n; ++j) {
                all &= stack_m[base + j];
                s += stack_w[base + j];
            }
            sp = base;
            stack_m[sp] = all;
            stack_w[sp] = s;
            ++sp;
        }
    }
    if (sp != 1) {
        *out = 0;
        return 0;
    }
    *out = stack_w[0];
    return stack_m[0];
}

#endif
