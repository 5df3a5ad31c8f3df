/** @file tokenize.h
 *  @brief The weight command's text inputs: UTF-8 checks, the TermGenerator-
 *         style tokenizer for docs.tsv text, and the two file loaders that
 *         turn a file into the pipeline's input (seed 000 §2 format).
 *
 *  The tokenizer follows Xapian 1.4.22's TermGenerator for plain words
 *  without stemming (queryparser/termgenerator_internal.cc, read, not
 *  copied): word characters and lowercase from Xapian's own Unicode 9.0.0
 *  data (text/unicode.c), ASCII acronyms (P.T.O.), infixes (' & · and the
 *  digit separators , . ;), suffixes (+ #, at most 3), terms over 64
 *  bytes dropped.  Differences are listed in docs/weight.md.
 */
#ifndef XG_TEXT_TOKENIZE_H
#define XG_TEXT_TOKENIZE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One range of the generated Unicode table (text/unicode.c). */
struct xg_text_urange {
    uint32_t first, last;   /* code points, inclusive */
    int32_t delta;          /* lowercase = cp + delta (see alt) */
    uint8_t alt;            /* 1: delta only at even offsets from first */
    uint8_t digit;          /* 1: decimal digit (Nd) */
};
extern const struct xg_text_urange xg_text_uranges[];
extern const unsigned xg_text_n_uranges;

/* TermGenerator's default max_word_length: longer terms are dropped. */
#define XG_TEXT_TSV_MAX_TERM 64
/* Longest word of the --text format: Xapian's longest term (glass). */
#define XG_TEXT_MAX_WORD 245

/* Classify a code point: returns its lowercase if it is a word character
 * (Xapian's Unicode::is_wordchar), else 0; *digit set for category Nd. */
uint32_t xg_text_wordchar(uint32_t cp, int *digit);

/* Length of the valid UTF-8 prefix of s[0, n) (n when all is valid):
 * shortest forms only, no surrogates, nothing above U+10FFFF. */
size_t xg_text_utf8_valid(const char *s, size_t n);

/* Tokenize valid UTF-8 text; emit(ctx, term, len) per term in order
 * (terms of at most XG_TEXT_TSV_MAX_TERM bytes).  Returns 0, or emit's
 * nonzero value. */
typedef int (*xg_text_emit_fn)(void *ctx, const char *term, size_t len);
int xg_text_tokenize(const char *text, size_t n, xg_text_emit_fn emit, void *ctx);

/* A loaded input in the seed format: words one per line ('\n' after each,
 * also the last), documents separated by one or more empty lines. */
struct xg_text {
    char *buf;              /* malloc'd */
    size_t len;
    uint32_t *docids;       /* external docid per non-empty document in
                               buffer order (NULL: 1, 2, ...) */
    uint64_t n_docs;        /* non-empty documents in buf */
    uint64_t n_empty;       /* documents without terms (TSV), counted in N */
    const char *path;       /* the file it came from, for messages (the
                               loader's argument, not copied) */
};

/* Load a file in the seed format (docs/weight.md: LF line ends, words of
 * 1..245 bytes of UTF-8 without control characters).  Errors (XG_ERR_IO,
 * XG_ERR_FORMAT; one line naming the file, line and fault): unreadable,
 * empty (no words), invalid UTF-8, a control character, a word too long. */
int xg_text_load(const char *path, uint32_t threads, struct xg_text *out);

/* Load docid<TAB>text lines and tokenize them (xg_text_tokenize); the
 * documents are put in docid order.  Errors as above, plus a bad or
 * repeated docid and a line without a TAB. */
int xg_text_load_tsv(const char *path, struct xg_text *out);

void xg_text_free(struct xg_text *t);

#ifdef __cplusplus
}
#endif
#endif
