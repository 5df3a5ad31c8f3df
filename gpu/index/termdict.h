/** @file termdict.h
 *  @brief The front-coded term dictionary (DICT and DICT_INDEX sections).
 *
 *  Terms are byte-sorted; term id = rank.  Every XG_FMT_DICT_BUCKET terms
 *  start a bucket whose first term is stored whole (varint length, bytes)
 *  and whose others store (varint shared-prefix length, varint suffix
 *  length, suffix bytes) against the previous term.  DICT_INDEX holds the
 *  uint64 offset of each bucket in DICT, plus one final entry = DICT length.
 *  Looked up on the CPU at query time (binary search over buckets, then a
 *  scan of at most one bucket).
 */
#ifndef XG_DICT_H
#define XG_DICT_H

#include <stddef.h>
#include <stdint.h>

#include "../runtime/buf.h"

/* Writer state: appends to two growable buffers. */
struct xg_dict_writer {
    struct xg_buf *dict;        /* DICT bytes */
    struct xg_buf *index;       /* DICT_INDEX uint64 entries */
    uint64_t n_terms;
    char *prev;                 /* previous term (for prefix sharing) */
    size_t prev_len, prev_cap;
};

/* Append the next term (must be byte-greater than the previous one).
 * Returns XG_OK, XG_ERR_ARG if out of order, XG_ERR_NOMEM. */
int xg_dict_add(struct xg_dict_writer *w, const char *term, size_t len);

/* Write the final DICT_INDEX entry and release writer state. */
int xg_dict_finish(struct xg_dict_writer *w);

/* The search keys of the buckets: the first 8 bytes of each bucket's first
 * term, big-endian, zero-padded (their order is the terms' byte order,
 * ties aside).  Binary search over this compact array touches a few cache
 * lines instead of one per step; the planner looks terms up per query.
 * keys: n_buckets entries.  XG_OK or XG_ERR_FORMAT. */
int xg_dict_keys(const uint8_t *dict, uint64_t dict_len,
                 const uint64_t *index, uint64_t n_buckets, uint64_t *keys);

/* Find `term`; returns its id, or -1 if absent (or the dictionary is
 * malformed around it: the reader never reads outside [dict, dict+len)).
 * keys: from xg_dict_keys, or NULL to search the buckets themselves. */
int64_t xg_dict_lookup(const uint8_t *dict, uint64_t dict_len,
                       const uint64_t *index, const uint64_t *keys,
                       uint64_t n_buckets, uint64_t n_terms, const char *term,
                       size_t len);

/* Walk every term in id order, checking the encoding; calls fn for each
 * (fn may be NULL).  Returns XG_OK or XG_ERR_FORMAT. */
int xg_dict_walk(const uint8_t *dict, uint64_t dict_len,
                 const uint64_t *index, uint64_t n_buckets, uint64_t n_terms,
                 void (*fn)(void *ctx, uint64_t id, const char *t, size_t n),
                 void *ctx);

#endif
