/** @file intercept.c
 *  @brief The interception point of the relay (intercept.h) and the
 *         byte buffer it shares with it.
 */
#include "intercept.h"

#include <stdlib.h>
#include <string.h>

#include "wire.h"

int xg_sbuf_append(struct xg_sbuf *b, const void *data, size_t n)
{
    if (b->off && b->off == b->len) b->off = b->len = 0;
    if (b->len + n > b->cap) {
        if (b->off) {   /* slide the unread bytes to the front first */
            memmove(b->p, b->p + b->off, b->len - b->off);
            b->len -= b->off;
            b->off = 0;
        }
        if (b->len + n > b->cap) {
            size_t cap = b->cap ? b->cap : 4096;
            while (cap < b->len + n) {
                if (cap > SIZE_MAX / 2) return -1;
                cap *= 2;
            }
            unsigned char *p = realloc(b->p, cap);
            if (!p) return -1;
            b->p = p;
            b->cap = cap;
        }
    }
    if (n) memcpy(b->p + b->len, data, n);
    b->len += n;
    return 0;
}

int xg_sbuf_frame(struct xg_sbuf *b, unsigned type, const void *payload,
                  size_t n)
{
    unsigned char h[XG_WIRE_HDR_MAX];
    size_t hn = xg_wire_encode_header(type, n, h);
    return xg_sbuf_append(b, h, hn) || xg_sbuf_append(b, payload, n) ? -1 : 0;
}

void xg_sbuf_free(struct xg_sbuf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

struct xg_serve_icpt {
    int unused;
};

struct xg_serve_icpt *xg_serve_icpt_open(void)
{
    return calloc(1, sizeof(struct xg_serve_icpt));
}

void xg_serve_icpt_close(struct xg_serve_icpt *s)
{
    free(s);
}

int xg_serve_intercept(struct xg_serve_icpt *s, unsigned type,
                       const unsigned char *payload, size_t n,
                       struct xg_sbuf *reply)
{
    (void)s; (void)type; (void)payload; (void)n; (void)reply;
    return XG_SERVE_NOT_HANDLED;
}
