/** @file wildcard.c
 *  @brief OP_WILDCARD's expansion (see wildcard.h).
 */
#include "wildcard.h"

#include <stdlib.h>
#include <string.h>

#include "../runtime/error.h"

/* The terms one wildcard expands to: [off, off + len) in a shared buffer. */
struct expansion {
    char *bytes;
    size_t n_bytes, cap;
    uint32_t *off, *len;        /* one per term */
    uint32_t *tf;               /* one per term: its document frequency */
    const struct xg_index *ix;
    uint32_t n, stop;           /* terms kept; stop after this many */
    int rc;
};

static int collect(void *ctx, uint64_t id, const char *t, size_t n)
{
    struct expansion *e = ctx;
    if (e->n == e->stop) return 1;
    if (e->n_bytes + n + 1 > e->cap) {
        size_t cap = 2 * (e->n_bytes + n + 1);
        char *b = realloc(e->bytes, cap);
        if (!b) {
            e->rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
            return 1;
        }
        e->bytes = b;
        e->cap = cap;
    }
    memcpy(e->bytes + e->n_bytes, t, n);
    e->bytes[e->n_bytes + n] = '\0';
    e->off[e->n] = (uint32_t)e->n_bytes;
    e->len[e->n] = (uint32_t)n;
    e->tf[e->n] = e->ix->terms[id].df;
    e->n_bytes += n + 1;
    ++e->n;
    return 0;
}

/* Terms a WILDCARD_LIMIT_MOST_FREQUENT wildcard may expand to before its
 * selection (a two-letter prefix of a large vocabulary has tens of
 * thousands); past it, stock answers. */
#define MOST_FREQUENT_SCAN (1u << 17)

/* WILDCARD_LIMIT_MOST_FREQUENT past its limit: QueryWildcard::postlist
 * adds every term to its OrContext and keeps the k that
 * select_most_frequent(k) leaves, in the order it leaves them.  The
 * kept terms' bytes move to the start of the wildcard's. */
static int keep_most_frequent(struct expansion *e, uint32_t first,
                              uint32_t k, xg_most_frequent_fn select)
{
    const uint32_t n = e->n - first;
    uint32_t keep[XG_QUERY_MAX_LEAVES], off[XG_QUERY_MAX_LEAVES];
    uint32_t len[XG_QUERY_MAX_LEAVES], tf[XG_QUERY_MAX_LEAVES];
    if (!select)
        return xg_set_error(XG_ERR_UNSUPPORTED, "unsupported: a wildcard "
                            "limited to its most frequent terms");
    if (k > XG_QUERY_MAX_LEAVES)
        return xg_set_error(XG_ERR_UNSUPPORTED, "unsupported: a wildcard "
                            "keeping more than %u terms", XG_QUERY_MAX_LEAVES);
    int rc = select(e->tf + first, n, k, keep);
    if (rc) return rc;
    size_t bytes = 0;
    for (uint32_t i = 0; i < k; ++i) bytes += e->len[first + keep[i]] + 1;
    char *tmp = malloc(bytes ? bytes : 1);
    if (!tmp) return xg_set_error(XG_ERR_NOMEM, "out of memory");
    const uint32_t base = e->off[first];
    size_t at = 0;
    for (uint32_t i = 0; i < k; ++i) {
        const uint32_t j = first + keep[i];
        memcpy(tmp + at, e->bytes + e->off[j], e->len[j] + 1);
        off[i] = base + (uint32_t)at;
        len[i] = e->len[j];
        tf[i] = e->tf[j];
        at += e->len[j] + 1;
    }
    memcpy(e->bytes + base, tmp, bytes);
    free(tmp);
    e->n_bytes = base + bytes;
    memcpy(e->off + first, off, k * sizeof *off);
    memcpy(e->len + first, len, k * sizeof *len);
    memcpy(e->tf + first, tf, k * sizeof *tf);
    e->n = first + k;
    return XG_OK;
}

