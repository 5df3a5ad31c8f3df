/** @file wire.c
 *  @brief Xapian 1.4's remote-protocol length codec and frame headers
 *         (wire.h).
 */
#include "wire.h"

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
