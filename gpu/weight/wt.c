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

#include "../runtime/big_alloc.h"
#include "../runtime/error.h"
#include "../runtime/knobs.h"
#include "wt_formula.h"
#include "wt_int.h"

const char *const xg_wt_step_names[XG_WT_N_STEPS] = {
    "htod", "1 starts", "2 doc ids", "3 doc len", "dict/ID", "4 sort",
    "5 tf", "6 df", "rank", "8 weight", "dtoh", "place", "setup"};

/* The share of the budget kept for the dictionary and the per-term
 * tables (the device dictionary of 10^6 terms takes about 60 MB). */
#define TABLE_SHARE 2

void xg_wt_result_free(struct xg_wt_result *r)
{
    if (!r->terms_in_weights) {
        free(r->term);
        free(r->term_off);
    }
    free(r->term_len);
    free(r->docids);
    free(r->weights);
    memset(r, 0, sizeof *r);
}

void xg_wt_dd_out_free(struct xg_wt_dd_out *o)
{
    free(o->goff);
    free(o->len);
    free(o->df);
    memset(o, 0, sizeof *o);
}

void xg_wt_whole_free(struct xg_wt_whole *w)
{
    xg_prefault_wait(w->prefault);     /* before its pages go */
    free(w->docids);
    free(w->weights);
    free(w->term_len);
    free(w->doclen);
    memset(w, 0, sizeof *w);
}

struct run {
    const struct xg_wt_input *in;
    const struct xg_wt_opts *o;
    struct xg_wt_result *r;
    xg_wt_gpu *g;
    uint32_t n_chunks, threads;
    struct xg_wt_chunk *ch;
    uint32_t *doclen;
    uint64_t n_docs;
    int counted;            /* n_docs and the chunks' documents are known */
    int planned_docs;       /* the plan counted the chunks' documents */
    struct xg_text_dict dict;
};

/* The doclen table, once the documents are counted. */
static int alloc_doclen(struct run *u)
{
    if (u->n_docs + u->in->n_empty > UINT32_MAX)
        return xg_set_error(XG_ERR_FORMAT, "weight: more than 2^32-1 documents");
    u->doclen = malloc((u->n_docs + 1) * sizeof *u->doclen);
    if (!u->doclen) return xg_set_error(XG_ERR_NOMEM, "weight: out of memory");
    u->counted = 1;
    return XG_OK;
}

/* Every chunk's documents (a pass over the text) and the doclen table. */
static int count_chunks(struct run *u)
{
    u->n_docs = 0;
    for (uint32_t c = 0; c < u->n_chunks; ++c) {
        struct xg_wt_chunk *k = &u->ch[c];
        k->doc_base = u->n_docs;
        const size_t lo = (size_t)(k->buf - u->in->buf);
        if (!u->planned_docs)
            k->n_docs = xg_wt_count_docs(u->in->buf, lo, lo + k->len, u->threads);
        u->n_docs += k->n_docs;
    }
    return alloc_doclen(u);
}

static void progress(const struct run *u, const char *what, uint32_t c)
{
    if (u->o->progress)
        fprintf(stderr, "\rxapian-gpu weight: %s, chunk %u of %u   ", what, c + 1,
                u->n_chunks);
}

/* Tell the GPU engine which chunk follows chunk c of a pass (the first
 * of pass 2 after pass 1's last), so its text can cross meanwhile. */
static void next_chunk(const struct run *u, uint32_t c, int pass2_follows)
{
    xg_wt_gpu_next(u->g, c + 1 < u->n_chunks ? &u->ch[c + 1]
                         : pass2_follows   ? &u->ch[0]
                                           : NULL);
}

