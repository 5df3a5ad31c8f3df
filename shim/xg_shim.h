/** @file xg_shim.h
 *  @brief C API over Xapian 1.4.22: the only place that talks to Xapian.
 *
 *  One C++ file per Xapian contact: shim_db.cc (open, stats, doc lengths,
 *  postings), shim_query.cc (QueryParser, stock matcher), shim_plan.cc (the
 *  summation plan that mirrors Xapian's postlist tree).  Every function returns an
 *  enum xg_status and never lets a C++ exception escape; on error the
 *  message (naming the path and the fault) is in xg_last_error().
 */
#ifndef XG_SHIM_H
#define XG_SHIM_H

#include <stddef.h>
#include <stdint.h>

#include "../gpu/query_shape.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct xg_db xg_db;          /* an open (possibly sharded) database */
typedef struct xg_xquery xg_xquery;  /* a parsed Xapian::Query */

/* ---- shim_db.cc ------------------------------------------------------ */

/* Open a database from one or more paths.  Each path is a glass database
 * directory, a stub database file (or a directory holding a XAPIANDB stub),
 * which is expanded into its shards (recursively).  Several paths combine
 * in the order given, as Xapian::Database::add_database() does.  Shards are
 * also opened one by one, so each has its uuid and revision.
 * Errors: XG_ERR_IO / XG_ERR_XAPIAN with "PATH: reason". */
int xg_shim_db_open(const char *const *paths, size_t n_paths, xg_db **out);
void xg_shim_db_close(xg_db *db);

/* A database as a client opens it, from a stub file (Xapian reads it:
 * `remote HOST:PORT`, `remote :PROGRAM ARGS`, local lines), for
 * xg_shim_parse and xg_shim_search only: how `ab --engines ...,server`
 * reaches a remote server the way applications do. */
int xg_shim_db_open_client(const char *stub, xg_db **out);

struct xg_db_stats {
    uint64_t n_docs;        /* live documents over all shards */
    uint64_t total_length;  /* sum of their lengths */
    uint32_t last_docid;    /* combined get_lastdocid() */
    uint32_t n_shards;
    uint32_t doclen_min;    /* get_doclength_lower_bound() */
    uint32_t doclen_max;    /* get_doclength_upper_bound() */
};
/* The combined statistics Xapian keeps: cheap (no table is walked), so
 * every per-thread searcher may read them. */
int xg_shim_db_stats(xg_db *db, struct xg_db_stats *out);

/* The number of distinct terms summed over the shards (an upper bound on
 * the combined vocabulary, for progress reports): walks every shard's
 * term list once, about 0.1 s per 350k terms, then cached in db. */
int xg_shim_db_count_terms(xg_db *db, uint64_t *out);

struct xg_shard_info {
    char uuid[40];          /* NUL terminated */
    uint64_t revision;
    uint32_t doccount;
    uint32_t last_docid;    /* shard-local */
    const char *path;       /* the shard's directory */
};
int xg_shim_db_shard(xg_db *db, uint32_t shard, struct xg_shard_info *out);

/* Every live document: combined docids ascending, with lengths.  `docids`
 * and `lens` have room for stats.n_docs entries.  Reads each shard's
 * all-documents list once (never a per-posting doc length lookup). */
int xg_shim_db_doclens(xg_db *db, uint32_t *docids, uint32_t *lens);

/* One term's postings, as xg_shim_db_each_term hands them over.  `docids`
 * are combined docids, strictly ascending, `wdfs` their wdf, n = df over
 * all shards; `shard_df[s]` the term's frequency in shard s.  With
 * XG_TERMS_POSITIONS, `pos_counts[i]` is the number of positions of
 * posting i (Xapian's positionlist for that term and document) and
 * `positions` holds them all back to back, each posting's ascending, in
 * posting order (n_positions in all); without it both are NULL. */
struct xg_term_postings {
    const char *term;
    size_t term_len;
    const uint32_t *docids;
    const uint32_t *wdfs;
    uint32_t n;
    const uint32_t *shard_df;
    const uint32_t *pos_counts;
    const uint32_t *positions;
    uint64_t n_positions;
};

/* Called once per term, terms in byte order; the struct and its arrays
 * live until the call returns.  Return 0 to go on, nonzero to stop (that
 * value is returned by xg_shim_db_each_term). */
typedef int (*xg_term_fn)(void *ctx, const struct xg_term_postings *tp);

/* flags for xg_shim_db_each_term */
#define XG_TERMS_POSITIONS 1u   /* read each posting's positions too, through
                                   the same PostingIterator as its wdf */
