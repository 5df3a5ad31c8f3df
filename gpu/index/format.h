/** @file format.h
 *  @brief The GPU index file format: the one definition (spec: docs/format.md).
 *
 *  Included by the writer (shim/export.c) and the reader (gpu/index/format_read.c).
 *  All integers are little-endian; the file is read in place (mmap), so every
 *  struct below has a fixed size and natural alignment, checked with
 *  _Static_assert.  A layout change bumps XG_FMT_VERSION in the same diff as
 *  docs/format.md.
 *
 *  File = header (struct xg_fmt_header, 512 bytes)
 *       + shard table (n_shards x struct xg_fmt_shard, 64 bytes each)
 *       + section table (XG_SEC_COUNT x struct xg_fmt_section, 32 bytes each)
 *       + sections, each starting at a multiple of 64 bytes.
 *
 *  Documents are renumbered densely: dense number i (0-based) is the i-th
 *  live Xapian docid in ascending order (combined/interleaved docids for a
 *  sharded database).  Postings, skip entries, Bloom filters, regression and
 *  hash segments all speak dense numbers, so a sparse docid space (10^4 docs,
 *  last docid 2*10^8) costs nothing.  Deleted docids have no dense number.
 */
#ifndef XG_FORMAT_H
#define XG_FORMAT_H

#include <stdint.h>

#define XG_FMT_MAGIC "XGPUIDX1"  /* 8 bytes, no NUL */
#define XG_FMT_VERSION 4u
#define XG_FMT_ENDIAN_TAG 0x01020304u
#define XG_FMT_BLOCK 128u         /* postings per PForDelta block */
#define XG_FMT_ALIGN 64u          /* section alignment in the file */
#define XG_FMT_UUID_LEN 40        /* uuid text incl. NUL, zero padded */

/* Sections, in file order. */
enum xg_fmt_section_id {
    XG_SEC_DICT = 0,      /* front-coded terms, buckets of XG_FMT_DICT_BUCKET */
    XG_SEC_DICT_INDEX,    /* uint64 byte offset of each bucket in DICT */
    XG_SEC_TERMS,         /* struct xg_fmt_term per term id */
    XG_SEC_SHARD_DF,      /* uint32 df[term][shard] (per-shard term freq) */
    XG_SEC_SKIP,          /* struct xg_fmt_skip per block, lists back to back */
    XG_SEC_POSTINGS,      /* PForDelta blocks (see pfor.h) */
    XG_SEC_BLOOM,         /* uint64 words of every list's Bloom filter */
    XG_SEC_HASHSEG,       /* uint32 segment start positions of every list */
    XG_SEC_DOCIDS,        /* uint32 Xapian docid per dense number, ascending */
    XG_SEC_DOCLENS,       /* uint32 document length per dense number */
    XG_SEC_IMPACTS,       /* optional: struct xg_fmt_impact per term, then
                             one uint8 code per posting (empty without
                             XG_FMT_FLAG_IMPACTS) */
    XG_SEC_POSITIONS,     /* optional: (n_blocks + 1) uint64 offsets, then
                             each block's term positions (positions.h;
                             empty without XG_FMT_FLAG_POSITIONS) */
    XG_SEC_VALUES,        /* optional: struct xg_fmt_values, its slots'
                             struct xg_fmt_value_slot, their shards' struct
                             xg_fmt_value_bounds, then each kept slot's
                             keys and lengths (empty without
                             XG_FMT_FLAG_VALUES) */
    XG_SEC_COUNT
};

#define XG_FMT_DICT_BUCKET 16u    /* terms per front-coding bucket */

/* Header flags. */
#define XG_FMT_FLAG_BLOCK_UB 1u   /* skip entries carry BM25 upper bounds */
#define XG_FMT_FLAG_IMPACTS 2u    /* IMPACTS holds quantized BM25 parts */
#define XG_FMT_FLAG_POSITIONS 4u  /* POSITIONS holds term positions */
#define XG_FMT_FLAG_VALUES 8u     /* VALUES holds document values */

