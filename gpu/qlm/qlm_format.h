/** @file qlm_format.h
 *  @brief The binary n-gram table's header: its one definition (spec:
 *         docs/qlm.md), for the writer (plugin/cli/qlm_out.c) and the
 *         reader (qlm_table.c).
 *
 *  Little-endian.  Version 2 (XGQLM002) added the CRC32C of every byte
 *  after the header, so a changed table is refused instead of scoring
 *  differently; version 1 tables are refused with a line saying to
 *  rebuild them.
 */
#ifndef XG_QLM_FORMAT_H
#define XG_QLM_FORMAT_H

#include <stdint.h>

#define XG_QLM_MAGIC "XGQLM002"     /* 8 bytes, no NUL */
#define XG_QLM_MAGIC_V1 "XGQLM001"
#define XG_QLM_FLAG_COUNTS 1u       /* records carry the four counts */

struct xg_qlm_header {
    char magic[8];          /*  0: XG_QLM_MAGIC */
    uint32_t sigma;         /*  8 */
    uint32_t flags;         /* 12: XG_QLM_FLAG_* */
    uint64_t n_terms;       /* 16 */
    uint64_t n_records;     /* 24 */
    uint64_t dict_offset;   /* 32: the dictionary follows the records */
    double lambda;          /* 40 */
    uint32_t crc;           /* 48: CRC32C of every byte after the header */
    uint32_t reserved;      /* 52: zero */
};
_Static_assert(sizeof(struct xg_qlm_header) == 56, "qlm header size");

#endif
