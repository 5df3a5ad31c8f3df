/** @file qlm_table.c
 *  @brief Load an XGQLM002 table (with counts) into the lookup arrays of
 *         qlm_table.h, checking every order the lookups rely on.
 *
 *  The whole file is read into memory and parsed once: records (u32 n,
 *  u32 ids[n], u32 docid, f64 probability, u64 f(x,d) f(h,d) f(x,C)
 *  f(h,C); little-endian, unaligned) from offset 48 to dict_offset, then
 *  n_terms dictionary entries (u32 length + bytes) to the end of the file
 *  (docs/qlm.md).  The host is little-endian (x86-64, as the writer).
 */
#include "qlm_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../index/crc32c.h"
#include "../runtime/error.h"
#include "qlm.h"
#include "qlm_format.h"

#define HEADER_BYTES sizeof(struct xg_qlm_header)

static uint32_t get32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static uint64_t get64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* -1, 0 or 1 as a is before, equal to or after b (id by id). */
static int ids_cmp(const uint32_t *a, const uint32_t *b, uint32_t n)
{
    for (uint32_t i = 0; i < n; ++i)
        if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    return 0;
}

/* Byte order of the weight dictionary (text/dict.c): memcmp, then length. */
static int bytes_cmp(const char *a, size_t na, const char *b, size_t nb)
{
    int c = memcmp(a, b, na < nb ? na : nb);
    if (c) return c;
    return (na > nb) - (na < nb);
}

