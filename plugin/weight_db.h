/** @file weight_db.h
 *  @brief The weight of every (term, document) of a Xapian database, each
 *         exactly Xapian 1.4's weight for that term as a one-term query
 *         (BM25Weight with the given parameters and the database's own
 *         statistics), computed on the CPU from the shim's postings through
 *         gpu/bm25.h.  What `xapian-gpu weight --db` writes.
 */
#ifndef XG_WEIGHT_DB_H
#define XG_WEIGHT_DB_H

#include <stddef.h>
#include <stdint.h>

#include "../gpu/xapian-gpu-types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One term's postings: docids ascending and their weights.  Called for
 * every term in byte order; a nonzero return stops the run with it. */
typedef int (*xg_weight_db_fn)(void *ctx, const char *term, size_t term_len,
                               const uint32_t *docids, const double *weights,
                               uint32_t n);

/* Open the database at paths (as xg_searcher_open) and call fn for every
 * term.  *n_docs and *n_postings (may be NULL) say what was weighed.
 * XG_OK, fn's nonzero return, or an error with its one-line message. */
int xg_weight_db(const char *const *paths, size_t n_paths,
                 const struct xg_bm25_params *p, xg_weight_db_fn fn, void *ctx,
                 uint64_t *n_docs, uint64_t *n_postings);

#ifdef __cplusplus
}
#endif
#endif
