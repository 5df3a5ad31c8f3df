/** @file xg_shim.hh
 *  @brief The shim's C++ entry points, for the plugin's C++ glue
 *         (plugin/accelerate.cc): a Xapian::Query the application built
 *         becomes the shim's opaque query.
 */
#ifndef XG_SHIM_HH
#define XG_SHIM_HH

#include <xapian.h>

#include "xg_shim.h"

/* A copy of `q` as the shim's query (free with xg_shim_xquery_free), or
 * NULL when out of memory. */
xg_xquery *xg_shim_xquery_wrap(const Xapian::Query &q);

/* The Xapian::Query inside a shim query. */
const Xapian::Query &xg_shim_xquery_get(const xg_xquery *q);

/* Stock Xapian: Enquire with BM25Weight(p) (NULL: defaults) on the whole
 * database, get_mset(first, maxitems) into `out`. */
int xg_shim_search_query(xg_db *db, const Xapian::Query &q,
                         const struct xg_bm25_params *p, uint32_t first,
                         uint32_t maxitems, struct xg_result *out);

/* For each shard s of db: bounds[3s .. 3s+2] = the lower bound, estimate
 * and upper bound of q's matches that stock Xapian starts from
 * (shim_bounds.cc). */
int xg_shim_tree_bounds(xg_db *db, const Xapian::Query &q, uint64_t *bounds);

#endif
