/** @file unserved.h
 *  @brief Why queries went to stock as unsupported: each reason with its
 *         count, for the routes lines of serve and ab (issue 23: the
 *         planner names and counts what it does not serve).
 *
 *  A reason is the shim's "unsupported: ..." message cut at " inside "
 *  (the operator, not where it stood), or the front's own ("OP_PHRASE
 *  in an AND's OR through Enquire").  Only queries that go to stock
 *  this way take the lock.
 */
#ifndef XG_UNSERVED_H
#define XG_UNSERVED_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define XG_UNSERVED_MAX 24      /* reasons kept apart; the rest "other" */
#define XG_UNSERVED_WHY 64      /* bytes of a reason kept */

struct xg_unserved {
    pthread_mutex_t mu;
    uint32_t n;
    uint64_t other;
    struct {
        char why[XG_UNSERVED_WHY];
        uint64_t count;
    } v[XG_UNSERVED_MAX];
};

void xg_unserved_init(struct xg_unserved *u);
void xg_unserved_destroy(struct xg_unserved *u);
/* Count one query for `message` (NULL: "unknown"). */
void xg_unserved_note(struct xg_unserved *u, const char *message);
/* "N reason; M reason; ..." most first, into buf (always terminated);
 * "" when none. */
void xg_unserved_format(struct xg_unserved *u, char *buf, size_t n);

#endif
