/** @file remote_stats.h
 *  @brief The statistics a remote search carries, and the BM25 bounds the
 *         stock server's matcher adds to them.
 *
 *  Layout (Xapian 1.4.22 net/serialise.cc, serialise_stats): total length,
 *  collection size, relevance set size, total length again, a
 *  have-max-part byte, then per term in byte order its name, termfreq,
 *  (reltermfreq only with a relevance set), collection frequency and, with
 *  the byte set, its max_part.  A client that combines several shards
 *  sends the whole collection's in MSG_GETMSET; each shard's server weighs
 *  with them and answers them back with its own max_parts added
 *  (Weight::Internal::set_max_part adds, it does not replace).
 */
#ifndef XG_SERVE_REMOTE_STATS_H
#define XG_SERVE_REMOTE_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "../../gpu/bm25.h"
#include "../../gpu/index/format_read.h"
#include "../../gpu/query_shape.h"
#include "../../shim/xg_shim.h"
#include "wire.h"

/* A client's statistics: the totals and terms in st, max_part per term
 * (zeros unless have_max_part). */
struct xg_remote_stats {
    struct xg_query_stats st;
    uint64_t rset_size;
    int have_max_part;
};

/* Read serialised statistics (the whole of p..p+n).  0, or -1 when they
 * are malformed, or XG_ERR_NOMEM. */
int xg_remote_stats_parse(const unsigned char *p, size_t n,
                          struct xg_remote_stats *out);
void xg_remote_stats_free(struct xg_remote_stats *s);

/* Append st serialised, with its max_parts when have_max_part (no
 * relevance set).  0 or -1 (out of memory). */
int xg_remote_stats_put(struct xg_sbuf *b, const struct xg_query_stats *st,
                        int have_max_part);

/* The statistics xg_shim_query_stats reads from Xapian for q (term[i]:
 * leaf i's term id in ix, or -1; a wildcard's expanded leaves are left
 * out, as Xapian gathers no term of a wildcard), from ix instead: on the
 * revision it was
 * exported from, the index holds every term with Xapian's termfreq and
 * collection frequency, and the same totals.  The caller has checked
 * that ix is of the database's revision.
 * XG_ERR_UNSUPPORTED (ask Xapian) for an index of several shards or a
 * query with an empty term; XG_ERR_NOMEM. */
int xg_remote_stats_of_index(const struct xg_index *ix,
                             const struct xg_query *q,
                             const int64_t *term,
                             struct xg_query_stats *out);

/* Add to st (byte-ordered, as xg_remote_stats_of_index or a client gave
 * them) the terms the stock server's match registers as it expands the
 * wildcards of u (the query before xg_query_expand_wildcards, which
 * registers none: Query::Internal::gather_terms skips them): each term it
 * reads that st lacks, with its termfreq and collection frequency in ix
 * (this database's: LocalSubMatch::open_post_list's lazy emplace) and
 * max_part 0 (unweighted in their synonym).  ix has one shard.
 * XG_ERR_NOMEM. */
int xg_remote_stats_add_expansions(struct xg_query_stats *st,
                                   const struct xg_index *ix,
                                   const struct xg_query *u);

/* The index of term (len bytes) in st's byte-ordered terms, or -1. */
int64_t xg_remote_stats_find(const struct xg_query_stats *st,
                             const char *term, uint32_t len);

/* What the stock server's matcher adds for q on its one-shard database db
 * (ix: its index, at its revision; term[i]: leaf i's term id there, or
 * -1) when weighing with the totals and termfreqs in `weigh` (a client's,
 * or the database's own) under BM25 p: each leaf that indexes a document
 * here (local_tf[i] > 0) adds its BM25Weight::get_maxpart() to its term's
 * max_part in *out (in leaf order), and *max_possible is every leaf's
 * maxpart summed in the shape of Xapian's postlist tree, as its
 * recalc_maxweight() does, each weighted synonym counting its own maxpart
 * (wdf bounded by the database's document length upper bound).  The
 * bound's inputs: each leaf's postlist wdf upper bound (from the index)
 * and the database's document length bounds (from Xapian).
 * *any_present: some weighted leaf indexes a document (Xapian then sends
 * the max_parts).  local_doccount: db's size.
 * XG_ERR_UNSUPPORTED for a database of several shards; Xapian's errors. */
int xg_remote_bounds(xg_db *db, const struct xg_index *ix,
                     const struct xg_query *q, const int64_t *term,
                     const struct xg_bm25_params *p,
                     const struct xg_weigh_stats *weigh,
                     const uint64_t *local_tf, uint64_t local_doccount,
                     struct xg_query_stats *out, double *max_possible,
                     int *any_present);

#endif
