/** @file wt.c
 *  @brief The weight pipeline's driver (wt.h): the chunk plan shared by
 *         both engines, the two passes, the host-side constants (glibc log
 *         only here), placement into the global term-then-document order,
 *         and engine selection with fallback to the CPU twin.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "big_alloc.h"
#include "error.h"
#include "wt_formula.h"
#include "wt_int.h"

const char *const xg_wt_step_names[XG_WT_N_STEPS] = {
    "htod", "1 starts", "2 doc ids", "3 doc len", "dict/ID", "4 sort",
    "5 tf", "6 df", "rank", "8 weight", "dtoh", "place", "setup"};

/* Device bytes per input byte of a chunk (worst case: a 1-byte word per
 * 2 bytes, about 80 bytes of arrays per word), and the share of the
 * budget kept for the per-term tables of pass 2. */
#define BYTES_PER_BYTE 40
#define TABLE_SHARE 4

uint32_t xg_wt_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (uint32_t)n;
}

static int is_doc_start(const char *b, size_t p, size_t len)
{
    return p < len && b[p] != '\n' && p >= 2 && b[p - 1] == '\n' && b[p - 2] == '\n';
}

/* Chunk boundaries: each chunk holds whole documents and at most `max`
 * bytes (a larger document is an error).  Returns the count in *n. */
static int plan(const char *b, size_t len, size_t max, size_t **starts, uint32_t *n)
{
    size_t cap = 16, k = 0, p = 0;
    size_t *s = malloc(cap * sizeof *s);
    if (!s) return xg_set_error(XG_ERR_NOMEM, "weight: out of memory");
    while (p < len && b[p] == '\n') ++p;        /* leading blank lines */
    while (p < len) {
        if (k + 2 > cap) {
            cap *= 2;
            size_t *ns = realloc(s, cap * sizeof *s);
            if (!ns) { free(s); return xg_set_error(XG_ERR_NOMEM, "weight: out of memory"); }
            s = ns;
        }
        s[k++] = p;
        if (len - p <= max) { p = len; break; }
        size_t q = p + max;
        while (q > p && !is_doc_start(b, q, len)) --q;
        if (q == p) {
            q = p + 1;
            while (q < len && !is_doc_start(b, q, len)) ++q;
            free(s);
            return xg_set_error(XG_ERR_NOMEM, "weight: a document of %zu bytes does not fit "
                                "the --device-memory budget (chunks of at most %zu bytes)",
                                q - p, max);
        }
        p = q;
    }
    s[k] = len;
    *starts = s;
    *n = (uint32_t)k;
    return XG_OK;
}

/* Documents that start in [lo, hi) (lo is a document start): lo, and
 * every q with two newlines before it and none at it. */
struct doc_count {
    const char *b;
    size_t lo, hi;          /* the q this share tests */
    uint64_t n;
};

static void *count_share(void *arg)
{
    struct doc_count *c = arg;
    const unsigned char *b = (const unsigned char *)c->b;
    uint64_t n = 0;
    for (size_t q = c->lo; q < c->hi; ++q)
        n += (b[q - 2] == '\n') & (b[q - 1] == '\n') & (b[q] != '\n');
    c->n = n;
    return NULL;
}

static uint32_t count_docs(const char *b, size_t lo, size_t hi, uint32_t threads)
{
    if (lo >= hi) return 0;
    if (hi - lo < 2) return 1;
    struct doc_count c[256];
    uint32_t t = threads < 1 ? 1 : threads > 256 ? 256 : threads;
    if ((hi - lo) >> 20 < t) t = (uint32_t)((hi - lo) >> 20) + 1;
    const size_t first = lo + 2, span = hi - first;
    for (uint32_t i = 0; i < t; ++i)
        c[i] = (struct doc_count){b, first + span / t * i,
                                  i + 1 == t ? hi : first + span / t * (i + 1), 0};
    xg_wt_run_threads(t, count_share, c, sizeof *c);
    uint64_t n = 1;
    for (uint32_t i = 0; i < t; ++i) n += c[i].n;
    return (uint32_t)n;
}

void xg_wt_result_free(struct xg_wt_result *r)
{
    free(r->term);
    free(r->term_len);
    free(r->term_off);
    free(r->docids);
    free(r->weights);
    memset(r, 0, sizeof *r);
}

void xg_wt_whole_free(struct xg_wt_whole *w)
{
    free(w->term_off);
    free(w->term_len);
    free(w->doclen);
    free(w->first);
    memset(w, 0, sizeof *w);
}