/* Expand wildcard w into e's terms: [first, e->n). */
static int expand_one(const struct xg_query *q, const struct xg_index *ix,
                      const struct xg_qwild *w, struct expansion *e,
                      uint32_t *first, xg_most_frequent_fn most_frequent)
{
    const struct xg_qleaf *pat = &q->leaves[w->leaf];
    const uint32_t room = XG_QUERY_MAX_LEAVES;
    const int most = w->max_type == XG_WILDCARD_LIMIT_MOST_FREQUENT;
    const int limited = !most && w->max_expansion != 0 &&
                        w->max_expansion <= room;
    /* LIMIT_FIRST keeps the first max_expansion terms; otherwise one term
     * past the limit (or past the engines' room) is read to tell that the
     * expansion overflows.  MOST_FREQUENT reads them all. */
    const int first_n = w->max_type == XG_WILDCARD_LIMIT_FIRST;
    uint32_t want = limited ? w->max_expansion + !first_n : room + 1;
    *first = e->n;
    e->stop = e->n + want > room + 1 ? room + 1 : e->n + want;
    if (most) e->stop = e->n + MOST_FREQUENT_SCAN + 1;
    int rc = xg_fmt_prefix(ix, pat->term, pat->term_len, collect, e);
    if (rc || (rc = e->rc)) return rc;
    if (most && e->n - *first > MOST_FREQUENT_SCAN)
        return xg_set_error(XG_ERR_UNSUPPORTED, "unsupported: a wildcard "
                            "of more than %u terms to choose from",
                            MOST_FREQUENT_SCAN);
    if (most && e->n - *first > w->max_expansion &&
        (rc = keep_most_frequent(e, *first, w->max_expansion, most_frequent)))
        return rc;
    if (e->n > room)
        return xg_set_error(XG_ERR_UNSUPPORTED, "unsupported: wildcards "
                            "that expand to more than %u terms", room);
    if (limited && !first_n && e->n - *first > w->max_expansion)
        return xg_set_error(XG_ERR_UNSUPPORTED, "unsupported: a wildcard "
                            "past its expansion limit (stock throws)");
    return XG_OK;
}

