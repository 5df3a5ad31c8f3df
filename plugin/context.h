/** @file context.h
 *  @brief Internals of the accelerator context (context.c) shared with its
 *         C++ glue (accelerate.cc): the planner's answer for one query, the
 *         searcher pool, and the route counters.
 */
#ifndef XG_CONTEXT_H
#define XG_CONTEXT_H

#include "searcher.h"
#include "xapian-gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The planner: answer `xq` for its top k.  XG_OK with *route set: for
 * XG_ROUTE_GPU and XG_ROUTE_CPU `out` holds the exact top k (docids,
 * weights); for the XG_ROUTE_STOCK_* routes `out` is empty and the caller
 * lets stock Xapian answer.  The route is counted.  Other return values
 * are errors (out of memory). */
int xg_context_answer(xg_context *ctx, const xg_xquery *xq, uint32_t k,
                      struct xg_result *out, int *route);

/* Count a route decided outside xg_context_answer (the weighting check). */
void xg_context_count(xg_context *ctx, int route);

/* The verified index (NULL when every query goes to stock). */
const struct xg_index *xg_context_index(const xg_context *ctx);
const struct xg_context_opts *xg_context_options(const xg_context *ctx);

/* A searcher with its own Xapian handles for this thread's parsing and
 * stock matching; give it back when done, from the same thread.  The
 * thread keeps it for its next take (no lock), the pool gets it back when
 * the thread ends, and the context closes every searcher it made. */
int xg_context_take(xg_context *ctx, xg_searcher **out);
void xg_context_give(xg_context *ctx, xg_searcher *s);

/* Open searchers until n are idle in the pool (a harness opens them for
 * its threads before its clock starts, as xapian-gpu ab does). */
int xg_context_reserve(xg_context *ctx, unsigned n);

#ifdef __cplusplus
}
#endif
#endif
