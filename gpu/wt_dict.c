/** @file wt_dict.c
 *  @brief The weight pipeline's dictionary: distinct terms keyed by their
 *         bytes (exact; the 64-bit hash only places them), with collision
 *         detection for the GPU's hash-keyed lookups, and the ranking that
 *         makes term ids the terms' byte order.
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "wt_int.h"

int xg_wt_dict_init(struct xg_wt_dict *d, uint64_t expect)
{
    memset(d, 0, sizeof *d);
    d->cap = 64;
    while (d->cap < 2 * expect) d->cap *= 2;
    d->e = calloc(d->cap, sizeof *d->e);
    return d->e ? XG_OK : xg_set_error(XG_ERR_NOMEM, "weight: out of memory");
}

void xg_wt_dict_free(struct xg_wt_dict *d)
{
    free(d->e);
    memset(d, 0, sizeof *d);
}

static int grow(struct xg_wt_dict *d)
{
    struct xg_wt_dict n;
    if (xg_wt_dict_init(&n, d->cap)) return XG_ERR_NOMEM;
    for (uint64_t i = 0; i < d->cap; ++i) {
        if (!d->e[i].s) continue;
        uint64_t j = d->e[i].hash & (n.cap - 1);
        while (n.e[j].s) j = (j + 1) & (n.cap - 1);
        n.e[j] = d->e[i];
    }
    n.n = d->n;
    n.collision = d->collision;
    free(d->e);
    *d = n;
    return XG_OK;
}

struct xg_wt_ent *xg_wt_dict_get(struct xg_wt_dict *d, const char *s,
                                 uint32_t len, uint64_t hash)
{
    if (2 * (d->n + 1) > d->cap && grow(d)) return NULL;
    uint64_t j = hash & (d->cap - 1);
    for (;; j = (j + 1) & (d->cap - 1)) {
        struct xg_wt_ent *e = &d->e[j];
        if (!e->s) break;
        if (e->hash != hash) continue;
        if (e->len == len && !memcmp(e->s, s, len)) return e;
        d->collision = 1;
    }
    struct xg_wt_ent *e = &d->e[j];
    e->s = s;
    e->len = len;
    e->hash = hash;
    e->df = 0;
    e->last = UINT64_MAX;
    ++d->n;
    return e;
}

const struct xg_wt_ent *xg_wt_dict_find(const struct xg_wt_dict *d,
                                        const char *s, uint32_t len,
                                        uint64_t hash)
{
    for (uint64_t j = hash & (d->cap - 1);; j = (j + 1) & (d->cap - 1)) {
        const struct xg_wt_ent *e = &d->e[j];
        if (!e->s) return NULL;
        if (e->hash == hash && e->len == len && !memcmp(e->s, s, len)) return e;
    }
}

static int by_bytes(const void *a, const void *b)
{
    const struct xg_wt_ent *x = *(struct xg_wt_ent *const *)a;
    const struct xg_wt_ent *y = *(struct xg_wt_ent *const *)b;
    int c = memcmp(x->s, y->s, x->len < y->len ? x->len : y->len);
    if (c) return c;
    return (x->len > y->len) - (x->len < y->len);
}

/* A term's first 8 bytes, big-endian, zero-padded.  Where two keys differ
 * their order is the terms' byte order (a shorter term pads with 0, which
 * sorts it before a longer one it is a prefix of); equal keys (a zero byte
 * included) are left to the full comparison. */
static uint64_t prefix_key(const struct xg_wt_ent *e)
{
    uint64_t k = 0;
    const uint32_t n = e->len < 8 ? e->len : 8;
    for (uint32_t i = 0; i < 8; ++i)
        k = k << 8 | (i < n ? (uint8_t)e->s[i] : 0);
    return k;
}

struct keyed {
    uint64_t key;
    struct xg_wt_ent *e;
};

/* LSD radix sort of (key, entry) on the key, 11 bits a pass: stable, so
 * ties keep their order for the byte comparison that follows. */
static int radix_sort(struct keyed *a, uint64_t n)
{
    struct keyed *tmp = malloc((n + 1) * sizeof *tmp);
    if (!tmp) return XG_ERR_NOMEM;
    struct keyed *src = a, *dst = tmp;
    for (unsigned shift = 0; shift < 64; shift += 11) {
        uint64_t count[2048] = {0};
        for (uint64_t i = 0; i < n; ++i) ++count[(src[i].key >> shift) & 2047];
        if (count[(src[0].key >> shift) & 2047] == n) continue; /* one digit */
        uint64_t sum = 0;
        for (unsigned d = 0; d < 2048; ++d) {
            const uint64_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (uint64_t i = 0; i < n; ++i)
            dst[count[(src[i].key >> shift) & 2047]++] = src[i];
        struct keyed *t = src;
        src = dst;
        dst = t;
    }
    if (src != a) memcpy(a, src, n * sizeof *a);
    free(tmp);
    return XG_OK;
}

int xg_wt_dict_rank(struct xg_wt_dict *d, const char **term, uint32_t *term_len)
{
    /* Sorting pointers with memcmp took 0.3 s for 0.8 million terms (a
     * cache miss per comparison); the prefix keys sort in a few linear
     * passes and leave only the terms sharing 8 bytes to compare. */
    struct keyed *p = malloc((d->n + 1) * sizeof *p);
    if (!p) return xg_set_error(XG_ERR_NOMEM, "weight: out of memory");
    uint64_t k = 0;
    for (uint64_t i = 0; i < d->cap; ++i)
        if (d->e[i].s) p[k++] = (struct keyed){prefix_key(&d->e[i]), &d->e[i]};
    if (k && radix_sort(p, k)) {
        free(p);
        return xg_set_error(XG_ERR_NOMEM, "weight: out of memory");
    }
    /* Runs of equal keys: byte order on the whole terms. */
    struct xg_wt_ent **run = NULL;
    uint64_t cap_run = 0;
    for (uint64_t i = 0; i < k;) {
        uint64_t j = i + 1;
        while (j < k && p[j].key == p[i].key) ++j;
        if (j - i > 1) {
            if (j - i > cap_run) {
                free(run);
                cap_run = 2 * (j - i);
                if (!(run = malloc(cap_run * sizeof *run))) {
                    free(p);
                    return xg_set_error(XG_ERR_NOMEM, "weight: out of memory");
                }
            }
            for (uint64_t m = i; m < j; ++m) run[m - i] = p[m].e;
            qsort(run, j - i, sizeof *run, by_bytes);
            for (uint64_t m = i; m < j; ++m) p[m].e = run[m - i];
        }
        i = j;
    }
    free(run);
    for (uint64_t i = 0; i < k; ++i) {
        p[i].e->id = (uint32_t)i;
        term[i] = p[i].e->s;
        term_len[i] = p[i].e->len;
    }
    free(p);
    return XG_OK;
}