void xg_wt_p2_free(struct xg_wt_p2 *p)
{
    free(p->term);
    free(p->doc);
    free(p->weight);
    memset(p, 0, sizeof *p);
}

struct run {
    const struct xg_wt_input *in;
    const struct xg_wt_opts *o;
    struct xg_wt_result *r;
    xg_wt_gpu *g;
    size_t *starts;
    uint32_t n_chunks, threads;
    struct xg_wt_chunk *ch;
    uint32_t *doclen;
    uint64_t n_docs;
    struct xg_wt_dict dict;
};

static void progress(const struct run *u, const char *what, uint32_t c)
{
    if (u->o->progress)
        fprintf(stderr, "\rxapian-gpu weight: %s, chunk %u of %u   ", what, c + 1,
                u->n_chunks);
}

static int pass1(struct run *u, int gpu)
{
    int rc = XG_OK;
    const uint64_t mask = u->o->hash_mask ? u->o->hash_mask : UINT64_MAX;
    for (uint32_t c = 0; c < u->n_chunks && !rc; ++c) {
        progress(u, "pass 1 (df)", c);
        struct xg_wt_chunk *k = &u->ch[c];
        double t0 = xg_wt_now();
        if (gpu) {
            struct xg_wt_p1 l = {0};
            rc = xg_wt_gpu_pass1(u->g, k, mask, u->doclen + k->doc_base, &l,
                                 u->r->seconds);
            double t1 = xg_wt_now();
            if (!rc) rc = xg_wt_dict_merge(&u->dict, &l, 1, u->threads);
            u->r->seconds[XG_WT_STEP_DF] += xg_wt_now() - t1;
            free(l.terms);
        } else {
            struct xg_wt_p1 *l = NULL;
            uint32_t n = 0;
            rc = xg_wt_ref_pass1(k, u->threads,
                                 mask, u->doclen + k->doc_base,
                                 &l, &n);
            u->r->seconds[XG_WT_STEP_DICT] += xg_wt_now() - t0;
            double t1 = xg_wt_now();
            if (!rc) rc = xg_wt_dict_merge(&u->dict, l, n, u->threads);
            for (uint32_t i = 0; i < n; ++i) free(l[i].terms);
            free(l);
            u->r->seconds[XG_WT_STEP_DF] += xg_wt_now() - t1;
        }
    }
    if (!rc && gpu && u->dict.collision)
        rc = xg_set_error(XG_ERR_UNSUPPORTED, "weight: two terms share a 64-bit hash");
    return rc;
}

/* The in-core GPU run's postings are already in term order: each thread
 * checks its terms' runs (every posting of term t where pass 1's df put
 * it) and turns chunk-local documents into docids in place. */
struct whole {
    const struct run *u;
    const uint32_t *term;
    uint32_t lo, hi;        /* terms */
    int bad;
};

static void *finish_terms(void *arg)
{
    struct whole *w = arg;
    const struct xg_wt_result *r = w->u->r;
    const uint32_t *map = w->u->in->docids;
    for (uint32_t t = w->lo; t < w->hi && !w->bad; ++t)
        for (uint64_t i = r->term_off[t]; i < r->term_off[t + 1]; ++i) {
            if (w->term[i] != t) {
                w->bad = 1;
                break;
            }
            const uint32_t d = r->docids[i];
            r->docids[i] = map ? map[d] : d + 1;
        }
    return NULL;
}

static int pass2_whole(struct run *u, const struct xg_wt_tables *tb)
{
    struct xg_wt_result *r = u->r;
    uint32_t *term = malloc((r->n_postings + 1) * sizeof *term);
    struct whole *w = calloc(u->threads, sizeof *w);
    int rc = term && w ? XG_OK : xg_set_error(XG_ERR_NOMEM, "weight: out of memory");
    if (!rc) rc = xg_wt_gpu_tables(u->g, tb);
    progress(u, "pass 2 (weights)", 0);
    if (!rc)
        rc = xg_wt_gpu_pass2_whole(u->g, &u->ch[0], tb, r->n_postings, term, r->docids,
                                   r->weights, r->seconds);
    const double t0 = xg_wt_now();
    /* Threads over equal shares of the postings, cut at term boundaries. */
    uint32_t lo = 0;
    for (uint32_t i = 0; !rc && i < u->threads; ++i) {
        const uint64_t want = r->n_postings / u->threads * (i + 1);
        uint32_t hi = lo;
        while (hi < r->n_terms && (i + 1 == u->threads || r->term_off[hi] < want)) ++hi;
        w[i] = (struct whole){u, term, lo, hi, 0};
        lo = hi;
    }
    if (!rc) xg_wt_run_threads(u->threads, finish_terms, w, sizeof *w);
    for (uint32_t i = 0; !rc && i < u->threads; ++i)
        if (w[i].bad) rc = xg_set_error(XG_ERR_FORMAT, "weight: pass 2's postings of a term "
                                        "do not match its df from pass 1");
    r->seconds[XG_WT_STEP_PLACE] += xg_wt_now() - t0;
    free(term);
    free(w);
    return rc;
}

