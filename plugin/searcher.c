/** @file searcher.c
 *  @brief The public searcher: database + GPU index + engine dispatch.
 *
 *  Opens the database through the shim and the index through the format
 *  reader, refuses an index that is corrupt or stale (it then only serves
 *  the stock matcher), and answers a query with the engine asked for.  The
 *  CPU engine path: QueryParser (shim) -> engine shapes -> term ids and
 *  per-shard frequencies -> one plan per shard -> xg_match_ref.
 */
#include "searcher.h"

#include <stdlib.h>
#include <string.h>

#include "../gpu/error.h"
#include "../gpu/match_ref.h"

struct xg_searcher {
    xg_db *db;
    struct xg_index *ix;        /* NULL if unusable */
    char *index_error;          /* why ix is NULL */
    int index_rc;               /* and its status code */
    uint32_t n_shards;
    uint32_t *shard_doccount;
};

int xg_searcher_open(const char *const *db_paths, size_t n_paths,
                     const char *index_path, xg_searcher **out)
{
    int rc;
    struct xg_db_stats st;
    xg_searcher *s = calloc(1, sizeof *s);
    *out = NULL;
    if (!s) return xg_set_error(XG_ERR_NOMEM, "out of memory");
    if (n_paths == 0) {
        free(s);
        return xg_set_error(XG_ERR_ARG, "no database given");
    }
    if ((rc = xg_shim_db_open(db_paths, n_paths, &s->db))) goto fail;
    if ((rc = xg_shim_db_stats(s->db, &st))) goto fail;
    s->n_shards = st.n_shards;
    s->shard_doccount = calloc(st.n_shards, sizeof *s->shard_doccount);
    char **uuids = calloc(st.n_shards, sizeof *uuids);
    uint64_t *revs = calloc(st.n_shards, sizeof *revs);
    struct xg_shard_info *si = calloc(st.n_shards, sizeof *si);
    if (!s->shard_doccount || !uuids || !revs || !si) {
        free(uuids); free(revs); free(si);
        rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
        goto fail;
    }
    for (uint32_t i = 0; i < st.n_shards && !rc; ++i) {
        rc = xg_shim_db_shard(s->db, i, &si[i]);
        uuids[i] = si[i].uuid;
        revs[i] = si[i].revision;
        s->shard_doccount[i] = si[i].doccount;
    }
    if (!rc) {
        char *path = index_path ? strdup(index_path)
                                : xg_fmt_default_path(db_paths[0]);
        int irc = path ? xg_fmt_open(path, &s->ix)
                       : xg_set_error(XG_ERR_NOMEM, "out of memory");
        if (!irc) {
            irc = xg_fmt_check_shards(s->ix, st.n_shards,
                                      (const char *const *)uuids, revs);
            if (!irc && s->ix->hdr->n_docs != st.n_docs)
                irc = xg_set_error(XG_ERR_STALE, "%s: stale index: %llu "
                                   "documents, the database has %llu",
                                   path, (unsigned long long)s->ix->hdr->n_docs,
                                   (unsigned long long)st.n_docs);
            if (irc) {
                xg_fmt_close(s->ix);
                s->ix = NULL;
            }
        }
        if (irc) {
            s->index_rc = irc;
            s->index_error = strdup(xg_last_error());
        }
        free(path);
    }
    free(uuids); free(revs); free(si);
    if (rc) goto fail;
    *out = s;
    return XG_OK;
fail:
    xg_searcher_close(s);
    return rc;
}

void xg_searcher_close(xg_searcher *s)
{
    if (!s) return;
    xg_fmt_close(s->ix);
    if (s->db) xg_shim_db_close(s->db);
    free(s->index_error);
    free(s->shard_doccount);
    free(s);
}

const char *xg_searcher_index_error(const xg_searcher *s)
{
    return s->ix ? NULL : s->index_error ? s->index_error : "no index";
}

xg_db *xg_searcher_db(xg_searcher *s) { return s->db; }

const struct xg_index *xg_searcher_index(const xg_searcher *s) { return s->ix; }

int xg_searcher_parse(xg_searcher *s, const char *text,
                      const struct xg_search_opts *o, xg_xquery **out)
{
    struct xg_parse_opts po;
    po.stem_english = o->stem_english;
    po.default_and = o->default_and;
    po.stopper = o->stopper;
    po.flags = o->parser_flags;
    return xg_shim_parse(s->db, text, &po, out);
}

int xg_searcher_run(xg_searcher *s, const xg_xquery *xq,
                    const struct xg_search_opts *o, struct xg_result *out)
{
    memset(out, 0, sizeof *out);
    if (o->engine == XG_ENGINE_XAPIAN)
        return xg_shim_search(s->db, xq, &o->bm25, o->k, out);
    if (o->engine != XG_ENGINE_CPU)
        return xg_set_error(XG_ERR_ARG, "unknown engine %d", o->engine);
    if (!s->ix)
        return xg_set_error(s->index_rc ? s->index_rc : XG_ERR_IO, "%s",
                            xg_searcher_index_error(s));

    struct xg_query q;
    int rc = xg_shim_xquery_convert(xq, &q);
    if (rc) return rc;
    int64_t term[XG_QUERY_MAX_LEAVES];
    uint32_t n_sh = s->n_shards;
    uint32_t *sdf = calloc((size_t)n_sh * (q.n_leaves ? q.n_leaves : 1), 4);
    struct xg_plan *plans = calloc(n_sh, sizeof *plans);
    if (!sdf || !plans) {
        rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (uint32_t i = 0; i < q.n_leaves; ++i) {
        term[i] = xg_fmt_lookup(s->ix, q.leaves[i].term, q.leaves[i].term_len);
        for (uint32_t sh = 0; sh < n_sh; ++sh)
            sdf[sh * q.n_leaves + i] =
                term[i] < 0 ? 0 : s->ix->shard_df[(uint64_t)term[i] * n_sh + sh];
    }
    for (uint32_t sh = 0; sh < n_sh && !rc; ++sh)
        rc = xg_shim_plan(&q, sdf + (size_t)sh * q.n_leaves,
                          s->shard_doccount[sh], &plans[sh]);
    if (!rc) rc = xg_match_ref(s->ix, &q, term, plans, &o->bm25, o->k, out);
done:
    free(sdf);
    free(plans);
    xg_query_free(&q);
    return rc;
}

int xg_searcher_search(xg_searcher *s, const char *query,
                       const struct xg_search_opts *o, struct xg_result *out)
{
    xg_xquery *xq = NULL;
    memset(out, 0, sizeof *out);
    int rc = xg_searcher_parse(s, query, o, &xq);
    if (!rc) rc = xg_searcher_run(s, xq, o, out);
    if (xq) xg_shim_xquery_free(xq);
    return rc;
}
