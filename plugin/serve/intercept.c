/** @file intercept.c
 *  @brief The interception point of the relay (intercept.h): which
 *         client messages are answered here.
 */
#include "intercept.h"

#include <stdlib.h>

#include "../../gpu/runtime/error.h"
#include "search.h"

struct xg_serve_icpt {
    struct xg_serve_search *search;
};

struct xg_serve_icpt *xg_serve_icpt_open(xg_context *ctx)
{
    struct xg_serve_icpt *s = calloc(1, sizeof *s);
    if (s && !(s->search = xg_serve_search_open(ctx))) {
        free(s);
        s = NULL;
    }
    return s;
}

void xg_serve_icpt_close(struct xg_serve_icpt *s)
{
    if (!s) return;
    xg_serve_search_close(s->search);
    free(s);
}

int xg_serve_icpt_busy(const struct xg_serve_icpt *s)
{
    return xg_serve_search_pending(s->search);
}

int xg_serve_icpt_ahead(struct xg_serve_icpt *s)
{
    return xg_serve_search_ahead(s->search);
}

int xg_serve_intercept(struct xg_serve_icpt *s, unsigned type,
                       const unsigned char *payload, size_t n,
                       struct xg_sbuf *reply, struct xg_sbuf *replay)
{
    if (xg_serve_search_pending(s->search)) {
        /* After REPLY_STATS the stock server reads nothing but the
         * MSG_GETMSET (remoteserver.cc's msg_query). */
        if (type != XG_MSG_GETMSET) {
            xg_set_error(XG_ERR_ARG, "message type %u where MSG_GETMSET was "
                         "due", type);
            return XG_SERVE_CLOSE;
        }
        int rc = xg_serve_search_getmset(s->search, payload, n, reply, replay);
        return rc < 0 ? XG_SERVE_CLOSE : rc ? XG_SERVE_HANDLED
                                            : XG_SERVE_REPLAY;
    }
    if (type == XG_MSG_REOPEN) xg_serve_search_reopened(s->search);
    if (type == XG_MSG_QUERY) {
        int rc = xg_serve_search_query(s->search, payload, n, reply);
        return rc < 0 ? XG_SERVE_CLOSE : rc ? XG_SERVE_HANDLED
                                            : XG_SERVE_NOT_HANDLED;
    }
    return XG_SERVE_NOT_HANDLED;
}
