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

int xg_wt_dict_rank(struct xg_wt_dict *d, const char **term, uint32_t *term_len)
{
    struct xg_wt_ent **p = malloc((d->n + 1) * sizeof *p);
    if (!p) return xg_set_error(XG_ERR_NOMEM, "weight: out of memory");
    uint64_t k = 0;
    for (uint64_t i = 0; i < d->cap; ++i)
        if (d->e[i].s) p[k++] = &d->e[i];
    qsort(p, k, sizeof *p, by_bytes);
    for (uint64_t i = 0; i < k; ++i) {
        p[i]->id = (uint32_t)i;
        term[i] = p[i]->s;
        term_len[i] = p[i]->len;
    }
    free(p);
    return XG_OK;
}
