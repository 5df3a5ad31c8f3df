/** @file qlm_count.c
 *  @brief Step 3 of seed 002 on the CPU: from the sorted suffixes of a
 *         chunk, the groups of each n (runs of neighbours sharing n words)
 *         and the four counts of §3.3, then eq. 2 (Algorithm 2).
 *
 *  An n-group is a maximal run of sa whose neighbours share at least n
 *  words (lcp >= n); its suffixes all have n words left in their document.
 *  Its size is f(t_1^n, C) within the chunk; its documents, sorted (the
 *  seed's segmented sort of doc ids), give f(t_1^n, d) by run lengths.
 *  Every n-group lies inside one (n-1)-group, whose sorted documents give
 *  f(t_1^{n-1}, d); the row looks its document up there by binary search
 *  (the seed's load-balancing search spreads the same counts back).  For
 *  n = 1 that count is the document's length.  Collection counts come
 *  from the global tables of pass 1 (all chunks), so every chunk plan
 *  gives the same rows.  Threads take ranges of sa that start where the
 *  first word changes (lcp = 0), so no group spans two threads.
 */
#include <stdlib.h>
#include <string.h>

#include "../runtime/error.h"
#include "qlm_formula.h"
#include "qlm_int.h"

#define MAX_THREADS 256

struct cnt {
    const struct xg_qlm_chunk *c;
    const uint32_t *sa;
    const uint8_t *lcp;
    uint32_t sigma, lo, hi;
    const struct xg_qlm_tables *t;
    struct xg_qlm_grams g[XG_QLM_MAX_SIGMA + 1];
    uint32_t *docs, *tmp, *hd, *hc;     /* group documents, history runs */
    int rc;
};

/* The next n-group at or after i in [i, hi): [*s, *e); 0 when none. */
static int next_group(const struct cnt *a, uint32_t n, uint32_t i, uint32_t hi,
                      uint32_t *s, uint32_t *e)
{
    while (i < hi && xg_qlm_len(a->c, a->sa[i]) < n) ++i;
    if (i >= hi) return 0;
    uint32_t j = i + 1;
    while (j < hi && a->lcp[j] >= n) ++j;
    *s = i;
    *e = j;
    return 1;
}

/* The sorted documents of sa[s, e) in a->docs; returns the count. */
static uint32_t group_docs(struct cnt *a, uint32_t s, uint32_t e)
{
    for (uint32_t i = s; i < e; ++i) a->docs[i - s] = a->c->doc[a->sa[i]];
    xg_qlm_sort_u32(a->docs, e - s, a->tmp);
    return e - s;
}

/* Index of the global n-gram equal to the one at global position pos,
 * searching from *gi on (groups come in order).  -1: not there. */
static int find_global(const struct xg_qlm_tables *t, uint32_t n, uint64_t pos,
                       uint64_t *gi, int *started)
{
    const struct xg_qlm_grams *g = &t->g[n];
    uint64_t lo = *gi, hi = g->n;
    if (!*started) {
        while (lo < hi) {
            uint64_t mid = lo + (hi - lo) / 2;
            if (xg_qlm_cmp(t->ids, g->pos[mid], pos, n) < 0) lo = mid + 1; else hi = mid;
        }
        *started = 1;
    } else {
        while (lo < g->n && xg_qlm_cmp(t->ids, g->pos[lo], pos, n) < 0) ++lo;
    }
    *gi = lo;
    return lo < g->n && !xg_qlm_cmp(t->ids, g->pos[lo], pos, n) ? 0 : -1;
}

/* Pass 2: the rows of the n-group [s, e) inside the history runs
 * hd/hc[0, nh) (n >= 2) or the document lengths (n = 1). */
static int rows(struct cnt *a, uint32_t n, uint32_t s, uint32_t e, uint32_t nh,
                uint64_t *gi, int *started)
{
    const struct xg_qlm_tables *t = a->t;
    const struct xg_qlm_chunk *c = a->c;
    const uint64_t pos = c->word_base + a->sa[s];
    if (find_global(t, n, pos, gi, started))
        return xg_set_error(XG_ERR_FORMAT, "qlm: an n-gram of pass 2 is missing "
                            "from pass 1 (n = %u)", n);
    const uint64_t z = t->g[n].z[*gi], w = t->w[n][*gi];
    uint64_t *cursor = &t->cursor[t->base[n] + *gi];
    struct xg_qlm_result *r = t->r;
    const uint32_t m = group_docs(a, s, e);
    uint32_t h = 0;
    for (uint32_t i = 0; i < m;) {
        uint32_t j = i + 1;
        while (j < m && a->docs[j] == a->docs[i]) ++j;
        const uint32_t d = a->docs[i];
        uint64_t y;
        if (n == 1) {
            y = c->doc_end[d] - (d ? c->doc_end[d - 1] : 0);
        } else {
            uint32_t lo = h, hi = nh;        /* history runs: ascending */
            while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (a->hd[mid] < d) lo = mid + 1; else hi = mid;
            }
            if (lo == nh || a->hd[lo] != d)
                return xg_set_error(XG_ERR_FORMAT, "qlm: a document's n-gram "
                                    "without its history (n = %u)", n);
            h = lo;
            y = a->hc[lo];
        }
        const uint64_t x = j - i, at = (*cursor)++;
        const uint64_t dd = c->doc_base + d;
        r->docids[at] = t->docids ? t->docids[dd] : (uint32_t)(dd + 1);
        r->prob[at] = xg_qlm_prob(t->lambda, x, y, z, w);
        if (r->counts) {
            r->counts[4 * at] = x;
            r->counts[4 * at + 1] = y;
            r->counts[4 * at + 2] = z;
            r->counts[4 * at + 3] = w;
        }
        i = j;
    }
    return XG_OK;
}

