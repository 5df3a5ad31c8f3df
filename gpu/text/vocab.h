/** @file vocab.h
 *  @brief The fixed-vocabulary mode of `weight` and `qlm` (--vocabulary,
 *         seed 000's trie with one shared id for unknown words): every
 *         word of the input that the vocabulary lacks becomes the one
 *         token XG_WT_UNKNOWN before either engine runs, so both engines,
 *         in and out of core, see the same rewritten text.
 *
 *  The vocabulary file has the --text format (one word per line, 1..245
 *  bytes of UTF-8 without control characters; empty lines are ignored);
 *  it may not hold XG_WT_UNKNOWN itself.
 */
#ifndef XG_WT_VOCAB_H
#define XG_WT_VOCAB_H

#include <stdint.h>

#include "tokenize.h"

#ifdef __cplusplus
extern "C" {
#endif

#define XG_WT_UNKNOWN "<unk>"

struct xg_wt_vocab;

/* Load path.  XG_OK; or XG_ERR_IO, XG_ERR_FORMAT (the --text loader's
 * faults, or XG_WT_UNKNOWN listed), XG_ERR_NOMEM, with one line naming
 * the file and the fault. */
int xg_wt_vocab_load(const char *path, uint32_t threads, struct xg_wt_vocab **v);
void xg_wt_vocab_free(struct xg_wt_vocab *v);
/* The number of distinct words. */
uint64_t xg_wt_vocab_size(const struct xg_wt_vocab *v);

/* Rewrite t's buffer: each word not in v becomes XG_WT_UNKNOWN (documents,
 * their order and docids stay).  *n_unknown: the words replaced. */
int xg_wt_vocab_apply(const struct xg_wt_vocab *v, struct xg_wt_text *t, uint32_t threads,
                      uint64_t *n_unknown);

#ifdef __cplusplus
}
#endif
#endif
