/** @file searcher.h
 *  @brief Internal side of the public searcher, for the CLI and tests.
 */
#ifndef XG_SEARCHER_H
#define XG_SEARCHER_H

#include "../gpu/format_read.h"
#include "../shim/xg_shim.h"
#include "xapian-gpu.h"

xg_db *xg_searcher_db(xg_searcher *s);
const struct xg_index *xg_searcher_index(const xg_searcher *s);

/* Parse once, answer with several engines (the A/B comparison). */
int xg_searcher_parse(xg_searcher *s, const char *text,
                      const struct xg_search_opts *o, xg_xquery **out);
int xg_searcher_run(xg_searcher *s, const xg_xquery *xq,
                    const struct xg_search_opts *o, struct xg_result *out);

#endif
