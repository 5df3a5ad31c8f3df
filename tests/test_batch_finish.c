/** @file test_batch_finish.c
 *  @brief The batch's host finish (gpu/query/batch.c) against a reference
 *         written here: each query's matched candidates in qsort's MSet
 *         order (weight descending, dense document ascending), its top k
 *         mapped to docids, its leaf counts and match count.  Batches of
 *         random queries (many ties, unmatched candidates, overflows, both
 *         paths), finished in one piece, packed, on the thread pool (at
 *         least 65,536 candidates) and through xg_later_finish, which the
 *         dispatcher runs on the application threads.
 *  usage: test_batch_finish [--seed N]
 */
#include <stdlib.h>
#include <string.h>

#include "../gpu/index/format_read.h"
#include "../gpu/query/batch.h"
#include "../gpu/runtime/error.h"
#include "test_util.h"

#define N_DOCS 200000u

static int by_order(const void *x, const void *y)
{
    const struct xg_dcand *a = x, *b = y;
    if (a->weight != b->weight) return a->weight > b->weight ? -1 : 1;
    return a->doc < b->doc ? -1 : a->doc > b->doc;
}

struct fixture {
    struct xg_batch b;
    struct xg_dqresult *res;
    struct xg_dcand *cand;      /* each query's at its cand_first */
    struct xg_dcand *packed;    /* back to back */
    uint64_t room;
};

/* n queries: candidate counts from min_cand to max_cand, a few
 * overflowing. */
static void make(struct fixture *f, uint32_t n, uint32_t min_cand,
                 uint32_t max_cand)
{
    memset(f, 0, sizeof *f);
    f->b.n_queries = n;
    f->b.queries = calloc(n, sizeof *f->b.queries);
    f->b.qmap = malloc(n * sizeof *f->b.qmap);
    f->res = calloc(n, sizeof *f->res);
    CHECK(f->b.queries && f->b.qmap && f->res, "malloc");
    for (uint32_t i = 0; i < n; ++i) f->b.qmap[i] = i;
    for (uint32_t i = n; i > 1; --i) { /* the callers' order, shuffled */
        const uint32_t j = rng_below(i), t = f->b.qmap[i - 1];
        f->b.qmap[i - 1] = f->b.qmap[j];
        f->b.qmap[j] = t;
    }
    static const uint32_t ks[] = {1, 2, 10, 100, 1000, 5000};
    uint64_t at = 0;
    for (uint32_t i = 0; i < n; ++i) {
        struct xg_dquery *q = &f->b.queries[i];
        q->k = ks[rng_below(6)];
        q->path = rng_below(3) ? XG_DPATH_DENSE : XG_DPATH_INTERSECT;
        q->n_leaves = 1 + rng_below(5);
        q->cand_first = at;
        f->res[i].n_cand = min_cand + rng_below(max_cand - min_cand + 1);
        f->res[i].matched = f->res[i].n_cand + rng_below(100000);
        f->res[i].overflow = rng_below(20) == 0;
        at += f->res[i].n_cand + rng_below(50); /* rooms have slack */
    }
    f->room = at;
    f->cand = calloc(at + 1, sizeof *f->cand);
    f->packed = calloc(at + 1, sizeof *f->packed);
    CHECK(f->cand && f->packed, "malloc");
    const uint32_t levels = 1 + rng_below(40);
    uint64_t p = 0;
    for (uint32_t i = 0; i < n; ++i) {
        const uint32_t step = 1 + rng_below(7), start = rng_below(N_DOCS);
        for (uint32_t j = 0; j < f->res[i].n_cand; ++j) {
            struct xg_dcand *c = &f->cand[f->b.queries[i].cand_first + j];
            c->doc = (start + j * step) % N_DOCS;   /* distinct */
            c->weight = 1.0 + rng_below(levels) * 0.125;
            c->matched = rng_below(8) ? 1 + rng_below(6) : 0;
            f->packed[p++] = *c;
        }
    }
}

static void unmake(struct fixture *f)
{
    free(f->b.queries);
    free(f->b.qmap);
    free(f->res);
    free(f->cand);
    free(f->packed);
}

