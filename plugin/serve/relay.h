/** @file relay.h
 *  @brief One connection of `xapian-gpu serve`: the server's options, the
 *         state its connections share, and the relay that runs each of
 *         them (relay.c) between the client and its xapian-progsrv child.
 */
#ifndef XG_SERVE_RELAY_H
#define XG_SERVE_RELAY_H

#include <stdint.h>

#include "../xapian-gpu.h"

struct xg_serve_opts {
    const char *host;       /* TCP address to bind; NULL: every address */
    int port;               /* TCP port, 0: any free one, -1: no TCP */
    const char *unix_path;  /* Unix socket path, NULL: none */
    double timeout;         /* seconds a connection may be idle, 0: no limit */
    unsigned max_conn;      /* connections at once; more are closed at once */
    uint64_t max_message;   /* a client message's payload limit, bytes */
    double drain;           /* seconds in-flight requests get after SIGTERM */
    const char *progsrv;    /* the xapian-progsrv program */
    int engine;             /* enum xg_engine: XG_ENGINE_XAPIAN relays
                               every message; AUTO, GPU or CPU answer the
                               searches they serve (search.h) */
    uint64_t device_memory; /* bytes of GPU memory; 0: the default */
    double gpu_spin_ms;     /* the context's wait_spin_ms */
    int gpu_lanes;          /* the context's gpu_lanes */
    double batch_wait_ms;   /* how long a GPU batch waits for company; 0:
                               none, a batch leaves when a lane is free */
    char **dbs;             /* the databases, ndb of them */
    int ndb;
    int verbose;            /* log each connection's open and close */
    int reexport;           /* write a new index when the database moves
                               past it, and serve from it (engines.h) */
    int spare_children;     /* xapian-progsrv children kept started ahead
                               for new connections (children.h); 0: none */
    int threads;            /* searches answered on the host's CPU at once
                               (the CPU matcher, in-process stock); 0: no
                               limit */
    double reexport_every;  /* seconds between its checks (0: 2) */
};

/* The relay's shared state (relay.c, server.c). */
struct xg_serve_shared {
    const struct xg_serve_opts *o;
    int stop_fd;            /* readable once the server stops */
    struct xg_serve_engines *engines;   /* NULL: relay everything */
    struct xg_serve_children *children; /* the spares; NULL: none */
};

/* One accepted connection: relay it until it ends, then close it, reap
 * its child and free c (relay.c). */
struct xg_serve_conn {
    const struct xg_serve_shared *sh;
    int fd;
    int unix_conn;      /* accepted on the Unix socket: connect may hand
                           its client's socket over (fd_pass.h) */
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
