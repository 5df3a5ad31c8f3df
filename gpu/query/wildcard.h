/** @file wildcard.h
 *  @brief OP_WILDCARD's expansion over the index's dictionary, as
 *         QueryWildcard::postlist expands it over Database::allterms().
 */
#ifndef XG_WILDCARD_H
#define XG_WILDCARD_H

#include "../index/format_read.h"
#include "../query_shape.h"

/* Replace each XG_QN_WILDCARD of q by the leaves of the index's terms that
 * start with its pattern, in byte order (an XG_QN_OR over them where more
 * than one; where none, its pattern's leaf stays: a term the index lacks,
 * which matches nothing, as Xapian's EmptyPostList).  The new leaves are
 * unweighted (factor 0) and leave q->query_length as it is (a wildcard
 * counts 1, QueryWildcard::get_length).  XG_ERR_UNSUPPORTED, q unchanged,
 * where stock would not answer the same: an index of several shards (each
 * sub-database expands on its own and registers its own term
 * statistics), an expansion past WILDCARD_LIMIT_ERROR's limit (stock
 * throws WildcardError), or one past the engines' leaf or node limits. */
int xg_query_expand_wildcards(struct xg_query *q, const struct xg_index *ix);

#endif
