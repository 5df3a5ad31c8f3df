/** @file dict.c
 *  @brief The collection dictionary on the host (dict.h): distinct terms keyed by their
 *         bytes (exact; the 64-bit hash only places them), with collision
 *         detection for the GPU's hash-keyed lookups, and the ranking that
 *         makes term ids the terms' byte order.
 */
#include "dict.h"

#include <stdlib.h>
#include <string.h>

#include "../runtime/error.h"
#include "../runtime/threads.h"

int xg_text_dict_init(struct xg_text_dict *d, uint64_t expect)
{
    memset(d, 0, sizeof *d);
    d->cap = 64;
    while (d->cap < 2 * expect) d->cap *= 2;
    d->e = calloc(d->cap, sizeof *d->e);
    return d->e ? XG_OK : xg_set_error(XG_ERR_NOMEM, "weight: out of memory");
}

void xg_text_dict_free(struct xg_text_dict *d)
{
    free(d->e);
    memset(d, 0, sizeof *d);
}

static int grow(struct xg_text_dict *d)
{
    struct xg_text_dict n;
    if (xg_text_dict_init(&n, d->cap)) return XG_ERR_NOMEM;
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

struct xg_text_dict_ent *xg_text_dict_get(struct xg_text_dict *d, const char *s,
                                 uint32_t len, uint64_t hash)
{
    if (2 * (d->n + 1) > d->cap && grow(d)) return NULL;
    uint64_t j = hash & (d->cap - 1);
    for (;; j = (j + 1) & (d->cap - 1)) {
        struct xg_text_dict_ent *e = &d->e[j];
        if (!e->s) break;
        if (e->hash != hash) continue;
        if (e->len == len && !memcmp(e->s, s, len)) return e;
        d->collision = 1;
    }
    struct xg_text_dict_ent *e = &d->e[j];
    e->s = s;
    e->len = len;
    e->hash = hash;
    e->df = 0;
    e->last = UINT64_MAX;
    ++d->n;
    return e;
}

const struct xg_text_dict_ent *xg_text_dict_find(const struct xg_text_dict *d,
                                        const char *s, uint32_t len,
                                        uint64_t hash)
{
    for (uint64_t j = hash & (d->cap - 1);; j = (j + 1) & (d->cap - 1)) {
        const struct xg_text_dict_ent *e = &d->e[j];
        if (!e->s) return NULL;
        if (e->hash == hash && e->len == len && !memcmp(e->s, s, len)) return e;
    }
}

/* --- Merging lists in parallel ------------------------------------------
 * Two steps per list.  First the threads look up slices of the list in the
 * table as it stands (read only; a list names a term once, so no two
 * threads add to one entry's df; the CPU twin's and the GPU's lists do)
 * and keep the terms not found.  Then the
 * table grows once to fit them, and each thread owns a range of its slots
 * and inserts the new terms whose home slot lies in it, probing no further
 * than the range's end; the few that would run past it wait for one
 * sequential pass.  The result is a valid linear-probing table: every slot
 * from an entry's home to the entry is taken, and one term (one home) is
 * only ever seen by one thread.  The merge of 0.8 million terms took
 * 0.25 s on one host thread on the H100 machine (the "df" step of
 * weight's first GPU measurement, docs/benchmarks-archive.md), a cache
 * miss per term. */

#define MERGE_MAX_THREADS 64

struct merge_part {
    struct xg_text_dict *d;
    const struct xg_text_dict_list *l;
    uint64_t lo, hi;                /* step 1: list slice; 2: table slots */
    uint64_t *fresh, n_fresh;       /* step 1: list indices not found */
    const uint64_t *all_fresh;      /* step 2: every thread's, in order */
    uint64_t n_all_fresh;
    uint64_t added;
    int collision;
    uint64_t *late, n_late, cap_late;   /* step 2: past the range's end */
    int nomem;
};

static void *merge_find(void *arg)
{
    struct merge_part *m = arg;
    m->fresh = malloc((m->hi - m->lo + 1) * sizeof *m->fresh);
    if (!m->fresh) {
        m->nomem = 1;
        return NULL;
    }
    for (uint64_t i = m->lo; i < m->hi; ++i) {
        const struct xg_text_dict_ent *s = &m->l->terms[i];
        struct xg_text_dict_ent *e =
            (struct xg_text_dict_ent *)xg_text_dict_find(m->d, s->s, s->len, s->hash);
        if (e) e->df += s->df;
        else m->fresh[m->n_fresh++] = i;
    }
    return NULL;
}

static void *merge_insert(void *arg)
{
    struct merge_part *m = arg;
    struct xg_text_dict_ent *slots = m->d->e;
    const uint64_t mask = m->d->cap - 1;
    for (uint64_t k = 0; k < m->n_all_fresh && !m->nomem; ++k) {
        const uint64_t i = m->all_fresh[k];
        const struct xg_text_dict_ent *s = &m->l->terms[i];
        uint64_t j = s->hash & mask;
        if (j < m->lo || j >= m->hi) continue;
        for (; j < m->hi; ++j) {
            struct xg_text_dict_ent *e = &slots[j];
            if (!e->s) {
                *e = (struct xg_text_dict_ent){s->s, s->len, 0, s->hash, s->df, UINT64_MAX};
                ++m->added;
                break;
            }
            if (e->hash != s->hash) continue;
            if (e->len == s->len && !memcmp(e->s, s->s, s->len)) {
                e->df += s->df;     /* a list naming one term twice */
                break;
            }
            m->collision = 1;
        }
        if (j < m->hi) continue;
        if (m->n_late == m->cap_late) {
            uint64_t c = m->cap_late ? 2 * m->cap_late : 256;
            uint64_t *p = realloc(m->late, c * sizeof *p);
            if (!p) {
                m->nomem = 1;
                break;
            }
            m->late = p;
            m->cap_late = c;
        }
        m->late[m->n_late++] = i;
    }
    return NULL;
}

/* One list into d: sequentially when small, else in the two steps. */
static int merge_list(struct xg_text_dict *d, const struct xg_text_dict_list *l,
                      uint32_t threads, uint64_t min_parallel)
{
    if (threads <= 1 || l->n < min_parallel) {
        for (uint64_t i = 0; i < l->n; ++i) {
            const struct xg_text_dict_ent *s = &l->terms[i];
            struct xg_text_dict_ent *e = xg_text_dict_get(d, s->s, s->len, s->hash);
            if (!e) return xg_set_error(XG_ERR_NOMEM, "weight: out of memory");
            e->df += s->df;
        }
        return XG_OK;
    }
    if (threads > MERGE_MAX_THREADS) threads = MERGE_MAX_THREADS;
    struct merge_part m[MERGE_MAX_THREADS];
    for (uint32_t t = 0; t < threads; ++t)
        m[t] = (struct merge_part){.d = d, .l = l, .lo = l->n / threads * t,
                                   .hi = t + 1 == threads ? l->n
                                                          : l->n / threads * (t + 1)};
    xg_threads_run(threads, merge_find, m, sizeof *m);
    int rc = XG_OK;
    uint64_t n_fresh = 0;
    for (uint32_t t = 0; t < threads; ++t) {
        if (m[t].nomem) rc = XG_ERR_NOMEM;
        n_fresh += m[t].n_fresh;
    }
    uint64_t *fresh = rc ? NULL : malloc((n_fresh + 1) * sizeof *fresh);
    if (!fresh) rc = XG_ERR_NOMEM;
    uint64_t at = 0;
    for (uint32_t t = 0; t < threads; ++t) {
        if (fresh) memcpy(fresh + at, m[t].fresh, m[t].n_fresh * sizeof *fresh);
        at += m[t].n_fresh;
        free(m[t].fresh);
    }
    /* Room for the new terms, so that no thread needs to grow the table. */
    while (!rc && 2 * (d->n + n_fresh + 1) > d->cap)
        if (grow(d)) rc = XG_ERR_NOMEM;
    if (rc) {
        free(fresh);
        return xg_set_error(XG_ERR_NOMEM, "weight: out of memory");
    }
    for (uint32_t t = 0; t < threads; ++t)
        m[t] = (struct merge_part){.d = d, .l = l, .lo = d->cap / threads * t,
                                   .hi = t + 1 == threads ? d->cap
                                                          : d->cap / threads * (t + 1),
                                   .all_fresh = fresh, .n_all_fresh = n_fresh};
    xg_threads_run(threads, merge_insert, m, sizeof *m);
    for (uint32_t t = 0; t < threads; ++t) {
        d->n += m[t].added;
        d->collision |= m[t].collision;
        if (m[t].nomem) rc = xg_set_error(XG_ERR_NOMEM, "weight: out of memory");
    }
    for (uint32_t t = 0; t < threads; ++t) {
        for (uint64_t k = 0; !rc && k < m[t].n_late; ++k) {
            const struct xg_text_dict_ent *s = &l->terms[m[t].late[k]];
            struct xg_text_dict_ent *e = xg_text_dict_get(d, s->s, s->len, s->hash);
            if (!e) rc = xg_set_error(XG_ERR_NOMEM, "weight: out of memory");
            else e->df += s->df;
        }
        free(m[t].late);
    }
    free(fresh);
    return rc;
}

int xg_text_dict_merge_from(struct xg_text_dict *d, const struct xg_text_dict_list *lists,
                          uint32_t n_lists, uint32_t threads,
                          uint64_t min_parallel)
{
    /* List by list: the table never needs room for more than one list's
     * new terms at a time (the twin's lists repeat most terms). */
    for (uint32_t i = 0; i < n_lists; ++i) {
        int rc = merge_list(d, &lists[i], threads, min_parallel);
        if (rc) return rc;
    }
    return XG_OK;
}

int xg_text_dict_merge(struct xg_text_dict *d, const struct xg_text_dict_list *lists,
                     uint32_t n_lists, uint32_t threads)
{
    /* Below 65,536 terms starting threads costs more than it saves. */
    return xg_text_dict_merge_from(d, lists, n_lists, threads, 65536);
}

static int by_bytes(const void *a, const void *b)
{
    const struct xg_text_dict_ent *x = *(struct xg_text_dict_ent *const *)a;
    const struct xg_text_dict_ent *y = *(struct xg_text_dict_ent *const *)b;
    int c = memcmp(x->s, y->s, x->len < y->len ? x->len : y->len);
    if (c) return c;
    return (x->len > y->len) - (x->len < y->len);
}

/* A term's first 8 bytes, big-endian, zero-padded.  Where two keys differ
 * their order is the terms' byte order (a shorter term pads with 0, which
 * sorts it before a longer one it is a prefix of); equal keys (a zero byte
 * included) are left to the full comparison. */
static uint64_t prefix_key(const struct xg_text_dict_ent *e)
{
    uint64_t k = 0;
    const uint32_t n = e->len < 8 ? e->len : 8;
    for (uint32_t i = 0; i < 8; ++i)
        k = k << 8 | (i < n ? (uint8_t)e->s[i] : 0);
    return k;
}

struct keyed {
    uint64_t key;
    struct xg_text_dict_ent *e;
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

/* Keys of the occupied slots [lo, hi), in slot order: counted first
 * (p NULL), then written from p[at]. */
struct key_share {
    struct xg_text_dict *d;
    uint64_t lo, hi, n, at;
    struct keyed *p;
};

static void *key_share(void *arg)
{
    struct key_share *s = arg;
    uint64_t n = 0;
    for (uint64_t i = s->lo; i < s->hi; ++i)
        if (s->d->e[i].s) {
            /* Each key reads the term's bytes in the input: a cache miss
             * per term, which is why threads share the slots. */
            if (s->p) s->p[s->at + n] = (struct keyed){prefix_key(&s->d->e[i]), &s->d->e[i]};
            ++n;
        }
    s->n = n;
    return NULL;
}

int xg_text_dict_rank(struct xg_text_dict *d, const char **term, uint32_t *term_len,
                    uint32_t threads)
{
    /* Sorting pointers with memcmp took 0.3 s for 0.8 million terms (a
     * cache miss per comparison); the prefix keys sort in a few linear
     * passes and leave only the terms sharing 8 bytes to compare. */
    struct keyed *p = malloc((d->n + 1) * sizeof *p);
    struct key_share sh[XG_THREADS_MAX_SHARES];
    const uint32_t t = xg_threads_shares(threads, d->cap, 16);
    if (!p) return xg_set_error(XG_ERR_NOMEM, "weight: out of memory");
    for (uint32_t i = 0; i < t; ++i)
        sh[i] = (struct key_share){d, d->cap / t * i, i + 1 == t ? d->cap : d->cap / t * (i + 1),
                                   0, 0, NULL};
    xg_threads_run(t, key_share, sh, sizeof *sh);
    uint64_t k = 0;
    for (uint32_t i = 0; i < t; ++i) {
        sh[i].at = k;
        sh[i].p = p;
        k += sh[i].n;
    }
    xg_threads_run(t, key_share, sh, sizeof *sh);
    if (k && radix_sort(p, k)) {
        free(p);
        return xg_set_error(XG_ERR_NOMEM, "weight: out of memory");
    }
    /* Runs of equal keys: byte order on the whole terms. */
    struct xg_text_dict_ent **run = NULL;
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
