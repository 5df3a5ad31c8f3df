/** @file wt_ref.c
 *  @brief The weight pipeline's CPU twin: one chunk at a time on pthreads,
 *         MapReduce style (the seeds' Phoenix++ baseline).  Each thread
 *         maps a range of whole documents; pass 1 reduces into per-thread
 *         dictionaries (df counted once per document) that the driver
 *         merges; pass 2 maps words to term ids, counts tf per document,
 *         and places every posting by a counting sort on the term id whose
 *         per-thread offsets keep documents ascending within a term.
 */
#include <stdlib.h>
#include <string.h>

#include "../runtime/error.h"
#include "wt_formula.h"
#include "../text/hash.h"
#include "wt_int.h"

#define MAX_THREADS 256

/* Split [0, len) into n ranges that start at documents. */
static void split(const struct xg_wt_chunk *c, uint32_t n, size_t *lo)
{
    const char *b = c->buf;
    lo[0] = 0;
    for (uint32_t t = 1; t < n; ++t) {
        size_t p = c->len / n * t;
        if (p < lo[t - 1]) p = lo[t - 1];
        while (p < c->len && !(p >= 2 && b[p] != '\n' && b[p - 1] == '\n' &&
                               b[p - 2] == '\n'))
            ++p;
        lo[t] = p;
    }
    lo[n] = c->len;
}

struct p1 {
    const struct xg_wt_chunk *c;
    size_t lo, hi;
    uint64_t mask;
    struct xg_text_dict d;
    uint32_t *lens;
    uint64_t n_docs, cap;
    int rc;
};

static void *pass1(void *arg)
{
    struct p1 *a = arg;
    const char *b = a->c->buf;
    a->rc = xg_text_dict_init(&a->d, 1024);
    uint64_t doc = UINT64_MAX;
    for (size_t p = a->lo; p < a->hi && !a->rc;) {
        if (b[p] == '\n') { ++p; continue; }
        if (p == a->lo || (b[p - 1] == '\n' && p >= 2 && b[p - 2] == '\n')) {
            if (a->n_docs == a->cap) {
                a->cap = 2 * a->cap + 256;
                uint32_t *l = realloc(a->lens, a->cap * sizeof *l);
                if (!l) { a->rc = XG_ERR_NOMEM; break; }
                a->lens = l;
            }
            a->lens[a->n_docs] = 0;
            doc = a->n_docs++;
        }
        const char *e = memchr(b + p, '\n', a->hi - p);
        uint32_t len = (uint32_t)(e - (b + p));
        struct xg_text_dict_ent *t = xg_text_dict_get(&a->d, b + p, len,
            xg_text_hash((const unsigned char *)b + p, len, a->mask));
        if (!t) { a->rc = XG_ERR_NOMEM; break; }
        if (t->last != doc) { t->last = doc; ++t->df; }
        ++a->lens[doc];
        p += len + 1;
    }
    return NULL;
}

int xg_wt_ref_pass1(const struct xg_wt_chunk *c, uint32_t threads,
                    uint64_t hash_mask, uint32_t *doclen, struct xg_text_dict_list **lists,
                    uint32_t *n_lists)
{
    if (threads < 1) threads = 1;
    if (threads > MAX_THREADS) threads = MAX_THREADS;
    size_t lo[MAX_THREADS + 1];
    split(c, threads, lo);
    struct p1 *a = calloc(threads, sizeof *a);
    struct xg_text_dict_list *l = calloc(threads, sizeof *l);
    if (!a || !l) {
        free(a);
        free(l);
        return xg_set_error(XG_ERR_NOMEM, "weight: out of memory");
    }
    for (uint32_t t = 0; t < threads; ++t)
        a[t] = (struct p1){c, lo[t], lo[t + 1], hash_mask, {0}, NULL, 0, 0, 0};
    xg_threads_run(threads, pass1, a, sizeof *a);
    int rc = XG_OK;
    uint64_t at = 0;
    for (uint32_t t = 0; t < threads; ++t) {
        if (a[t].rc) rc = xg_set_error(XG_ERR_NOMEM, "weight: out of memory");
        /* A share without documents has no array (memcpy's NULL). */
        if (!rc && a[t].n_docs && at + a[t].n_docs <= c->n_docs)
            memcpy(doclen + at, a[t].lens, a[t].n_docs * sizeof *doclen);
        at += a[t].n_docs;
        free(a[t].lens);
        /* The dictionary's slots become the list (empty slots dropped). */
        struct xg_text_dict_ent *e = a[t].d.e;
        uint64_t k = 0;
        for (uint64_t i = 0; e && i < a[t].d.cap; ++i)
            if (e[i].s) e[k++] = e[i];
        l[t].terms = e;
        l[t].n = k;
    }
    if (!rc && at != c->n_docs)
        rc = xg_set_error(XG_ERR_FORMAT, "weight: chunk of %u documents has %llu",
                          c->n_docs, (unsigned long long)at);
    free(a);
    *lists = l;
    *n_lists = threads;
    return rc;
}

struct rec {
    uint32_t term, doc, tf;
};

