/** @file shim_remote.cc
 *  @brief What `xapian-gpu serve` needs of Xapian to answer a client's
 *         search itself (xg_shim.h, "shim_remote.cc").
 *
 *  The engines give the documents and their weights; everything else a
 *  remote reply carries comes from Xapian itself here: the query as the
 *  client serialised it, the statistics the stock server sends before
 *  matching, the bounds its matcher computes (max_possible, each term's
 *  max_part), and which terms the best document holds (for the percent
 *  factor).  Nothing is recomputed from formulas, so each value is the
 *  stock server's by construction.
 */
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <set>

#include "../gpu/query/phrase.h"
#include "shim_int.h"
#include "xg_shim.hh"

extern "C" {

int xg_shim_query_unserialise(const void *bytes, size_t n, xg_xquery **out)
{
    *out = NULL;
    XG_SHIM_TRY
        /* One Registry per thread: the default argument builds one per
         * query, registering every weighting scheme and posting source
         * by name (its add_defaults stood out in serve's profile of cheap
         * ANDs).  Its reference counts are not atomic: not shared
         * between threads. */
        static thread_local const Xapian::Registry registry;
        Xapian::Query q = Xapian::Query::unserialise(
            std::string(static_cast<const char *>(bytes), n), registry);
        *out = xg_shim_xquery_wrap(q);
        return *out ? XG_OK : xg_set_error(XG_ERR_NOMEM, "out of memory");
    XG_SHIM_CATCH("MSG_QUERY's query")
}

void xg_shim_query_stats_free(struct xg_query_stats *s)
{
    for (uint32_t i = 0; s->terms && i < s->n_terms; ++i) free(s->terms[i]);
    free(s->terms);
    free(s->term_len);
    free(s->termfreq);
    free(s->collfreq);
    free(s->max_part);
    memset(s, 0, sizeof *s);
}

int xg_shim_query_stats(xg_db *db, const xg_xquery *xq,
                        struct xg_query_stats *out)
{
    memset(out, 0, sizeof *out);
    if (!db || !xq) return xg_set_error(XG_ERR_ARG, "xg_shim_query_stats: NULL");
    const char *where = db->name.c_str();
    XG_SHIM_TRY
        const Xapian::Query &q = xg_shim_xquery_get(xq);
        const Xapian::Database &d = db->combined;
        /* The unique terms come out in byte order, as the stats' map
         * holds them. */
        std::vector<std::string> terms(q.get_unique_terms_begin(),
                                       q.get_unique_terms_end());
        const size_t n = terms.size();
        out->total_length = d.get_total_length();
        out->doccount = d.get_doccount();
        out->n_terms = (uint32_t)n;
        out->terms = (char **)calloc(n ? n : 1, sizeof(char *));
        out->term_len = (uint32_t *)calloc(n ? n : 1, sizeof(uint32_t));
        out->termfreq = (uint64_t *)calloc(n ? n : 1, sizeof(uint64_t));
        out->collfreq = (uint64_t *)calloc(n ? n : 1, sizeof(uint64_t));
        out->max_part = (double *)calloc(n ? n : 1, sizeof(double));
        if (!out->terms || !out->term_len || !out->termfreq ||
            !out->collfreq || !out->max_part) {
            xg_shim_query_stats_free(out);
            return xg_set_error(XG_ERR_NOMEM, "out of memory");
        }
        for (size_t i = 0; i < n; ++i) {
            out->terms[i] = (char *)malloc(terms[i].size() + 1);
            if (!out->terms[i]) {
                xg_shim_query_stats_free(out);
                return xg_set_error(XG_ERR_NOMEM, "out of memory");
            }
            memcpy(out->terms[i], terms[i].data(), terms[i].size());
            out->terms[i][terms[i].size()] = '\0';
            out->term_len[i] = (uint32_t)terms[i].size();
            out->termfreq[i] = d.get_termfreq(terms[i]);
            out->collfreq[i] = d.get_collection_freq(terms[i]);
        }
        return XG_OK;
    XG_SHIM_CATCH(where)
}

} // extern "C"

/* Stock's match of q under BM25Weight(p), the top k with check_at_least,
 * and from the same match max_possible and each term's max_part in s. */
static Xapian::MSet stock_match(xg_db *db, const xg_xquery *xq,
                                const struct xg_bm25_params *p, uint32_t k,
                                uint32_t check_at_least,
                                struct xg_query_stats *s)
{
    Xapian::Enquire enquire(db->combined);
    enquire.set_query(xg_shim_xquery_get(xq));
    enquire.set_weighting_scheme(
        Xapian::BM25Weight(p->k1, p->k2, p->k3, p->b, p->min_normlen));
    Xapian::MSet m = enquire.get_mset(0, k, check_at_least);
    s->max_possible = m.get_max_possible();
    for (uint32_t i = 0; i < s->n_terms; ++i)
        s->max_part[i] =
            m.get_termweight(std::string(s->terms[i], s->term_len[i]));
    return m;
}

