/** @file fuzz_text.c
 *  @brief libFuzzer target: the text readers of `weight` and `qlm`: one word
 *         per line (--text), docs.tsv, and the vocabulary (--vocabulary).
 *
 *  The input's first byte picks the reader (its low two bits) and the
 *  threads the --text reader checks with (bit 2); the rest is the file
 *  (corpus/text: slices of the bundled sample in each form).  What a
 *  reader accepts must be what the pipelines rely on: the seed format
 *  (words of 1..245 bytes of valid UTF-8 without control characters, one
 *  per line, each line ended, documents separated by empty lines) with
 *  n_docs documents, docids strictly ascending; a vocabulary must know
 *  every word of the same bytes read as a --text file.  A refusal must
 *  give a negative code and one line naming the file.
 */
#include <stdint.h>
#include <string.h>

#include "../../gpu/text/tokenize.h"
#include "../../gpu/text/vocab.h"
#include "fuzz_file.h"

/* A docs.tsv whose documents all lack terms loads as no words (weight
 * then writes no postings; qlm refuses it); the --text reader refuses it. */
static void check_seed_format(const struct xg_text *t, int tsv)
{
    if (t->len == 0 ? !tsv || t->n_docs : t->buf[t->len - 1] != '\n')
        abort();
    uint64_t docs = 0;
    int in_doc = 0;
    size_t at = 0;
    while (at < t->len) {
        const char *nl = memchr(t->buf + at, '\n', t->len - at);
        if (!nl) abort();
        size_t w = (size_t)(nl - (t->buf + at));
        if (w == 0) {
            in_doc = 0;
        } else {
            if (w > XG_TEXT_MAX_WORD || xg_text_utf8_valid(t->buf + at, w) != w)
                abort();
            for (size_t i = 0; i < w; ++i)
                if ((unsigned char)t->buf[at + i] < 0x20 ||
                    t->buf[at + i] == 0x7f)
                    abort();
            if (!in_doc) ++docs;
            in_doc = 1;
        }
        at += w + 1;
    }
    if (docs != t->n_docs) abort();
    if (t->docids)
        for (uint64_t i = 1; i < t->n_docs; ++i)
            if (t->docids[i] <= t->docids[i - 1]) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    unsigned mode = data[0] & 3, threads = data[0] & 4 ? 4 : 1;
    const char *path = xg_fuzz_file(data + 1, size - 1);
    struct xg_text t;
    int rc;
    if (mode == 1) {
        rc = xg_text_load_tsv(path, &t);
    } else if (mode == 2) {
        struct xg_text_vocab *v;
        rc = xg_text_vocab_load(path, threads, &v);
        if (rc != XG_OK) {
            xg_fuzz_refusal(rc, path);
            return 0;
        }
        if (xg_text_load(path, threads, &t) == XG_OK) {
            uint64_t unknown = 1;
            if (xg_text_vocab_apply(v, &t, threads, &unknown) != XG_OK ||
                unknown != 0)
                abort();
            check_seed_format(&t, 0);
            xg_text_free(&t);
        }
        xg_text_vocab_free(v);
        return 0;
    } else {
        rc = xg_text_load(path, threads, &t);
    }
    if (rc != XG_OK) {
        xg_fuzz_refusal(rc, path);
        return 0;
    }
    check_seed_format(&t, mode == 1);
    xg_text_free(&t);
    return 0;
}
