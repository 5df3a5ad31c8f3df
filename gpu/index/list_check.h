/** @file list_check.h
 *  @brief Every value the engines trust, checked against the postings
 *         when an index is opened: no later stage (the CPU matcher, the
 *         kernels) meets a value that was not.
 *
 *  The section checksums catch accidents; a file whose checksums were
 *  recomputed over changed values must not crash a matcher or change a
 *  result either.  Per list: every block decodes, ascends and ends at its
 *  skip entry; the hash-segment starts are exactly those of the postings;
 *  each posting lies inside the range the regression predicts for it;
 *  each posting passes its Bloom filter with the header's hash count; and
 *  each impact code bounds its posting's BM25 part from above; the wdfs
 *  add up to the term's collection frequency, their maxima are the
 *  stored ones and none exceeds its document's length.  The work is one
 *  pass over the postings, on every core.
 */
#ifndef XG_LIST_CHECK_H
#define XG_LIST_CHECK_H

#include "format_read.h"

/* XG_OK, or XG_ERR_FORMAT naming the file, the term and the fault
 * (XG_ERR_NOMEM). */
int xg_fmt_check_lists(const struct xg_index *ix);

#endif
