/** @file qlm_score_ref.c
 *  @brief The CPU twin of query-time n-gram query likelihood
 *         (qlm_score.h): tokenize, look up every n-gram ending at every
 *         query word, score the documents that hold a query word, top k.
 *
 *  Work per query: m words, at most m * sigma n-gram look-ups (binary
 *  searches), then per candidate document m factors of one binary search
 *  each.  The order of the sum is fixed (i = 1..m), so the result does not
 *  depend on how documents are split among threads or blocks.
 */
#include "qlm_score.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/error.h"
#include "qlm.h"
#include "../text/tokenize.h"

double xg_qlm_word_prob(const struct xg_qlm_table *t,
                        const struct xg_qlm_gram *const *chain, uint32_t n_max,
                        uint32_t docid)
{
    for (uint32_t n = n_max; n >= 1; --n) {
        const struct xg_qlm_gram *g = chain[n - 1];
        if (!g) continue;   /* absent from the collection: back off */
        int64_t row = xg_qlm_table_row(t, g, docid);
        double p = row >= 0 ? t->prob[row]
                            : xg_qlm_backoff_prob(t->lambda, g->fxc, g->fhc);
        return p > XG_QLM_EPSILON ? p : XG_QLM_EPSILON;
    }
    return XG_QLM_EPSILON;
}

/* The query's words as term ids (-1: not in the table). */
struct words {
    int64_t *id;
    uint32_t n, cap;
    const struct xg_qlm_table *t;
};

static int add_word(void *ctx, const char *term, size_t len)
{
    struct words *w = ctx;
    if (w->n == w->cap) {
        uint32_t cap = w->cap ? 2 * w->cap : 16;
        int64_t *id = realloc(w->id, cap * sizeof *id);
        if (!id) return XG_ERR_NOMEM;
        w->id = id;
        w->cap = cap;
    }
    w->id[w->n++] = xg_qlm_table_term(w->t, term, len);
    return 0;
}

int xg_qlm_query_prepare(const struct xg_qlm_table *t, const char *text,
                         struct xg_qlm_query *q)
{
    size_t len = strlen(text);
    memset(q, 0, sizeof *q);
    if (xg_text_utf8_valid(text, len) != len)
        return xg_set_error(XG_ERR_ARG, "qlm query: invalid UTF-8");
    struct words w = {NULL, 0, 0, t};
    if (xg_text_tokenize(text, len, add_word, &w)) {
        free(w.id);
        return xg_set_error(XG_ERR_NOMEM, "qlm query: out of memory");
    }
    const uint32_t m = w.n, s = t->sigma;
    const struct xg_qlm_gram **chain = calloc((size_t)m * s + 1, sizeof *chain);
    uint32_t ids[XG_QLM_MAX_SIGMA];
    for (uint32_t i = 0; chain && i < m; ++i) {
        /* chain[i * s + n - 1]: the n-gram q_{i-n+1} .. q_i, n <= i + 1. */
        for (uint32_t n = 1; n <= s && n <= i + 1; ++n) {
            int64_t id = w.id[i - n + 1];
            if (id < 0) break;      /* longer n-grams hold it too */
            for (uint32_t j = 0; j < n; ++j)
                ids[j] = (uint32_t)w.id[i - n + 1 + j];
            chain[(size_t)i * s + n - 1] = xg_qlm_table_gram(t, ids, n);
        }
        if (chain[(size_t)i * s]) q->n_cand += chain[(size_t)i * s]->n_rows;
    }
    free(w.id);
    if (!chain) return xg_set_error(XG_ERR_NOMEM, "qlm query: out of memory");
    q->m = m;
    q->chain = chain;
    return XG_OK;
}

void xg_qlm_query_free(struct xg_qlm_query *q)
{
    free(q->chain);
    memset(q, 0, sizeof *q);
}

static int by_docid(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Score descending, then docid ascending: a total order. */
static int by_rank(const void *a, const void *b)
{
    const struct xg_qlm_hit *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return (x->docid > y->docid) - (x->docid < y->docid);
}

int xg_qlm_score_ref(const struct xg_qlm_table *t, const char *text,
                     uint32_t k, struct xg_qlm_hit **hits, uint32_t *n_hits)
{
    *hits = NULL;
    *n_hits = 0;
    struct xg_qlm_query q;
    int rc = xg_qlm_query_prepare(t, text, &q);
    if (rc) return rc;
    const uint32_t m = q.m, s = t->sigma;
    const struct xg_qlm_gram **chain = q.chain;
    uint32_t *cand = malloc((q.n_cand + 1) * sizeof *cand);
    struct xg_qlm_hit *h = cand ? malloc((q.n_cand + 1) * sizeof *h) : NULL;
    if (!h) {
        xg_qlm_query_free(&q);
        free(cand);
        return xg_set_error(XG_ERR_NOMEM, "qlm query: out of memory");
    }
    /* Candidates: the documents of the query's unigrams, once each. */
    uint64_t nc = 0;
    for (uint32_t i = 0; i < m; ++i) {
        const struct xg_qlm_gram *g = chain[(size_t)i * s];
        if (g) {
            memcpy(cand + nc, t->docid + g->row, g->n_rows * sizeof *cand);
            nc += g->n_rows;
        }
    }
    qsort(cand, nc, sizeof *cand, by_docid);
    uint64_t nd = 0;
    for (uint64_t j = 0; j < nc; ++j)
        if (!nd || cand[nd - 1] != cand[j]) cand[nd++] = cand[j];
    for (uint64_t j = 0; j < nd; ++j) {
        double score = 0.0;
        for (uint32_t i = 0; i < m; ++i) {
            uint32_t n_max = i + 1 < s ? i + 1 : s;
            score += log(xg_qlm_word_prob(t, chain + (size_t)i * s, n_max,
                                          cand[j]));
        }
        h[j].docid = cand[j];
        h[j].score = score;
    }
    qsort(h, nd, sizeof *h, by_rank);
    *n_hits = nd < k ? (uint32_t)nd : k;
    *hits = h;
    xg_qlm_query_free(&q);
    free(cand);
    return XG_OK;
}