static int pass1(struct run *u, int gpu)
{
    int rc = XG_OK;
    const uint64_t mask = u->o->hash_mask ? u->o->hash_mask : UINT64_MAX;
    for (uint32_t c = 0; c < u->n_chunks && !rc; ++c) {
        progress(u, "pass 1 (df)", c);
        struct xg_wt_chunk *k = &u->ch[c];
        double t0 = xg_now();
        if (gpu) {
            struct xg_text_dict_list l = {0};
            next_chunk(u, c, 1);
            rc = xg_wt_gpu_pass1(u->g, k, mask, u->doclen + k->doc_base, &l,
                                 u->r->seconds);
            double t1 = xg_now();
            if (!rc) rc = xg_text_dict_merge(&u->dict, &l, 1, u->threads);
            u->r->seconds[XG_WT_STEP_DF] += xg_now() - t1;
            free(l.terms);
        } else {
            struct xg_text_dict_list *l = NULL;
            uint32_t n = 0;
            rc = xg_wt_ref_pass1(k, u->threads,
                                 mask, u->doclen + k->doc_base,
                                 &l, &n);
            u->r->seconds[XG_WT_STEP_DICT] += xg_now() - t0;
            double t1 = xg_now();
            if (!rc) rc = xg_text_dict_merge(&u->dict, l, n, u->threads);
            for (uint32_t i = 0; i < n; ++i) free(l[i].terms);
            free(l);
            u->r->seconds[XG_WT_STEP_DF] += xg_now() - t1;
        }
    }
    if (!rc && gpu && u->dict.collision)
        rc = xg_set_error(XG_ERR_UNSUPPORTED, "weight: two terms share a 64-bit hash");
    return rc;
}

/* Pass 2's postings, chunk after chunk, each chunk's sorted by term id
 * then chunk-local document: chunk c's postings are [off[c], off[c + 1])
 * and its runs of one term [roff[c], roff[c + 1]), each run's term << 32
 * | its first posting (counted from off[c]). */
struct arena {
    uint32_t *doc;
    double *weight;
    uint64_t *run;
    uint64_t *off, *roff;
};

#define RUN_TERM(x) ((uint32_t)((x) >> 32))
#define RUN_START(x) ((uint32_t)(x))

/* Result terms [lo, hi): every chunk's run of each term in turn, so that
 * each thread reads every chunk front to back and writes its part of the
 * result front to back (placing each chunk's postings at their terms'
 * cursors instead wrote all over the result: 0.36-1.3 s at 500 MB). */
struct gather {
    const struct run *u;
    const struct arena *a;
    uint32_t lo, hi;
    int bad;
};

static void *gather_terms(void *arg)
{
    struct gather *g = arg;
    const struct run *u = g->u;
    const struct arena *a = g->a;
    struct xg_wt_result *r = u->r;
    const uint32_t *map = u->in->docids;
    uint64_t *cur = malloc((u->n_chunks + 1) * sizeof *cur);
    if (!cur) {
        g->bad = 2;
        return NULL;
    }
    for (uint32_t c = 0; c < u->n_chunks; ++c) {   /* the first run >= lo */
        uint64_t l = a->roff[c], h = a->roff[c + 1];
        while (l < h) {
            const uint64_t m = l + (h - l) / 2;
            if (RUN_TERM(a->run[m]) < g->lo) l = m + 1;
            else h = m;
        }
        cur[c] = l;
    }
    uint64_t out = r->term_off[g->lo];
    for (uint32_t t = g->lo; t < g->hi && !g->bad; ++t) {
        for (uint32_t c = 0; c < u->n_chunks; ++c) {
            const uint64_t k = cur[c];
            if (k == a->roff[c + 1] || RUN_TERM(a->run[k]) != t) continue;
            const uint64_t base = u->ch[c].doc_base, from = a->off[c] + RUN_START(a->run[k]);
            const uint64_t to = k + 1 < a->roff[c + 1] ? a->off[c] + RUN_START(a->run[k + 1])
                                                       : a->off[c + 1];
            for (uint64_t i = from; i < to; ++i, ++out) {
                const uint64_t d = base + a->doc[i];
                r->docids[out] = map ? map[d] : (uint32_t)(d + 1);
                r->weights[out] = a->weight[i];
            }
            cur[c] = k + 1;
        }
        if (out != r->term_off[t + 1]) g->bad = 1;
    }
    free(cur);
    return NULL;
}

