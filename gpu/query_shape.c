/** @file query_shape.c
 *  @brief Release functions and properties of the structs of
 *         query_shape.h.
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

uint32_t xg_query_weighted_subqs(const struct xg_query *q)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < q->n_leaves; ++i) n += q->leaves[i].factor != 0;
    if (q->op == XG_QOP_TREE)
        for (uint32_t i = 0; i < q->n_syns; ++i) n += q->syns[i].factor != 0;
    return n;
}

/* How many nodes a node of the general form takes off the stack. */
static uint32_t node_kids(const struct xg_qnode *x)
{
    switch (x->kind) {
    case XG_QN_OR: case XG_QN_AND: case XG_QN_FILTER: case XG_QN_AND_NOT:
    case XG_QN_AND_MAYBE:
        return x->arg;
    case XG_QN_SCALE: case XG_QN_SYN:
        return 1;
    default:    /* LEAF, PHRASE (over its filter's leaves), WILDCARD */
        return 0;
    }
}

int xg_query_negated_leaves(const struct xg_query *q, uint8_t *neg)
{
    for (uint32_t i = 0; i < q->n_leaves; ++i) neg[i] = q->leaves[i].negated;
    if (q->op != XG_QOP_TREE) return 0;
    /* From the root down (the postfix order backwards: each node pushes
     * its kids' slots, its last kid on top): a slot is 1 under an
     * AND_NOT's later operand. */
    uint8_t at[XG_QUERY_MAX_NODES];
    uint32_t sp = 0;
    at[sp++] = 0;
    for (uint32_t i = q->n_nodes; i-- > 0;) {
        if (sp == 0) return -1;
        const uint8_t here = at[--sp];
        const struct xg_qnode *x = &q->nodes[i];
        const uint32_t kids = node_kids(x);
        if (x->kind == XG_QN_LEAF) neg[x->arg] = here;
        if (x->kind == XG_QN_PHRASE)
            for (uint32_t l = 0; l < q->filters[x->arg].n; ++l)
                neg[q->filters[x->arg].first + l] = here;
        if (sp + kids > XG_QUERY_MAX_NODES) return -1;
        for (uint32_t k = 0; k < kids; ++k)
            at[sp++] = here || (x->kind == XG_QN_AND_NOT && k > 0);
    }
    return sp == 0 ? 0 : -1;
}