/* The header: 512 bytes at offset 0. */
struct xg_fmt_header {
    char magic[8];              /*   0: XG_FMT_MAGIC */
    uint32_t version;           /*   8: XG_FMT_VERSION */
    uint32_t endian_tag;        /*  12: XG_FMT_ENDIAN_TAG as written */
    uint32_t header_crc;        /*  16: CRC32C of header+shard+section
                                        tables with this field zeroed */
    uint32_t flags;             /*  20: XG_FMT_FLAG_* */
    uint64_t file_size;         /*  24: total bytes */
    uint32_t n_shards;          /*  32: Xapian shards (>= 1) */
    uint32_t n_sections;        /*  36: XG_SEC_COUNT */
    uint64_t n_docs;            /*  40: live documents (N) */
    uint64_t total_length;      /*  48: sum of live doc lengths */
    uint32_t last_docid;        /*  56: Xapian's get_lastdocid() */
    uint32_t doclen_min;        /*  60: smallest live doc length */
    uint32_t doclen_max;        /*  64: largest live doc length */
    uint32_t block_size;        /*  68: XG_FMT_BLOCK */
    uint64_t n_terms;           /*  72: dictionary entries */
    uint64_t n_postings;        /*  80: sum of df over all terms */
    uint64_t n_blocks;          /*  88: skip entries */
    uint32_t bloom_bits_per_posting; /* 96: export option */
    uint32_t bloom_hashes;      /* 100: export option (k) */
    uint32_t hashseg_target;    /* 104: mean hash-segment length aimed at */
    uint32_t reserved0;         /* 108 */
    double bm25_k1;             /* 112: parameters the block upper bounds */
    double bm25_b;              /* 120:  in SKIP were computed with */
    double bm25_min_normlen;    /* 128 */
    uint64_t created_unix;      /* 136: seconds since the epoch */
    char creator[32];           /* 144: "xapian-gpu <version>" */
    uint8_t reserved[512 - 176];/* 176: zero */
};

/* One per Xapian shard, in the order Xapian combines them. */
struct xg_fmt_shard {
    char uuid[XG_FMT_UUID_LEN]; /*  0: Database::get_uuid(), NUL padded */
    uint64_t revision;          /* 40: Database::get_revision() */
    uint32_t doccount;          /* 48: live docs in this shard */
    uint32_t last_docid;        /* 52: shard-local last docid */
    uint64_t reserved;          /* 56 */
};

/* One per section, XG_SEC_COUNT of them, after the shard table. */
struct xg_fmt_section {
    uint64_t offset;            /*  0: from the start of the file */
    uint64_t length;            /*  8: bytes */
    uint32_t crc;               /* 16: CRC32C of the section's bytes */
    uint32_t id;                /* 20: enum xg_fmt_section_id */
    uint64_t reserved;          /* 24 */
};

/* Per term (indexed by term id = rank in byte order): 64 bytes. */
struct xg_fmt_term {
    uint32_t df;                /*  0: documents containing the term */
    uint32_t wdf_max;           /*  4: largest wdf in the list */
    uint64_t cf;                /*  8: collection frequency (sum of wdf) */
    uint64_t postings_offset;   /* 16: byte offset of block 0 in POSTINGS */
    uint64_t skip_first;        /* 24: index of block 0 in SKIP */
    uint64_t bloom_offset;      /* 32: word offset of the filter in BLOOM */
    uint32_t bloom_words;       /* 40: filter size in 64-bit words (0: none) */
    uint32_t hashseg_shift;     /* 44: segment = dense >> shift */
    uint64_t hashseg_offset;    /* 48: uint32 offset of the starts in HASHSEG;
                                       (n_docs-1 >> shift) + 2 entries */
    float lr_slope;             /* 56: regression dense ~ slope*pos+intercept */
    float lr_intercept;         /* 60 */
};
/* TERMS holds n_terms struct xg_fmt_term, then n_terms struct xg_fmt_term_lr
 * (the regression's search distances, kept apart so xg_fmt_term stays 64
 * bytes).  Per term: 8 bytes. */
struct xg_fmt_term_lr {
    uint32_t max_left;          /* 0: positions the true index may lie left of
                                      the prediction */
    uint32_t max_right;         /* 4: ... and right of it */
};

/* Quantized impacts (seed 003 §8.3's precomputed scores), per term: the
 * query-independent part of a posting's BM25 weight,
 * g = wdf / (K_d + wdf) (bm25.h, with the header's k1, b and min_normlen),
 * is stored as a code c in 0..255 such that, in double arithmetic,
 * (c - 1) * scale < g <= c * scale.  A matcher multiplies by the query's
 * termweight to get an upper bound within termweight * scale of the
 * weight: good for choosing candidates, never for scoring them. */
struct xg_fmt_impact {
    uint64_t code_offset;       /* 0: index of the term's first code in the
                                      codes after the table (the sum of the
                                      earlier terms' df) */
    double scale;               /* 8: > 0; 0 only when every g is 0 */
};

