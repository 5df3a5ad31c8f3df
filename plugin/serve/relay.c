/** @file relay.c
 *  @brief One connection of `xapian-gpu serve`: a xapian-progsrv child,
 *         and the frame-aware relay between it and the client.
 *
 *  Both directions are parsed into whole frames (wire.h).  Each client
 *  message goes to xg_serve_intercept first, then, not handled, to the
 *  child; each reply frame goes back whole.  A search the engines did not
 *  answer after all is replayed: the child gets its MSG_QUERY, its
 *  REPLY_STATS (which the client already has) is dropped, then it gets
 *  the MSG_GETMSET.  The relay tracks the requests
 *  awaiting their last reply (a FIFO of message types) so that it knows
 *  when the connection is idle: for the idle timeout and for a graceful
 *  stop, which waits for the requests in flight.  Any fault closes this
 *  connection alone, with one line on stderr.
 */
#include "relay.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../gpu/runtime/error.h"
#include "children.h"
#include "engines.h"
#include "fd_pass.h"
#include "intercept.h"
#include "wire.h"

/* Stop reading a side while this much waits to go the other way. */
#define HIGH_WATER (1u << 20)
/* A reply frame larger than this is a broken child. */
#define MAX_REPLY ((uint64_t)1 << 32)
/* Requests awaiting their last reply (a client does not pipeline). */
#define FIFO_MAX 256

