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

#include <stdint.h>

struct xg_serve_opts {
    const char *host;       /* TCP address to bind; NULL: every address */
    int port;               /* TCP port, 0: any free one, -1: no TCP */
    const char *unix_path;  /* Unix socket path, NULL: none */
    double timeout;         /* seconds a connection may be idle, 0: no limit */
    unsigned max_conn;      /* connections at once; more are closed at once */
    uint64_t max_message;   /* a client message's payload limit, bytes */
    double drain;           /* seconds in-flight requests get after SIGTERM */
    const char *progsrv;    /* the xapian-progsrv program */
    char **dbs;             /* the databases, ndb of them */
    int ndb;
    int verbose;            /* log each connection's open and close */
};

/* Serve until SIGTERM or SIGINT: 0 after a clean stop, 1 when a socket
 * cannot be set up (one line on stderr). */
int xg_serve_run(const struct xg_serve_opts *o);

/* The relay's shared state (relay.c, server.c). */
struct xg_serve_shared {
    const struct xg_serve_opts *o;
    int stop_fd;            /* readable once the server stops */
};

/* One accepted connection: relay it until it ends, then close it, reap
 * its child and free c (relay.c). */
struct xg_serve_conn {
    const struct xg_serve_shared *sh;
    int fd;
    unsigned long id;
    char peer[80];
};
void xg_serve_relay(struct xg_serve_conn *c);

/* "xapian-gpu serve: " + the message, one line on stderr. */
void xg_serve_log(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

#endif
