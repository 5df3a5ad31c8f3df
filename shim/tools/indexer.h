/** @file indexer.h
 *  @brief A TermGenerator indexer for the bundled sample, the tests and the
 *         benchmarks (`xapian-gpu index`): a tool, not part of the library.
 */
#ifndef XG_INDEXER_H
#define XG_INDEXER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct xg_index_opts {
    uint32_t n_shards;      /* 1: a plain glass database; N: N shards + stub */
    uint32_t delete_every;  /* 0: none; M: delete every M-th document */
    uint32_t docid_scale;   /* docid written = tsv docid * scale (>= 1) */
    int quiet;
    int stem_none;          /* 1: no stemmer (no Z terms); 0: Stem("english") */
};

/* Index `tsv` (docid<TAB>text lines) into a new database at `db_path` with
 * TermGenerator and Stem("english") (STEM_SOME), as omindex does for body
 * text, or with no stemmer (o->stem_none: the unstemmed terms alone).
 * With n_shards > 1, db_path becomes a directory holding shard directories
 * and a XAPIANDB stub; document d goes to shard (d-1) % n as local docid
 * (d-1)/n+1 so the combined docid is d. */
int xg_shim_index_tsv(const char *tsv, const char *db_path,
                      const struct xg_index_opts *o);

#ifdef __cplusplus
}
#endif
#endif
