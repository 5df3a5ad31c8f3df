/** @file qlm_table.h
 *  @brief A binary n-gram query-likelihood table (XGQLM002, written by
 *         `xapian-gpu qlm --format bin --counts`) loaded into memory with
 *         the index query-time scoring needs: word -> term id, n-gram ->
 *         its rows, (n-gram, document) -> probability.
 *
 *  The file's records are already ordered by n, then n-gram (term-id
 *  sequence, compared id by id), then docid (docs/qlm.md), so the index is
 *  that order kept as arrays: one entry per distinct n-gram, with its
 *  first row and row count, found by binary search among the entries of
 *  its n; a document's row is found by binary search among the n-gram's
 *  docids.  The dictionary (term id = rank in byte order) is searched the
 *  same way.  The loader checks every ordering it relies on, so a lookup
 *  never sees an unsorted range.
 *
 *  Callers: qlm_score_ref.c (the CPU scorer), cli_qlm_search.c.
 */
#ifndef XG_QLM_TABLE_H
#define XG_QLM_TABLE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One distinct n-gram of the table. */
struct xg_qlm_gram {
    uint64_t ids;           /* its n term ids: table.ids[ids .. ids + n) */
    uint64_t row;           /* its first row */
    uint64_t n_rows;        /* documents it occurs in (>= 1) */
    uint64_t fxc;           /* f(x, C): occurrences in the collection */
    uint64_t fhc;           /* f(h, C): of its history (n = 1: |C|) */
};

struct xg_qlm_table {
    uint32_t sigma;         /* longest n-gram, 1..XG_QLM_MAX_SIGMA */
    double lambda;          /* weight of the document model it was built with */
    uint32_t n_terms;
    char *dict;             /* malloc'd: the dictionary's bytes */
    uint64_t *term_off;     /* [n_terms + 1]: term t is dict[off[t], off[t+1]) */
    uint64_t n_grams;
    struct xg_qlm_gram *gram; /* by n, then term-id sequence */
    uint64_t first_gram[9]; /* entries of n are [first_gram[n-1], first_gram[n]) */
    uint32_t *ids;          /* every entry's term ids */
    uint64_t n_rows;
    uint32_t *docid;        /* per row, ascending within an n-gram */
    double *prob;           /* per row: eq. 2 as the table holds it */
};

/* Load the binary table at path.  Returns XG_OK, or XG_ERR_IO (cannot
 * open or read), XG_ERR_FORMAT (bad magic, a table without the counts of
 * --counts, a truncated or inconsistent file, records out of order),
 * XG_ERR_NOMEM; the message is one line naming the file and the fault and
 * *t is left empty. */
int xg_qlm_table_load(const char *path, struct xg_qlm_table *t);

void xg_qlm_table_free(struct xg_qlm_table *t);

/* The term id of the word s[0, len), or -1 when the table has no such word. */
int64_t xg_qlm_table_term(const struct xg_qlm_table *t, const char *s,
                          size_t len);

/* The entry of the n-gram ids[0, n) (1 <= n <= sigma), or NULL when it does
 * not occur in the collection. */
const struct xg_qlm_gram *xg_qlm_table_gram(const struct xg_qlm_table *t,
                                            const uint32_t *ids, uint32_t n);

/* The row of g for docid, or -1 when the n-gram does not occur in it. */
int64_t xg_qlm_table_row(const struct xg_qlm_table *t,
                         const struct xg_qlm_gram *g, uint32_t docid);

#ifdef __cplusplus
}
#endif
#endif