static int read_file(const char *path, unsigned char **buf, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return xg_set_error(XG_ERR_IO, "%s: cannot open the qlm table", path);
    size_t cap = 1 << 16, n = 0, got;
    unsigned char *b = malloc(cap);
    while (b && (got = fread(b + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            unsigned char *nb = realloc(b, cap * 2);
            if (!nb) { free(b); b = NULL; break; }
            b = nb;
            cap *= 2;
        }
    }
    int bad = !b || ferror(f);
    fclose(f);
    if (bad) {
        free(b);
        return b ? xg_set_error(XG_ERR_IO, "%s: read error", path)
                 : xg_set_error(XG_ERR_NOMEM, "%s: out of memory", path);
    }
    *buf = b;
    *len = n;
    return XG_OK;
}

/* Parse the records of buf[48, end) into t (arrays allocated by caller
 * for n_rec rows).  Returns XG_OK or XG_ERR_FORMAT. */
static int parse_records(const char *path, const unsigned char *buf,
                         uint64_t end, uint64_t n_rec, struct xg_qlm_table *t)
{
    uint64_t at = HEADER_BYTES, n_ids = 0;
    uint32_t prev_n = 0;
    for (uint64_t r = 0; r < n_rec; ++r) {
        if (end - at < 4)
            return xg_set_error(XG_ERR_FORMAT, "%s: truncated record %llu",
                                path, (unsigned long long)r);
        uint32_t n = get32(buf + at);
        if (n < 1 || n > t->sigma)
            return xg_set_error(XG_ERR_FORMAT, "%s: record %llu has n = %u "
                                "(sigma %u)", path, (unsigned long long)r, n,
                                t->sigma);
        uint64_t size = 4 + 4ull * n + 4 + 8 + 32;
        if (end - at < size)
            return xg_set_error(XG_ERR_FORMAT, "%s: truncated record %llu",
                                path, (unsigned long long)r);
        const unsigned char *p = buf + at + 4;
        uint32_t *ids = t->ids + n_ids;
        for (uint32_t i = 0; i < n; ++i) {
            ids[i] = get32(p + 4 * i);
            if (ids[i] >= t->n_terms)
                return xg_set_error(XG_ERR_FORMAT, "%s: record %llu: term id "
                                    "%u out of range", path,
                                    (unsigned long long)r, ids[i]);
        }
        p += 4 * n;
        uint32_t docid = get32(p);
        double prob;
        memcpy(&prob, p + 4, 8);
        uint64_t fxc = get64(p + 28), fhc = get64(p + 36);
        if (docid == 0 || !(prob > 0 && prob <= 1) || fxc == 0 || fhc < fxc)
            return xg_set_error(XG_ERR_FORMAT, "%s: record %llu: bad docid, "
                                "probability or counts", path,
                                (unsigned long long)r);
        struct xg_qlm_gram *g = t->n_grams ? &t->gram[t->n_grams - 1] : NULL;
        int c = n != prev_n ? (n < prev_n ? -1 : 1)
                            : ids_cmp(t->ids + g->ids, ids, n) > 0 ? -1
                            : ids_cmp(t->ids + g->ids, ids, n) < 0 ? 1 : 0;
        if (c < 0 || (c == 0 && (t->docid[r - 1] >= docid ||
                                 g->fxc != fxc || g->fhc != fhc)))
            return xg_set_error(XG_ERR_FORMAT, "%s: record %llu out of order "
                                "or inconsistent with its n-gram", path,
                                (unsigned long long)r);
        if (c > 0) {
            for (uint32_t m = prev_n + 1; m <= n; ++m)
                t->first_gram[m - 1] = t->n_grams;
            g = &t->gram[t->n_grams++];
            g->ids = n_ids;
            g->row = r;
            g->n_rows = 0;
            g->fxc = fxc;
            g->fhc = fhc;
            n_ids += n;
            prev_n = n;
        }
        ++g->n_rows;
        t->docid[r] = docid;
        t->prob[r] = prob;
        at += size;
    }
    if (at != end)
        return xg_set_error(XG_ERR_FORMAT, "%s: records do not end at the "
                            "dictionary offset", path);
    for (uint32_t m = prev_n + 1; m <= XG_QLM_MAX_SIGMA + 1; ++m)
        t->first_gram[m - 1] = t->n_grams;
    return XG_OK;
}

static int parse_dict(const char *path, const unsigned char *buf, size_t len,
                      uint64_t at, struct xg_qlm_table *t)
{
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < t->n_terms; ++i) {
        if (len - at < 4 || len - at - 4 < get32(buf + at))
            return xg_set_error(XG_ERR_FORMAT, "%s: truncated dictionary", path);
        uint32_t n = get32(buf + at);
        memcpy(t->dict + bytes, buf + at + 4, n);
        t->term_off[i] = bytes;
        bytes += n;
        at += 4 + (uint64_t)n;
        if (i && bytes_cmp(t->dict + t->term_off[i - 1],
                           t->term_off[i] - t->term_off[i - 1],
                           t->dict + t->term_off[i], n) >= 0)
            return xg_set_error(XG_ERR_FORMAT, "%s: dictionary out of order",
                                path);
    }
    t->term_off[t->n_terms] = bytes;
    if (at != len)
        return xg_set_error(XG_ERR_FORMAT, "%s: bytes after the dictionary",
                            path);
    return XG_OK;
}