/* Pass 1: the n-group [s, e) as one distinct n-gram of the chunk. */
static int gram(struct cnt *a, uint32_t n, uint32_t s, uint32_t e)
{
    const uint32_t m = group_docs(a, s, e);
    uint64_t df = 0;
    for (uint32_t i = 0; i < m; ++i) df += !i || a->docs[i] != a->docs[i - 1];
    return xg_qlm_grams_push(&a->g[n], a->c->word_base + a->sa[s], e - s, df)
               ? XG_ERR_NOMEM : XG_OK;
}

static void *count_range(void *arg)
{
    struct cnt *a = arg;
    const size_t span = (size_t)(a->hi - a->lo) + 1;
    a->docs = malloc(span * sizeof *a->docs);
    a->tmp = malloc(span * sizeof *a->tmp);
    a->hd = malloc(span * sizeof *a->hd);
    a->hc = malloc(span * sizeof *a->hc);
    if (!a->docs || !a->tmp || !a->hd || !a->hc) {
        a->rc = xg_set_error(XG_ERR_NOMEM, "qlm: out of memory (counts)");
        return NULL;
    }
    for (uint32_t n = 1; n <= a->sigma && !a->rc; ++n) {
        uint64_t gi = 0;
        int started = 0;
        uint32_t s, e, gs, ge;
        if (!a->t) {
            for (uint32_t i = a->lo; !a->rc && next_group(a, n, i, a->hi, &s, &e); i = e)
                a->rc = gram(a, n, s, e);
        } else if (n == 1) {
            for (uint32_t i = a->lo; !a->rc && next_group(a, 1, i, a->hi, &s, &e); i = e)
                a->rc = rows(a, 1, s, e, 0, &gi, &started);
        } else {
            /* Each (n-1)-group: its documents' runs, then its n-groups. */
            for (uint32_t i = a->lo;
                 !a->rc && next_group(a, n - 1, i, a->hi, &gs, &ge); i = ge) {
                const uint32_t m = group_docs(a, gs, ge);
                uint32_t nh = 0;
                for (uint32_t k = 0; k < m; ++k) {
                    if (!k || a->docs[k] != a->docs[k - 1]) {
                        a->hd[nh] = a->docs[k];
                        a->hc[nh++] = 0;
                    }
                    ++a->hc[nh - 1];
                }
                for (uint32_t k = gs; !a->rc && next_group(a, n, k, ge, &s, &e); k = e)
                    a->rc = rows(a, n, s, e, nh, &gi, &started);
            }
        }
    }
    free(a->docs);
    free(a->tmp);
    free(a->hd);
    free(a->hc);
    return NULL;
}

int xg_qlm_count_ref(const struct xg_qlm_chunk *c, const uint32_t *sa,
                     const uint8_t *lcp, uint32_t sigma, uint32_t threads,
                     struct xg_qlm_grams *out, const struct xg_qlm_tables *t)
{
    if (threads < 1) threads = 1;
    if (threads > MAX_THREADS) threads = MAX_THREADS;
    struct cnt *a = calloc(threads, sizeof *a);
    if (!a) return xg_set_error(XG_ERR_NOMEM, "qlm: out of memory (counts)");
    uint32_t lo = 0;
    for (uint32_t k = 0; k < threads; ++k) {
        uint32_t hi = (uint32_t)((uint64_t)c->n_words * (k + 1) / threads);
        if (hi < lo) hi = lo;
        while (hi < c->n_words && lcp[hi] != 0) ++hi;
        a[k].c = c;
        a[k].sa = sa;
        a[k].lcp = lcp;
        a[k].sigma = sigma;
        a[k].lo = lo;
        a[k].hi = hi;
        a[k].t = t;
        lo = hi;
    }
    xg_threads_run(threads, count_range, a, sizeof *a);
    int rc = XG_OK;
    for (uint32_t k = 0; k < threads; ++k) {
        if (a[k].rc && !rc) rc = a[k].rc;
        for (uint32_t n = 1; n <= sigma; ++n) {
            const struct xg_qlm_grams *g = &a[k].g[n];
            for (uint64_t i = 0; !rc && !t && i < g->n; ++i)
                if (xg_qlm_grams_push(&out[n], g->pos[i], g->z[i], g->df[i]))
                    rc = xg_set_error(XG_ERR_NOMEM, "qlm: out of memory (counts)");
            xg_qlm_grams_free(&a[k].g[n]);
        }
    }
    free(a);
    /* The threads' messages stay on their threads: say it again here. */
    if (rc == XG_ERR_NOMEM) return xg_set_error(rc, "qlm: out of memory (counts)");
    if (rc) return xg_set_error(rc, "qlm: internal error: pass 2 found an n-gram "
                                "or history that pass 1 did not count");
    return XG_OK;
}