/* Threads over shares of the postings cut at term boundaries. */
static int gather(const struct run *u, const struct arena *a)
{
    const struct xg_wt_result *r = u->r;
    struct gather g[XG_THREADS_MAX_SHARES];
    const uint32_t t = xg_threads_shares(u->threads, r->n_postings, 16);
    uint32_t lo = 0;
    for (uint32_t i = 0; i < t; ++i) {
        const uint64_t want = r->n_postings / t * (i + 1);
        uint32_t hi = lo;
        while (hi < r->n_terms && (i + 1 == t || r->term_off[hi] < want)) ++hi;
        g[i] = (struct gather){u, a, lo, hi, 0};
        lo = hi;
    }
    xg_threads_run(t, gather_terms, g, sizeof *g);
    for (uint32_t i = 0; i < t; ++i) {
        if (g[i].bad == 2) return xg_set_error(XG_ERR_NOMEM, "weight: out of memory");
        if (g[i].bad)
            return xg_set_error(XG_ERR_FORMAT, "weight: pass 2's postings of a term do not "
                                "match its df from pass 1");
    }
    return XG_OK;
}

static void arena_free(struct arena *a, const struct xg_wt_result *r)
{
    if (a->doc != r->docids) free(a->doc);
    if (a->weight != r->weights) free(a->weight);
    free(a->run);
    free(a->off);
    free(a->roff);
}

static int pass2_arena(struct run *u, int gpu, const struct xg_wt_tables *tb)
{
    struct xg_wt_result *r = u->r;
    const uint64_t np = r->n_postings;
    /* One chunk's postings are already in term order: the arena is the
     * result itself, and the gather only turns documents into docids in
     * place.  Otherwise every chunk's copies land in a few MB of it:
     * touched beforehand on all cores, its pages do not fault in on the
     * copy's few threads.  The runs (fewer than the postings, unknown
     * until then) are not. */
    const int in_place = u->n_chunks == 1;
    struct arena a = {in_place ? r->docids : xg_big_alloc_touched((np + 1) * 4, u->threads),
                      in_place ? r->weights : xg_big_alloc_touched((np + 1) * 8, u->threads),
                      xg_big_alloc((np + 1) * 8), malloc((u->n_chunks + 1) * 8),
                      malloc((u->n_chunks + 1) * 8)};
    int rc = a.doc && a.weight && a.run && a.off && a.roff
                 ? XG_OK : xg_set_error(XG_ERR_NOMEM, "weight: out of memory");
    if (!rc && gpu && !in_place) {
        /* Locked, the chunks' postings come over by DMA alone (no copy
         * out of the pinned buffers). */
        const double t0 = xg_now();
        xg_wt_gpu_lock_host(u->g, a.doc, (np + 1) * 4);
        xg_wt_gpu_lock_host(u->g, a.weight, (np + 1) * 8);
        r->seconds[XG_WT_STEP_DTOH] += xg_now() - t0;
    }
    uint64_t at = 0, rat = 0;
    for (uint32_t c = 0; c < u->n_chunks && !rc; ++c) {
        progress(u, "pass 2 (weights)", c);
        const struct xg_wt_chunk *k = &u->ch[c];
        a.off[c] = at;
        a.roff[c] = rat;
        uint64_t n = 0, nr = 0;
        const double t0 = xg_now();
        if (gpu) {
            next_chunk(u, c, 0);
            rc = xg_wt_gpu_pass2(u->g, k, tb, np - at, a.doc + at, a.weight + at, a.run + rat,
                                 &n, &nr, r->seconds);
        } else {
            rc = xg_wt_ref_pass2(k, u->threads, tb, np - at, a.doc + at, a.weight + at,
                                 a.run + rat, &n, &nr);
            r->seconds[XG_WT_STEP_WEIGHT] += xg_now() - t0;
        }
        at += n;
        rat += nr;
    }
    if (gpu) {
        const double t0 = xg_now();
        xg_wt_gpu_unlock_host(u->g);
        r->seconds[XG_WT_STEP_DTOH] += xg_now() - t0;
    }
    if (!rc && at != np)
        rc = xg_set_error(XG_ERR_FORMAT, "weight: pass 2 found %llu postings, pass 1 %llu",
                          (unsigned long long)at, (unsigned long long)np);
    if (!rc) {
        a.off[u->n_chunks] = at;
        a.roff[u->n_chunks] = rat;
        const double t0 = xg_now();
        rc = gather(u, &a);
        r->seconds[XG_WT_STEP_PLACE] += xg_now() - t0;
    }
    arena_free(&a, r);
    return rc;
}

