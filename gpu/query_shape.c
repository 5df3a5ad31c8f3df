/** @file query_shape.c
 *  @brief Release functions for the structs of query_shape.h.
 */
#include "query_shape.h"

#include <stdlib.h>

void xg_query_free(struct xg_query *q)
{
    if (!q) return;
    free(q->strbuf);
    q->strbuf = NULL;
    q->n_leaves = 0;
}

void xg_result_free(struct xg_result *r)
{
    if (!r) return;
    free(r->hits);
    r->hits = NULL;
    r->n_hits = 0;
}
