/** @file xg_positions.h
 *  @brief C API over Xapian 1.4.22 (shim_positions.cc): every document's
 *         word sequence rebuilt from a database's positional postings, as
 *         the input of `xapian-gpu qlm --db` (issue 6).
 *
 *  The words of a document are its unprefixed terms (a term starting with
 *  an ASCII capital letter carries a prefix in Xapian's convention and is
 *  skipped), placed at their positions.  The rules (docs/qlm.md, "From a
 *  Xapian database"):
 *  - positions are ranks: the words are laid out in position order and the
 *    gaps between positions are closed (Omega's gaps of 100 between fields
 *    are dropped), so an n-gram may span a gap;
 *  - two or more terms at one position: the first in byte order is the
 *    word there, the others are dropped and counted (n_shared);
 *  - a live document without positional unprefixed terms is an empty
 *    document (counted in n_empty, no words);
 *  - docids are the database's (combined docids for shards).
 *  The result is the loaded-text form of text/tokenize.h (struct xg_text),
 *  so the n-gram pipeline (gpu/qlm/qlm.h) runs on it unchanged.
 */
#ifndef XG_POSITIONS_H
#define XG_POSITIONS_H

#include <stdint.h>

#include "../gpu/text/tokenize.h"
#include "xg_shim.h"

#ifdef __cplusplus
extern "C" {
#endif

struct xg_pos_stats {
    uint64_t n_docs;        /* live documents */
    uint64_t n_terms;       /* unprefixed terms with positions */
    uint64_t n_positions;   /* positions read */
    uint64_t n_words;       /* words in the sequences (positions - shared) */
    uint64_t n_shared;      /* positions dropped: another term held it */
    uint64_t n_empty;       /* live documents without words */
};

/* Progress while the postings are read: unprefixed terms walked of all,
 * and positions so far; called from the calling thread about every 50 ms
 * and once with done = 1 at the end of the read. */
typedef void (*xg_pos_progress_fn)(void *ctx, uint64_t terms, uint64_t of,
                                   uint64_t positions, int done);

/* Rebuild the word sequence of every live document of `db` (docids
 * ascending) into *out (free with xg_text_free); `threads` threads (0:
 * one; at most 32) read ranges of terms, each with its own Database object at the
 * revision `db` holds; `progress` may be NULL.  The result does not depend
 * on `threads`.  Memory: 12 bytes per position while reading, then 8 per
 * position and the text while the positions are put in document order.
 * Errors (one line naming the database or shard, *out left empty):
 * XG_ERR_FORMAT for a shard holding documents but no positional
 * information ("indexed without positions") and for a term with positions
 * that cannot be a word (a control character or invalid UTF-8);
 * XG_ERR_XAPIAN when the database changes during the read; XG_ERR_NOMEM. */
int xg_shim_pos_read(xg_db *db, uint32_t threads, xg_pos_progress_fn progress,
                     void *ctx, struct xg_text *out, struct xg_pos_stats *st);

#ifdef __cplusplus
}
#endif
#endif
