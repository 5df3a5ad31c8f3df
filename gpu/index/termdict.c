/** @file termdict.c
 *  @brief Front-coded dictionary writer and lookup (see termdict.h).
 */
#include "termdict.h"

#include "format.h"
#include "../runtime/error.h"

static int put_varint(struct xg_buf *b, uint64_t v)
{
    uint8_t tmp[10];
    size_t n = 0;
    do {
        uint8_t byte = v & 0x7f;
        v >>= 7;
        tmp[n++] = byte | (v ? 0x80 : 0);
    } while (v);
    return xg_buf_append(b, tmp, n);
}

/* Read a varint from [*p, end); 0 on success, -1 if malformed. */
static int get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    uint64_t r = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (*p >= end) return -1;
        uint8_t byte = *(*p)++;
        r |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            *v = r;
            return 0;
        }
    }
    return -1;
}

static int cmp_bytes(const char *a, size_t an, const char *b, size_t bn)
{
    size_t n = an < bn ? an : bn;
    int c = memcmp(a, b, n);
    if (c) return c;
    return an < bn ? -1 : an > bn;
}

int xg_dict_add(struct xg_dict_writer *w, const char *term, size_t len)
{
    int rc;
    if (w->n_terms && cmp_bytes(w->prev, w->prev_len, term, len) >= 0)
        return xg_set_error(XG_ERR_ARG, "dictionary: terms out of order");
    if (w->n_terms % XG_FMT_DICT_BUCKET == 0) {
        uint64_t off = w->dict->len;
        if ((rc = xg_buf_append(w->index, &off, sizeof off))) return rc;
        if ((rc = put_varint(w->dict, len))) return rc;
        if ((rc = xg_buf_append(w->dict, term, len))) return rc;
    } else {
        size_t shared = 0;
        while (shared < len && shared < w->prev_len &&
               term[shared] == w->prev[shared])
            ++shared;
        if ((rc = put_varint(w->dict, shared))) return rc;
        if ((rc = put_varint(w->dict, len - shared))) return rc;
        if ((rc = xg_buf_append(w->dict, term + shared, len - shared)))
            return rc;
    }
    if (len + 1 > w->prev_cap) {
        size_t cap = (len + 1) * 2;
        char *p = realloc(w->prev, cap);
        if (!p) return xg_set_error(XG_ERR_NOMEM, "out of memory");
        w->prev = p;
        w->prev_cap = cap;
    }
    memcpy(w->prev, term, len);
    w->prev_len = len;
    ++w->n_terms;
    return XG_OK;
}

int xg_dict_finish(struct xg_dict_writer *w)
{
    uint64_t off = w->dict->len;
    int rc = xg_buf_append(w->index, &off, sizeof off);
    free(w->prev);
    w->prev = NULL;
    w->prev_len = w->prev_cap = 0;
    return rc;
}

/* Decode the term at *p following `prev` (first of a bucket if first).
 * Writes into buf (cap bytes).  Returns length or -1. */
static int64_t next_term(const uint8_t **p, const uint8_t *end, int first,
                         char *buf, size_t cap, size_t prev_len)
{
    uint64_t shared = 0, suffix;
    if (!first && get_varint(p, end, &shared)) return -1;
    if (get_varint(p, end, &suffix)) return -1;
    if (shared > prev_len || suffix > (uint64_t)(end - *p) ||
        shared + suffix > cap)
        return -1;
    memcpy(buf + shared, *p, suffix);
    *p += suffix;
    return (int64_t)(shared + suffix);
}

#define TERM_MAX 4096 /* Xapian terms are at most 245 bytes */

/* The first (whole) term of the bucket at offset off: its bytes and
 * length; -1 if malformed. */
static int bucket_head(const uint8_t *dict, uint64_t dict_len, uint64_t off,
                       const uint8_t **t, uint64_t *n)
{
    if (off >= dict_len) return -1;
    const uint8_t *p = dict + off;
    if (get_varint(&p, dict + dict_len, n) ||
        *n > (uint64_t)(dict + dict_len - p))
        return -1;
    *t = p;
    return 0;
}

/* Scan bucket b from its first term: the id of `term` if it is there,
 * else -1.  With `only` >= 0, compares the term at that id alone (the
 * hash's candidate), decoding the ones before it. */
