/** @file vocab.c
 *  @brief --vocabulary (text/vocab.h): a hash set of the listed words (the
 *         weight dictionary's table) and a two-pass, multi-threaded
 *         rewrite of the input: sizes per share, then the bytes.
 */
#include "vocab.h"

#include <stdlib.h>
#include <string.h>

#include "../runtime/error.h"
#include "hash.h"
#include "../runtime/threads.h"
#include "dict.h"

struct xg_text_vocab {
    struct xg_text words;    /* the file; the set points into it */
    struct xg_text_dict set;
};

static int nomem(void)
{
    return xg_set_error(XG_ERR_NOMEM, "vocabulary: out of memory");
}

void xg_text_vocab_free(struct xg_text_vocab *v)
{
    if (!v) return;
    xg_text_dict_free(&v->set);
    xg_text_free(&v->words);
    free(v);
}

uint64_t xg_text_vocab_size(const struct xg_text_vocab *v) { return v->set.n; }

int xg_text_vocab_load(const char *path, uint32_t threads, struct xg_text_vocab **out)
{
    *out = NULL;
    struct xg_text_vocab *v = calloc(1, sizeof *v);
    if (!v) return nomem();
    int rc = xg_text_load(path, threads, &v->words);
    if (!rc) rc = xg_text_dict_init(&v->set, 1 << 16);
    const char *b = v->words.buf;
    const size_t unk = sizeof XG_TEXT_UNKNOWN - 1;
    for (size_t p = 0; !rc && p < v->words.len;) {
        const char *nl = memchr(b + p, '\n', v->words.len - p);
        const size_t len = (size_t)(nl - (b + p));
        if (len == unk && !memcmp(b + p, XG_TEXT_UNKNOWN, unk)) {
            rc = xg_set_error(XG_ERR_FORMAT, "%s: lists %s, the token that stands for every "
                              "word the vocabulary lacks", path, XG_TEXT_UNKNOWN);
        } else if (len) {
            const uint64_t h = xg_text_hash((const unsigned char *)b + p, (uint32_t)len,
                                          UINT64_MAX);
            if (!xg_text_dict_get(&v->set, b + p, (uint32_t)len, h)) rc = nomem();
        }
        p += len + 1;
    }
    if (rc) {
        xg_text_vocab_free(v);
        return rc;
    }
    *out = v;
    return XG_OK;
}

/* One share of the input: whole lines [lo, hi). */
struct share {
    const struct xg_text_vocab *v;
    const char *src;
    size_t lo, hi;
    char *dst;                  /* pass 2: where its bytes go */
    size_t out_len;             /* pass 1: its rewritten length */
    uint64_t unknown;
};

static int known(const struct xg_text_vocab *v, const char *s, size_t len)
{
    const uint64_t h = xg_text_hash((const unsigned char *)s, (uint32_t)len, UINT64_MAX);
    return xg_text_dict_find(&v->set, s, (uint32_t)len, h) != NULL;
}

static void *rewrite(void *arg)
{
    struct share *s = arg;
    const size_t unk = sizeof XG_TEXT_UNKNOWN - 1;
    size_t out = 0;
    uint64_t unknown = 0;
    for (size_t p = s->lo; p < s->hi;) {
        const char *nl = memchr(s->src + p, '\n', s->hi - p);
        const size_t len = (size_t)(nl - (s->src + p));
        const char *word = s->src + p;
        size_t wl = len;
        if (len && !known(s->v, s->src + p, len)) {
            word = XG_TEXT_UNKNOWN;
            wl = unk;
            ++unknown;
        }
        if (s->dst) {
            memcpy(s->dst + out, word, wl);
            s->dst[out + wl] = '\n';
        }
        out += wl + 1;
        p += len + 1;
    }
    s->out_len = out;
    s->unknown = unknown;
    return NULL;
}

int xg_text_vocab_apply(const struct xg_text_vocab *v, struct xg_text *t, uint32_t threads,
                      uint64_t *n_unknown)
{
    *n_unknown = 0;
    if (!t->len) return XG_OK;
    const uint32_t n = xg_threads_shares(threads, t->len, 16);
    struct share *s = calloc(n, sizeof *s);
    if (!s) return nomem();
    /* Shares cut after a '\n' (every line, the last too, ends with one). */
    size_t lo = 0;
    for (uint32_t i = 0; i < n; ++i) {
        size_t hi = i + 1 == n ? t->len : t->len / n * (i + 1);
        if (hi < lo) hi = lo;
        while (hi < t->len && t->buf[hi - 1] != '\n') ++hi;
        s[i] = (struct share){v, t->buf, lo, hi, NULL, 0, 0};
        lo = hi;
    }
    xg_threads_run(n, rewrite, s, sizeof *s);
    size_t total = 0;
    for (uint32_t i = 0; i < n; ++i) total += s[i].out_len;
    char *buf = malloc(total + 1);
    if (!buf) {
        free(s);
        return nomem();
    }
    size_t at = 0;
    for (uint32_t i = 0; i < n; ++i) {
        s[i].dst = buf + at;
        at += s[i].out_len;
    }
    xg_threads_run(n, rewrite, s, sizeof *s);
    for (uint32_t i = 0; i < n; ++i) *n_unknown += s[i].unknown;
    free(t->buf);
    t->buf = buf;
    t->len = total;
    free(s);
    return XG_OK;
}