struct p2 {
    const struct xg_wt_chunk *c;
    const struct xg_wt_tables *t;
    size_t lo, hi;
    struct rec *r;
    uint64_t n, cap;
    uint32_t *count;        /* per term: postings, then the cursor */
    uint32_t doc_base;      /* chunk-local number of the first document */
    uint32_t n_docs;
    uint32_t *doc;          /* the caller's, by posting */
    double *weight;
    int rc;
};

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static void *pass2_map(void *arg)
{
    struct p2 *a = arg;
    const char *b = a->c->buf;
    uint32_t *ids = NULL;
    uint64_t n_ids = 0, cap_ids = 0;
    a->count = calloc(a->t->n_terms + 1, sizeof *a->count);
    if (!a->count) { a->rc = XG_ERR_NOMEM; return NULL; }
    size_t p = a->lo;
    while (p < a->hi && !a->rc) {
        n_ids = 0;
        do {                                /* one document's words */
            if (b[p] == '\n') { ++p; continue; }
            const char *e = memchr(b + p, '\n', a->hi - p);
            uint32_t len = (uint32_t)(e - (b + p));
            const struct xg_text_dict_ent *t = xg_text_dict_find(a->t->dict, b + p, len,
                xg_text_hash((const unsigned char *)b + p, len, a->t->hash_mask));
            if (!t) { a->rc = XG_ERR_FORMAT; break; }
            if (n_ids == cap_ids) {
                cap_ids = 2 * cap_ids + 256;
                uint32_t *ni = realloc(ids, cap_ids * sizeof *ids);
                if (!ni) { a->rc = XG_ERR_NOMEM; break; }
                ids = ni;
            }
            ids[n_ids++] = t->id;
            p += len + 1;
        } while (p < a->hi && !(b[p] != '\n' && b[p - 1] == '\n' && b[p - 2] == '\n'));
        if (a->rc || !n_ids) break;
        qsort(ids, n_ids, sizeof *ids, cmp_u32);
        for (uint64_t i = 0; i < n_ids;) {
            uint64_t j = i + 1;
            while (j < n_ids && ids[j] == ids[i]) ++j;
            if (a->n == a->cap) {
                a->cap = 2 * a->cap + 1024;
                struct rec *nr = realloc(a->r, a->cap * sizeof *nr);
                if (!nr) { a->rc = XG_ERR_NOMEM; break; }
                a->r = nr;
            }
            a->r[a->n++] = (struct rec){ids[i], a->n_docs, (uint32_t)(j - i)};
            ++a->count[ids[i]];
            i = j;
        }
        ++a->n_docs;
    }
    free(ids);
    return NULL;
}

static void *pass2_place(void *arg)
{
    struct p2 *a = arg;
    const struct xg_wt_tables *t = a->t;
    for (uint64_t i = 0; i < a->n; ++i) {
        const struct rec *r = &a->r[i];
        uint32_t doc = a->doc_base + r->doc;
        uint64_t g = a->c->doc_base + doc;
        uint64_t at = a->count[r->term]++;
        a->doc[at] = doc;
        a->weight[at] = xg_wt_weight(t->seed, t->k1p1, t->tw[r->term], t->kd[g],
                                     t->extra ? t->extra[g] : 0.0, r->tf);
    }
    return NULL;
}

int xg_wt_ref_pass2(const struct xg_wt_chunk *c, uint32_t threads,
                    const struct xg_wt_tables *t, uint64_t room, uint32_t *doc,
                    double *weight, uint64_t *run, uint64_t *n_out, uint64_t *nr_out)
{
    if (threads < 1) threads = 1;
    if (threads > MAX_THREADS) threads = MAX_THREADS;
    *n_out = *nr_out = 0;
    size_t lo[MAX_THREADS + 1];
    split(c, threads, lo);
    struct p2 *a = calloc(threads, sizeof *a);
    if (!a) return xg_set_error(XG_ERR_NOMEM, "weight: out of memory");
    for (uint32_t k = 0; k < threads; ++k) {
        a[k].c = c;
        a[k].t = t;
        a[k].lo = lo[k];
        a[k].hi = lo[k + 1];
        a[k].doc = doc;
        a[k].weight = weight;
    }
    xg_threads_run(threads, pass2_map, a, sizeof *a);
    int rc = XG_OK;
    uint64_t n = 0;
    uint32_t docs = 0;
    for (uint32_t k = 0; k < threads; ++k) {
        if (a[k].rc == XG_ERR_FORMAT)
            rc = xg_set_error(XG_ERR_FORMAT, "weight: a word missing from pass 1");
        else if (a[k].rc) rc = xg_set_error(XG_ERR_NOMEM, "weight: out of memory");
        a[k].doc_base = docs;
        docs += a[k].n_docs;
        n += a[k].n;
    }
    if (!rc && n > room)
        rc = xg_set_error(XG_ERR_FORMAT, "weight: a chunk has %llu postings, more than the "
                          "%llu pass 1 left", (unsigned long long)n, (unsigned long long)room);
    if (!rc) {
        /* Counting sort: term-major, then thread (= document) order; each
         * term with postings is one run. */
        uint64_t at = 0, nr = 0;
        for (uint32_t id = 0; id < t->n_terms; ++id) {
            const uint64_t start = at;
            for (uint32_t k = 0; k < threads; ++k) {
                uint32_t cnt = a[k].count[id];
                a[k].count[id] = (uint32_t)at;
                at += cnt;
            }
            if (at > start) run[nr++] = (uint64_t)id << 32 | start;
        }
        xg_threads_run(threads, pass2_place, a, sizeof *a);
        *n_out = n;
        *nr_out = nr;
    }
    for (uint32_t k = 0; k < threads; ++k) {
        free(a[k].r);
        free(a[k].count);
    }
    free(a);
    return rc;
}
