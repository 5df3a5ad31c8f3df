/** @file dict.h
 *  @brief The collection dictionary on the host (dict.c): every distinct
 *         word of a text with its hash (hash.h), df and, once ranked in
 *         byte order, its term id.  The weight pipeline merges each
 *         chunk's distinct terms (a list per chunk or per thread) into it;
 *         the qlm pipeline numbers its words with it.  Its twin on the
 *         device is dict_gpu.h.
 */
#ifndef XG_TEXT_DICT_H
#define XG_TEXT_DICT_H

#include <stdint.h>

/* A term: its bytes (in the input), hash, df and, once ranked, its id. */
struct xg_text_dict_ent {
    const char *s;
    uint32_t len, id;
    uint64_t hash;
    uint64_t df;
    uint64_t last;          /* last document counted (map phase) */
};

/* Open addressing on the hash, keyed by the bytes. */
struct xg_text_dict {
    struct xg_text_dict_ent *e; /* cap slots; s == NULL: empty */
    uint64_t cap, n;
    int collision;          /* two different terms share a hash */
};

/* Distinct terms of a part of the text with their df in it (a chunk's
 * pass 1; the CPU twin gives one per thread, so several lists may name
 * one term). */
struct xg_text_dict_list {
    struct xg_text_dict_ent *terms;
    uint64_t n;
};

int xg_text_dict_init(struct xg_text_dict *d, uint64_t expect);
void xg_text_dict_free(struct xg_text_dict *d);
/* The entry for s (inserted with df 0 when new), or NULL (out of memory). */
struct xg_text_dict_ent *xg_text_dict_get(struct xg_text_dict *d, const char *s,
                                          uint32_t len, uint64_t hash);
/* The entry for s, or NULL. */
const struct xg_text_dict_ent *xg_text_dict_find(const struct xg_text_dict *d,
                                                 const char *s, uint32_t len,
                                                 uint64_t hash);
/* Add lists of terms to d (each list's terms distinct; several lists may
 * name one term), summing their df; `threads` split the table's slots. */
int xg_text_dict_merge(struct xg_text_dict *d, const struct xg_text_dict_list *lists,
                       uint32_t n_lists, uint32_t threads);
/* The same, with threads for lists of at least min_parallel terms (tests:
 * 0, so that small lists take the threaded path too). */
int xg_text_dict_merge_from(struct xg_text_dict *d, const struct xg_text_dict_list *lists,
                            uint32_t n_lists, uint32_t threads, uint64_t min_parallel);
/* Ids = ranks in byte order; fills term/term_len (n entries, by id);
 * `threads` read the terms' prefixes. */
int xg_text_dict_rank(struct xg_text_dict *d, const char **term, uint32_t *term_len,
                      uint32_t threads);

#endif