/* A chunk's postings [lo, hi) (sorted by term) at their terms' cursors. */
struct place_share {
    const struct run *u;
    const struct xg_wt_chunk *k;
    const struct xg_wt_p2 *p;
    uint64_t *cursor;
    uint64_t lo, hi;
};

static void *place_share(void *arg)
{
    const struct place_share *s = arg;
    const struct xg_wt_p2 *p = s->p;
    struct xg_wt_result *r = s->u->r;
    const uint32_t *map = s->u->in->docids;
    for (uint64_t i = s->lo; i < s->hi; ++i) {
        const uint64_t at = s->cursor[p->term[i]]++;
        const uint64_t d = s->k->doc_base + p->doc[i];
        r->docids[at] = map ? map[d] : (uint32_t)(d + 1);
        r->weights[at] = p->weight[i];
    }
    return NULL;
}

/* Threads take shares cut at term boundaries, so no two touch one
 * term's cursor. */
static void place(const struct run *u, const struct xg_wt_chunk *k, const struct xg_wt_p2 *p,
                  uint64_t *cursor)
{
    struct place_share s[256];
    uint32_t t = u->threads < 1 ? 1 : u->threads > 256 ? 256 : u->threads;
    if (p->n >> 16 < t) t = (uint32_t)(p->n >> 16) + 1;
    uint64_t lo = 0;
    for (uint32_t i = 0; i < t; ++i) {
        uint64_t hi = i + 1 == t ? p->n : p->n / t * (i + 1);
        if (hi < lo) hi = lo;
        while (hi > 0 && hi < p->n && p->term[hi] == p->term[hi - 1]) ++hi;
        s[i] = (struct place_share){u, k, p, cursor, lo, hi};
        lo = hi;
    }
    xg_wt_run_threads(t, place_share, s, sizeof *s);
}

static int pass2(struct run *u, int gpu, const struct xg_wt_tables *tb)
{
    if (gpu && u->n_chunks == 1) return pass2_whole(u, tb);
    struct xg_wt_result *r = u->r;
    uint64_t *cursor = malloc((r->n_terms + 1) * sizeof *cursor);
    if (!cursor) return xg_set_error(XG_ERR_NOMEM, "weight: out of memory");
    memcpy(cursor, r->term_off, r->n_terms * sizeof *cursor);
    int rc = gpu ? xg_wt_gpu_tables(u->g, tb) : XG_OK;
    for (uint32_t c = 0; c < u->n_chunks && !rc; ++c) {
        progress(u, "pass 2 (weights)", c);
        struct xg_wt_chunk *k = &u->ch[c];
        struct xg_wt_p2 p = {0};
        double t0 = xg_wt_now();
        if (gpu) rc = xg_wt_gpu_pass2(u->g, k, tb, &p, r->seconds);
        else rc = xg_wt_ref_pass2(k, u->threads, tb, &p);
        if (!gpu) r->seconds[XG_WT_STEP_WEIGHT] += xg_wt_now() - t0;
        t0 = xg_wt_now();
        if (!rc) place(u, k, &p, cursor);
        r->seconds[XG_WT_STEP_PLACE] += xg_wt_now() - t0;
        xg_wt_p2_free(&p);
    }
    for (uint32_t t = 0; !rc && t < r->n_terms; ++t)
        if (cursor[t] != r->term_off[t + 1])
            rc = xg_set_error(XG_ERR_FORMAT, "weight: term %u: %llu postings, df %llu", t,
                              (unsigned long long)(cursor[t] - r->term_off[t]),
                              (unsigned long long)(r->term_off[t + 1] - r->term_off[t]));
    free(cursor);
    return rc;
}

/* tw and the df (in term_off[id + 1]) of the dictionary's slots
 * [lo, hi): a term's slot and id are unrelated, so each touch is a cache
 * miss and threads share the slots. */
