/** @file shim_split.cc
 *  @brief Split a database into N shards (split.h).
 *
 *  Documents are copied whole with Document objects read from the source
 *  (Xapian copies their terms, wdf, positions, values and data); docids
 *  are kept through the interleaving rule of shard_out.h, so a client of
 *  the N shards, combined by the stub or by N remote servers, sees the
 *  same docids, and BM25 over the global statistics gives the same
 *  weights up to the order of the additions (each shard's own postlist
 *  tree).
 */
#include "../shim_int.h"
#include "shard_out.h"
#include "split.h"

#include <cstdio>

#include <unistd.h>

/* Progress line interval (documents), shown only on a terminal. */
#define SPLIT_PROGRESS_EVERY 10000u

extern "C" int xg_shim_split(const char *const *db_paths, size_t n_paths,
                             const char *out, const struct xg_split_opts *o,
                             uint64_t *n_docs)
{
    *n_docs = 0;
    if (!db_paths || !n_paths || !out || !*out || !o)
        return xg_set_error(XG_ERR_ARG, "xg_shim_split: NULL argument");
    if (o->n_shards < 2)
        return xg_set_error(XG_ERR_ARG, "%s: --shards must be at least 2", out);
    const char *where = db_paths[0];
    XG_SHIM_TRY
        Xapian::Database src;
        for (size_t i = 0; i < n_paths; ++i) {
            where = db_paths[i];
            src.add_database(Xapian::Database(db_paths[i]));
        }
        where = out;
        ShardOut dst;
        if (int rc = dst.open(out, o->n_shards)) return rc;
        const bool progress = !o->quiet && isatty(2);
        where = db_paths[0];
        for (Xapian::PostingIterator it = src.postlist_begin("");
             it != src.postlist_end(""); ++it) {
            const Xapian::docid d = *it;
            dst.shard_of(d).replace_document(dst.local(d),
                                             src.get_document(d));
            if (++*n_docs % SPLIT_PROGRESS_EVERY == 0 && progress)
                fprintf(stderr, "\r%s: %llu of %u documents", out,
                        (unsigned long long)*n_docs, src.get_doccount());
        }
        if (progress && *n_docs >= SPLIT_PROGRESS_EVERY)
            fprintf(stderr, "\r%s: %llu of %u documents\n", out,
                    (unsigned long long)*n_docs, src.get_doccount());
        for (Xapian::TermIterator k = src.metadata_keys_begin();
             k != src.metadata_keys_end(); ++k)
            for (uint32_t s = 0; s < dst.size(); ++s)
                dst.shard(s).set_metadata(*k, src.get_metadata(*k));
        for (Xapian::TermIterator w = src.spellings_begin();
             w != src.spellings_end(); ++w)
            dst.shard(0).add_spelling(*w, w.get_termfreq());
        for (Xapian::TermIterator k = src.synonym_keys_begin();
             k != src.synonym_keys_end(); ++k)
            for (Xapian::TermIterator s = src.synonyms_begin(*k);
                 s != src.synonyms_end(*k); ++s)
                dst.shard(0).add_synonym(*k, *s);
        where = out;
        return dst.finish();
    XG_SHIM_CATCH(where)
}