int xg_qlm_table_load(const char *path, struct xg_qlm_table *t)
{
    memset(t, 0, sizeof *t);
    unsigned char *buf = NULL;
    size_t len = 0;
    int rc = read_file(path, &buf, &len);
    if (rc) return rc;
    uint64_t n_terms = 0, n_rec = 0, dict_off = 0;
    if (len >= 8 && !memcmp(buf, XG_QLM_MAGIC_V1, 8)) {
        rc = xg_set_error(XG_ERR_FORMAT, "%s: a version 1 qlm table, without "
                          "a checksum (build it again with xapian-gpu qlm)",
                          path);
    } else if (len < HEADER_BYTES || memcmp(buf, XG_QLM_MAGIC, 8)) {
        rc = xg_set_error(XG_ERR_FORMAT, "%s: not a binary qlm table (magic "
                          "%s)", path, XG_QLM_MAGIC);
    } else if (xg_crc32c(0, buf + HEADER_BYTES, len - HEADER_BYTES) !=
               get32(buf + 48)) {
        rc = xg_set_error(XG_ERR_FORMAT, "%s: checksum mismatch (the table "
                          "was changed or cut short)", path);
    } else {
        t->sigma = get32(buf + 8);
        n_terms = get64(buf + 16);
        n_rec = get64(buf + 24);
        dict_off = get64(buf + 32);
        memcpy(&t->lambda, buf + 40, 8);
        if (!(get32(buf + 12) & XG_QLM_FLAG_COUNTS))
            rc = xg_set_error(XG_ERR_FORMAT, "%s: the table has no counts "
                              "(build it with qlm --format bin --counts)", path);
        else if (t->sigma < 1 || t->sigma > XG_QLM_MAX_SIGMA ||
                 !(t->lambda >= 0 && t->lambda <= 1) || n_terms > UINT32_MAX ||
                 dict_off < HEADER_BYTES || dict_off > len ||
                 n_rec > (dict_off - HEADER_BYTES) / 52 ||
                 n_terms > (len - dict_off) / 4)
            rc = xg_set_error(XG_ERR_FORMAT, "%s: bad header", path);
    }
    if (!rc) {
        t->n_terms = (uint32_t)n_terms;
        t->gram = malloc((n_rec + 1) * sizeof *t->gram);
        t->ids = malloc((n_rec * t->sigma + 1) * sizeof *t->ids);
        t->docid = malloc((n_rec + 1) * sizeof *t->docid);
        t->prob = malloc((n_rec + 1) * sizeof *t->prob);
        t->dict = malloc(len - dict_off + 1);
        t->term_off = malloc((n_terms + 1) * sizeof *t->term_off);
        if (!t->gram || !t->ids || !t->docid || !t->prob || !t->dict ||
            !t->term_off)
            rc = xg_set_error(XG_ERR_NOMEM, "%s: out of memory", path);
    }
    if (!rc) {
        t->n_rows = n_rec;
        rc = parse_records(path, buf, dict_off, n_rec, t);
    }
    if (!rc) rc = parse_dict(path, buf, len, dict_off, t);
    free(buf);
    if (rc) xg_qlm_table_free(t);
    return rc;
}

void xg_qlm_table_free(struct xg_qlm_table *t)
{
    free(t->dict);
    free(t->term_off);
    free(t->gram);
    free(t->ids);
    free(t->docid);
    free(t->prob);
    memset(t, 0, sizeof *t);
}

int64_t xg_qlm_table_term(const struct xg_qlm_table *t, const char *s,
                          size_t len)
{
    uint64_t lo = 0, hi = t->n_terms;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        int c = bytes_cmp(t->dict + t->term_off[mid],
                          t->term_off[mid + 1] - t->term_off[mid], s, len);
        if (c == 0) return (int64_t)mid;
        if (c < 0) lo = mid + 1; else hi = mid;
    }
    return -1;
}

const struct xg_qlm_gram *xg_qlm_table_gram(const struct xg_qlm_table *t,
                                            const uint32_t *ids, uint32_t n)
{
    if (n < 1 || n > t->sigma) return NULL;
    uint64_t lo = t->first_gram[n - 1], hi = t->first_gram[n];
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        int c = ids_cmp(t->ids + t->gram[mid].ids, ids, n);
        if (c == 0) return &t->gram[mid];
        if (c < 0) lo = mid + 1; else hi = mid;
    }
    return NULL;
}

int64_t xg_qlm_table_row(const struct xg_qlm_table *t,
                         const struct xg_qlm_gram *g, uint32_t docid)
{
    uint64_t lo = g->row, hi = g->row + g->n_rows;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (t->docid[mid] == docid) return (int64_t)mid;
        if (t->docid[mid] < docid) lo = mid + 1; else hi = mid;
    }
    return -1;
}
