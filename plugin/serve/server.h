/** @file server.h
 *  @brief `xapian-gpu serve`: a Xapian 1.4 remote-protocol server over TCP
 *         and a Unix socket (docs/server.md).
 *
 *  One thread per connection.  Each connection gets a stock
 *  `xapian-progsrv DB...` child whose stdin/stdout speak the protocol; the
 *  thread parses the frames both ways, offers each client message to
 *  xg_serve_intercept (intercept.h), and relays the rest to the child and
 *  each reply back.
 */
#ifndef XG_SERVE_SERVER_H
#define XG_SERVE_SERVER_H

#include "relay.h"

/* Serve until SIGTERM or SIGINT: 0 after a clean stop, 1 when a socket
 * cannot be set up (one line on stderr). */
int xg_serve_run(const struct xg_serve_opts *o);

#endif