int xg_shim_db_each_term(xg_db *db, unsigned flags, xg_term_fn fn, void *ctx);

/* 1 in *out when every shard that holds documents has positions
 * (Database::has_positions()), and there is one. */
int xg_shim_db_has_positions(xg_db *db, int *out);

/* Document values (format.h XG_SEC_VALUES).  The slots below `probe`
 * that hold a value in some document, ascending, into slots[0 .. *n). */
int xg_shim_db_value_slots(xg_db *db, uint32_t probe, uint32_t *slots,
                           uint32_t *n);

/* Shard `shard`'s statistics for `slot` as Xapian's matcher reads them
 * (get_value_freq, get_value_lower_bound, get_value_upper_bound); *fits
 * is 0 where a bound is longer than XG_FMT_VALUE_MAX. */
struct xg_fmt_value_bounds;
int xg_shim_db_value_bounds(xg_db *db, uint32_t shard, uint32_t slot,
                            struct xg_fmt_value_bounds *out, int *fits);

/* Each document's value in `slot`, shard by shard in local docid order
 * (combined docids).  `next` is the shard's next document with a value
 * (0: none); where documents lie between, `in_chunk` is 1 when Xapian's
 * check() at one of them lands on `next` (the two share a value chunk)
 * and 0 when it fails (docs/format.md, VALUES).  Return 0 to go on,
 * nonzero to stop (returned). */
typedef int (*xg_value_fn)(void *ctx, uint32_t docid, const char *v,
                           size_t len, uint32_t next, int in_chunk);
int xg_shim_db_each_value(xg_db *db, uint32_t slot, xg_value_fn fn,
                          void *ctx);

/* A bare pass over every posting (docid and wdf only), for the export speed
 * benchmark: returns the number of postings seen and a checksum of them. */
int xg_shim_db_scan_postings(xg_db *db, uint64_t *n_postings, uint64_t *sum);

/* Bytes of the postlist tables (postlist.glass) over all shards. */
int xg_shim_db_postlist_bytes(xg_db *db, uint64_t *bytes);

/* Bytes of the position tables (position.glass) over all shards; a shard
 * that has none (glass creates the table lazily) counts 0. */
int xg_shim_db_position_bytes(xg_db *db, uint64_t *bytes);

/* ---- shim_query.cc --------------------------------------------------- */

struct xg_parse_opts {
    int stem_english;       /* 1: Stem("english") with STEM_SOME; 0: none */
    int default_and;        /* 1: OP_AND between words; 0: OP_OR */
    const char *stopper;    /* NULL or "english" */
    unsigned flags;         /* QueryParser flags; 0 means FLAG_DEFAULT */
    int omega;              /* 1: Omega's default query construction
                               (prefixes, Omega's stop list instead of
                               `stopper`, size: ranges; docs/cli.md) */
    const char *const *filters; /* Omega's B= and N= terms (xg_search_opts) */
    size_t n_filters;
    const char *const *excludes;
    size_t n_excludes;
};

/* Parse `text` with Xapian's QueryParser. */
int xg_shim_parse(xg_db *db, const char *text, const struct xg_parse_opts *o,
                  xg_xquery **out);
void xg_shim_xquery_free(xg_xquery *q);

/* Convert to the engine shapes (query_shape.h).  XG_ERR_UNSUPPORTED with the
 * message "unsupported: <what>" (e.g. "unsupported: OP_PHRASE") for
 * anything else. */
int xg_shim_xquery_convert(const xg_xquery *q, struct xg_query *out);

/* 1 when a weighting scheme, as Xapian names and serialises it
 * (Weight::name(), Weight::serialise()), is BM25Weight(p), else 0: the one
 * test of "the router's BM25" for an Enquire's scheme (the plugin) and a
 * client's MSG_QUERY (serve).  Never throws. */
int xg_shim_weighting_is_bm25(const char *name, size_t name_len,
                              const void *params, size_t params_len,
                              const struct xg_bm25_params *p);

/* Query::get_description(), malloc'd. */
char *xg_shim_xquery_describe(const xg_xquery *q);

/* Run the stock matcher: Enquire with BM25Weight(p), get_mset(0, k). */
int xg_shim_search(xg_db *db, const xg_xquery *q,
                   const struct xg_bm25_params *p, uint32_t k,
                   struct xg_result *out);

