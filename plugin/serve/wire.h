/** @file wire.h
 *  @brief Xapian 1.4's remote-protocol framing: the variable-length
 *         integer of net/length.h, the message frame built on it, and
 *         the doubles of common/serialise-double.cc.
 *
 *  A message is one type byte, encode_length(payload size), the payload.
 *  encode_length(n): n < 255 is the one byte n; otherwise 0xff, then
 *  n - 255 in 7-bit groups, least significant first, the last group's
 *  byte with its top bit set (the other groups' top bits clear).
 *  Also the payload codec (lengths, doubles, strings) messages are made
 *  of, and the byte buffer they are built in.  Reimplemented from the
 *  protocol's description (docs/server.md), not copied;
 *  tests/test_wire.c checks it against bytes Xapian wrote.
 */
#ifndef XG_SERVE_WIRE_H
#define XG_SERVE_WIRE_H

#include <stddef.h>
#include <stdint.h>

/* The longest encode_length of a 64-bit value: 0xff + ten 7-bit groups. */
#define XG_WIRE_LEN_MAX 11
/* The longest frame header: the type byte and the length. */
#define XG_WIRE_HDR_MAX (1 + XG_WIRE_LEN_MAX)

enum xg_wire_status {
    XG_WIRE_OK = 0,
    XG_WIRE_NEED_MORE = 1, /* the bytes so far are a prefix: read more */
    XG_WIRE_BAD = -1,      /* no value fits: too many groups or > 64 bits */
    XG_WIRE_TOO_LONG = -2  /* a frame whose payload is over the limit */
};

/* Write encode_length(v) to out (XG_WIRE_LEN_MAX bytes of room); returns
 * how many bytes it wrote. */
size_t xg_wire_encode_length(uint64_t v, unsigned char *out);

/* Decode one length from the n bytes at p: XG_WIRE_OK with *v and *used
 * (bytes consumed), XG_WIRE_NEED_MORE, or XG_WIRE_BAD. */
int xg_wire_decode_length(const unsigned char *p, size_t n, uint64_t *v,
                          size_t *used);

struct xg_wire_frame {
    unsigned type;      /* the message or reply type byte */
    size_t header;      /* bytes of type + length */
    uint64_t payload;   /* bytes of payload after the header */
};

/* Parse a frame header from the n buffered bytes at p.  XG_WIRE_OK fills
 * *f (the payload may not all be buffered yet: the frame is whole when
 * n >= f->header + f->payload); XG_WIRE_NEED_MORE when the header itself
 * is incomplete; XG_WIRE_BAD for a length no value fits; XG_WIRE_TOO_LONG
 * when the payload exceeds max_payload (f is filled). */
int xg_wire_parse_header(const unsigned char *p, size_t n, uint64_t max_payload,
                         struct xg_wire_frame *f);

/* Write the header of a frame of `type` with a payload of `len` bytes to
 * out (XG_WIRE_HDR_MAX bytes of room); returns its size. */
size_t xg_wire_encode_header(unsigned type, uint64_t len, unsigned char *out);

/* The longest serialise_double: a type byte, two exponent bytes, eight
 * mantissa bytes. */
#define XG_WIRE_DOUBLE_MAX 11

/* Xapian's serialise_double(v) (common/serialise-double.cc): a first byte
 * with the sign, the mantissa's length and a small exponent (or 14/15:
 * one or two exponent bytes follow), then the mantissa base 256, most
 * significant byte first, at most eight bytes, no trailing zero bytes.
 * Writes to out (XG_WIRE_DOUBLE_MAX bytes of room); returns the size, or
 * 0 for a value it cannot encode (infinite or NaN). */
size_t xg_wire_encode_double(double v, unsigned char *out);

/* A growable byte buffer holding p[off, len). */
struct xg_sbuf {
    unsigned char *p;
    size_t off, len, cap;
};
/* Append n bytes; 0, or -1 when out of memory. */
int xg_sbuf_append(struct xg_sbuf *b, const void *data, size_t n);
/* Append encode_length(v), serialise_double(v), or a length-prefixed
 * string; 0, or -1 (out of memory, or a double that cannot be encoded). */
int xg_sbuf_put_length(struct xg_sbuf *b, uint64_t v);
int xg_sbuf_put_double(struct xg_sbuf *b, double v);
int xg_sbuf_put_string(struct xg_sbuf *b, const void *s, size_t n);
/* Append a whole frame: type, encode_length(n), the payload. */
int xg_sbuf_frame(struct xg_sbuf *b, unsigned type, const void *payload,
                  size_t n);
void xg_sbuf_free(struct xg_sbuf *b);

/* A message payload being read.  Any read past the end or of a malformed
 * value sets `bad`; later reads then return zeros, so a decoder checks
 * once at the end. */
struct xg_wire_reader {
    const unsigned char *p, *end;
    int bad;
};
uint64_t xg_wire_read_length(struct xg_wire_reader *r);
/* unserialise_double; 0.0 and `bad` on a short or malformed value. */
double xg_wire_read_double(struct xg_wire_reader *r);
/* A length, then that many bytes: *n and a pointer into the payload. */
const unsigned char *xg_wire_read_string(struct xg_wire_reader *r, size_t *n);
/* One byte. */
unsigned xg_wire_read_byte(struct xg_wire_reader *r);

#endif