/* Pass 2 in chunks placed by the device into the result itself
 * (xg_wt_gpu_place_*): no arena, no gather; XG_ERR_UNSUPPORTED where it
 * cannot start.  Locking and unlocking the result count as the copies
 * back (as the arena's did), the device's writes into it as placing. */
static int pass2_placed(struct run *u, const struct xg_wt_tables *tb)
{
    struct xg_wt_result *r = u->r;
    /* The largest chunk's device bytes, as the plan counts them. */
    uint64_t keep = 0;
    for (uint32_t c = 0; c < u->n_chunks; ++c) {
        const uint64_t k = xg_wt_chunk_need(u->ch[c].len, u->ch[c].words);
        if (k > keep) keep = k;
    }
    double t0 = xg_now();
    int rc = xg_wt_gpu_place_open(u->g, r, u->in->docids, u->n_docs, keep);
    r->seconds[XG_WT_STEP_DTOH] += xg_now() - t0;
    if (rc) return rc;
    for (uint32_t c = 0; c < u->n_chunks && !rc; ++c) {
        progress(u, "pass 2 (weights)", c);
        next_chunk(u, c, 0);
        rc = xg_wt_gpu_place_chunk(u->g, &u->ch[c], tb, r->seconds);
    }
    t0 = xg_now();
    const int closed = xg_wt_gpu_place_close(u->g, !rc);
    r->seconds[XG_WT_STEP_DTOH] += xg_now() - t0;
    if (!rc) rc = closed;
    r->placed_on_gpu = !rc;
    return rc;
}

/* Pass 2: on the GPU in chunks placed by the device where it can, else
 * (and on the CPU, or in one chunk) through the arena. */
static int pass2(struct run *u, int gpu, const struct xg_wt_tables *tb)
{
    int rc = gpu ? xg_wt_gpu_tables(u->g, tb) : XG_OK;
    if (!rc && gpu && u->n_chunks > 1 && !xg_knob_wt_no_place()) {
        rc = pass2_placed(u, tb);
        if (rc != XG_ERR_UNSUPPORTED) return rc;
        xg_clear_error();
        rc = XG_OK;
    }
    return rc ? rc : pass2_arena(u, gpu, tb);
}

/* A share [lo, hi) of a tw table's work: the host dictionary's slots
 * (const_share) or the dfs (df_share). */
struct const_share {
    const struct run *u;
    double *tw;
    uint64_t lo, hi;
};

/* tw and the df (in term_off[id + 1]) of the dictionary's slots
 * [lo, hi): a term's slot and id are unrelated, so each touch is a cache
 * miss and threads share the slots. */
static void *const_share(void *arg)
{
    const struct const_share *c = arg;
    const struct run *u = c->u;
    const int seed = u->o->formula == XG_WT_SEED;
    for (uint64_t i = c->lo; i < c->hi; ++i) {
        const struct xg_text_dict_ent *e = &u->dict.e[i];
        if (!e->s) continue;
        c->tw[e->id] = xg_wt_term_const(seed, &u->o->bm25, u->r->n_docs, e->df);
        u->r->term_off[e->id + 1] = e->df;
    }
    return NULL;
}

