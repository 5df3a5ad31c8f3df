/** @file fuzz_index.c
 *  @brief libFuzzer target: the index reader and every engine that trusts
 *         what it accepted.
 *
 *  The input is an index file (corpus/index: small exports of the bundled
 *  sample).  Its CRCs are recomputed before it is opened, so mutations
 *  reach the structural and value checks of xg_fmt_open (format_read.c,
 *  list_check.c) instead of stopping at a checksum.  An index that opens
 *  must then be safe and consistent everywhere: every block of every list
 *  decodes, dictionary lookups work, and OR and AND queries over its first
 *  terms give the same MSet from the CPU matcher (match_ref.c), from its
 *  postlist-tree twin (match_tree.c) and from
 *  the GPU engine's pipeline on its CPU twins with each membership method
 *  (hash segments, Bloom filters, regression fields, skip entries: the
 *  values issue 24 found trusted).  A refused index must give a negative
 *  code and one line naming the file.
 */
#include <stdint.h>
#include <string.h>

#include "../../gpu/index/format_read.h"
#include "../../gpu/query/engine.h"
#include "../../gpu/query/match_ref.h"
#include "fix_crcs.h"
#include "fuzz_file.h"
#include "../mset_compare.h"

#define K 10

static void read_everything(const struct xg_index *ix)
{
    uint32_t docs[XG_FMT_BLOCK], wdfs[XG_FMT_BLOCK], n;
    for (uint64_t t = 0; t < ix->hdr->n_terms; ++t)
        for (uint32_t b = 0; b < xg_fmt_n_blocks(ix, t); ++b)
            if (xg_fmt_block_decode(ix, t, b, docs, wdfs, &n) != XG_OK)
                abort();        /* opened means every block was checked */
    xg_fmt_lookup(ix, "the", 3);
    xg_fmt_lookup(ix, "Zboundari", 9);
    xg_fmt_lookup(ix, "", 0);
}


/* Two leaves over terms t0 and t1: OR (one OR tree) or AND (two groups). */
static void make_query(int op, struct xg_query *q, struct xg_plan *plan)
{
    memset(q, 0, sizeof *q);
    q->op = op;
    q->n_leaves = 2;
    q->n_groups = op == XG_QOP_AND ? 2 : 1;
    q->query_length = 2;
    for (uint32_t i = 0; i < 2; ++i) {
        q->leaves[i].term = i ? "b" : "a";
        q->leaves[i].term_len = 1;
        q->leaves[i].wqf = 1;
        q->leaves[i].group = op == XG_QOP_AND ? i : 0;
        q->leaves[i].factor = 1.0;
    }
    plan->n_ops = 3;
    plan->ops[0] = (struct xg_plan_op){XG_PLAN_LEAF, 0};
    plan->ops[1] = (struct xg_plan_op){XG_PLAN_LEAF, 1};
    plan->ops[2] = op == XG_QOP_AND ? (struct xg_plan_op){XG_PLAN_AND, 2}
                                    : (struct xg_plan_op){XG_PLAN_OR2, 0};
}

static void search_both(const struct xg_index *ix, uint32_t method)
{
    uint64_t nt = ix->hdr->n_terms;
    if (nt == 0) return;
    uint32_t ns = ix->hdr->n_shards;
    struct xg_plan *plans = calloc(ns, sizeof *plans);
    struct xg_engine_opts o = XG_ENGINE_DEFAULTS;
    o.use_device = 0;
    o.memory_budget = 64u << 20;
    o.member_method = method;
    xg_gpu *e = NULL;
    if (!plans || xg_engine_open(ix, &o, &e) != XG_OK) {
        free(plans);
        return;         /* a budget or allocation refusal, not a fault */
    }
    struct xg_bm25_params p = XG_BM25_DEFAULTS;
    for (int op = XG_QOP_OR; op <= XG_QOP_AND; ++op)
        for (uint64_t t = 0; t + 1 < nt && t < 3; ++t) {
            struct xg_query q;
            make_query(op, &q, &plans[0]);
            for (uint32_t s = 1; s < ns; ++s) plans[s] = plans[0];
            int64_t leaf_term[2] = {(int64_t)t, (int64_t)(nt - 1 - t)};
            struct xg_result ref = {0}, got = {0};
            int rc = xg_match_ref(ix, &q, leaf_term, plans, &p, NULL, K, &ref);
            if (rc != XG_OK) abort();   /* opened: nothing left to refuse */
            /* The postlist-tree matcher moves the same lists its own way. */
            struct xg_result tree = {0};
            if (xg_match_tree(ix, &q, leaf_term, plans, &p, NULL, K, &tree) ||
                !xg_test_same_hits(&tree, &ref) ||
                tree.matches_estimated != ref.matches_estimated)
                abort();
            xg_result_free(&tree);
            struct xg_engine_query eq = {&q, leaf_term, plans, K, NULL};
            int status = XG_OK;
            rc = xg_engine_search(e, &eq, 1, &p, &got, NULL, &status);
            if (rc == XG_OK && status == XG_OK && !xg_test_same_hits(&got, &ref)) {
                fprintf(stderr, "engine twins and CPU matcher differ "
                        "(op %d, terms %llu %llu, method %u)\n", op,
                        (unsigned long long)leaf_term[0],
                        (unsigned long long)leaf_term[1], method);
                abort();
            }
            if (rc == XG_OK && status == XG_OK) xg_result_free(&got);
            xg_result_free(&ref);
        }
    xg_engine_close(e);
    free(plans);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *d = malloc(size ? size : 1);
    if (!d) return 0;
    memcpy(d, data, size);
    xg_test_fix_crcs(d, size);
    const char *path = xg_fuzz_file(d, size);
    free(d);
    struct xg_index *ix;
    int rc = xg_fmt_open(path, &ix);
    if (rc != XG_OK) {
        xg_fuzz_refusal(rc, path);
        return 0;
    }
    read_everything(ix);
    /* The method from the input, so the fuzzer can steer it. */
    static const uint32_t methods[] = {XG_MEMBER_AUTO, XG_MEMBER_BINARY,
        XG_MEMBER_LR, XG_MEMBER_HASHSEG, XG_MEMBER_MERGE, XG_MEMBER_BLOCK};
    search_both(ix, methods[size % (sizeof methods / sizeof *methods)]);
    xg_fmt_close(ix);
    return 0;
}
