/** @file search.h
 *  @brief A client's search (MSG_QUERY, then MSG_GETMSET) answered by the
 *         engines, with the reply bytes the stock server would send.
 *
 *  MSG_QUERY: a query in the shapes the engines serve, with the settings
 *  they serve (BM25Weight with the server's parameters, relevance order,
 *  ascending docids, no collapse, cutoff, time limit, relevance set or
 *  match spy), gets its REPLY_STATS here: the statistics xapian-progsrv
 *  would send (shim_remote.cc).  Anything else is not handled and goes to
 *  the child whole.
 *
 *  MSG_GETMSET: when the client's global statistics are this database's
 *  own, REPLY_RESULTS is built here: from the engine's exact top k and
 *  Xapian's bounds when the router gives the query to an engine (the
 *  MSet xapian-progsrv would send, except that the match counts are
 *  exact where stock's are estimates: docs/server.md), or from stock
 *  Xapian's own match run in-process when the router gives it to stock
 *  (every byte as xapian-progsrv's).  With several shards' statistics the
 *  search is replayed to the child (the relay sends it the MSG_QUERY,
 *  drops the child's REPLY_STATS, which equal ours, and relays its
 *  REPLY_RESULTS).
 */
#ifndef XG_SERVE_SEARCH_H
#define XG_SERVE_SEARCH_H

#include <stddef.h>
#include <stdint.h>

#include "../xapian-gpu.h"
#include "wire.h"

struct xg_serve_search;

/* One connection's search state over ctx (not owned; NULL: nothing is
 * handled).  NULL only when out of memory. */
struct xg_serve_search *xg_serve_search_open(xg_context *ctx);
void xg_serve_search_close(struct xg_serve_search *s);

/* The client sent MSG_REOPEN: its child may now read a newer revision
 * than the index holds, so its searches go to the child from now on. */
void xg_serve_search_reopened(struct xg_serve_search *s);

/* Whether a MSG_QUERY was answered here and its MSG_GETMSET is due. */
int xg_serve_search_pending(const struct xg_serve_search *s);

/* MSG_QUERY: 1 after appending REPLY_STATS to *reply; 0: not handled
 * (relay it); -1: out of memory or a database error (logged by the
 * caller from xg_last_error(); the connection closes). */
int xg_serve_search_query(struct xg_serve_search *s, const unsigned char *p,
                          size_t n, struct xg_sbuf *reply);

/* MSG_GETMSET of the pending query: 1 after appending REPLY_RESULTS to
 * *reply; 0: replay, for several shards' statistics (the MSG_QUERY frame
 * is appended to *replay: the child must get it first); -1 as above. */
int xg_serve_search_getmset(struct xg_serve_search *s, const unsigned char *p,
                            size_t n, struct xg_sbuf *reply,
                            struct xg_sbuf *replay);

/* After REPLY_STATS went out: answer the pending search now, for the top
 * k the connection's last MSG_GETMSET asked with this database's own
 * statistics, while the client reads the statistics and sends its
 * MSG_GETMSET.  That request, if it asks the same, gets the answer at
 * once; else the search is answered again for it.  Nothing is done
 * without such a request before, for a wildcard (its expansion adds to
 * the reply's statistics), where the router gives the search to stock,
 * or with XG_SERVE_NO_AHEAD=1.  0, or -1 out of memory. */
int xg_serve_search_ahead(struct xg_serve_search *s);

/* Searches answered ahead and sent, and answered ahead in vain (the
 * request asked another top k or other statistics), in this process. */
void xg_serve_search_ahead_counts(uint64_t *sent, uint64_t *dropped);

#endif