int xg_query_expand_wildcards(struct xg_query *q, const struct xg_index *ix,
                              xg_most_frequent_fn most_frequent)
{
    if (q->n_wildcards == 0) return XG_OK;
    if (ix->hdr->n_shards > 1)
        return xg_set_error(XG_ERR_UNSUPPORTED, "unsupported: a wildcard "
                            "over several shards");
    const uint32_t nw = q->n_wildcards;
    struct expansion e = {0};
    e.ix = ix;
    uint32_t first[XG_QUERY_MAX_WILDCARDS + 1];
    uint32_t *remap = NULL;
    struct xg_qleaf *leaves = NULL;
    struct xg_qnode *nodes = NULL;
    char *strbuf = NULL;
    int rc = XG_OK;
    /* Room for the leaves, and for a most-frequent wildcard's choice. */
    size_t cap = XG_QUERY_MAX_LEAVES + 1;
    for (uint32_t w = 0; w < nw; ++w)
        if (q->wildcards[w].max_type == XG_WILDCARD_LIMIT_MOST_FREQUENT)
            cap = XG_QUERY_MAX_LEAVES + 2 + MOST_FREQUENT_SCAN;
    e.off = malloc(cap * sizeof *e.off);
    e.len = malloc(cap * sizeof *e.len);
    e.tf = malloc(cap * sizeof *e.tf);
    remap = malloc(XG_QUERY_MAX_LEAVES * sizeof *remap);
    leaves = malloc(XG_QUERY_MAX_LEAVES * sizeof *leaves);
    nodes = malloc(XG_QUERY_MAX_NODES * sizeof *nodes);
    if (!e.off || !e.len || !e.tf || !remap || !leaves || !nodes) {
        rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (uint32_t w = 0; w < nw && !rc; ++w) {
        if (q->wildcards[w].leaf >= q->n_leaves) {
            rc = xg_set_error(XG_ERR_ARG, "query: bad wildcard leaf");
            break;
        }
        rc = expand_one(q, ix, &q->wildcards[w], &e, &first[w],
                        most_frequent);
    }
    if (rc) goto done;
    first[nw] = e.n;

    /* The leaves, each wildcard's pattern replaced by its terms (kept
     * where it has none). */
    uint32_t wild_of[XG_QUERY_MAX_LEAVES];
    for (uint32_t i = 0; i < q->n_leaves; ++i) wild_of[i] = UINT32_MAX;
    for (uint32_t w = 0; w < nw; ++w) wild_of[q->wildcards[w].leaf] = w;
    size_t bytes = e.n_bytes;
    uint32_t nl = 0;
    for (uint32_t i = 0; i < q->n_leaves; ++i) {
        const uint32_t w = wild_of[i];
        const uint32_t n = w == UINT32_MAX ? 1 : first[w + 1] - first[w];
        nl += n ? n : 1;
        bytes += q->leaves[i].term_len + 1;
    }
    if (nl > XG_QUERY_MAX_LEAVES) {
        rc = xg_set_error(XG_ERR_UNSUPPORTED, "unsupported: more than %u "
                          "leaves once wildcards are expanded",
                          XG_QUERY_MAX_LEAVES);
        goto done;
    }
    if (!(strbuf = malloc(bytes ? bytes : 1))) {
        rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
        goto done;
    }
    memcpy(strbuf, e.bytes, e.n_bytes);
    char *p = strbuf + e.n_bytes;
    nl = 0;
    for (uint32_t i = 0; i < q->n_leaves; ++i) {
        const uint32_t w = wild_of[i];
        remap[i] = nl;
        if (w != UINT32_MAX && first[w + 1] > first[w]) {
            for (uint32_t j = first[w]; j < first[w + 1]; ++j) {
                struct xg_qleaf *l = &leaves[nl++];
                *l = q->leaves[i];
                l->term = strbuf + e.off[j];
                l->term_len = e.len[j];
                l->expanded = 1;
            }
            continue;
        }
        leaves[nl] = q->leaves[i];
        leaves[nl].expanded = w != UINT32_MAX;
        memcpy(p, q->leaves[i].term, q->leaves[i].term_len);
        p[q->leaves[i].term_len] = '\0';
        leaves[nl++].term = p;
        p += q->leaves[i].term_len + 1;
    }

    /* The nodes: a wildcard becomes its leaves and an OR over them. */
    uint32_t nn = 0;
    for (uint32_t i = 0; i < q->n_nodes && !rc; ++i) {
        struct xg_qnode x = q->nodes[i];
        uint32_t from = 0, to = 0;
        if (x.kind == XG_QN_LEAF) {
            x.arg = (uint16_t)remap[x.arg];
        } else if (x.kind == XG_QN_WILDCARD) {
            const uint32_t w = x.arg, leaf = q->wildcards[w].leaf;
            from = remap[leaf];
            to = from + (first[w + 1] > first[w] ? first[w + 1] - first[w]
                                                  : 1);
        }
        const uint32_t need = to > from ? to - from + (to - from > 1) : 1;
        if (nn + need > XG_QUERY_MAX_NODES) {
            rc = xg_set_error(XG_ERR_UNSUPPORTED, "unsupported: more than %u "
                              "nodes once wildcards are expanded",
                              XG_QUERY_MAX_NODES);
            break;
        }
        if (to == from) {
            nodes[nn++] = x;
            continue;
        }
        for (uint32_t j = from; j < to; ++j)
            nodes[nn++] = (struct xg_qnode){XG_QN_LEAF, (uint16_t)j};
        if (to - from > 1)
            nodes[nn++] = (struct xg_qnode){XG_QN_OR, (uint16_t)(to - from)};
    }
    if (rc) goto done;

    for (uint32_t f = 0; f < q->n_filters; ++f)
        q->filters[f].first = remap[q->filters[f].first];
    for (uint32_t r = 0; r < q->n_ranges; ++r)
        q->ranges[r].leaf = remap[q->ranges[r].leaf];
    memcpy(q->leaves, leaves, nl * sizeof *leaves);
    memcpy(q->nodes, nodes, nn * sizeof *nodes);
    q->n_leaves = nl;
    q->n_nodes = nn;
    q->n_wildcards = 0;
    free(q->strbuf);
    q->strbuf = strbuf;
    strbuf = NULL;
done:
    free(strbuf);
    free(e.bytes);
    free(e.off);
    free(e.len);
    free(e.tf);
    free(remap);
    free(leaves);
    free(nodes);
    return rc;
}
