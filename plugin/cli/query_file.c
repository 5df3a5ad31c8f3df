/** @file query_file.c
 *  @brief The query lists of search, ab, bench and calibrate: a --queries
 *         file (qid<TAB>query text per line) or the command's words.
 *
 *  The file is untrusted input (fuzzed by tests/fuzz/fuzz_queries.c): a
 *  NUL byte, a line without a TAB or with an empty qid is one line naming
 *  the file, the line and the fault.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../gpu/runtime/error.h"
#include "query_file.h"

static int push(struct xg_cli_queries *q, char *qid, char *text, size_t *cap)
{
    if (q->n == *cap) {
        size_t c = *cap ? *cap * 2 : 64;
        char **a = realloc(q->qid, c * sizeof *a);
        if (!a) return -1;
        q->qid = a;
        char **b = realloc(q->text, c * sizeof *b);
        if (!b) return -1;
        q->text = b;
        *cap = c;
    }
    q->qid[q->n] = qid;
    q->text[q->n] = text;
    ++q->n;
    return 0;
}

int xg_cli_queries_load(const char *path, struct xg_cli_queries *q)
{
    memset(q, 0, sizeof *q);
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f)
        return xg_set_error(XG_ERR_IO, "%s: cannot open: %s", path,
                            strerror(errno));
    size_t len = 0, cap = 0, qcap = 0;
    char chunk[65536];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (len + got + 1 > cap) {
            cap = (len + got + 1) * 2;
            char *b = realloc(q->buf, cap);
            if (!b) {
                if (f != stdin) fclose(f);
                return xg_set_error(XG_ERR_NOMEM, "%s: out of memory", path);
            }
            q->buf = b;
        }
        memcpy(q->buf + len, chunk, got);
        len += got;
    }
    int err = ferror(f);
    if (f != stdin) fclose(f);
    if (err) return xg_set_error(XG_ERR_IO, "%s: read error", path);
    if (!q->buf && !(q->buf = malloc(1)))
        return xg_set_error(XG_ERR_NOMEM, "out of memory");
    q->buf[len] = '\0';
    /* A NUL would end the text early and hide every later line. */
    const char *nul = memchr(q->buf, '\0', len);
    if (nul) {
        unsigned line = 1;
        for (const char *c = q->buf; c < nul; ++c) line += *c == '\n';
        return xg_set_error(XG_ERR_FORMAT, "%s:%u: a NUL byte in the query "
                            "file", path, line);
    }
    char *p = q->buf;
    for (unsigned line = 1; *p; ++line) {
        char *nl = strchr(p, '\n');
        if (nl) *nl = '\0';
        size_t n = strlen(p);
        if (n && p[n - 1] == '\r') p[--n] = '\0';
        if (n) {
            char *tab = strchr(p, '\t');
            if (!tab || tab == p)
                return xg_set_error(XG_ERR_FORMAT, "%s:%u: expected "
                                    "'qid<TAB>query text'", path, line);
            *tab = '\0';
            if (push(q, p, tab + 1, &qcap))
                return xg_set_error(XG_ERR_NOMEM, "out of memory");
        }
        if (!nl) break;
        p = nl + 1;
    }
    return XG_OK;
}

int xg_cli_queries_from_args(int argc, char **argv, struct xg_cli_queries *q)
{
    size_t qcap = 0;
    memset(q, 0, sizeof *q);
    /* qids "1".."n": one buffer of numbers. */
    q->buf = malloc((size_t)argc * 12 + 1);
    if (!q->buf) return xg_set_error(XG_ERR_NOMEM, "out of memory");
    char *b = q->buf;
    for (int i = 0; i < argc; ++i) {
        int w = sprintf(b, "%d", i + 1);
        if (push(q, b, argv[i], &qcap))
            return xg_set_error(XG_ERR_NOMEM, "out of memory");
        b += w + 1;
    }
    return XG_OK;
}

void xg_cli_queries_free(struct xg_cli_queries *q)
{
    free(q->qid);
    free(q->text);
    free(q->buf);
    memset(q, 0, sizeof *q);
}