struct const_share {
    const struct run *u;
    double *tw;
    uint64_t lo, hi;
};

static void *const_share(void *arg)
{
    const struct const_share *c = arg;
    const struct run *u = c->u;
    const int seed = u->o->formula == XG_WT_SEED;
    for (uint64_t i = c->lo; i < c->hi; ++i) {
        const struct xg_wt_ent *e = &u->dict.e[i];
        if (!e->s) continue;
        c->tw[e->id] = xg_wt_term_const(seed, &u->o->bm25, u->r->n_docs, e->df);
        u->r->term_off[e->id + 1] = e->df;
    }
    return NULL;
}

static void term_consts(const struct run *u, double *tw)
{
    struct const_share c[256];
    const uint64_t cap = u->dict.cap;
    uint32_t t = u->threads < 1 ? 1 : u->threads > 256 ? 256 : u->threads;
    if (cap >> 16 < t) t = (uint32_t)(cap >> 16) + 1;
    for (uint32_t i = 0; i < t; ++i)
        c[i] = (struct const_share){u, tw, cap / t * i, i + 1 == t ? cap : cap / t * (i + 1)};
    xg_wt_run_threads(t, const_share, c, sizeof *c);
}

/* The result's term arrays and tw for r->n_terms terms. */
static int alloc_terms(struct run *u, double **tw)
{
    struct xg_wt_result *r = u->r;
    r->term = malloc((r->n_terms + 1) * sizeof *r->term);
    r->term_len = malloc((r->n_terms + 1) * sizeof *r->term_len);
    r->term_off = malloc((r->n_terms + 1) * sizeof *r->term_off);
    *tw = malloc((r->n_terms + 1) * sizeof **tw);
    if (!r->term || !r->term_len || !r->term_off || !*tw)
        return xg_set_error(XG_ERR_NOMEM, "weight: out of memory");
    return XG_OK;
}

/* N, the total length and the per-document constants (host, glibc):
 * kd, and extra when the xapian formula has k2 != 0 (else NULL). */
static int doc_consts(struct run *u, double **kd, double **extra)
{
    struct xg_wt_result *r = u->r;
    const struct xg_wt_opts *o = u->o;
    *kd = malloc((u->n_docs + 1) * sizeof **kd);
    *extra = o->formula == XG_WT_XAPIAN && o->bm25.k2 != 0
                 ? malloc((u->n_docs + 1) * sizeof **extra) : NULL;
    if (!*kd || (o->formula == XG_WT_XAPIAN && o->bm25.k2 != 0 && !*extra))
        return xg_set_error(XG_ERR_NOMEM, "weight: out of memory");
    r->total_length = 0;
    for (uint64_t d = 0; d < u->n_docs; ++d) r->total_length += u->doclen[d];
    r->n_docs = u->n_docs + u->in->n_empty;
    struct xg_bm25_query q;
    xg_bm25_query_init(&o->bm25, r->n_docs, r->total_length, 1, &q);
    const double avlen = r->n_docs ? (double)r->total_length / (double)r->n_docs : 0.0;
    for (uint64_t d = 0; d < u->n_docs; ++d) {
        double x;
        (*kd)[d] = xg_wt_doc_const(o->formula == XG_WT_SEED, &o->bm25, &q, avlen,
                                   u->doclen[d], &x);
        if (*extra) (*extra)[d] = x;
    }
    return XG_OK;
}

static int alloc_postings(struct xg_wt_result *r)
{
    r->docids = xg_big_alloc((r->n_postings + 1) * sizeof *r->docids);
    r->weights = xg_big_alloc((r->n_postings + 1) * sizeof *r->weights);
    if (!r->docids || !r->weights) return xg_set_error(XG_ERR_NOMEM, "weight: out of memory");
    return XG_OK;
}

/* The device dictionary's terms [lo, hi): bytes, first posting, df (from
 * the next term's first posting) and tw. */
struct first_share {
    const struct run *u;
    const struct xg_wt_whole *w;
    double *tw;
    uint32_t lo, hi;
    int bad;
};

static void *first_share(void *arg)
{
    struct first_share *f = arg;
    const struct run *u = f->u;
    struct xg_wt_result *r = u->r;
    const int seed = u->o->formula == XG_WT_SEED;
    for (uint32_t t = f->lo; t < f->hi; ++t) {
        const uint32_t a = f->w->first[t], b = f->w->first[t + 1];
        if (b <= a) f->bad = 1;     /* a term without postings */
        r->term[t] = u->ch[0].buf + f->w->term_off[t];
        r->term_len[t] = f->w->term_len[t];
        r->term_off[t] = a;
        f->tw[t] = xg_wt_term_const(seed, &u->o->bm25, r->n_docs, b - a);
    }
    return NULL;
}

