/** @file xg_export.h
 *  @brief Write the GPU index of an open database (docs/format.md).
 */
#ifndef XG_EXPORT_H
#define XG_EXPORT_H

#include <stdint.h>

#include "xg_shim.h"

#ifdef __cplusplus
extern "C" {
#endif

struct xg_export_opts {
    uint32_t bloom_bits_per_posting;   /* 0 disables the Bloom filters */
    uint32_t bloom_hashes;             /* k, 1..16 */
    uint32_t hashseg_target;           /* mean postings per hash segment */
    struct xg_bm25_params bm25;        /* for the block upper bounds */
    int progress;                      /* draw a progress bar on stderr */
    int impacts;                       /* store quantized impacts for the
                                          bm25 parameters (format.h) */
    int positions;                     /* store term positions when the
                                          database has them (format.h) */
    int values;                        /* store document values of slots
                                          below XG_EXPORT_VALUE_PROBE */
};

/* Value slots an export reads: Omega's are 0-3, applications' are mostly
 * small numbers. */
#define XG_EXPORT_VALUE_PROBE 256u

#define XG_EXPORT_DEFAULT_BLOOM_BITS 8u
#define XG_EXPORT_DEFAULT_BLOOM_HASHES 3u
#define XG_EXPORT_DEFAULT_HASHSEG_TARGET 32u

/* The defaults above, BM25's defaults, no progress bar, impacts (one
 * byte per posting that cuts the GPU engine's OR work, docs/gpu.md),
 * positions (when the database has them) and values. */
void xg_export_opts_init(struct xg_export_opts *o);

struct xg_export_report {
    uint64_t n_docs, n_terms, n_postings, n_blocks;
    uint64_t section_bytes[16];        /* per enum xg_fmt_section_id */
    uint64_t file_bytes;
    double seconds;                    /* wall time of the whole export */
    double read_seconds;               /* of which inside Xapian's API */
    int positions;                     /* POSITIONS was written */
    uint64_t xapian_position_bytes;    /* the shards' position.glass */
    uint32_t value_slots;              /* slots whose values VALUES holds */
    uint32_t value_slots_long;         /* slots left out: a value longer
                                          than XG_FMT_VALUE_MAX bytes */
};

/* Export `db` to `out_path` atomically: written to a temporary file beside
 * it, fsync'd, then renamed; on any error the temporary file is removed and
 * out_path is untouched.  Errors name the path and the fault. */
int xg_export(xg_db *db, const char *out_path,
              const struct xg_export_opts *o, struct xg_export_report *rep);

#ifdef __cplusplus
}
#endif
#endif
