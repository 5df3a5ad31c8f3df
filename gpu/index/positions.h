/** @file positions.h
 *  @brief The term positions of the POSITIONS section (format.h): how one
 *         block's position data is laid out and read, by the reader's
 *         check, the CPU matcher and the kernels alike.
 *
 *  POSITIONS holds (n_blocks + 1) u64 offsets, one per skip entry in SKIP
 *  order plus a final one, then the data area they point into (offsets
 *  from the area's start, ascending).  Block b's data is the bytes
 *  [off[b], off[b + 1]); an empty range means no posting of the block has
 *  positions.  Otherwise, for each posting of the block in order: its
 *  position count c as an LEB128 varint, then c varints: the first
 *  position, then each gap to the next (>= 1: positions strictly ascend).
 *  A varint is at most 5 bytes and holds a uint32.
 *
 *  Postings are found by their place in the block (0..127), which is the
 *  place the PForDelta decode gives them, so a matcher that found a
 *  document in a block reads its positions without another search.
 */
#ifndef XG_POSITIONS_DATA_H
#define XG_POSITIONS_DATA_H

#include <stdint.h>

#include "../runtime/host_device.h"

/* Reads one varint from [*p, end) into *v and advances *p.  0 on success,
 * -1 if it runs past end or does not fit 32 bits. */
XG_HOST_DEVICE static inline int xg_pos_varint(const uint8_t **p,
                                               const uint8_t *end,
                                               uint32_t *v)
{
    uint32_t x = 0;
    for (int shift = 0; shift < 35; shift += 7) {
        if (*p >= end) return -1;
        const uint32_t b = *(*p)++;
        if (shift == 28 && b > 0x0f) return -1;
        x |= (b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return -1;
}

/* One posting's positions, read in ascending order. */
struct xg_pos_cursor {
    const uint8_t *p, *end;
    uint32_t left;      /* positions not yet read */
    uint32_t pos;       /* the last position read */
    int started;        /* pos holds a position: the next varint is a gap */
};

/* Point c at posting j of a block whose data is [begin, end) (an empty
 * range: no positions).  0 on success, -1 if the data is malformed. */
XG_HOST_DEVICE static inline int xg_pos_open(struct xg_pos_cursor *c,
                                             const uint8_t *begin,
                                             const uint8_t *end, uint32_t j)
{
    c->p = begin;
    c->end = end;
    c->left = 0;
    c->pos = 0;
    c->started = 0;
    if (begin == end) return 0;
    for (uint32_t i = 0;; ++i) {
        uint32_t n, v;
        if (xg_pos_varint(&c->p, end, &n)) return -1;
        if (i == j) {
            c->left = n;
            return 0;
        }
        for (uint32_t k = 0; k < n; ++k)
            if (xg_pos_varint(&c->p, end, &v)) return -1;
    }
}

/* The next position into *pos: 1, or 0 at the end.  Malformed data (a
 * varint past the end, a zero gap, a position past 2^32 - 1) also ends
 * it; the reader's check refuses an index holding any. */
XG_HOST_DEVICE static inline int xg_pos_next(struct xg_pos_cursor *c,
                                             uint32_t *pos)
{
    uint32_t v;
    if (!c->left || xg_pos_varint(&c->p, c->end, &v)) return 0;
    if (c->started && (v == 0 || v > 0xffffffffu - c->pos)) return 0;
    c->pos = c->started ? c->pos + v : v;
    c->started = 1;
    --c->left;
    *pos = c->pos;
    return 1;
}

#endif