/* In core on the GPU with the device dictionary (wt_int.h's
 * xg_wt_gpu_whole_*): the host only computes the constants in between. */
static int run_whole(struct run *u)
{
    struct xg_wt_result *r = u->r;
    const struct xg_wt_opts *o = u->o;
    struct xg_wt_whole w;
    progress(u, "dictionary and counts", 0);
    int rc = xg_wt_gpu_whole_count(u->g, &u->ch[0], &w, r->seconds);
    if (rc) return rc;
    const double t0 = xg_wt_now();
    double *tw = NULL, *kd = NULL, *extra = NULL;
    struct first_share f[256];
    memcpy(u->doclen, w.doclen, (size_t)w.n_docs * sizeof *u->doclen);
    r->n_terms = w.n_terms;
    rc = alloc_terms(u, &tw);
    if (!rc) rc = doc_consts(u, &kd, &extra);
    if (!rc) {
        uint32_t t = u->threads < 1 ? 1 : u->threads > 256 ? 256 : u->threads;
        if (w.n_terms >> 14 < t) t = (w.n_terms >> 14) + 1;
        for (uint32_t i = 0; i < t; ++i)
            f[i] = (struct first_share){u, &w, tw, (uint32_t)((uint64_t)w.n_terms * i / t),
                                        (uint32_t)((uint64_t)w.n_terms * (i + 1) / t), 0};
        xg_wt_run_threads(t, first_share, f, sizeof *f);
        for (uint32_t i = 0; i < t; ++i)
            if (f[i].bad)
                rc = xg_set_error(XG_ERR_FORMAT, "weight GPU: a term of the device "
                                  "dictionary has no postings");
    }
    if (!rc) {
        r->n_postings = w.n_postings;
        r->term_off[r->n_terms] = w.n_postings;
        rc = alloc_postings(r);
    }
    r->seconds[XG_WT_STEP_RANK] += xg_wt_now() - t0;
    progress(u, "weights", 0);
    if (!rc) {
        struct xg_wt_tables tb = {NULL, r->n_terms, tw, kd, extra,
                                  o->formula == XG_WT_SEED, o->bm25.k1 + 1, 0, u->n_docs};
        rc = xg_wt_gpu_whole_weights(u->g, &tb, u->in->docids, r->docids, r->weights,
                                     r->seconds);
    }
    r->dict_on_gpu = !rc;
    xg_wt_whole_free(&w);
    free(tw);
    free(kd);
    free(extra);
    return rc;
}

/* One complete run on one engine. */
static int run_engine(struct run *u, int gpu)
{
    struct xg_wt_result *r = u->r;
    const struct xg_wt_opts *o = u->o;
    if (gpu && u->n_chunks == 1 && !o->hash_mask) {
        int rc = run_whole(u);
        if (rc != XG_ERR_UNSUPPORTED) return rc;
        /* The device dictionary declined before any output: the two
         * passes with the host dictionary answer. */
        xg_clear_error();
    }
    int rc = pass1(u, gpu);
    double *tw = NULL, *kd = NULL, *extra = NULL;
    double t0 = xg_wt_now();
    if (!rc) {
        if (u->dict.n > UINT32_MAX)
            return xg_set_error(XG_ERR_FORMAT, "weight: more than 2^32-1 terms");
        r->n_terms = (uint32_t)u->dict.n;
        rc = alloc_terms(u, &tw);
    }
    if (!rc) rc = xg_wt_dict_rank(&u->dict, r->term, r->term_len, u->threads);
    if (!rc) rc = doc_consts(u, &kd, &extra);
    if (!rc) {
        term_consts(u, tw);
        r->term_off[0] = 0;
        for (uint32_t t = 0; t < r->n_terms; ++t) r->term_off[t + 1] += r->term_off[t];
        r->n_postings = r->term_off[r->n_terms];
        rc = alloc_postings(r);
    }
    r->seconds[XG_WT_STEP_RANK] += xg_wt_now() - t0;
    if (!rc) {
        struct xg_wt_tables tb = {&u->dict, r->n_terms, tw, kd, extra,
                                  o->formula == XG_WT_SEED, o->bm25.k1 + 1, 0, 0};
        tb.hash_mask = o->hash_mask ? o->hash_mask : UINT64_MAX;
        tb.n_docs = u->n_docs;
        rc = pass2(u, gpu, &tb);
    }
    free(tw);
    free(kd);
    free(extra);
    return rc;
}

