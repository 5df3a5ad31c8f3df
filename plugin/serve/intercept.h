/** @file intercept.h
 *  @brief The point where `xapian-gpu serve` may answer a client's
 *         message itself instead of relaying it to xapian-progsrv.
 *
 *  The relay (relay.c) hands every whole client message here before it
 *  forwards it.  A search the engines serve (MSG_QUERY, then MSG_GETMSET)
 *  is answered by search.c; every other message goes to the stock child.
 */
#ifndef XG_SERVE_INTERCEPT_H
#define XG_SERVE_INTERCEPT_H

#include <stddef.h>

#include "../xapian-gpu.h"
#include "wire.h"

/* Xapian 1.4's message and reply types (net/remoteprotocol.h, protocol
 * 39.1), the ones the relay needs by name. */
enum {
    XG_MSG_ALLTERMS = 0,
    XG_MSG_DOCUMENT = 2,
    XG_MSG_QUERY = 8,
    XG_MSG_TERMLIST = 9,
    XG_MSG_POSITIONLIST = 10,
    XG_MSG_POSTLIST = 11,
    XG_MSG_REOPEN = 12,
    XG_MSG_UPDATE = 13,
    XG_MSG_GETMSET = 26,
    XG_MSG_SHUTDOWN = 27,
    XG_MSG_METADATAKEYLIST = 28,
    XG_MSG_MAX = 36
};
enum {
    XG_REPLY_UPDATE = 0,
    XG_REPLY_EXCEPTION = 1,
    XG_REPLY_DONE = 2,
    XG_REPLY_STATS = 11,
    XG_REPLY_RESULTS = 18,
    XG_REPLY_MAX = 23
};

enum xg_serve_verdict {
    XG_SERVE_CLOSE = -1,      /* a fault: close the connection (the reason
                                 is in xg_last_error()) */
    XG_SERVE_NOT_HANDLED = 0, /* relay the message to the child */
    XG_SERVE_HANDLED = 1,     /* answered: the replies are in *reply */
    XG_SERVE_REPLAY = 2       /* a MSG_GETMSET the engines did not answer:
                                 the child gets *replay (its MSG_QUERY)
                                 first, its REPLY_STATS is dropped, then it
                                 gets this message */
};

/* One connection's interception state over ctx (not owned; NULL: relay
 * everything).  NULL when out of memory. */
struct xg_serve_icpt;
struct xg_serve_icpt *xg_serve_icpt_open(xg_context *ctx);
void xg_serve_icpt_close(struct xg_serve_icpt *s);
/* Whether a request is under way here (a search between its REPLY_STATS
 * and its MSG_GETMSET): the connection is not idle. */
int xg_serve_icpt_busy(const struct xg_serve_icpt *s);

/* Between messages, with nothing from the client waiting: work ahead
 * (a search answered before its MSG_GETMSET: search.h).  0, or -1 out of
 * memory (close the connection). */
int xg_serve_icpt_ahead(struct xg_serve_icpt *s);

/* A whole client message of `type` with its payload: an enum
 * xg_serve_verdict.  Replies go to *reply, a replayed MSG_QUERY frame to
 * *replay. */
int xg_serve_intercept(struct xg_serve_icpt *s, unsigned type,
                       const unsigned char *payload, size_t n,
                       struct xg_sbuf *reply, struct xg_sbuf *replay);

#endif