static int64_t bucket_scan(const uint8_t *dict, uint64_t dict_len,
                           const uint64_t *index, uint64_t b,
                           uint64_t n_terms, int64_t only, const char *term,
                           size_t len)
{
    char buf[TERM_MAX];
    if (index[b] > dict_len) return -1;
    const uint8_t *p = dict + index[b];
    const uint8_t *end = dict + (index[b + 1] <= dict_len ? index[b + 1]
                                                          : dict_len);
    size_t prev = 0;
    for (uint64_t i = 0; i < XG_FMT_DICT_BUCKET; ++i) {
        uint64_t id = b * XG_FMT_DICT_BUCKET + i;
        if (id >= n_terms || p >= end) break;
        int64_t n = next_term(&p, end, i == 0, buf, sizeof buf, prev);
        if (n < 0) return -1;
        if (only < 0 || id == (uint64_t)only) {
            int c = cmp_bytes(buf, (size_t)n, term, len);
            if (c == 0) return (int64_t)id;
            if (c > 0 || only >= 0) break;
        }
        prev = (size_t)n;
    }
    return -1;
}

uint64_t xg_dict_term_hash(const char *term, size_t len)
{
    const uint64_t m = 0xff51afd7ed558ccdull;
    uint64_t h = 0x9e3779b97f4a7c15ull ^ len, w;
    for (; len >= 8; term += 8, len -= 8) {
        memcpy(&w, term, 8);
        h = (h ^ w) * m;
        h ^= h >> 29;
    }
    w = 0;
    memcpy(&w, term, len);
    h = (h ^ w) * m;
    h ^= h >> 32;
    h *= 0xc4ceb9fe1a85ec53ull;
    return h ^ h >> 29;
}

static void hash_put(void *ctx, uint64_t id, const char *t, size_t n)
{
    struct xg_dict_hash *h = ctx;
    uint64_t x = xg_dict_term_hash(t, n), i = x & h->mask;
    while (h->slot[i]) i = (i + 1) & h->mask;
    h->slot[i] = (x >> 32) << 32 | (id + 1);
}

int xg_dict_hash_build(const uint8_t *dict, uint64_t dict_len,
                       const uint64_t *index, uint64_t n_buckets,
                       uint64_t n_terms, struct xg_dict_hash *h)
{
    h->slot = NULL;
    h->mask = 0;
    if (n_terms >= UINT32_MAX)
        return xg_dict_walk(dict, dict_len, index, n_buckets, n_terms, NULL,
                            NULL);
    uint64_t size = 16;
    while (size < n_terms + n_terms / 2 + 1) size *= 2;
    h->slot = calloc(size, sizeof *h->slot);
    if (!h->slot) return xg_set_error(XG_ERR_NOMEM, "out of memory");
    h->mask = size - 1;
    int rc = xg_dict_walk(dict, dict_len, index, n_buckets, n_terms,
                          hash_put, h);
    if (rc) xg_dict_hash_free(h);
    return rc;
}

void xg_dict_hash_free(struct xg_dict_hash *h)
{
    free(h->slot);
    h->slot = NULL;
    h->mask = 0;
}

int64_t xg_dict_lookup(const uint8_t *dict, uint64_t dict_len,
                       const uint64_t *index, const struct xg_dict_hash *hash,
                       uint64_t n_buckets, uint64_t n_terms, const char *term,
                       size_t len)
{
    if (n_buckets == 0) return -1;
    if (hash && hash->slot) {
        uint64_t x = xg_dict_term_hash(term, len);
        for (uint64_t i = x & hash->mask;; i = (i + 1) & hash->mask) {
            uint64_t e = hash->slot[i];
            if (!e) return -1;
            if (e >> 32 != x >> 32) continue;
            uint64_t id = (uint32_t)e - 1;
            if (id >= n_terms) return -1;
            int64_t r = bucket_scan(dict, dict_len, index,
                                    id / XG_FMT_DICT_BUCKET, n_terms,
                                    (int64_t)id, term, len);
            if (r >= 0) return r;
        }
    }
    /* The last bucket whose first term <= term. */
    uint64_t lo = 0, hi = n_buckets;
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2, n;
        const uint8_t *t;
        if (bucket_head(dict, dict_len, index[mid], &t, &n)) return -1;
        if (cmp_bytes((const char *)t, (size_t)n, term, len) <= 0)
            lo = mid;
        else
            hi = mid;
    }
    return bucket_scan(dict, dict_len, index, lo, n_terms, -1, term, len);
}

