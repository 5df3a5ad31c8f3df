/** @file input.c
 *  @brief The weight command's file loaders: the seed format (checked in
 *         parallel: UTF-8, control characters, word length) and docs.tsv
 *         (tokenized into the seed format, documents in docid order).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/error.h"
#include "tokenize.h"

/* Read a whole file, with one spare byte after it. */
static int slurp(const char *path, char **buf, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return xg_set_error(XG_ERR_IO, "%s: cannot open", path);
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap);
    for (;;) {
        if (!b) { fclose(f); return xg_set_error(XG_ERR_NOMEM, "%s: out of memory", path); }
        size_t got = fread(b + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) break;
        if (cap - n - 1 == 0) {
            cap *= 2;
            char *nb = realloc(b, cap);
            if (!nb) free(b);
            b = nb;
        }
    }
    int err = ferror(f);
    fclose(f);
    if (err) { free(b); return xg_set_error(XG_ERR_IO, "%s: read failed", path); }
    *buf = b;
    *len = n;
    return XG_OK;
}

/* 1-based line number of byte offset `at`. */
static uint64_t line_of(const char *b, size_t at)
{
    uint64_t line = 1;
    for (size_t i = 0; i < at; ++i) line += b[i] == '\n';
    return line;
}

struct check {
    const char *b;
    size_t lo, hi;          /* whole lines */
    size_t bad;             /* first fault's offset (hi: none) */
    int fault;              /* 1 utf-8, 2 control, 3 long word */
    uint64_t words, docs;   /* docs: document starts after the first */
};

static void *check_range(void *arg)
{
    struct check *c = arg;
    const char *b = c->b;
    c->bad = c->hi;
    size_t i = c->lo;
    while (i < c->hi) {
        const char *nl = memchr(b + i, '\n', c->hi - i);
        size_t end = nl ? (size_t)(nl - b) : c->hi;
        if (end > i) {
            ++c->words;
            if (i >= 2 && b[i - 1] == '\n' && b[i - 2] == '\n') ++c->docs;
            for (size_t k = i; k < end; ++k) {
                unsigned char ch = (unsigned char)b[k];
                if (ch < 0x20 || ch == 0x7F) { c->bad = k; c->fault = 2; return NULL; }
            }
            size_t ok = xg_text_utf8_valid(b + i, end - i);
            if (ok != end - i) { c->bad = i + ok; c->fault = 1; return NULL; }
            if (end - i > XG_TEXT_MAX_WORD) { c->bad = i; c->fault = 3; return NULL; }
        }
        i = end + 1;
    }
    return NULL;
}

int xg_text_load(const char *path, uint32_t threads, struct xg_text *out)
{
    memset(out, 0, sizeof *out);
    char *b;
    size_t n;
    int rc = slurp(path, &b, &n);
    if (rc) return rc;
    if (n && b[n - 1] != '\n') b[n++] = '\n';   /* no final newline: fine */
    if (threads < 1) threads = 1;
    if (threads > 64) threads = 64;
    struct check c[64];
    pthread_t tid[64];
    size_t at = 0;
    for (uint32_t t = 0; t < threads; ++t) {
        size_t hi = t + 1 == threads ? n : n / threads * (t + 1);
        if (hi < at) hi = at;
        while (hi < n && hi > 0 && b[hi - 1] != '\n') ++hi;
        c[t] = (struct check){b, at, hi, 0, 0, 0, 0};
        at = hi;
    }
    for (uint32_t t = 1; t < threads; ++t)
        if (pthread_create(&tid[t], NULL, check_range, &c[t])) c[t].fault = -1;
    check_range(&c[0]);
    uint64_t words = 0, docs = 0;
    for (uint32_t t = 0; t < threads; ++t) {
        if (t && c[t].fault != -1) pthread_join(tid[t], NULL);
        if (c[t].fault == -1) { c[t].fault = 0; check_range(&c[t]); }
    }
    for (uint32_t t = 0; t < threads; ++t) {
        if (c[t].fault) {
            size_t k = c[t].bad;
            uint64_t line = line_of(b, k);
            size_t ls = k;
            while (ls > 0 && b[ls - 1] != '\n') --ls;
            if (c[t].fault == 1)
                rc = xg_set_error(XG_ERR_FORMAT, "%s:%llu: invalid UTF-8 at byte %zu",
                                  path, (unsigned long long)line, k);
            else if (c[t].fault == 2)
                rc = xg_set_error(XG_ERR_FORMAT, "%s:%llu: control character 0x%02x "
                                  "in a word (LF line ends only; no TAB or CR)", path,
                                  (unsigned long long)line, (unsigned char)b[k]);
            else {
                const char *nl = memchr(b + ls, '\n', n - ls);
                rc = xg_set_error(XG_ERR_FORMAT, "%s:%llu: word of %zu bytes (at most "
                                  "%d)", path, (unsigned long long)line,
                                  (size_t)(nl - (b + ls)), XG_TEXT_MAX_WORD);
            }
            free(b);
            return rc;
        }
        words += c[t].words;
        docs += c[t].docs;
    }
    if (!words) {
        free(b);
        return xg_set_error(XG_ERR_FORMAT, "%s: no words (empty input)", path);
    }
    /* The first word starts document 1 even after blank lines. */
    size_t first = 0;
    while (b[first] == '\n') ++first;
    if (first >= 2) --docs;
    out->buf = b;
    out->len = n;
    out->path = path;
    out->n_docs = docs + 1;
    if (out->n_docs > UINT32_MAX) {
        xg_text_free(out);
        return xg_set_error(XG_ERR_FORMAT, "%s: more than 2^32-1 documents", path);
    }
    return XG_OK;
}