/* Per block: 24 bytes.  Lists' blocks are stored back to back. */
struct xg_fmt_skip {
    uint32_t first;             /*  0: first dense doc number (B*) */
    uint32_t last;              /*  4: last dense doc number */
    uint32_t offset;            /*  8: bytes from the list's postings_offset */
    uint32_t max_wdf;           /* 12: largest wdf in the block */
    double ub;                  /* 16: BM25 sumpart upper bound for wqf 1 with
                                       the header's parameters (0 if unset) */
};

/* Document values (Document::get_value), for OP_VALUE_RANGE, _GE and _LE.
 * Slots 0 .. probed - 1 were read; each that holds a value in some
 * document has an entry, in ascending slot order.  A slot is kept when
 * every value and every shard's value bounds is at most XG_FMT_VALUE_MAX
 * bytes: then each dense document has a key (its value, zero padded) and
 * a length byte (low bits; 0: no value), and string order is (key,
 * length) order.  A document without a value has XG_FMT_VALUE_IN_CHUNK
 * set where Xapian's check() there lands on the shard's next document
 * with a value (both lie inside one of glass's value chunks), and clear
 * where it fails (between chunks, before the first, after the last).  The
 * bounds are what Xapian reports per shard (get_value_freq, _lower_bound,
 * _upper_bound), which its matcher's estimates use. */
#define XG_FMT_VALUE_MAX 16u
#define XG_FMT_VALUE_IN_CHUNK 0x80u
#define XG_FMT_VALUE_LEN_MASK 0x7fu

struct xg_fmt_values {          /* at the start of VALUES: 16 bytes */
    uint32_t n_slots;           /*  0: entries that follow */
    uint32_t probed;            /*  4: slots read: 0 .. probed - 1 */
    uint64_t reserved;          /*  8: zero */
};

struct xg_fmt_value_slot {      /* per slot with a value: 32 bytes */
    uint32_t slot;              /*  0: Xapian::valueno */
    uint32_t kept;              /*  4: 1: keys below; 0: a value or bound
                                       longer than XG_FMT_VALUE_MAX */
    uint64_t keys_offset;       /*  8: from the section's start: n_docs x
                                       XG_FMT_VALUE_MAX bytes */
    uint64_t lens_offset;       /* 16: n_docs bytes */
    uint64_t bounds_first;      /* 24: index of its shard 0's bounds */
};

struct xg_fmt_value_bounds {    /* per kept slot and shard: 40 bytes */
    uint32_t freq;              /*  0: documents with a value */
    uint8_t lo_len, hi_len;     /*  4: bytes of lo and hi */
    uint16_t reserved;          /*  6: zero */
    uint8_t lo[XG_FMT_VALUE_MAX];   /*  8: lower bound, zero padded */
    uint8_t hi[XG_FMT_VALUE_MAX];   /* 24: upper bound, zero padded */
};

#ifdef __cplusplus
#define XG_STATIC_ASSERT static_assert
#else
#define XG_STATIC_ASSERT _Static_assert
#endif
XG_STATIC_ASSERT(sizeof(struct xg_fmt_header) == 512, "header size");
XG_STATIC_ASSERT(sizeof(struct xg_fmt_shard) == 64, "shard size");
XG_STATIC_ASSERT(sizeof(struct xg_fmt_section) == 32, "section size");
XG_STATIC_ASSERT(sizeof(struct xg_fmt_term) == 64, "term size");
XG_STATIC_ASSERT(sizeof(struct xg_fmt_term_lr) == 8, "term lr size");
XG_STATIC_ASSERT(sizeof(struct xg_fmt_skip) == 24, "skip size");
XG_STATIC_ASSERT(sizeof(struct xg_fmt_impact) == 16, "impact size");
XG_STATIC_ASSERT(sizeof(struct xg_fmt_values) == 16, "values size");
XG_STATIC_ASSERT(sizeof(struct xg_fmt_value_slot) == 32, "value slot size");
XG_STATIC_ASSERT(sizeof(struct xg_fmt_value_bounds) == 40, "bounds size");

/* Offset of the shard table and the section table. */
#define XG_FMT_SHARDS_OFFSET 512u
#define XG_FMT_SECTIONS_OFFSET(n_shards) \
    (XG_FMT_SHARDS_OFFSET + 64u * (uint64_t)(n_shards))
#define XG_FMT_TABLES_END(n_shards) \
    (XG_FMT_SECTIONS_OFFSET(n_shards) + 32u * (uint64_t)XG_SEC_COUNT)

#endif