static int setup(struct run *u, size_t max_chunk)
{
    const struct xg_wt_input *in = u->in;
    if (max_chunk > ((size_t)1 << 31)) max_chunk = (size_t)1 << 31;
    int rc = plan(in->buf, in->len, max_chunk, &u->starts, &u->n_chunks);
    if (rc) return rc;
    u->ch = calloc(u->n_chunks + 1, sizeof *u->ch);
    if (!u->ch) return xg_set_error(XG_ERR_NOMEM, "weight: out of memory");
    u->n_docs = 0;
    for (uint32_t c = 0; c < u->n_chunks; ++c) {
        struct xg_wt_chunk *k = &u->ch[c];
        k->buf = in->buf + u->starts[c];
        k->len = u->starts[c + 1] - u->starts[c];
        k->doc_base = u->n_docs;
        k->n_docs = count_docs(in->buf, u->starts[c], u->starts[c + 1], u->threads);
        u->n_docs += k->n_docs;
    }
    if (u->n_docs + in->n_empty > UINT32_MAX)
        return xg_set_error(XG_ERR_FORMAT, "weight: more than 2^32-1 documents");
    u->doclen = malloc((u->n_docs + 1) * sizeof *u->doclen);
    if (!u->doclen) return xg_set_error(XG_ERR_NOMEM, "weight: out of memory");
    return xg_wt_dict_init(&u->dict, 1 << 16);
}

static void teardown(struct run *u)
{
    free(u->starts);
    free(u->ch);
    free(u->doclen);
    xg_wt_dict_free(&u->dict);
    u->starts = NULL;
    u->ch = NULL;
    u->doclen = NULL;
}

static size_t chunk_bytes(uint64_t budget)
{
    if (!budget) return SIZE_MAX;
    uint64_t b = (budget - budget / TABLE_SHARE) / BYTES_PER_BYTE;
    return b ? (size_t)b : 1;
}

int xg_wt_run(const struct xg_wt_input *in, const struct xg_wt_opts *o,
              struct xg_wt_result *r)
{
    memset(r, 0, sizeof *r);
    struct run u;
    memset(&u, 0, sizeof u);
    u.in = in;
    u.o = o;
    u.r = r;
    u.threads = o->threads ? o->threads : xg_wt_cores();
    int rc = XG_ERR_NODEVICE;
    if (o->engine != XG_WT_CPU) {
        uint64_t free_bytes = 0;
        double t0 = xg_wt_now();
        rc = xg_wt_gpu_open(o->device_memory, &u.g, &free_bytes);
        if (!rc) {
            uint64_t budget = o->device_memory ? o->device_memory : free_bytes / 10 * 9;
            rc = setup(&u, chunk_bytes(budget));
            r->seconds[XG_WT_STEP_SETUP] += xg_wt_now() - t0;
            if (!rc) rc = run_engine(&u, 1);
            r->engine = XG_WT_GPU;
            r->n_chunks = u.n_chunks;
            if (rc == XG_ERR_UNSUPPORTED) r->fell_back = 1;
            t0 = xg_wt_now();
            teardown(&u);
            xg_wt_gpu_close(u.g);
            r->seconds[XG_WT_STEP_SETUP] += xg_wt_now() - t0;
            u.g = NULL;
            if (rc && o->engine == XG_WT_GPU && rc != XG_ERR_UNSUPPORTED) {
                xg_wt_result_free(r);
                return rc;
            }
        } else if (o->engine == XG_WT_GPU) {
            return rc;
        }
        if (rc) {
            int fb = r->fell_back;
            xg_wt_result_free(r);
            r->fell_back = fb;
        }
    }
    if (rc) {
        int fb = r->fell_back;
        memset(r->seconds, 0, sizeof r->seconds);
        xg_clear_error();
        double t0 = xg_wt_now();
        rc = setup(&u, chunk_bytes(o->device_memory));
        r->seconds[XG_WT_STEP_SETUP] += xg_wt_now() - t0;
        if (!rc) rc = run_engine(&u, 0);
        r->engine = XG_WT_CPU;
        r->fell_back = fb;
        r->n_chunks = u.n_chunks;
        teardown(&u);
    }
    if (o->progress) fputc('\n', stderr);
    if (rc) xg_wt_result_free(r);
    return rc;
}