/* --- docs.tsv ----------------------------------------------------------- */

struct tsv_doc {
    uint32_t docid;
    size_t off, len;        /* its terms in the staging buffer */
};

struct sink {
    char *b;
    size_t n, cap;
};

static int emit_term(void *ctx, const char *term, size_t len)
{
    struct sink *s = ctx;
    if (s->n + len + 1 > s->cap) {
        size_t cap = 2 * (s->cap + len + 1);
        char *nb = realloc(s->b, cap);
        if (!nb) return XG_ERR_NOMEM;
        s->b = nb;
        s->cap = cap;
    }
    memcpy(s->b + s->n, term, len);
    s->b[s->n + len] = '\n';
    s->n += len + 1;
    return 0;
}

static int by_docid(const void *a, const void *b)
{
    const struct tsv_doc *x = a, *y = b;
    return (x->docid > y->docid) - (x->docid < y->docid);
}

int xg_text_load_tsv(const char *path, struct xg_text *out)
{
    memset(out, 0, sizeof *out);
    char *b;
    size_t n;
    int rc = slurp(path, &b, &n);
    if (rc) return rc;
    struct sink terms = {NULL, 0, 0};
    struct tsv_doc *docs = NULL;
    size_t n_docs = 0, cap = 0;
    uint64_t line = 0;
    size_t i = 0;
    while (i < n && !rc) {
        ++line;
        const char *nl = memchr(b + i, '\n', n - i);
        size_t end = nl ? (size_t)(nl - b) : n;
        size_t k = i;
        if (end == i) { i = end + 1; continue; }    /* empty line: skipped */
        uint64_t id = 0;
        while (k < end && b[k] >= '0' && b[k] <= '9' && id <= UINT32_MAX)
            id = id * 10 + (uint64_t)(b[k++] - '0');
        if (k == i || k == end || b[k] != '\t' || id == 0 || id > UINT32_MAX) {
            rc = xg_set_error(XG_ERR_FORMAT, "%s:%llu: expected docid<TAB>text with a "
                              "docid in 1..4294967295", path, (unsigned long long)line);
            break;
        }
        ++k;
        size_t tend = end;
        if (tend > k && b[tend - 1] == '\r') --tend;  /* CRLF line ends */
        size_t ok = xg_text_utf8_valid(b + k, tend - k);
        if (ok != tend - k) {
            rc = xg_set_error(XG_ERR_FORMAT, "%s:%llu: invalid UTF-8 at byte %zu", path,
                              (unsigned long long)line, k + ok);
            break;
        }
        if (n_docs == cap) {
            cap = 2 * cap + 1024;
            struct tsv_doc *nd = realloc(docs, cap * sizeof *docs);
            if (!nd) { rc = xg_set_error(XG_ERR_NOMEM, "%s: out of memory", path); break; }
            docs = nd;
        }
        size_t start = terms.n;
        if (xg_text_tokenize(b + k, tend - k, emit_term, &terms)) {
            rc = xg_set_error(XG_ERR_NOMEM, "%s: out of memory", path);
            break;
        }
        docs[n_docs++] = (struct tsv_doc){(uint32_t)id, start, terms.n - start};
        i = end + 1;
    }
    free(b);
    if (!rc && !n_docs)
        rc = xg_set_error(XG_ERR_FORMAT, "%s: no documents (empty input)", path);
    int sorted = 1;
    for (size_t d = 1; !rc && d < n_docs; ++d) sorted &= docs[d - 1].docid < docs[d].docid;
    if (!rc && !sorted) {
        qsort(docs, n_docs, sizeof *docs, by_docid);
        for (size_t d = 1; d < n_docs; ++d)
            if (docs[d - 1].docid == docs[d].docid) {
                rc = xg_set_error(XG_ERR_FORMAT, "%s: docid %u appears twice", path,
                                  docs[d].docid);
                break;
            }
    }
    if (!rc) {
        out->buf = malloc(terms.n + n_docs + 1);
        out->docids = malloc(n_docs * sizeof *out->docids);
        if (!out->buf || !out->docids) rc = xg_set_error(XG_ERR_NOMEM, "%s: out of memory", path);
    }
    if (!rc) {
        size_t at = 0;
        for (size_t d = 0; d < n_docs; ++d) {
            if (!docs[d].len) { ++out->n_empty; continue; }
            if (at) out->buf[at++] = '\n';
            memcpy(out->buf + at, terms.b + docs[d].off, docs[d].len);
            at += docs[d].len;
            out->docids[out->n_docs++] = docs[d].docid;
        }
        out->len = at;
        out->path = path;
    }
    free(terms.b);
    free(docs);
    if (rc) xg_text_free(out);
    return rc;
}

void xg_text_free(struct xg_text *t)
{
    free(t->buf);
    free(t->docids);
    memset(t, 0, sizeof *t);
}
