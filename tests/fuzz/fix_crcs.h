/** @file fix_crcs.h
 *  @brief Recompute every CRC of a mutated index copy, so a mutation reaches
 *         the structural checks and the decoders instead of stopping at
 *         the checksums (tests/fuzz_format.c, fuzz/fuzz_index.c).
 */
#ifndef XG_TESTS_FIX_CRCS_H
#define XG_TESTS_FIX_CRCS_H

#include <stddef.h>
#include <stdint.h>

#include "../../gpu/index/crc32c.h"
#include "../../gpu/index/format.h"

static inline void xg_test_fix_crcs(uint8_t *d, size_t n)
{
    struct xg_fmt_header *h = (struct xg_fmt_header *)d;
    if (n < 512 || h->n_shards == 0 || h->n_shards > 64 ||
        XG_FMT_TABLES_END(h->n_shards) > n)
        return;
    struct xg_fmt_section *s =
        (struct xg_fmt_section *)(d + XG_FMT_SECTIONS_OFFSET(h->n_shards));
    for (unsigned i = 0; i < XG_SEC_COUNT; ++i)
        if (s[i].offset <= n && s[i].length <= n - s[i].offset)
            s[i].crc = xg_crc32c(0, d + s[i].offset, s[i].length);
    h->header_crc = 0;
    h->header_crc = xg_crc32c(0, d, XG_FMT_TABLES_END(h->n_shards));
}

#endif
