/** @file dict_gpu.h
 *  @brief The dictionary of a text in the seed format (one word per line,
 *         documents separated by empty lines), built on the GPU in core
 *         (seed 000 §4: word starts by compact, a sort of word keys):
 *
 *  1. word starts (a non-newline byte after a newline), compacted by
 *     tiles of 4 KB (a count per tile, their sum, each tile's starts
 *     written in order), each word's length, 64-bit key and document
 *     flag: a word of up to 7 bytes is its own key (bytes and length), a
 *     longer one is keyed by its hash (text/hash.h) with the top bit set
 *     (text/dict_gpu_items.h);
 *  2. a radix sort of (key, word index); runs of equal keys are the
 *     terms, each hashed one checked byte by byte against its run's first
 *     word (two words with one hash: XG_ERR_UNSUPPORTED, the caller's
 *     host dictionary answers);
 *  3. the distinct words ranked in byte order (memcmp, then shorter
 *     first, as xg_text_dict_rank does): rounds of a radix sort, first of
 *     the words' first 8 bytes, then of (group rank << 32 | the next 4
 *     bytes), big-endian and zero-padded, until no group of equal
 *     prefixes has a word longer than the bytes compared, then, only if
 *     words are still tied (trailing zero bytes), (group, length); more
 *     than XG_GDICT_MAX_ROUNDS rounds: XG_ERR_UNSUPPORTED;
 *  4. every word's term id (its term's rank) by scatter; or, for a
 *     caller that stays on the device, the (term id, document) pairs of
 *     all words in order: each key run (a term's words, in word order)
 *     moved to its term's place, each word's document by a search of the
 *     documents' first words.
 *
 *  The CPU twin is the host dictionary (xg_wt_ref_pass1, xg_text_dict_merge,
 *  xg_text_dict_rank and qlm.c's term ids): test_qlm compares the terms and
 *  ids of both on the device.
 */
#ifndef XG_GDICT_H
#define XG_GDICT_H

#include <stddef.h>
#include <stdint.h>

#define XG_GDICT_MAX_ROUNDS 64

struct xg_gdict {
    uint32_t n_words, n_docs, n_terms;
    uint32_t *ids;          /* [n_words]: each word's term (rank) */
    uint32_t *doclen;       /* [n_docs]: words per document */
    uint32_t *term_off;     /* [n_terms], rank order: byte offset of the
                               term's first occurrence in the text */
    uint32_t *term_len;     /* [n_terms] */
    double upload_seconds;  /* of the build's time: the text's upload */
};

struct xg_device;

/* Build the dictionary of text[0, len) (len < 2^32 - 1) on the stream of
 * the owner's device (runtime/device.h), whose pinned staging carries the
 * text in and the ids out; its allocations are not counted in the owner's
 * budget.  XG_OK; or
 * XG_ERR_NODEVICE / XG_ERR_CUDA / XG_ERR_NOMEM (no usable device),
 * XG_ERR_UNSUPPORTED (a hash shared by two words, too many ranking rounds,
 * a text too large): the host dictionary must answer.  *out is zeroed on
 * error. */
int xg_gdict_build(const char *text, size_t len, struct xg_device *owner,
                   struct xg_gdict *out);

/* The same for a caller that goes on on the device (wt_cuda_whole.c):
 * out->ids and out->term_off stay NULL; instead dev gets device arrays:
 * every word's pair, term id << dbits | its 1-based document - 1, in
 * ascending order (n_words entries: the weight engine's sorted keys,
 * without a sort of their own), and the terms' offsets (n_terms entries,
 * as out->term_off's), which the caller frees with cudaFree.  The text's
 * device copy is freed as before.  on_words, if set, is called as soon as
 * the words are counted, with the device still at work (the weight engine
 * prepares its output meanwhile). */
struct xg_gdict_device {
    uint64_t *pairs;                                /* out */
    int dbits;                                      /* out: bits of n_docs - 1 */
    uint32_t *term_off;                             /* out */
    void (*on_words)(void *arg, uint32_t n_words);  /* in */
    void *arg;                                      /* in */
};
int xg_gdict_build_on_device(const char *text, size_t len, struct xg_device *owner,
                             struct xg_gdict *out, struct xg_gdict_device *dev);

/* Step 3 alone, for nt (>= 1) distinct strings already on the device
 * (the weight engine's out-of-core dictionary): string k is
 * t[start[k], start[k] + len[k]); rank[k] gets its rank in byte order.
 * Work on the owner's stream, with workspace of its own (about 40 bytes per string,
 * freed before it returns).  XG_ERR_UNSUPPORTED: more rounds than
 * XG_GDICT_MAX_ROUNDS; XG_ERR_CUDA. */
int xg_gdict_rank(struct xg_device *owner, const unsigned char *t, const uint32_t *start,
                  const uint32_t *len, uint32_t nt, uint32_t *rank);

void xg_gdict_free(struct xg_gdict *d);

#endif