static void term_consts(const struct run *u, double *tw)
{
    struct const_share c[XG_THREADS_MAX_SHARES];
    const uint64_t cap = u->dict.cap;
    const uint32_t t = xg_threads_shares(u->threads, cap, 16);
    for (uint32_t i = 0; i < t; ++i)
        c[i] = (struct const_share){u, tw, cap / t * i, i + 1 == t ? cap : cap / t * (i + 1)};
    xg_threads_run(t, const_share, c, sizeof *c);
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

/* The in-core GPU run's term addresses and offsets, on their own (huge
 * pages: the copies back fault them in). */
static int alloc_term_arrays(struct xg_wt_result *r)
{
    r->term = xg_big_alloc(((size_t)r->n_terms + 1) * sizeof *r->term);
    r->term_off = xg_big_alloc(((size_t)r->n_terms + 1) * sizeof *r->term_off);
    return r->term && r->term_off ? XG_OK : xg_set_error(XG_ERR_NOMEM, "weight: out of memory");
}

/* The output the device run prepared (wt_int.h's xg_wt_whole), with the
 * term addresses and offsets past the weights when its room has them (a
 * text repeats words within documents: 8.9M postings of 13.2M words at
 * 100 MB of seed 000 §5.1's text, where the 822K terms take 13 MB that
 * would otherwise be fresh pages), its pages past what is used given
 * back; else fresh. */
static int take_postings(struct xg_wt_result *r, struct xg_wt_whole *w)
{
    xg_prefault_wait(w->prefault);
    w->prefault = NULL;
    const size_t nt1 = (size_t)r->n_terms + 1, terms = nt1 * (sizeof *r->term + 8);
    if (!w->docids || !w->weights || r->n_postings > w->n_words) {
        const int rc = alloc_term_arrays(r);
        return rc ? rc : alloc_postings(r);
    }
    const size_t room = (size_t)w->n_words + 1;
    size_t used = (r->n_postings + 1) * sizeof *r->weights;
    if (used + terms <= room * sizeof *r->weights) {
        r->term = (const char **)(void *)((char *)w->weights + used);
        r->term_off = (uint64_t *)(void *)(r->term + nt1);
        r->terms_in_weights = 1;
        used += terms;
    } else {
        const int rc = alloc_term_arrays(r);
        if (rc) return rc;
    }
    xg_big_trim(w->docids, (r->n_postings + 1) * sizeof *r->docids, room * sizeof *r->docids);
    xg_big_trim(w->weights, used, room * sizeof *r->weights);
    r->docids = w->docids;
    r->weights = w->weights;
    w->docids = NULL;
    w->weights = NULL;
    return XG_OK;
}

/* Terms of the chunked run's device dictionary, by id: where each
 * occurs (goff), its length and its df. */
struct dev_terms {
    const uint64_t *goff;
    const uint32_t *len;
    const uint32_t *df;
};

/* Terms [lo, hi): bytes, df into term_off[t + 1], and tw. */
struct term_share {
    const struct run *u;
    const struct dev_terms *d;
    double *tw;
    uint32_t lo, hi;
    int bad;
};

static void *term_share(void *arg)
{
    struct term_share *f = arg;
    const struct run *u = f->u;
    const struct dev_terms *d = f->d;
    struct xg_wt_result *r = u->r;
    const int seed = u->o->formula == XG_WT_SEED;
    for (uint32_t t = f->lo; t < f->hi; ++t) {
        const uint64_t df = d->df[t];
        r->term_off[t + 1] = df;
        if (!df) f->bad = 1;            /* a term without postings */
        r->term[t] = u->in->buf + d->goff[t];
        r->term_len[t] = d->len[t];
        f->tw[t] = xg_wt_term_const(seed, &u->o->bm25, r->n_docs, df);
    }
    return NULL;
}

/* r->n_terms terms from d on all cores (doc_consts first: tw needs N);
 * term_off is the df's running sum. */
static int device_terms(struct run *u, const struct dev_terms *d, double *tw)
{
    struct xg_wt_result *r = u->r;
    struct term_share f[XG_THREADS_MAX_SHARES];
    const uint32_t nt = r->n_terms;
    const uint32_t t = xg_threads_shares(u->threads, nt, 14);
    for (uint32_t i = 0; i < t; ++i)
        f[i] = (struct term_share){u, d, tw, (uint32_t)((uint64_t)nt * i / t),
                                   (uint32_t)((uint64_t)nt * (i + 1) / t), 0};
    xg_threads_run(t, term_share, f, sizeof *f);
    for (uint32_t i = 0; i < t; ++i)
        if (f[i].bad)
            return xg_set_error(XG_ERR_FORMAT, "weight GPU: a term of the device dictionary "
                                "has no postings");
    r->term_off[0] = 0;
    for (uint32_t k = 0; k < nt; ++k) r->term_off[k + 1] += r->term_off[k];
    r->n_postings = r->term_off[nt];
    return XG_OK;
}

/* tw[df] for every df in [lo, hi). */
static void *df_share(void *arg)
{
    const struct const_share *f = arg;
    const struct run *u = f->u;
    const int seed = u->o->formula == XG_WT_SEED;
    for (uint64_t df = f->lo; df < f->hi; ++df)
        f->tw[df] = xg_wt_term_const(seed, &u->o->bm25, u->r->n_docs, df);
    return NULL;
}

/* The term weights per df, 0 to max_df (doc_consts first: tw needs N):
 * a term's tw depends on its df alone, and df <= N is far below the
 * number of terms (100 MB of seed 000 §5.1's text: 819,405 terms, 17,808
 * documents, a df of at most 17,730), so the host computes that many
 * logs, not one per term. */
static int df_consts(struct run *u, uint32_t max_df, double **tw)
{
    if ((uint64_t)max_df > u->r->n_docs)
        return xg_set_error(XG_ERR_FORMAT, "weight GPU: a df of %u in %llu documents",
                            max_df, (unsigned long long)u->r->n_docs);
    const uint64_t n = (uint64_t)max_df + 1;
    *tw = malloc(n * sizeof **tw);
    if (!*tw) return xg_set_error(XG_ERR_NOMEM, "weight: out of memory");
    struct const_share f[XG_THREADS_MAX_SHARES];
    const uint32_t t = xg_threads_shares(u->threads, n, 12);
    for (uint32_t i = 0; i < t; ++i)
        f[i] = (struct const_share){u, *tw, n * i / t, n * (i + 1) / t};
    xg_threads_run(t, df_share, f, sizeof *f);
    return XG_OK;
}

/* In core on the GPU with the device dictionary (wt_int.h's
 * xg_wt_gpu_whole_*): the device made the result's per-term arrays; the
 * host computes the per-document and per-df constants in between. */
static int run_whole(struct run *u)
{
    struct xg_wt_result *r = u->r;
    const struct xg_wt_opts *o = u->o;
    struct xg_wt_whole w;
    progress(u, "dictionary and counts", 0);
    int rc = xg_wt_gpu_whole_count(u->g, &u->ch[0], &w, r->seconds);
    if (rc) return rc;
    const double t0 = xg_now();
    double *tw = NULL, *kd = NULL, *extra = NULL;
    /* The device dictionary counted the documents (setup deferred it). */
    u->n_docs = u->ch[0].n_docs = w.n_docs;
    rc = alloc_doclen(u);
    if (!rc) memcpy(u->doclen, w.doclen, (size_t)w.n_docs * sizeof *u->doclen);
    r->n_terms = w.n_terms;
    r->n_postings = w.n_postings;
    r->term_len = w.term_len;
    w.term_len = NULL;
    if (!rc) rc = doc_consts(u, &kd, &extra);
    if (!rc) rc = df_consts(u, w.max_df, &tw);
    if (!rc) rc = take_postings(r, &w);
    r->seconds[XG_WT_STEP_RANK] += xg_now() - t0;
    progress(u, "weights", 0);
    if (!rc) {
        struct xg_wt_tables tb = {NULL, r->n_terms, tw, kd, extra,
                                  o->formula == XG_WT_SEED, o->bm25.k1 + 1, 0, u->n_docs,
                                  (uint64_t)w.max_df + 1};
        rc = xg_wt_gpu_whole_weights(u->g, &tb, u->in->docids, r);
    }
    r->dict_on_gpu = !rc;
    xg_wt_whole_free(&w);
    free(tw);
    free(kd);
    free(extra);
    return rc;
}

/* The result's docids and weights before pass 1, with room for every
 * word the plan counted (a posting is a distinct (term, document) pair,
 * so there are no more postings than words): untouched, they cost address
 * space only, and the device engine locks them part by part as pass 1
 * counts the postings (xg_wt_gpu_place_reserve).  Without that, nothing:
 * they are allocated once counted. */
static void reserve_postings(struct run *u)
{
    struct xg_wt_result *r = u->r;
    if (xg_knob_wt_no_place()) return;
    uint64_t words = 0;
    for (uint32_t c = 0; c < u->n_chunks; ++c) words += u->ch[c].words;
    r->docids = xg_big_alloc((words + 1) * sizeof *r->docids);
    r->weights = xg_big_alloc((words + 1) * sizeof *r->weights);
    if (!r->docids || !r->weights ||
        xg_wt_gpu_place_reserve(u->g, r->docids, r->weights, words + 1)) {
        free(r->docids);
        free(r->weights);
        r->docids = NULL;
        r->weights = NULL;
    }
}

static void drop_postings(struct run *u)
{
    xg_wt_gpu_place_drop(u->g);      /* before the pages go */
    free(u->r->docids);
    free(u->r->weights);
    u->r->docids = NULL;
    u->r->weights = NULL;
}

/* In chunks on the GPU with the device dictionary (wt_int.h's
 * xg_wt_gpu_dd_*): pass 1 leaves the dictionary on the device, pass 2
 * looks words up there. */
static int run_chunks_dd(struct run *u)
{
    struct xg_wt_result *r = u->r;
    const struct xg_wt_opts *o = u->o;
    int rc = XG_OK;
    uint64_t postings = 0;
    reserve_postings(u);
    for (uint32_t c = 0; c < u->n_chunks && !rc; ++c) {
        progress(u, "pass 1 (df)", c);
        const struct xg_wt_chunk *k = &u->ch[c];
        next_chunk(u, c, 1);
        uint64_t n = 0;
        rc = xg_wt_gpu_dd_pass1(u->g, k, (uint64_t)(k->buf - u->in->buf), o->hash_mask,
                                u->doclen + k->doc_base, &n, r->seconds);
        postings += n;
        if (!rc) xg_wt_gpu_place_grow(u->g, postings + 1);
    }
    struct xg_wt_dd_out d = {0};
    if (!rc) rc = xg_wt_gpu_dd_finish(u->g, &d, r->seconds);
    if (rc) {
        drop_postings(u);
        return rc;
    }
    const double t0 = xg_now();
    double *tw = NULL, *kd = NULL, *extra = NULL;
    r->n_terms = d.n_terms;
    rc = alloc_terms(u, &tw);
    if (!rc) rc = doc_consts(u, &kd, &extra);
    const struct dev_terms dt = {d.goff, d.len, d.df};
    if (!rc) rc = device_terms(u, &dt, tw);
    /* The reserved room, unless pass 1's postings and the dfs disagree. */
    if (!rc && r->docids && r->n_postings != postings) drop_postings(u);
    if (!rc && !r->docids) rc = alloc_postings(r);
    r->seconds[XG_WT_STEP_RANK] += xg_now() - t0;
    if (!rc) {
        struct xg_wt_tables tb = {NULL, r->n_terms, tw, kd, extra,
                                  o->formula == XG_WT_SEED, o->bm25.k1 + 1, 0, u->n_docs, 0};
        tb.hash_mask = o->hash_mask ? o->hash_mask : UINT64_MAX;
        rc = pass2(u, 1, &tb);
    }
    r->dict_on_gpu = !rc;
    xg_wt_dd_out_free(&d);
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
        snprintf(r->dict_declined, sizeof r->dict_declined, "%s", xg_last_error());
        /* The device dictionary declined before any output: the two
         * passes with the host dictionary answer. */
        xg_clear_error();
    }
    int rc = u->counted ? XG_OK : count_chunks(u);
    if (!rc && gpu && u->n_chunks > 1) {
        rc = run_chunks_dd(u);
        if (rc != XG_ERR_UNSUPPORTED) return rc;
        snprintf(r->dict_declined, sizeof r->dict_declined, "%s", xg_last_error());
        /* Declined before any output: the host dictionary answers. */
        xg_clear_error();
        xg_wt_gpu_dd_drop(u->g);
        drop_postings(u);
        rc = XG_OK;
    }
    if (!rc) rc = pass1(u, gpu);
    double *tw = NULL, *kd = NULL, *extra = NULL;
    double t0 = xg_now();
    if (!rc) {
        if (u->dict.n > UINT32_MAX)
            return xg_set_error(XG_ERR_FORMAT, "weight: more than 2^32-1 terms");
        r->n_terms = (uint32_t)u->dict.n;
        rc = alloc_terms(u, &tw);
    }
    if (!rc) rc = xg_text_dict_rank(&u->dict, r->term, r->term_len, u->threads);
    if (!rc) rc = doc_consts(u, &kd, &extra);
    if (!rc) {
        term_consts(u, tw);
        r->term_off[0] = 0;
        for (uint32_t t = 0; t < r->n_terms; ++t) r->term_off[t + 1] += r->term_off[t];
        r->n_postings = r->term_off[r->n_terms];
        rc = alloc_postings(r);
    }
    r->seconds[XG_WT_STEP_RANK] += xg_now() - t0;
    if (!rc) {
        struct xg_wt_tables tb = {&u->dict, r->n_terms, tw, kd, extra,
                                  o->formula == XG_WT_SEED, o->bm25.k1 + 1, 0, 0, 0};
        tb.hash_mask = o->hash_mask ? o->hash_mask : UINT64_MAX;
        tb.n_docs = u->n_docs;
        rc = pass2(u, gpu, &tb);
    }
    free(tw);
    free(kd);
    free(extra);
    return rc;
}

