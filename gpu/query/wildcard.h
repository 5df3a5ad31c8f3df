/** @file wildcard.h
 *  @brief OP_WILDCARD's expansion over the index's dictionary, as
 *         QueryWildcard::postlist expands it over Database::allterms().
 */
#ifndef XG_WILDCARD_H
#define XG_WILDCARD_H

#include "../index/format_read.h"
#include "../query_shape.h"

/* OrContext::select_most_frequent(k) over n terms of termfreqs tf[]:
 * keep[0 .. k) = the terms it keeps, in its order (the shim's, which
 * runs libstdc++'s algorithm as libxapian does). */
typedef int (*xg_most_frequent_fn)(const uint32_t *tf, uint32_t n,
                                   uint32_t k, uint32_t *keep);

/* Replace each XG_QN_WILDCARD of q by the leaves of the index's terms that
 * start with its pattern, in byte order (past a WILDCARD_LIMIT_MOST_FREQUENT
 * limit, the ones most_frequent keeps, in its order; without most_frequent
 * such a wildcard is unsupported) (an XG_QN_OR over them where more
 * than one; where none, its pattern's leaf stays: a term the index lacks,
 * which matches nothing, as Xapian's EmptyPostList).  The new leaves are
 * unweighted (factor 0), marked expanded, and leave q->query_length as it
 * is (a wildcard counts 1, QueryWildcard::get_length).  XG_ERR_UNSUPPORTED, q unchanged,
 * where stock would not answer the same: an index of several shards (each
 * sub-database expands on its own and registers its own term
 * statistics), an expansion past WILDCARD_LIMIT_ERROR's limit (stock
 * throws WildcardError), or one past the engines' leaf or node limits. */
int xg_query_expand_wildcards(struct xg_query *q, const struct xg_index *ix,
                              xg_most_frequent_fn most_frequent);

#endif
