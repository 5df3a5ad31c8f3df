/** @file termdict.h
 *  @brief The front-coded term dictionary (DICT and DICT_INDEX sections).
 *
 *  Terms are byte-sorted; term id = rank.  Every XG_FMT_DICT_BUCKET terms
 *  start a bucket whose first term is stored whole (varint length, bytes)
 *  and whose others store (varint shared-prefix length, varint suffix
 *  length, suffix bytes) against the previous term.  DICT_INDEX holds the
 *  uint64 offset of each bucket in DICT, plus one final entry = DICT length.
 *  Looked up on the CPU at query time, per query term, also for queries
 *  the planner leaves to stock Xapian: through a hash of the terms built
 *  at open (one probe, then the one candidate's bucket decoded to confirm
 *  it), or without one by a binary search over the buckets' first terms
 *  and a scan of at most one bucket.
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

/* Term ids by hash, built at open.  Open addressing over a power-of-two
 * table of at least 1.5 slots per term; a slot holds the term's 32-bit
 * hash tag (high half) and id + 1 (low half, 0: empty).  A tag match is
 * confirmed by decoding the term, so a collision costs time, never a
 * wrong id; an empty slot ends an absent term's probe.  slot is NULL when
 * there are too many terms for 32-bit ids (lookups then search the
 * buckets). */
struct xg_dict_hash {
    uint64_t *slot;
    uint64_t mask;              /* table size - 1 */
};

/* The hash lookups use (exposed for tests that place collisions). */
uint64_t xg_dict_term_hash(const char *term, size_t len);

/* Walk the dictionary, checking its encoding as xg_dict_walk does, and
 * build h.  XG_OK, XG_ERR_FORMAT or XG_ERR_NOMEM (h then holds nothing to
 * free). */
int xg_dict_hash_build(const uint8_t *dict, uint64_t dict_len,
                       const uint64_t *index, uint64_t n_buckets,
                       uint64_t n_terms, struct xg_dict_hash *h);
void xg_dict_hash_free(struct xg_dict_hash *h);

/* Find `term`; returns its id, or -1 if absent (or the dictionary is
 * malformed around it: the reader never reads outside [dict, dict+len)).
 * hash: from xg_dict_hash_build over this dictionary, or NULL (or one
 * with no slots) to search the buckets. */
int64_t xg_dict_lookup(const uint8_t *dict, uint64_t dict_len,
                       const uint64_t *index, const struct xg_dict_hash *hash,
                       uint64_t n_buckets, uint64_t n_terms, const char *term,
                       size_t len);

/* Call fn for each term that starts with `prefix` (every term when len
 * is 0), in id order, until fn returns nonzero.  Terms are byte-sorted,
 * so these are one run of ids, found by a binary search over the
 * buckets' first terms.  Returns XG_OK or XG_ERR_FORMAT. */
int xg_dict_prefix(const uint8_t *dict, uint64_t dict_len,
                   const uint64_t *index, uint64_t n_buckets, uint64_t n_terms,
                   const char *prefix, size_t len,
                   int (*fn)(void *ctx, uint64_t id, const char *t, size_t n),
                   void *ctx);

/* Walk every term in id order, checking the encoding; calls fn for each
 * (fn may be NULL).  Returns XG_OK or XG_ERR_FORMAT. */
int xg_dict_walk(const uint8_t *dict, uint64_t dict_len,
                 const uint64_t *index, uint64_t n_buckets, uint64_t n_terms,
                 void (*fn)(void *ctx, uint64_t id, const char *t, size_t n),
                 void *ctx);

#endif
