/** @file children.h
 *  @brief serve's xapian-progsrv children (children.c): each connection's
 *         own, taken from a few started ahead when they are known to hold
 *         the databases' current revision, else started for it.
 *
 *  Starting xapian-progsrv (exec, loading libxapian, opening the
 *  databases) takes about a millisecond or two, where xapian-tcpsrv only
 *  forks: a program that connects for each request (Omega's CGI, a PHP
 *  page) would pay it every time.  A spare was started before its
 *  connection came, so it must show what a child started then would: it
 *  is handed over only while every database's glass version file (which
 *  holds its uuid and revision, rewritten by each commit) is what it was
 *  before the spare started.  Databases without one (chert, a single-file
 *  or stub database) get no spares.
 */
#ifndef XG_SERVE_CHILDREN_H
#define XG_SERVE_CHILDREN_H

#include <sys/types.h>

#include "relay.h"

struct xg_serve_child {
    pid_t pid;              /* 0: none */
    int to_child;           /* its stdin, non-blocking */
    int from_child;         /* its stdout, non-blocking */
};

struct xg_serve_children;

/* Keep o->spare_children spares (a thread starts them); *out NULL when
 * there are to be none (0 asked, or a database without a version file).
 * -1 (logged) if the thread cannot start. */
int xg_serve_children_open(const struct xg_serve_opts *o,
                           struct xg_serve_children **out);
/* Stop the thread; every spare's stdin closed, each reaped. */
void xg_serve_children_close(struct xg_serve_children *c);

/* A child for a new connection: a live spare of the current revision,
 * else one started now (c may be NULL).  0, or -1 with errno. */
int xg_serve_child_get(struct xg_serve_children *c,
                       const struct xg_serve_opts *o,
                       struct xg_serve_child *out);

/* Close its pipes (xapian-progsrv exits at the end of its input), give it
 * up to 2 s, then kill it; always reaped.  Its wait status. */
int xg_serve_child_reap(struct xg_serve_child *ch);

/* How many connections a spare served, and how many spares were found
 * stale at a hand-over (a commit since they started) and replaced. */
void xg_serve_children_counts(const struct xg_serve_children *c,
                              unsigned long *taken, unsigned long *stale);

#endif
