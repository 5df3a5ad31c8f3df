/** @file split.h
 *  @brief Split an existing Xapian database into N glass shards, one per
 *         `xapian-gpu serve` (per GPU or per machine): a tool, not part
 *         of the library.
 */
#ifndef XG_SPLIT_H
#define XG_SPLIT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct xg_split_opts {
    uint32_t n_shards;      /* >= 2 */
    int quiet;              /* no progress line */
};

/* Copy every document of the database db_paths (several: combined, as
 * Xapian combines them; a stub file or directory: its shards) into a new
 * directory `out` of n_shards glass shards and a XAPIANDB stub, document
 * d into shard (d-1) % n as local docid (d-1)/n + 1, so the stub's combined
 * docids are the source's.  Terms, wdf, positions, values and data go
 * with each document; user metadata to every shard; spelling and
 * synonyms to shard0 (a combined database sums and unites them).
 * *n_docs: documents copied.  Nothing is left behind on error. */
int xg_shim_split(const char *const *db_paths, size_t n_paths,
                  const char *out, const struct xg_split_opts *o,
                  uint64_t *n_docs);

#ifdef __cplusplus
}
#endif
#endif
