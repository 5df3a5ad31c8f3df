/** @file engines.h
 *  @brief The engines `serve` answers searches with: one context (index,
 *         GPU engine, dispatcher) that every new connection takes, and,
 *         with --reexport, a thread that writes a new index when the
 *         database moves past it and puts a context on it in place.
 *
 *  A connection keeps the context it started with until it closes (its
 *  Xapian handles are at that context's revision), so a swap never
 *  changes the answers a connection gets mid-way; the old context closes
 *  when its last connection does.  The routes line counts every context.
 */
#ifndef XG_SERVE_ENGINES_H
#define XG_SERVE_ENGINES_H

#include "../context.h"

struct xg_serve_opts;
struct xg_serve_engines;

/* Open the first context (o->engine not XAPIAN) and, with o->reexport,
 * start the re-export thread.  0, or 1 after a line on stderr. */
int xg_serve_engines_open(const struct xg_serve_opts *o,
                          struct xg_serve_engines **out);

/* Stop the thread, log the routes of every context, close them (no
 * connection may hold one). */
void xg_serve_engines_close(struct xg_serve_engines *e);

/* The current context, held until release (NULL e: NULL). */
xg_context *xg_serve_engines_acquire(struct xg_serve_engines *e);
void xg_serve_engines_release(struct xg_serve_engines *e, xg_context *ctx);

/* The current context, for the ready line (not held). */
xg_context *xg_serve_engines_current(struct xg_serve_engines *e);

#endif
