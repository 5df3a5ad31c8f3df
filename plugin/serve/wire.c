/** @file wire.c
 *  @brief Xapian 1.4's remote-protocol codec (wire.h): lengths, frame
 *         headers, doubles, and the buffer and reader messages use.
 */
#include "wire.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

size_t xg_wire_encode_length(uint64_t v, unsigned char *out)
{
    if (v < 255) {
        out[0] = (unsigned char)v;
        return 1;
    }
    size_t n = 0;
    out[n++] = 0xff;
    v -= 255;
    for (;;) {
        unsigned char b = (unsigned char)(v & 0x7f);
        v >>= 7;
        if (!v) {
            out[n++] = (unsigned char)(b | 0x80);
            return n;
        }
        out[n++] = b;
    }
}

int xg_wire_decode_length(const unsigned char *p, size_t n, uint64_t *v,
                          size_t *used)
{
    if (n == 0) return XG_WIRE_NEED_MORE;
    if (p[0] != 0xff) {
        *v = p[0];
        *used = 1;
        return XG_WIRE_OK;
    }
    uint64_t x = 0;
    for (size_t i = 1, shift = 0;; ++i, shift += 7) {
        if (shift > 63) return XG_WIRE_BAD;   /* more than ten groups */
        if (i >= n) return XG_WIRE_NEED_MORE;
        uint64_t bits = p[i] & 0x7fu;
        /* The group must not lose bits beyond 64. */
        if (shift == 63 && bits > 1) return XG_WIRE_BAD;
        x |= bits << shift;
        if (p[i] & 0x80) {
            if (x > UINT64_MAX - 255) return XG_WIRE_BAD;
            *v = x + 255;
            *used = i + 1;
            return XG_WIRE_OK;
        }
    }
}

int xg_wire_parse_header(const unsigned char *p, size_t n, uint64_t max_payload,
                         struct xg_wire_frame *f)
{
    if (n < 2) return XG_WIRE_NEED_MORE;
    uint64_t len;
    size_t used;
    int rc = xg_wire_decode_length(p + 1, n - 1, &len, &used);
    if (rc != XG_WIRE_OK) return rc;
    f->type = p[0];
    f->header = 1 + used;
    f->payload = len;
    return len > max_payload ? XG_WIRE_TOO_LONG : XG_WIRE_OK;
}

size_t xg_wire_encode_header(unsigned type, uint64_t len, unsigned char *out)
{
    out[0] = (unsigned char)type;
    return 1 + xg_wire_encode_length(len, out + 1);
}

/* floor(e / 8) and its remainder in 0..7, for negative e too. */
static int exp_base256(int e, int *rem)
{
    int q = e >= 0 ? e / 8 : -((-e + 7) / 8);
    *rem = e - 8 * q;
    return q;
}

size_t xg_wire_encode_double(double v, unsigned char *out)
{
    if (isnan(v) || isinf(v)) return 0;
    const unsigned char sign = signbit(v) && v != 0 ? 0x80 : 0;
    if (v < 0) v = -v;
    /* v = m * 256^exp with 1 <= m < 256 (m = 0 for v = 0). */
    int e, rem;
    double m = frexp(v, &e);
    const int exp = exp_base256(e - 1, &rem);
    m = scalbn(m, rem + 1);
    size_t n = 0;
    if (exp >= -7 && exp <= 6) {
        out[n++] = (unsigned char)((exp + 7) | sign);
    } else if (exp >= -128 && exp < 127) {
        out[n++] = (unsigned char)(0x0e | sign);
        out[n++] = (unsigned char)(exp + 128);
    } else if (exp >= -32768 && exp <= 32767) {
        out[n++] = (unsigned char)(0x0f | sign);
        out[n++] = (unsigned char)((unsigned)(exp + 32768) & 0xff);
        out[n++] = (unsigned char)((unsigned)(exp + 32768) >> 8);
    } else {
        return 0;
    }
    const size_t first = n;
    for (int left = 8; left > 0; --left) {
        const unsigned char byte = (unsigned char)m;
        out[n++] = byte;
        m = (m - byte) * 256.0;
        if (m == 0.0) break;
    }
    if (n - first > 1) out[0] |= (unsigned char)((n - first - 1) << 4);
    return n;
}

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

int xg_sbuf_put_length(struct xg_sbuf *b, uint64_t v)
{
    unsigned char tmp[XG_WIRE_LEN_MAX];
    return xg_sbuf_append(b, tmp, xg_wire_encode_length(v, tmp));
}

int xg_sbuf_put_double(struct xg_sbuf *b, double v)
{
    unsigned char tmp[XG_WIRE_DOUBLE_MAX];
    size_t n = xg_wire_encode_double(v, tmp);
    return n ? xg_sbuf_append(b, tmp, n) : -1;
}

int xg_sbuf_put_string(struct xg_sbuf *b, const void *s, size_t n)
{
    return xg_sbuf_put_length(b, n) || xg_sbuf_append(b, s, n) ? -1 : 0;
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


uint64_t xg_wire_read_length(struct xg_wire_reader *r)
{
    uint64_t v;
    size_t used;
    if (r->bad ||
        xg_wire_decode_length(r->p, (size_t)(r->end - r->p), &v, &used)) {
        r->bad = 1;
        return 0;
    }
    r->p += used;
    return v;
}

unsigned xg_wire_read_byte(struct xg_wire_reader *r)
{
    if (r->bad || r->p == r->end) {
        r->bad = 1;
        return 0;
    }
    return *r->p++;
}

const unsigned char *xg_wire_read_string(struct xg_wire_reader *r, size_t *n)
{
    uint64_t len = xg_wire_read_length(r);
    if (r->bad || len > (uint64_t)(r->end - r->p)) {
        r->bad = 1;
        *n = 0;
        return r->end;
    }
    const unsigned char *s = r->p;
    r->p += len;
    *n = (size_t)len;
    return s;
}

double xg_wire_read_double(struct xg_wire_reader *r)
{
    if (r->bad || r->end - r->p < 2) {
        r->bad = 1;
        return 0.0;
    }
    const unsigned char first = *r->p++;
    if (first == 0 && *r->p == 0) {
        ++r->p;
        return 0.0;
    }
    const size_t mlen = ((first >> 4) & 7u) + 1;
    int exp = first & 0x0f;
    if (exp >= 14) {
        int big = xg_wire_read_byte(r);
        if (exp == 15) big |= (int)xg_wire_read_byte(r) << 8;
        exp = exp == 15 ? big - 32768 : big - 128;
    } else {
        exp -= 7;
    }
    if (r->bad || (size_t)(r->end - r->p) < mlen) {
        r->bad = 1;
        return 0.0;
    }
    double v = 0.0;
    for (size_t i = mlen; i-- > 0;) v = v / 256.0 + r->p[i];
    r->p += mlen;
    v = scalbn(v, exp * 8);
    return first & 0x80 ? -v : v;
}