/* Whether filter qf's positions hold in did, each of its terms in it. */
static bool filter_holds_at(xg_db *db, const struct xg_query *q,
                            const struct xg_qfilter &qf, uint32_t did)
{
    std::vector<std::vector<uint32_t>> pos(qf.n);
    std::vector<const uint32_t *> ptr(qf.n);
    std::vector<uint32_t> count(qf.n);
    for (uint32_t i = 0; i < qf.n; ++i) {
        const struct xg_qleaf &l = q->leaves[qf.first + i];
        const std::string term(l.term, l.term_len);
        for (Xapian::PositionIterator p =
                 db->combined.positionlist_begin(did, term);
             p != db->combined.positionlist_end(did, term); ++p)
            pos[i].push_back(*p);
        ptr[i] = pos[i].data();
        count[i] = (uint32_t)pos[i].size();
    }
    std::vector<uint32_t> at(qf.n);
    return xg_filter_holds(qf.kind, ptr.data(), count.data(), qf.n,
                           qf.window, at.data()) != 0;
}

extern "C" {

int xg_shim_query_bounds(xg_db *db, const xg_xquery *xq,
                         const struct xg_bm25_params *p,
                         struct xg_query_stats *s)
{
    if (!db || !xq || !p || !s)
        return xg_set_error(XG_ERR_ARG, "xg_shim_query_bounds: NULL");
    const char *where = db->name.c_str();
    XG_SHIM_TRY
        (void)stock_match(db, xq, p, 0, 0, s);
        return XG_OK;
    XG_SHIM_CATCH(where)
}

int xg_shim_stock_mset(xg_db *db, const xg_xquery *xq,
                       const struct xg_bm25_params *p, uint32_t k,
                       uint32_t check_at_least, struct xg_query_stats *s,
                       struct xg_stock_mset *out)
{
    memset(out, 0, sizeof *out);
    if (!db || !xq || !p || !s)
        return xg_set_error(XG_ERR_ARG, "xg_shim_stock_mset: NULL");
    const char *where = db->name.c_str();
    XG_SHIM_TRY
        const Xapian::MSet m = stock_match(db, xq, p, k, check_at_least, s);
        out->lower = m.get_matches_lower_bound();
        out->estimated = m.get_uncollapsed_matches_estimated();
        out->upper = m.get_matches_upper_bound();
        out->max_attained = m.get_max_attained();
        out->res.matches_estimated = out->estimated;
        out->top_percent = m.empty() ? -1 : m.begin().get_percent();
        out->res.hits = (struct xg_hit *)calloc(m.size() ? m.size() : 1,
                                                sizeof(struct xg_hit));
        if (!out->res.hits)
            return xg_set_error(XG_ERR_NOMEM, "out of memory");
        for (Xapian::MSetIterator i = m.begin(); i != m.end(); ++i) {
            struct xg_hit &h = out->res.hits[out->res.n_hits++];
            h.docid = *i;
            h.weight = i.get_weight();
        }
        return XG_OK;
    XG_SHIM_CATCH(where)
}

int xg_shim_doclen_bounds(xg_db *db, uint32_t *lb, uint32_t *ub)
{
    if (!db) return xg_set_error(XG_ERR_ARG, "xg_shim_doclen_bounds: NULL");
    const char *where = db->name.c_str();
    XG_SHIM_TRY
        *lb = db->combined.get_doclength_lower_bound();
        *ub = db->combined.get_doclength_upper_bound();
        return XG_OK;
    XG_SHIM_CATCH(where)
}

int xg_shim_doc_leaves(xg_db *db, const struct xg_query *q, uint32_t did,
                       uint32_t *n)
{
    *n = 0;
    if (!db || !q) return xg_set_error(XG_ERR_ARG, "xg_shim_doc_leaves: NULL");
    const char *where = db->name.c_str();
    /* The general form's count, and an AND's whose OR groups hold
     * phrases, depend on how Xapian's postlists moved (check() and its
     * phantoms): only the tree matcher knows them. */
    bool moved = q->op == XG_QOP_TREE;
    for (uint32_t f = 0; f < q->n_filters && q->op == XG_QOP_AND; ++f)
        moved = moved || q->filters[f].clause;
    if (moved)
        return xg_set_error(XG_ERR_UNSUPPORTED, "unsupported: the subquery "
                            "count of a tree Xapian moves with check()");
    XG_SHIM_TRY
        std::set<std::string> in_doc, not_in_doc;
        std::vector<uint8_t> has(q->n_leaves);
        for (uint32_t i = 0; i < q->n_leaves; ++i) {
            const std::string term(q->leaves[i].term, q->leaves[i].term_len);
            if (in_doc.count(term)) {
                has[i] = 1;
            } else if (!not_in_doc.count(term)) {
                Xapian::PostingIterator it = db->combined.postlist_begin(term);
                it.skip_to(did);
                has[i] = it != db->combined.postlist_end(term) && *it == did;
                (has[i] ? in_doc : not_in_doc).insert(term);
            }
        }
        /* Negated leaves (factor 0) are not subqueries Xapian counts. */
        for (uint32_t i = 0; i < q->n_leaves; ++i)
            *n += has[i] && q->leaves[i].factor != 0;
        /* A phrase clause of an OR counts only where it matches (the
         * match went through every filter of an AND already). */
        for (uint32_t f = 0; f < q->n_filters; ++f) {
            const struct xg_qfilter &qf = q->filters[f];
            if (!qf.clause) continue;
            uint32_t here = 0;
            for (uint32_t i = qf.first; i < qf.first + qf.n; ++i)
                here += has[i];
            const bool holds = here == qf.n && filter_holds_at(db, q, qf, did);
            if (!holds) *n -= here;
        }
        return XG_OK;
    XG_SHIM_CATCH(where)
}

} // extern "C"
