/** @file intercept.h
 *  @brief The point where `xapian-gpu serve` may answer a client's
 *         message itself instead of relaying it to xapian-progsrv.
 *
 *  The relay (relay.c) hands every whole client message here before it
 *  forwards it.  Today nothing is handled: every message goes to the
 *  stock child.  The next step answers MSG_QUERY and MSG_GETMSET from the
 *  router (plugin/router.h) with REPLY_STATS and REPLY_RESULTS byte for
 *  byte as xapian-progsrv writes them (docs/server.md, "What comes next").
 */
#ifndef XG_SERVE_INTERCEPT_H
#define XG_SERVE_INTERCEPT_H

#include <stddef.h>

/* Xapian 1.4's message and reply types (net/remoteprotocol.h, protocol
 * 39.1), the ones the relay needs by name. */
enum {
    XG_MSG_ALLTERMS = 0,
    XG_MSG_DOCUMENT = 2,
    XG_MSG_QUERY = 8,
    XG_MSG_TERMLIST = 9,
    XG_MSG_POSITIONLIST = 10,
    XG_MSG_POSTLIST = 11,
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

/* A growable byte buffer holding p[off, len). */
struct xg_sbuf {
    unsigned char *p;
    size_t off, len, cap;
};
/* Append n bytes; 0, or -1 when out of memory. */
int xg_sbuf_append(struct xg_sbuf *b, const void *data, size_t n);
/* Append a whole frame: type, encode_length(n), the payload. */
int xg_sbuf_frame(struct xg_sbuf *b, unsigned type, const void *payload,
                  size_t n);
void xg_sbuf_free(struct xg_sbuf *b);

enum xg_serve_verdict {
    XG_SERVE_NOT_HANDLED = 0, /* relay the message to the child */
    XG_SERVE_HANDLED = 1      /* answered: the replies are in *reply */
};

/* One connection's interception state (today: none). */
struct xg_serve_icpt;
struct xg_serve_icpt *xg_serve_icpt_open(void);
void xg_serve_icpt_close(struct xg_serve_icpt *s);

/* A whole client message of `type` with its payload.  Returns
 * XG_SERVE_HANDLED after appending whole reply frames to *reply, or
 * XG_SERVE_NOT_HANDLED (*reply untouched): the relay forwards the message
 * to the xapian-progsrv child unchanged.  Today: always NOT_HANDLED. */
int xg_serve_intercept(struct xg_serve_icpt *s, unsigned type,
                       const unsigned char *payload, size_t n,
                       struct xg_sbuf *reply);

#endif
