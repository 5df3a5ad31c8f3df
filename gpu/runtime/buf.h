/** @file buf.h
 *  @brief A growable byte buffer (the export builds each section in one).
 */
#ifndef XG_BUF_H
#define XG_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

struct xg_buf {
    uint8_t *data;
    size_t len, cap;
};

/* Make room for `extra` more bytes; XG_ERR_NOMEM on failure. */
static inline int xg_buf_reserve(struct xg_buf *b, size_t extra)
{
    if (b->len + extra <= b->cap) return XG_OK;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + extra) cap *= 2;
    uint8_t *p = (uint8_t *)realloc(b->data, cap);
    if (!p) return xg_set_error(XG_ERR_NOMEM, "out of memory (%zu bytes)", cap);
    b->data = p;
    b->cap = cap;
    return XG_OK;
}

static inline int xg_buf_append(struct xg_buf *b, const void *p, size_t n)
{
    int rc = xg_buf_reserve(b, n);
    if (rc) return rc;
    if (n) memcpy(b->data + b->len, p, n);
    b->len += n;
    return XG_OK;
}

/* Append zero bytes until len is a multiple of `align`. */
static inline int xg_buf_pad(struct xg_buf *b, size_t align)
{
    static const uint8_t zeros[64] = {0};
    size_t n = (align - b->len % align) % align;
    return xg_buf_append(b, zeros, n);
}

static inline void xg_buf_free(struct xg_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

#endif
