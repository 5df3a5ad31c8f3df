/** @file weight_out.h
 *  @brief The weight command's output (docs/weight.md): TSV or the binary
 *         form, written to OUT.tmp and renamed only when complete.
 */
#ifndef XG_WEIGHT_OUT_H
#define XG_WEIGHT_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../../gpu/runtime/outfile.h"

struct xg_wout {
    struct xg_outfile out;  /* OUT.tmp until closed */
    int binary;
    uint64_t n_terms, n_records;
    char *dict;             /* binary: u32 length + bytes per term */
    size_t dict_len, dict_cap;
};

/* Open OUT.tmp.  Errors: XG_ERR_IO (naming the file), XG_ERR_NOMEM. */
int xg_wout_open(struct xg_wout *w, const char *path, int binary);
/* The next term (in byte order) and its postings (docids ascending). */
int xg_wout_term(struct xg_wout *w, const char *term, size_t len,
                 const uint32_t *docids, const double *weights, uint64_t n);
/* ok: finish and rename to OUT; else (or on any error) remove OUT.tmp. */
int xg_wout_close(struct xg_wout *w, int ok);

#endif
