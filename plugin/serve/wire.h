/** @file wire.h
 *  @brief Xapian 1.4's remote-protocol framing: the variable-length
 *         integer of net/length.h and the message frame built on it.
 *
 *  A message is one type byte, encode_length(payload size), the payload.
 *  encode_length(n): n < 255 is the one byte n; otherwise 0xff, then
 *  n - 255 in 7-bit groups, least significant first, the last group's
 *  byte with its top bit set (the other groups' top bits clear).
 *  Reimplemented from the protocol's description (docs/server.md), not
 *  copied; tests/test_wire.c checks it against bytes Xapian wrote.
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

#endif