int xg_dict_prefix(const uint8_t *dict, uint64_t dict_len,
                   const uint64_t *index, uint64_t n_buckets, uint64_t n_terms,
                   const char *prefix, size_t len,
                   int (*fn)(void *ctx, uint64_t id, const char *t, size_t n),
                   void *ctx)
{
    char buf[TERM_MAX];
    /* The last bucket whose first term is below the prefix: every term
     * before it is too. */
    uint64_t lo = 0, hi = n_buckets;
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2, n;
        const uint8_t *t;
        if (bucket_head(dict, dict_len, index[mid], &t, &n))
            return xg_set_error(XG_ERR_FORMAT, "dictionary: bad bucket %llu",
                                (unsigned long long)mid);
        if (cmp_bytes((const char *)t, (size_t)n, prefix, len) < 0)
            lo = mid;
        else
            hi = mid;
    }
    for (uint64_t b = lo; b < n_buckets; ++b) {
        if (index[b] > index[b + 1] || index[b + 1] > dict_len)
            return xg_set_error(XG_ERR_FORMAT, "dictionary: bad bucket %llu",
                                (unsigned long long)b);
        const uint8_t *p = dict + index[b], *end = dict + index[b + 1];
        size_t prev = 0;
        for (uint64_t i = 0; i < XG_FMT_DICT_BUCKET; ++i) {
            uint64_t id = b * XG_FMT_DICT_BUCKET + i;
            if (id >= n_terms) return XG_OK;
            int64_t n = next_term(&p, end, i == 0, buf, sizeof buf, prev);
            if (n < 0)
                return xg_set_error(XG_ERR_FORMAT, "dictionary: bad term %llu",
                                    (unsigned long long)id);
            prev = (size_t)n;
            if ((size_t)n >= len && memcmp(buf, prefix, len) == 0) {
                if (fn(ctx, id, buf, (size_t)n)) return XG_OK;
            } else if (cmp_bytes(buf, (size_t)n, prefix, len) > 0) {
                return XG_OK;   /* past the run */
            }
        }
    }
    return XG_OK;
}

int xg_dict_walk(const uint8_t *dict, uint64_t dict_len,
                 const uint64_t *index, uint64_t n_buckets, uint64_t n_terms,
                 void (*fn)(void *ctx, uint64_t id, const char *t, size_t n),
                 void *ctx)
{
    char buf[TERM_MAX], prev_buf[TERM_MAX];
    size_t prev = 0;
    const uint8_t *p = dict;
    if (n_buckets != (n_terms + XG_FMT_DICT_BUCKET - 1) / XG_FMT_DICT_BUCKET)
        return xg_set_error(XG_ERR_FORMAT, "dictionary: bucket count %llu "
                            "does not match %llu terms",
                            (unsigned long long)n_buckets,
                            (unsigned long long)n_terms);
    if (index[n_buckets] != dict_len)
        return xg_set_error(XG_ERR_FORMAT, "dictionary: index end mismatch");
    for (uint64_t id = 0; id < n_terms; ++id) {
        uint64_t bk = id / XG_FMT_DICT_BUCKET;
        int first = id % XG_FMT_DICT_BUCKET == 0;
        if (index[bk] > index[bk + 1] || index[bk + 1] > dict_len)
            return xg_set_error(XG_ERR_FORMAT, "dictionary: bad bucket %llu",
                                (unsigned long long)bk);
        if (first) p = dict + index[bk];
        int64_t n = next_term(&p, dict + index[bk + 1], first, buf,
                              sizeof buf, prev);
        if (n < 0)
            return xg_set_error(XG_ERR_FORMAT, "dictionary: bad term %llu",
                                (unsigned long long)id);
        if (id && cmp_bytes(prev_buf, prev, buf, (size_t)n) >= 0)
            return xg_set_error(XG_ERR_FORMAT,
                                "dictionary: term %llu out of order",
                                (unsigned long long)id);
        if (fn) fn(ctx, id, buf, (size_t)n);
        memcpy(prev_buf, buf, (size_t)n);
        prev = (size_t)n;
    }
    return XG_OK;
}
