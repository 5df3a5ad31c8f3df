/** @file format_read.h
 *  @brief Open, verify and read a GPU index file (format.h).
 *
 *  xg_fmt_open() maps the file and refuses it unless the magic, version,
 *  endianness, sizes, header CRC, every section's CRC32C and the structure
 *  (term offsets, skip ranges, doc numbering) are all sound.  After a
 *  successful open every accessor below stays inside the mapping.
 *  Freshness against the database is checked separately
 *  (xg_fmt_check_shards) because gpu/ does not talk to Xapian.
 */
#ifndef XG_FORMAT_READ_H
#define XG_FORMAT_READ_H

#include <stddef.h>
#include <stdint.h>

#include "format.h"
#include "positions.h"
#include "termdict.h"

struct xg_index {
    char *path;
    const uint8_t *base;    /* the mapping */
    size_t size;
    const struct xg_fmt_header *hdr;
    const struct xg_fmt_shard *shards;
    const struct xg_fmt_section *sec;   /* XG_SEC_COUNT entries */
    const uint8_t *dict;
    const uint64_t *dict_index;
    struct xg_dict_hash dict_hash;      /* built at open */
    uint64_t n_buckets;
    const struct xg_fmt_term *terms;
    const struct xg_fmt_term_lr *terms_lr;
    const uint32_t *shard_df;           /* [term * n_shards + shard] */
    const struct xg_fmt_skip *skip;
    const uint8_t *postings;
    uint64_t postings_len;
    const uint64_t *bloom;
    uint64_t bloom_words;
    const uint32_t *hashseg;
    uint64_t hashseg_len;               /* uint32 entries */
    const uint32_t *docids;             /* Xapian docid per dense number */
    const uint32_t *doclens;            /* length per dense number */
    const struct xg_fmt_impact *impacts;/* per term, or NULL (no IMPACTS) */
    const uint8_t *impact_codes;        /* one per posting, lists in term
                                           order */
    const uint64_t *pos_offsets;        /* n_blocks + 1 offsets into
                                           pos_data, or NULL (no POSITIONS) */
    const uint8_t *pos_data;            /* positions.h, per block */
    const struct xg_fmt_values *values; /* or NULL (no VALUES) */
    const struct xg_fmt_value_slot *value_slots;
    const struct xg_fmt_value_bounds *value_bounds;
};

/* Open and verify.  Errors (message names the file and the fault):
 * XG_ERR_IO (cannot open/map), XG_ERR_FORMAT (magic, truncation, sizes,
 * structure), XG_ERR_VERSION (version or endianness), XG_ERR_CHECKSUM. */
int xg_fmt_open(const char *path, struct xg_index **out);
void xg_fmt_close(struct xg_index *ix);

/* XG_ERR_STALE unless the index was exported from exactly these shards
 * (same count, uuids and revisions, in order). */
int xg_fmt_check_shards(const struct xg_index *ix, uint32_t n_shards,
                        const char *const *uuids, const uint64_t *revisions);

/* Term id of `term`, or -1. */
int64_t xg_fmt_lookup(const struct xg_index *ix, const char *term,
                      size_t len);

/* xg_dict_prefix over the index's dictionary: fn for each term id that
 * starts with prefix, in byte order. */
int xg_fmt_prefix(const struct xg_index *ix, const char *prefix, size_t len,
                  int (*fn)(void *ctx, uint64_t id, const char *t, size_t n),
                  void *ctx);

/* Number of 128-posting blocks in a term's list. */
static inline uint32_t xg_fmt_n_blocks(const struct xg_index *ix, uint64_t t)
{
    return (ix->terms[t].df + XG_FMT_BLOCK - 1) / XG_FMT_BLOCK;
}

/* 1 when the index holds term positions (XG_FMT_FLAG_POSITIONS). */
static inline int xg_fmt_has_positions(const struct xg_index *ix)
{
    return ix->pos_offsets != NULL;
}

/* The position data of block `blk` of term `t` (positions.h: read it with
 * xg_pos_open and xg_pos_next): [*begin, *end), empty when none of the
 * block's postings has a position or the index has no positions.  Checked
 * at open: every block decodes completely. */
static inline void xg_fmt_block_positions(const struct xg_index *ix,
                                          uint64_t t, uint32_t blk,
                                          const uint8_t **begin,
                                          const uint8_t **end)
{
    if (!ix->pos_offsets) {
        *begin = *end = NULL;
        return;
    }
    const uint64_t g = ix->terms[t].skip_first + blk;
    *begin = ix->pos_data + ix->pos_offsets[g];
    *end = ix->pos_data + ix->pos_offsets[g + 1];
}

/* Slot `slot`'s values: *out is its entry (keys and lengths at
 * xg_fmt_value_key/_len), or NULL where no document has a value there.
 * XG_ERR_UNSUPPORTED where the index cannot tell (no VALUES, a slot not
 * read, or values too long to keep). */
int xg_fmt_value_slot(const struct xg_index *ix, uint32_t slot,
                      const struct xg_fmt_value_slot **out);

static inline const uint8_t *xg_fmt_value_key(const struct xg_index *ix,
                                              const struct xg_fmt_value_slot *e,
                                              uint32_t dense)
{
    return (const uint8_t *)ix->values + e->keys_offset +
           (uint64_t)dense * XG_FMT_VALUE_MAX;
}

static inline uint32_t xg_fmt_value_len(const struct xg_index *ix,
                                        const struct xg_fmt_value_slot *e,
                                        uint32_t dense)
{
    return ((const uint8_t *)ix->values + e->lens_offset)[dense] &
           XG_FMT_VALUE_LEN_MASK;
}

/* 1 where a document without a value lies inside a value chunk. */
static inline int xg_fmt_value_in_chunk(const struct xg_index *ix,
                                        const struct xg_fmt_value_slot *e,
                                        uint32_t dense)
{
    return (((const uint8_t *)ix->values + e->lens_offset)[dense] &
            XG_FMT_VALUE_IN_CHUNK) != 0;
}

/* Decode block `blk` of term `t`: dense doc numbers and wdfs (up to 128
 * each); *n gets the count.  XG_ERR_FORMAT if the block is corrupt. */
int xg_fmt_block_decode(const struct xg_index *ix, uint64_t t, uint32_t blk,
                        uint32_t *docs, uint32_t *wdfs, uint32_t *n);

/* The same block's doc numbers alone (its wdfs not decoded). */
int xg_fmt_block_docs(const struct xg_index *ix, uint64_t t, uint32_t blk,
                      uint32_t *docs, uint32_t *n);

/* The wdf of term t's first posting, read from its first block's two
 * headers without decoding the block (lists checked at open). */
int xg_fmt_first_wdf(const struct xg_index *ix, uint64_t t, uint32_t *wdf);

/* Bytes of term t's list in POSTINGS, from its postings_offset to the end
 * of its last block (what the list cache copies).  XG_ERR_FORMAT if that
 * block is corrupt. */
int xg_fmt_list_bytes(const struct xg_index *ix, uint64_t t, uint64_t *bytes);

/* Name of a section ("POSTINGS", ...) for messages. */
const char *xg_fmt_section_name(unsigned id);

/* Default index path for a database path: DB/xapian-gpu.idx when DB is a
 * directory, DB.xapian-gpu.idx otherwise.  malloc'd. */
char *xg_fmt_default_path(const char *db_path);

#endif
