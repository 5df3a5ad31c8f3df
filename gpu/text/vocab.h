/** @file vocab.h
 *  @brief The fixed-vocabulary mode of `weight` and `qlm` (--vocabulary,
 *         seed 000's trie with one shared id for unknown words): every
 *         word of the input that the vocabulary lacks becomes the one
 *         token XG_TEXT_UNKNOWN before either engine runs, so both engines,
 *         in and out of core, see the same rewritten text.
 *
 *  The vocabulary file has the --text format (one word per line, 1..245
 *  bytes of UTF-8 without control characters; empty lines are ignored);
 *  it may not hold XG_TEXT_UNKNOWN itself.
 */
#ifndef XG_TEXT_VOCAB_H
#define XG_TEXT_VOCAB_H

#include <stdint.h>

#include "tokenize.h"

#ifdef __cplusplus
extern "C" {
#endif

#define XG_TEXT_UNKNOWN "<unk>"

struct xg_text_vocab;

/* Load path.  XG_OK; or XG_ERR_IO, XG_ERR_FORMAT (the --text loader's
 * faults, or XG_TEXT_UNKNOWN listed), XG_ERR_NOMEM, with one line naming
 * the file and the fault. */
int xg_text_vocab_load(const char *path, uint32_t threads, struct xg_text_vocab **v);
void xg_text_vocab_free(struct xg_text_vocab *v);
/* The number of distinct words. */
uint64_t xg_text_vocab_size(const struct xg_text_vocab *v);

/* Rewrite t's buffer: each word not in v becomes XG_TEXT_UNKNOWN (documents,
 * their order and docids stay).  *n_unknown: the words replaced. */
int xg_text_vocab_apply(const struct xg_text_vocab *v, struct xg_text *t, uint32_t threads,
                      uint64_t *n_unknown);

#ifdef __cplusplus
}
#endif
#endif