/* The chunk plan for `avail` device bytes per chunk and, unless
 * `defer_count` (the in-core GPU run, whose device dictionary counts
 * them), the documents. */
static int setup(struct run *u, uint64_t avail, int defer_count)
{
    int rc = xg_wt_plan(u->in->path ? u->in->path : "weight", u->in->buf,
                        u->in->len, avail, u->threads, &u->ch, &u->n_chunks,
                        &u->planned_docs);
    if (!rc) rc = xg_text_dict_init(&u->dict, 1 << 16);
    if (!rc && !(defer_count && u->n_chunks == 1)) rc = count_chunks(u);
    return rc;
}

static void teardown(struct run *u)
{
    free(u->ch);
    free(u->doclen);
    xg_text_dict_free(&u->dict);
    u->ch = NULL;
    u->doclen = NULL;
    u->counted = 0;
}

/* Device bytes a chunk may take under the budget (0: no budget). */
static uint64_t chunk_avail(uint64_t budget)
{
    return budget ? budget - budget / TABLE_SHARE : UINT64_MAX;
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
    u.threads = o->threads ? o->threads : xg_threads_cores();
    int rc = XG_ERR_NODEVICE;
    if (o->engine != XG_WT_CPU) {
        uint64_t free_bytes = 0;
        double t0 = xg_now();
        rc = xg_wt_gpu_open(o->device_memory, &u.g, &free_bytes);
        if (!rc) {
            uint64_t budget = o->device_memory ? o->device_memory : free_bytes / 10 * 9;
            rc = setup(&u, chunk_avail(budget), 1);
            if (!rc && u.n_chunks > 1) xg_wt_gpu_pin_input(u.g, in->buf, in->len);
            r->seconds[XG_WT_STEP_SETUP] += xg_now() - t0;
            if (!rc) rc = run_engine(&u, 1);
            r->engine = XG_WT_GPU;
            r->n_chunks = u.n_chunks;
            if (rc == XG_ERR_UNSUPPORTED) r->fell_back = 1;
            t0 = xg_now();
            teardown(&u);
            xg_wt_gpu_close(u.g);
            r->seconds[XG_WT_STEP_SETUP] += xg_now() - t0;
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
        double t0 = xg_now();
        rc = setup(&u, chunk_avail(o->device_memory), 0);
        r->seconds[XG_WT_STEP_SETUP] += xg_now() - t0;
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
