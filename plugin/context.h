/** @file context.h
 *  @brief Internals of the accelerator context (context.c) shared with its
 *         C++ glue (accelerate.cc): its router, its index, and the pool of
 *         per-thread handles.
 */
#ifndef XG_CONTEXT_H
#define XG_CONTEXT_H

#include "handle.h"
#include "router.h"
#include "xapian-gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* xg_context_open for a caller that sends the engines' answers as they
 * are, not through Enquire (xapian-gpu serve): its router's front is
 * XG_FRONT_REMOTE. */
int xg_context_open_remote(const char *const *db_paths, size_t n_paths,
                           const char *index_path,
                           const struct xg_context_opts *o, xg_context **out);

/* The router that answers the context's queries (XG_FRONT_ENQUIRE, or
 * XG_FRONT_REMOTE). */
xg_router *xg_context_router(xg_context *ctx);

/* The verified index (NULL when every query goes to stock). */
const struct xg_index *xg_context_index(const xg_context *ctx);
/* Why there is none: XG_ERR_STALE, another status, or XG_OK. */
int xg_context_index_rc(const xg_context *ctx);
const struct xg_context_opts *xg_context_options(const xg_context *ctx);

/* A handle with its own Xapian handles for this thread's parsing and
 * stock matching; give it back when done, from the same thread.  The
 * thread keeps it for its next take (no lock), the pool gets it back when
 * the thread ends, and the context closes every handle it made. */
int xg_context_take(xg_context *ctx, xg_handle **out);
void xg_context_give(xg_context *ctx, xg_handle *h);

/* A handle of the caller's own, opened now (so at the database's current
 * revision; with no index when that is not the index's), never pooled:
 * xg_handle_close() it. */
int xg_context_open_handle(xg_context *ctx, xg_handle **out);

/* Open handles until n are idle in the pool (a harness opens them for
 * its threads before its clock starts, as xapian-gpu ab does). */
int xg_context_reserve(xg_context *ctx, unsigned n);

#ifdef __cplusplus
}
#endif
#endif
