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
xg_plan_eval_syn(const struct xg_plan_op *ops, uint32_t n_ops,
                 const uint8_t *matched, const double *w,
                 const uint8_t *passed, const double *syn_w,
                 uint8_t *stack_m, double *stack_w, double *out);

XG_HOST_DEVICE static inline int
xg_plan_eval(const struct xg_plan_op *ops, uint32_t n_ops,
             const uint8_t *matched, const double *w, const uint8_t *passed,
             uint8_t *stack_m, double *stack_w, double *out)
{
    return xg_plan_eval_syn(ops, n_ops, matched, w, passed, NULL, stack_m,
                            stack_w, out);
}

/* xg_plan_eval where a synonym's weight is known: syn_w[s] for synonym s
 * (NULL: its OR's, as xg_plan_eval leaves it).  Serve's bounds give each
 * synonym its maxpart this way. */
XG_HOST_DEVICE static inline int
xg_plan_eval_syn(const struct xg_plan_op *ops, uint32_t n_ops,
                 const uint8_t *matched, const double *w,
                 const uint8_t *passed, const double *syn_w,
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
             * leaves' (all 0).  Left as its OR's unless given. */
            if (syn_w && stack_m[sp - 1]) stack_w[sp - 1] = syn_w[op.arg];
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

/* OrPostList::get_termfreq_est_using_stats(): the estimate of l's and r's
 * OR, l + r - l r / N, as a doccount. */
static inline int64_t xg_or_termfreq_est(int64_t l, int64_t r, double docs)
{
    double est = (double)l + (double)r - ((double)l * (double)r / docs);
    return (int64_t)(uint32_t)(est + 0.5);
}

/* Each synonym's termfreq estimate from a plan (the statistics' termfreqs
 * tf[] of the leaves, docs documents): est[s] of synonym s, or -1 where
 * its tree is not ORs of leaves; live[s] = 1 where some leaf below it has
 * a posting here (local_tf[i] > 0: else Xapian's OR of them is empty and
 * makes no synonym). */
static inline void xg_plan_syn_termfreqs(const struct xg_plan_op *ops,
                                         uint32_t n_ops, const uint64_t *tf,
                                         const uint64_t *local_tf,
                                         double docs, int64_t *est,
                                         uint8_t *live, int64_t *stack_e,
                                         uint8_t *stack_l)
{
    uint32_t sp = 0;
    for (uint32_t i = 0; i < n_ops; ++i) {
        const struct xg_plan_op op = ops[i];
        if (op.kind == XG_PLAN_LEAF) {
            stack_e[sp] = (int64_t)tf[op.arg];
            stack_l[sp++] = local_tf[op.arg] != 0;
        } else if (op.kind == XG_PLAN_SYN) {
            est[op.arg] = stack_e[sp - 1];
            live[op.arg] = stack_l[sp - 1];
        } else if (op.kind == XG_PLAN_OR2) {
            const int64_t l = stack_e[sp - 2], r = stack_e[sp - 1];
            stack_l[sp - 2] |= stack_l[sp - 1];
            stack_e[sp - 2] = l < 0 || r < 0 ? -1
                                             : xg_or_termfreq_est(l, r, docs);
            --sp;
        } else {
            const uint32_t n = op.kind == XG_PLAN_AND ? op.arg
                               : op.kind == XG_PLAN_FILTER ? 1 : 2;
            for (uint32_t j = 1; j < n; ++j)
                stack_l[sp - n] |= stack_l[sp - n + j];
            sp -= n - 1;
            stack_e[sp - 1] = -1;
        }
    }
}

#endif