/* Query i's answer in out (status st) against the reference. */
static void check_query(const struct fixture *f, const uint32_t *docids,
                        uint32_t i, const struct xg_result *out, int st,
                        const char *how)
{
    const struct xg_dquery *q = &f->b.queries[i];
    if (f->res[i].overflow) {
        CHECK(st == XG_ERR_UNSUPPORTED, "%s: query %u overflowed: status %d",
              how, i, st);
        return;
    }
    CHECK(st == XG_OK, "%s: query %u status %d", how, i, st);
    const uint32_t n = f->res[i].n_cand;
    struct xg_dcand *c = malloc((n + 1) * sizeof *c);
    CHECK(c, "malloc");
    uint32_t m = 0;
    for (uint32_t j = 0; j < n; ++j)
        if (f->cand[q->cand_first + j].matched)
            c[m++] = f->cand[q->cand_first + j];
    qsort(c, m, sizeof *c, by_order);
    const uint32_t k = m < q->k ? m : q->k;
    CHECK(out->n_hits == k, "%s: query %u: %u hits, want %u", how, i,
          out->n_hits, k);
    CHECK(out->matches_estimated == f->res[i].matched,
          "%s: query %u: match count", how, i);
    for (uint32_t j = 0; j < k; ++j) {
        const struct xg_hit *h = &out->hits[j];
        const uint32_t leaves = q->path == XG_DPATH_INTERSECT
                                    ? q->n_leaves : c[j].matched - 1u;
        CHECK(h->docid == docids[c[j].doc] && h->weight == c[j].weight &&
                  h->matched_leaves == leaves,
              "%s: query %u hit %u: docid %u weight %.17g leaves %u, want "
              "%u %.17g %u", how, i, j, h->docid, h->weight,
              h->matched_leaves, docids[c[j].doc], c[j].weight, leaves);
    }
    free(c);
}

/* The three ways of finishing batch f, each against the reference. */
static void check_batch(struct fixture *f, const struct xg_index *ix)
{
    const uint32_t n = f->b.n_queries;
    struct xg_result *out = calloc(n, sizeof *out);
    struct xg_later *later = calloc(n, sizeof *later);
    int *status = calloc(n, sizeof *status);
    CHECK(out && later && status, "malloc");
    for (int mode = 0; mode < 3; ++mode) {
        const char *how = mode == 0 ? "in place" : mode == 1 ? "packed"
                                                             : "later";
        for (uint32_t i = 0; i < n; ++i) status[i] = -12345;
        CHECK(xg_batch_finish(&f->b, ix, f->res,
                              mode == 1 ? f->packed : f->cand, mode == 1,
                              out, mode == 2 ? later : NULL, status) == XG_OK,
              "%s: %s", how, xg_last_error());
        for (uint32_t i = 0; i < n; ++i) {
            const uint32_t caller = f->b.qmap[i];
            if (mode == 2 && status[caller] == XG_OK) {
                CHECK(later[caller].docids, "later: query %u has nothing "
                      "to finish", i);
                CHECK(xg_later_finish(&later[caller], &out[caller]) == XG_OK,
                      "later: %s", xg_last_error());
                CHECK(!later[caller].c && !later[caller].docids,
                      "later: query %u not freed", i);
            }
            check_query(f, ix->docids, i, &out[caller], status[caller], how);
            xg_result_free(&out[caller]);
        }
    }
    free(out);
    free(later);
    free(status);
}

int main(int argc, char **argv)
{
    seed_used = rng_state = parse_seed(argc, argv);
    printf("seed %llu\n", (unsigned long long)seed_used);
    uint32_t *docids = malloc(N_DOCS * sizeof *docids);
    CHECK(docids, "malloc");
    for (uint32_t d = 0; d < N_DOCS; ++d) docids[d] = 3 * d + 1 + d % 2;
    struct xg_index ix;
    memset(&ix, 0, sizeof ix);
    ix.docids = docids;

    struct fixture f;
    for (int round = 0; round < 200; ++round) {
        make(&f, 1 + rng_below(40), 0, rng_below(3) ? 300 : 4000);
        check_batch(&f, &ix);
        unmake(&f);
    }
    group_ok("small batches: in place, packed and later, as the reference");
    /* At least 65,536 candidates: the finish is split over the pool. */
    for (int round = 0; round < 8; ++round) {
        make(&f, 40 + rng_below(200), 2000, 6000);
        uint64_t total = 0;
        for (uint32_t i = 0; i < f.b.n_queries; ++i)
            total += f.res[i].n_cand;
        CHECK(total >= 2 * 32768, "round %d: only %llu candidates", round,
              (unsigned long long)total);
        check_batch(&f, &ix);
        unmake(&f);
    }
    group_ok("large batches on the thread pool, as the reference");
    /* A query without candidates. */
    make(&f, 1, 0, 0);
    check_batch(&f, &ix);
    unmake(&f);
    group_ok("a query without candidates");
    free(docids);
    printf("%d passed, 0 failed\n", n_passed);
    return 0;
}
