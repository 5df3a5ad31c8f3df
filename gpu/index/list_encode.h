/** @file list_encode.h
 *  @brief Encode one posting list into the index sections: PForDelta
 *         blocks with their skip entries, the Bloom filter, the hash
 *         segments and the regression (format.h, docs/format.md).
 *
 *  The one writer of a list's bytes: the export calls it for every term,
 *  the GPU kernel tests call it to build indexes from random lists.
 */
#ifndef XG_LIST_ENCODE_H
#define XG_LIST_ENCODE_H

#include <stdint.h>

#include "../bm25.h"
#include "../runtime/buf.h"
#include "format.h"

struct xg_list_sink {
    struct xg_buf *postings, *skip, *bloom, *hashseg;
};

struct xg_list_params {
    uint32_t n_docs;                /* dense numbers are < n_docs */
    uint32_t bloom_bits, bloom_hashes, hashseg_target;
    const struct xg_bm25_query *bm25;  /* for the block upper bounds */
    double termweight;              /* the term's weight for wqf 1 */
    const uint32_t *doclens;        /* per dense number; NULL: ub = 0 */
};

/* Append list (dense[i] strictly ascending, wdfs[i]) of n >= 1 postings
 * to the sink and fill its term entry and regression.  Returns XG_OK,
 * XG_ERR_NOMEM, or XG_ERR_FORMAT if the list's blocks exceed 4 GiB. */
int xg_list_encode(const uint32_t *dense, const uint32_t *wdfs, uint32_t n,
                   const struct xg_list_params *p, struct xg_list_sink *s,
                   struct xg_fmt_term *e, struct xg_fmt_term_lr *lr);

#endif
