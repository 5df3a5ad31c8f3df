/** @file fuzz_queries.c
 *  @brief libFuzzer target: the --queries file reader (plugin/cli/
 *         query_file.c) and what every query text then goes through:
 *         Xapian's QueryParser (plain and Omega's construction) and the
 *         conversion to the engines' shape (shim_query.cc).
 *
 *  The input is a query file (corpus/queries: the bundled sample's
 *  queries and written ones with every operator); the parser options
 *  (stemming, AND, stopper, Omega's construction, wildcards) come from
 *  its length.  A file that loads must give queries with a qid and a text
 *  each; a query the shim converts must be a shape the engines can trust
 *  (leaves within the limit, each term's bytes as long as it says,
 *  groups inside the group count, positive scale factors, the query
 *  length the sum of the wqfs; the general form's nodes a well-formed
 *  postfix tree that uses each leaf once; a value range's leaf without a
 *  term and of wqf 0).  A refusal must give a negative code and
 *  one line naming the file.
 */
#include <stdint.h>
#include <string.h>

#include "../../gpu/query_shape.h"
#include "../../plugin/cli/query_file.h"
#include "../../shim/xg_shim.h"
#include "fuzz_file.h"

/* The general form's nodes: a postfix program that leaves one node, where
 * every leaf is used once, by a LEAF node, a PHRASE's filter or a
 * WILDCARD's pattern. */
static void check_nodes(const struct xg_query *q)
{
    uint8_t used[XG_QUERY_MAX_LEAVES] = {0};
    uint32_t depth = 0;
    if (q->n_leaves && (q->n_nodes == 0 || q->n_nodes > XG_QUERY_MAX_NODES))
        abort();
    for (uint32_t i = 0; i < q->n_nodes; ++i) {
        const struct xg_qnode *x = &q->nodes[i];
        uint32_t kids = 0;
        if (x->kind == XG_QN_LEAF) {
            if (x->arg >= q->n_leaves || used[x->arg]++) abort();
        } else if (x->kind == XG_QN_PHRASE) {
            if (x->arg >= q->n_filters) abort();
            const struct xg_qfilter *qf = &q->filters[x->arg];
            for (uint32_t j = qf->first; j < qf->first + qf->n; ++j)
                if (used[j]++) abort();
        } else if (x->kind == XG_QN_SCALE) {
            kids = 1;
        } else if (x->kind == XG_QN_SYN) {
            if (x->arg >= q->n_syns || !(q->syns[x->arg].factor >= 0)) abort();
            kids = 1;
        } else if (x->kind == XG_QN_WILDCARD) {
            if (x->arg >= q->n_wildcards) abort();
            const uint32_t l = q->wildcards[x->arg].leaf;
            if (l >= q->n_leaves || used[l]++) abort();
        } else if (x->kind >= XG_QN_OR && x->kind <= XG_QN_AND_MAYBE) {
            kids = x->arg;
            if (kids < 1) abort();
        } else {
            abort();
        }
        if (kids > depth) abort();
        depth = depth - kids + 1;
    }
    for (uint32_t i = 0; i < q->n_leaves; ++i)
        if (!used[i]) abort();
    if (q->n_leaves && depth != 1) abort();
}

static void check_shape(const struct xg_query *q)
{
    if (q->op != XG_QOP_OR && q->op != XG_QOP_AND && q->op != XG_QOP_TREE)
        abort();
    const int tree = q->op == XG_QOP_TREE;
    if (tree) check_nodes(q);
    if (q->n_leaves > XG_QUERY_MAX_LEAVES) abort();
    if (q->n_leaves && (q->n_groups == 0 || q->n_groups > q->n_leaves)) abort();
    if (q->op == XG_QOP_OR && q->n_leaves && q->n_groups != 1) abort();
    uint64_t len = 0;
    uint32_t negated = 0;
    if (q->n_ranges > XG_QUERY_MAX_RANGES || (q->n_ranges && !tree)) abort();
    for (uint32_t r = 0; r < q->n_ranges; ++r) {
        const struct xg_qrange *vr = &q->ranges[r];
        if (vr->kind < XG_QR_RANGE || vr->kind > XG_QR_LE ||
            vr->leaf >= q->n_leaves || q->leaves[vr->leaf].range != r + 1 ||
            vr->begin_len > XG_QRANGE_MAX || vr->end_len > XG_QRANGE_MAX)
            abort();
    }
    for (uint32_t i = 0; i < q->n_leaves; ++i) {
        const struct xg_qleaf *l = &q->leaves[i];
        /* A value range's leaf: no term, wqf 0, one of the ranges. */
        if (l->range) {
            if (l->range > q->n_ranges || l->term_len || l->wqf ||
                q->ranges[l->range - 1].leaf != i || l->negated ||
                !(l->factor >= 0))
                abort();
            continue;
        }
        /* An AND_NOT's negated leaves have factor 0, the rest above 0;
         * the general form's unweighted leaves (FILTER, AND_NOT) 0. */
        if (!l->term || l->term_len == 0 || memchr(l->term, 0, l->term_len) ||
            l->group >= q->n_groups ||
            (l->negated ? l->factor != 0
                        : !(l->factor > 0 || (tree && l->factor == 0))) ||
            (tree && l->negated) || l->wqf == 0)
            abort();
        negated += l->negated != 0;
        len += l->wqf;
    }
    if (len != q->query_length || negated != q->n_negated) abort();
    if (q->n_filters > XG_QUERY_MAX_FILTERS) abort();
    for (uint32_t f = 0; f < q->n_filters; ++f) {
        const struct xg_qfilter *qf = &q->filters[f];
        if (qf->n < 2 || qf->window < qf->n || qf->first > q->n_leaves ||
            qf->n > q->n_leaves - qf->first)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = xg_fuzz_file(data, size);
    struct xg_cli_queries qs;
    int rc = xg_cli_queries_load(path, &qs);
    if (rc != XG_OK) {
        xg_fuzz_refusal(rc, path);
        xg_cli_queries_free(&qs);
        return 0;
    }
    /* FLAG_WILDCARD (7 | 16: QueryParser's defaults and it) where bit 4
     * is set: wildcards and synonyms in the general form. */
    struct xg_parse_opts o = {(int)(size & 1), (int)(size >> 1 & 1),
                              size & 4 ? "english" : NULL,
                              size & 16 ? 7u | 16u : 0u,
                              (int)(size >> 3 & 1), NULL, 0, NULL, 0};
    for (uint32_t i = 0; i < qs.n; ++i) {
        if (!qs.qid[i] || !*qs.qid[i] || !qs.text[i] ||
            strchr(qs.qid[i], '\t') || strchr(qs.text[i], '\n'))
            abort();
        xg_xquery *xq;
        if (xg_shim_parse(NULL, qs.text[i], &o, &xq) != XG_OK) continue;
        struct xg_query q;
        if (xg_shim_xquery_convert(xq, &q) == XG_OK) {
            check_shape(&q);
            xg_query_free(&q);
        }
        xg_shim_xquery_free(xq);
    }
    xg_cli_queries_free(&qs);
    return 0;
}