struct relay {
    struct xg_serve_conn *c;
    const struct xg_serve_opts *o;
    struct xg_serve_child ch;   /* its xapian-progsrv */
    struct xg_sbuf cin, cout;   /* from the client; to the client */
    struct xg_sbuf kin, kout;   /* to the child; from the child */
    struct xg_serve_icpt *icpt;
    struct xg_sbuf held;        /* a replayed search's MSG_GETMSET, sent
                                   once the child's REPLY_STATS is dropped */
    int replaying;
    unsigned char fifo[FIFO_MAX];
    unsigned head, count;
    int shutdown_sent;          /* the client sent MSG_SHUTDOWN */
    int heard;                  /* the client sent a byte */
    int passed;                 /* connect handed the client's socket over */
    int child_eof;
    double last;                /* last byte from the client */
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static size_t pending(const struct xg_sbuf *b)
{
    return b->len - b->off;
}


static void fifo_push(struct relay *r, unsigned type)
{
    r->fifo[(r->head + r->count) % FIFO_MAX] = (unsigned char)type;
    ++r->count;
}

/* Whether reply `type` is the last one for the request `req`. */
static int is_last_reply(unsigned req, unsigned type)
{
    if (type == XG_REPLY_EXCEPTION) return 1;
    switch (req) {
    case XG_MSG_ALLTERMS:
    case XG_MSG_DOCUMENT:
    case XG_MSG_TERMLIST:
    case XG_MSG_POSITIONLIST:
    case XG_MSG_POSTLIST:
    case XG_MSG_METADATAKEYLIST:
        return type == XG_REPLY_DONE;
    case XG_MSG_QUERY:   /* REPLY_STATS, the client's MSG_GETMSET, then: */
        return type == XG_REPLY_RESULTS;
    default:
        return 1;
    }
}

static void log_conn(const struct relay *r, const char *what)
{
    xg_serve_log("connection %lu (%s): %s", r->c->id, r->c->peer, what);
}

/* Every whole client message in cin: intercepted, or forwarded.  0, or
 * -1 after logging why the connection must close. */
static int client_frames(struct relay *r)
{
    for (;;) {
        const unsigned char *p = r->cin.p + r->cin.off;
        size_t n = pending(&r->cin);
        struct xg_wire_frame f;
        int rc = xg_wire_parse_header(p, n, r->o->max_message, &f);
        if (rc == XG_WIRE_NEED_MORE) return 0;
        if (rc == XG_WIRE_BAD) {
            log_conn(r, "malformed message length; closed");
            return -1;
        }
        if (rc == XG_WIRE_TOO_LONG) {
            char m[160];
            snprintf(m, sizeof m, "message type %u of %llu bytes exceeds the "
                     "%llu-byte limit; closed", f.type,
                     (unsigned long long)f.payload,
                     (unsigned long long)r->o->max_message);
            log_conn(r, m);
            return -1;
        }
        if (n - f.header < f.payload) return 0;
        size_t whole = f.header + (size_t)f.payload;
        if (r->shutdown_sent) {
            log_conn(r, "message after MSG_SHUTDOWN; closed");
            return -1;
        }
        const int v = xg_serve_intercept(r->icpt, f.type, p + f.header,
                                         (size_t)f.payload, &r->cout, &r->kin);
        if (v == XG_SERVE_CLOSE) {
            char m[300];
            snprintf(m, sizeof m, "%s; closed", xg_last_error());
            log_conn(r, m);
            return -1;
        }
        if (v == XG_SERVE_HANDLED) {
            r->cin.off += whole;
            continue;
        }
        if (v == XG_SERVE_REPLAY) {
            /* kin now ends with the MSG_QUERY; this MSG_GETMSET waits
             * for the child's REPLY_STATS. */
            if (xg_sbuf_append(&r->held, p, whole)) {
                log_conn(r, "out of memory; closed");
                return -1;
            }
            r->replaying = 1;
            r->cin.off += whole;
            if (r->count == FIFO_MAX) {
                log_conn(r, "too many requests in flight; closed");
                return -1;
            }
            fifo_push(r, XG_MSG_QUERY);
            continue;
        }
        if (xg_sbuf_append(&r->kin, p, whole)) {
            log_conn(r, "out of memory; closed");
            return -1;
        }
        r->cin.off += whole;
        if (f.type == XG_MSG_SHUTDOWN) {
            r->shutdown_sent = 1;
        } else if (f.type != XG_MSG_GETMSET || !r->count ||
                   r->fifo[r->head] != XG_MSG_QUERY) {
            if (r->count == FIFO_MAX) {
                log_conn(r, "too many requests in flight; closed");
                return -1;
            }
            fifo_push(r, f.type);
        }
    }
}

/* Every whole reply in kout goes to cout; the FIFO learns which requests
 * are answered.  0, or -1 after logging. */
static int child_frames(struct relay *r)
{
    for (;;) {
        const unsigned char *p = r->kout.p + r->kout.off;
        size_t n = pending(&r->kout);
        struct xg_wire_frame f;
        int rc = xg_wire_parse_header(p, n, MAX_REPLY, &f);
        if (rc == XG_WIRE_NEED_MORE) return 0;
        if (rc != XG_WIRE_OK) {
            log_conn(r, "xapian-progsrv sent a malformed reply; closed");
            return -1;
        }
        if (n - f.header < f.payload) return 0;
        size_t whole = f.header + (size_t)f.payload;
        if (r->replaying) {
            /* The client has this search's REPLY_STATS from us already
             * (the child's are the same statistics): drop it, and send
             * the MSG_GETMSET that waited.  An exception instead ends the
             * search: the client gets it, the MSG_GETMSET is dropped. */
            r->replaying = 0;
            int stats = f.type == XG_REPLY_STATS;
            if (stats && xg_sbuf_append(&r->kin, r->held.p + r->held.off,
                                        pending(&r->held))) {
                log_conn(r, "out of memory; closed");
                return -1;
            }
            r->held.off = r->held.len = 0;
            if (stats) {
                r->kout.off += whole;
                continue;
            }
        }
        if (xg_sbuf_append(&r->cout, p, whole)) {
            log_conn(r, "out of memory; closed");
            return -1;
        }
        r->kout.off += whole;
        if (r->count && is_last_reply(r->fifo[r->head], f.type)) {
            r->head = (r->head + 1) % FIFO_MAX;
            --r->count;
        }
    }
}

/* Read what fd has into b: >0 bytes read, 0 end of input, -1 error (errno),
 * -2 nothing now. */
static ssize_t fill(int fd, struct xg_sbuf *b)
{
    unsigned char tmp[65536];
    ssize_t got = read(fd, tmp, sizeof tmp);
    if (got < 0) return errno == EAGAIN || errno == EINTR ? -2 : -1;
    if (got > 0 && xg_sbuf_append(b, tmp, (size_t)got)) {
        errno = ENOMEM;
        return -1;
    }
    return got;
}

/* The client's bytes, as fill().  A Unix connection's first byte is read
 * alone, to see whether connect hands its client's socket over with it
 * (fd_pass.h): then the client is on that socket from now on, and the
 * Unix connection closes. */
static ssize_t client_fill(struct relay *r)
{
    if (!r->c->unix_conn || r->heard || r->passed)
        return fill(r->c->fd, &r->cin);
    unsigned char b;
    int fd;
    int got = xg_fd_pass_recv(r->c->fd, &b, &fd);
    if (got < 0) return errno == EAGAIN ? -2 : -1;
    if (got == 0) return 0;
    if (fd >= 0 && b == XG_FD_PASS_BYTE && !pending(&r->cout) &&
        !xg_fd_set_nonblock(fd)) {
        close(r->c->fd);
        r->c->fd = fd;
        r->passed = 1;
        snprintf(r->c->peer, sizeof r->c->peer, "unix, handed over");
        return -2;
    }
    if (fd >= 0) close(fd);
    if (xg_sbuf_append(&r->cin, &b, 1)) {
        errno = ENOMEM;
        return -1;
    }
    return 1;
}

/* Write what b holds to fd: 0, or -1 error (errno). */
static int drain(int fd, struct xg_sbuf *b, int sock)
{
    while (pending(b)) {
        ssize_t w = sock ? send(fd, b->p + b->off, pending(b), MSG_NOSIGNAL)
                         : write(fd, b->p + b->off, pending(b));
        if (w < 0) return errno == EAGAIN || errno == EINTR ? 0 : -1;
        b->off += (size_t)w;
    }
    return 0;
}

/* Send what waits for the client now, without waiting for poll to say
 * the socket is writable (it nearly always is: a reply costs one poll
 * less).  What does not fit waits for POLLOUT.  0, or -1 after logging. */
static int flush_client(struct relay *r)
{
    if (!pending(&r->cout) || !drain(r->c->fd, &r->cout, 1)) return 0;
    char m[120];
    snprintf(m, sizeof m, "client went away mid-reply (%s); closed",
             strerror(errno));
    log_conn(r, m);
    return -1;
}

/* The same toward the child: what the client's messages left for it. */
static void flush_child(struct relay *r)
{
    if (pending(&r->kin) && r->ch.to_child >= 0 &&
        drain(r->ch.to_child, &r->kin, 0)) {
        /* The child's end closed: it ended; its stdout tells. */
        r->kin.off = r->kin.len;
        r->child_eof = 1;
    }
}

static void describe_exit(char *m, size_t size, const char *what, int st)
{
    if (WIFSIGNALED(st))
        snprintf(m, size, "%s (xapian-progsrv killed by signal %d); closed",
                 what, WTERMSIG(st));
    else
        snprintf(m, size, "%s (xapian-progsrv exit status %d); closed", what,
                 WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

static void relay_loop(struct relay *r)
{
    const struct xg_serve_opts *o = r->o;
    int stopping = 0, client_eof = 0;
    double drain_end = 0;
    r->last = now();
    fifo_push(r, XG_MSG_UPDATE);    /* the greeting, REPLY_UPDATE */
    for (;;) {
        int idle = !r->count && !pending(&r->cin) && !pending(&r->cout) &&
                   !pending(&r->kin) && !xg_serve_icpt_busy(r->icpt);
        if (r->child_eof && !pending(&r->cout)) {
            if (r->shutdown_sent) return;       /* the normal end */
            int st = xg_serve_child_reap(&r->ch);
            char m[160];
            describe_exit(m, sizeof m, pending(&r->kout) ?
                          "reply cut short" : "the child ended", st);
            log_conn(r, m);
            return;
        }
        if (stopping && idle) {
            if (o->verbose) log_conn(r, "closed: the server stops");
            return;
        }
        double t = now(), wake = -1;
        if (stopping) {
            if (t >= drain_end) {
                log_conn(r, "requests still in flight when the server "
                         "stopped; closed");
                return;
            }
            wake = drain_end;
        }
        if (o->timeout > 0 && !r->count && !pending(&r->cout) &&
            !r->shutdown_sent && !xg_serve_icpt_busy(r->icpt)) {
            /* Idle, or a message arriving too slowly. */
            double end = r->last + o->timeout;
            if (t >= end) {
                log_conn(r, pending(&r->cin) ? "message cut short: no more "
                         "data within the timeout; closed" : "idle timeout; "
                         "closed");
                return;
            }
            if (wake < 0 || end < wake) wake = end;
        }
        struct pollfd pf[4];
        int n = 0, ic = -1, ik = -1, ok = -1, is = -1;
        short ev = 0;
        if (!client_eof && pending(&r->kin) < HIGH_WATER && !r->shutdown_sent)
            ev |= POLLIN;
        if (pending(&r->cout)) ev |= POLLOUT;
        if (ev) {
            ic = n;
            pf[n++] = (struct pollfd){r->c->fd, ev, 0};
        }
        if (!r->child_eof && pending(&r->cout) < HIGH_WATER) {
            ik = n;
            pf[n++] = (struct pollfd){r->ch.from_child, POLLIN, 0};
        }
        if (pending(&r->kin) && r->ch.to_child >= 0) {
            ok = n;
            pf[n++] = (struct pollfd){r->ch.to_child, POLLOUT, 0};
        }
        if (!stopping) {
            is = n;
            pf[n++] = (struct pollfd){r->c->sh->stop_fd, POLLIN, 0};
        }
        int ms = -1;
        if (wake >= 0) ms = (int)((wake - t) * 1000) + 1;
        int got = poll(pf, (nfds_t)n, ms);
        if (got < 0) {
            if (errno == EINTR) continue;
            log_conn(r, "poll failed; closed");
            return;
        }
        if (is >= 0 && pf[is].revents) {
            stopping = 1;
            drain_end = now() + o->drain;
        }
        if (ic >= 0 && (pf[ic].revents & (POLLIN | POLLHUP | POLLERR))) {
            ssize_t g = (pf[ic].events & POLLIN) ? client_fill(r) : -2;
            if (g > 0) {
                r->last = now();
                r->heard = 1;
                if (client_frames(r) || flush_client(r)) return;
                flush_child(r);
                /* The client reads what went out; nothing of its next
                 * message is here yet. */
                if (!pending(&r->cin) && xg_serve_icpt_ahead(r->icpt)) {
                    log_conn(r, "out of memory; closed");
                    return;
                }
            } else if (g == 0 || (g == -1 && (errno == ECONNRESET))) {
                client_eof = 1;
                if (pending(&r->cin)) {
                    log_conn(r, "client closed the connection mid-message; "
                             "closed");
                    return;
                }
                /* Only its own request counts: the greeting does not (a
                 * client that connects and leaves is a probe). */
                if (r->count && !r->shutdown_sent && r->heard) {
                    log_conn(r, "client closed the connection with a request "
                             "in flight; closed");
                    return;
                }
                if (!r->shutdown_sent) {
                    /* Gone without MSG_SHUTDOWN, between requests. */
                    if (o->verbose) log_conn(r, "client left");
                    return;
                }
            } else if (g == -1) {
                char m[120];
                snprintf(m, sizeof m, "read from client: %s; closed",
                         strerror(errno));
                log_conn(r, m);
                return;
            }
        }
        if (ik >= 0 && (pf[ik].revents & (POLLIN | POLLHUP | POLLERR))) {
            ssize_t g = fill(r->ch.from_child, &r->kout);
            if (g > 0) {
                if (child_frames(r) || flush_client(r)) return;
            } else if (g == 0 || g == -1) {
                r->child_eof = 1;
            }
        }
        if (ok >= 0 && pf[ok].revents) flush_child(r);
        if (ic >= 0 && (pf[ic].events & POLLOUT) &&
            (pf[ic].revents & (POLLOUT | POLLHUP | POLLERR)) &&
            flush_client(r))
            return;
    }
}

void xg_serve_relay(struct xg_serve_conn *c)
{
    xg_context *ctx = NULL;     /* the engines this connection keeps */
    struct relay r;
    memset(&r, 0, sizeof r);
    r.c = c;
    r.o = c->sh->o;
    r.ch.to_child = r.ch.from_child = -1;
    if (xg_fd_set_nonblock(c->fd)) {
        log_conn(&r, "cannot set the socket non-blocking; closed");
    } else if (!(r.icpt = xg_serve_icpt_open(
                     ctx = xg_serve_engines_acquire(c->sh->engines)))) {
        log_conn(&r, "out of memory; closed");
    } else if (xg_serve_child_get(c->sh->children, r.o, &r.ch)) {
        char m[200];
        snprintf(m, sizeof m, "cannot start %s: %s; closed", r.o->progsrv,
                 strerror(errno));
        log_conn(&r, m);
    } else {
        if (r.o->verbose) log_conn(&r, "open");
        relay_loop(&r);
    }
    shutdown(c->fd, SHUT_RDWR);
    close(c->fd);
    xg_serve_child_reap(&r.ch);
    xg_serve_icpt_close(r.icpt);
    xg_serve_engines_release(c->sh->engines, ctx);
    xg_sbuf_free(&r.held);
    xg_sbuf_free(&r.cin);
    xg_sbuf_free(&r.cout);
    xg_sbuf_free(&r.kin);
    xg_sbuf_free(&r.kout);
    free(c);
}

void xg_serve_log(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "xapian-gpu serve: %s\n", line);
}
