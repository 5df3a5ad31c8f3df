/** @file weight_db.c
 *  @brief xg_weight_db (weight_db.h): BM25Weight::init for each term as a
 *         one-term query (wqf 1, factor 1), then each posting's part with
 *         the document's length factor, in bm25.h's operation order.
 */
#include "weight_db.h"

#include <stdlib.h>
#include <string.h>

#include "../gpu/bm25.h"
#include "../gpu/runtime/error.h"
#include "../shim/xg_shim.h"

struct weigher {
    xg_weight_db_fn fn;
    void *ctx;
    struct xg_bm25_params p;
    struct xg_bm25_query q;
    uint64_t n_docs, postings;
    uint32_t *docids;           /* live docids ascending */
    double *kd;                 /* K_d per live document, same order */
    uint32_t *lens;
    double *wts;                /* one term's weights */
    uint32_t wts_cap;
};

/* Index of `docid` among the live docids (it is one: postings are live). */
static uint64_t doc_index(const struct weigher *w, uint32_t docid)
{
    uint64_t lo = 0, hi = w->n_docs;
    while (lo < hi) {
        uint64_t mid = (lo + hi) >> 1;
        if (w->docids[mid] < docid) lo = mid + 1; else hi = mid;
    }
    return lo;
}

static int on_term(void *ctx, const struct xg_term_postings *tp)
{
    struct weigher *w = ctx;
    const uint32_t *docids = tp->docids, *wdfs = tp->wdfs;
    const uint32_t n = tp->n;
    const double tw = xg_bm25_termweight(&w->p, w->n_docs, n, 1, 1.0);
    if (n > w->wts_cap) {
        double *nw = realloc(w->wts, (size_t)n * sizeof *nw);
        if (!nw) return xg_set_error(XG_ERR_NOMEM, "out of memory");
        w->wts = nw;
        w->wts_cap = n;
    }
    uint64_t at = 0;
    for (uint32_t i = 0; i < n; ++i) {
        /* Docids ascend in both lists: walk forward instead of searching. */
        while (at < w->n_docs && w->docids[at] < docids[i]) ++at;
        if (at == w->n_docs || w->docids[at] != docids[i])
            at = doc_index(w, docids[i]);
        double weight = xg_bm25_sumpart_kd(tw, w->kd[at], wdfs[i]);
        if (w->p.k2 != 0) weight = weight + xg_bm25_sumextra(&w->q, w->lens[at]);
        w->wts[i] = weight;
    }
    w->postings += n;
    return w->fn(w->ctx, tp->term, tp->term_len, docids, w->wts, n);
}

int xg_weight_db(const char *const *paths, size_t n_paths,
                 const struct xg_bm25_params *p, xg_weight_db_fn fn, void *ctx,
                 uint64_t *n_docs, uint64_t *n_postings)
{
    struct weigher w;
    memset(&w, 0, sizeof w);
    w.p = *p;
    w.fn = fn;
    w.ctx = ctx;
    xg_db *db;
    int rc = xg_shim_db_open(paths, n_paths, &db);
    if (rc) return rc;
    struct xg_db_stats st;
    rc = xg_shim_db_stats(db, &st);
    w.n_docs = st.n_docs;
    w.docids = malloc((st.n_docs + 1) * sizeof *w.docids);
    w.lens = malloc((st.n_docs + 1) * sizeof *w.lens);
    w.kd = malloc((st.n_docs + 1) * sizeof *w.kd);
    if (!rc && (!w.docids || !w.lens || !w.kd))
        rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
    if (!rc) rc = xg_shim_db_doclens(db, w.docids, w.lens);
    if (!rc) {
        /* The database's own statistics, as Xapian's weighting sees them. */
        xg_bm25_query_init(&w.p, st.n_docs, st.total_length, 1, &w.q);
        for (uint64_t i = 0; i < st.n_docs; ++i) w.kd[i] = xg_bm25_kd(&w.q, w.lens[i]);
    }
    if (!rc) rc = xg_shim_db_each_term(db, 0, on_term, &w);
    if (n_docs) *n_docs = st.n_docs;
    if (n_postings) *n_postings = w.postings;
    xg_shim_db_close(db);
    free(w.docids);
    free(w.lens);
    free(w.kd);
    free(w.wts);
    return rc;
}