/* The same with check_at_least = the database's size: the top k of stock's
 * full ranking, which its pruning cannot change.  Stock's top k can miss a
 * document its full ranking holds (the AND_MAYBE skip, docs/architecture.md);
 * ab and bench ask this before they call a difference a mismatch. */
int xg_shim_search_unpruned(xg_db *db, const xg_xquery *q,
                            const struct xg_bm25_params *p, uint32_t k,
                            struct xg_result *out);

/* ---- shim_remote.cc: what a remote-protocol search needs of Xapian ---- */

/* Xapian::Query::unserialise of the query in a client's MSG_QUERY (the
 * default Registry).  XG_ERR_ARG when Xapian cannot read it. */
int xg_shim_query_unserialise(const void *bytes, size_t n, xg_xquery **out);

/* The statistics Xapian's server gathers for a query before it matches
 * (Weight::Internal::accumulate_stats, no relevance set): the database's
 * size and total length and, for each distinct term of the query in byte
 * order, its termfreq and collection frequency.  xg_shim_query_bounds
 * adds what the match itself reports. */
struct xg_query_stats {
    uint64_t total_length;
    uint64_t doccount;
    uint32_t n_terms;
    char **terms;           /* NUL-terminated copies (a term may hold NUL: */
    uint32_t *term_len;     /* its length is term_len[i]) */
    uint64_t *termfreq;
    uint64_t *collfreq;
    double *max_part;       /* xg_shim_query_bounds: MSet::get_termweight */
    double max_possible;    /* xg_shim_query_bounds: get_max_possible() */
};
int xg_shim_query_stats(xg_db *db, const xg_xquery *q,
                        struct xg_query_stats *out);
void xg_shim_query_stats_free(struct xg_query_stats *s);

/* max_possible and each term's max_part, as Xapian's matcher computes them
 * for q under BM25Weight(p) from the database's own statistics: read from
 * an Enquire that asks for no document (its postlist tree is built and
 * weighed, nothing is matched). */
int xg_shim_query_bounds(xg_db *db, const xg_xquery *q,
                         const struct xg_bm25_params *p,
                         struct xg_query_stats *s);

/* Stock Xapian's own answer, as its remote server computes it: Enquire
 * with BM25Weight(p), the top k = first + maxitems (the server keeps that
 * many before it drops the first `first`) with check_at_least, on the
 * database's own statistics.  Fills res (the top k), the raw match
 * counts the server sends (MSet::get_uncollapsed_matches_estimated() is
 * the unrounded estimate), max_attained, and s's max_possible and
 * max_part, all from the one match. */
struct xg_stock_mset {
    struct xg_result res;
    uint64_t lower, estimated, upper;
    double max_attained;
    int top_percent;        /* the first item's get_percent(); -1: none */
};
int xg_shim_stock_mset(xg_db *db, const xg_xquery *q,
                       const struct xg_bm25_params *p, uint32_t k,
                       uint32_t check_at_least, struct xg_query_stats *s,
                       struct xg_stock_mset *out);

/* The database's document length bounds (Database::
 * get_doclength_lower_bound() and _upper_bound()): BM25Weight::get_maxpart()
 * bounds each leaf with the lower, a synonym's wdf with the upper. */
int xg_shim_doclen_bounds(xg_db *db, uint32_t *lb, uint32_t *ub);

/* How many of q's subqueries document `did` matches (Xapian's
 * count_matching_subqs() for that document): its weighted leaves, a
 * phrase clause only where it holds.  XG_ERR_UNSUPPORTED for the general
 * form and an AND whose OR groups hold phrases, whose count only the tree
 * matcher knows (xg_hit.matched_leaves). */
int xg_shim_doc_leaves(xg_db *db, const struct xg_query *q, uint32_t did,
                       uint32_t *n);

/* ---- shim_plan.cc ---------------------------------------------------- */

/* Build the summation plan Xapian builds for `q` on one shard, from each
 * leaf's termfreq in that shard and the shard's document count. */
int xg_shim_plan(const struct xg_query *q, const uint32_t *leaf_shard_df,
                 uint32_t shard_doccount, struct xg_plan *out);

/* OrContext::select_most_frequent(k) over n terms of termfreqs tf[] in the
 * order they were added (a WILDCARD_LIMIT_MOST_FREQUENT expansion):
 * keep[0 .. k) = the indices it keeps, in the order it leaves them
 * (libstdc++'s std::nth_element, run as libxapian runs it). */
int xg_shim_most_frequent(const uint32_t *tf, uint32_t n, uint32_t k,
                          uint32_t *keep);

#ifdef __cplusplus
}
#endif
#endif
