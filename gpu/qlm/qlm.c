/** @file qlm.c
 *  @brief The qlm pipeline's driver (qlm.h): the weight pipeline's
 *         dictionary and the words' term ids, the chunk plan (whole
 *         documents, like weight's), pass 1 (each chunk's distinct n-grams
 *         with their collection counts, merged into one sorted table per
 *         n), the history counts f(t_1^{n-1}, C), and pass 2 (each chunk's
 *         rows, placed per n-gram in chunk order, i.e. by document); and
 *         the engine: the CPU twin (qlm_sort.c, qlm_count.c) or the GPU
 *         (qlm_int.h's xg_qlm_gpu_*: in core one pass on the device, out
 *         of core the same two passes and merges as the twin).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/big_alloc.h"
#include "../runtime/error.h"
#include "../text/dict_gpu.h"
#include "qlm_int.h"
#include "../text/hash.h"
#include "../weight/wt_int.h"

const char *const xg_qlm_step_names[XG_QLM_N_STEPS] = {
    "dict/ID", "ids", "2 sort", "3 count", "merge", "3 prob", "copies"};

/* Host bytes per word of a chunk in the CPU twin (ids, documents, sa,
 * lcp, ranks, two 64-bit key arrays, the counters' buffers): the chunk
 * plan gives each chunk at most --device-memory / this many words. */
#define BYTES_PER_WORD 48
/* Chunk positions are 32-bit, with room for rank n + 1. */
#define MAX_CHUNK_WORDS (UINT32_MAX - 2u)

struct run {
    const struct xg_text *in;
    const struct xg_qlm_opts *o;
    struct xg_qlm_result *r;
    uint32_t threads;
    struct xg_text_dict dict;
    uint32_t *doclen;           /* per document */
    uint64_t *docoff;           /* [n_docs + 1]: first word per document */
    uint64_t *chunk_doc;        /* [n_chunks + 1]: first document per chunk */
    struct xg_qlm_tables t;
    xg_qlm_gpu *g;              /* the GPU engine, or NULL: the CPU twin */
};

static int nomem(void)
{
    return xg_set_error(XG_ERR_NOMEM, "qlm: out of memory");
}

/* --- dictionary and term ids -------------------------------------------- */

static int is_doc_start(const char *b, size_t p, size_t first)
{
    return b[p] != '\n' && (p == first || (p >= 2 && b[p - 1] == '\n' && b[p - 2] == '\n'));
}

struct map {
    const struct run *u;
    size_t lo, hi, first;       /* bytes; lo is a document start (or hi) */
    uint64_t doc;               /* phase 0: documents found; 1: first one */
    int phase, rc;
};

static void *map_words(void *arg)
{
    struct map *a = arg;
    const char *b = a->u->in->buf;
    uint64_t doc = a->doc, w = 0, docs = 0;
    for (size_t p = a->lo; p < a->hi;) {
        if (b[p] == '\n') { ++p; continue; }
        const char *e = memchr(b + p, '\n', a->hi - p);
        const uint32_t len = (uint32_t)(e - (b + p));
        if (is_doc_start(b, p, a->first)) {
            ++docs;
            if (a->phase) w = a->u->docoff[doc + docs - 1];
        }
        if (a->phase) {
            const struct xg_text_dict_ent *t = xg_text_dict_find(&a->u->dict, b + p, len,
                xg_text_hash((const unsigned char *)b + p, len, UINT64_MAX));
            if (!t) { a->rc = XG_ERR_FORMAT; break; }
            a->u->r->ids[w++] = t->id;
        }
        p += len + 1;
    }
    if (!a->phase) a->doc = docs;
    return NULL;
}

/* The offset of the first word (after leading newlines), checking there
 * is one and that the documents fit 32 bits. */
static int first_word(const struct xg_text *in, size_t *first)
{
    size_t f = 0;
    while (f < in->len && in->buf[f] == '\n') ++f;
    *first = f;
    if (in->n_docs == 0 || in->n_docs > UINT32_MAX || f == in->len)
        return xg_set_error(XG_ERR_FORMAT, "qlm: no words, or more than 2^32-1 documents");
    return XG_OK;
}

static int dictionary(struct run *u)
{
    const struct xg_text *in = u->in;
    struct xg_qlm_result *r = u->r;
    size_t first;
    if (first_word(in, &first)) return XG_ERR_FORMAT;
    /* The weight pipeline's pass 1: document lengths and distinct words. */
    struct xg_wt_chunk wc = {in->buf + first, in->len - first, (in->len - first) / 2 + 1, 0,
                             (uint32_t)in->n_docs};
    struct xg_text_dict_list *l = NULL;
    uint32_t nl = 0;
    u->doclen = malloc((in->n_docs + 1) * sizeof *u->doclen);
    u->docoff = malloc((in->n_docs + 1) * sizeof *u->docoff);
    if (!u->doclen || !u->docoff) return nomem();
    int rc = xg_text_dict_init(&u->dict, 1 << 16);
    if (!rc) rc = xg_wt_ref_pass1(&wc, u->threads, UINT64_MAX, u->doclen, &l, &nl);
    if (!rc) rc = xg_text_dict_merge(&u->dict, l, nl, u->threads);
    for (uint32_t i = 0; i < nl; ++i) free(l[i].terms);
    free(l);
    if (rc) return rc;
    if (u->dict.n > UINT32_MAX - 2u)
        return xg_set_error(XG_ERR_FORMAT, "qlm: more than 2^32-3 distinct words");
    r->n_terms = (uint32_t)u->dict.n;
    r->term = malloc((r->n_terms + 1) * sizeof *r->term);
    r->term_len = malloc((r->n_terms + 1) * sizeof *r->term_len);
    if (!r->term || !r->term_len) return nomem();
    rc = xg_text_dict_rank(&u->dict, r->term, r->term_len, u->threads);
    if (rc) return rc;
    r->n_docs = in->n_docs;
    u->docoff[0] = 0;
    for (uint64_t d = 0; d < in->n_docs; ++d) u->docoff[d + 1] = u->docoff[d] + u->doclen[d];
    r->total_length = u->docoff[in->n_docs];
    r->ids = malloc((r->total_length + 1) * sizeof *r->ids);
    if (!r->ids) return nomem();
    return XG_OK;
}

/* The dictionary, documents and term ids from the GPU (text/dict_gpu.h), for the
 * GPU engine in core; XG_OK, or the reason the host must build them
 * (nothing of u or r is set then). */
static int gpu_dictionary(struct run *u)
{
    const struct xg_text *in = u->in;
    struct xg_qlm_result *r = u->r;
    size_t first;
    if (first_word(in, &first)) return XG_ERR_FORMAT;
    struct xg_gdict g;
    int rc = xg_gdict_build(in->buf + first, in->len - first, xg_qlm_gpu_device(u->g), &g);
    if (rc) return rc;
    if (g.n_docs != in->n_docs) {
        xg_gdict_free(&g);
        return xg_set_error(XG_ERR_FORMAT, "qlm: GPU dictionary: %u documents, %llu expected",
                            g.n_docs, (unsigned long long)in->n_docs);
    }
    u->doclen = malloc((in->n_docs + 1) * sizeof *u->doclen);
    u->docoff = malloc((in->n_docs + 1) * sizeof *u->docoff);
    r->term = malloc(((size_t)g.n_terms + 1) * sizeof *r->term);
    if (!u->doclen || !u->docoff || !r->term) {
        free(u->doclen);
        free(u->docoff);
        free(r->term);
        u->doclen = NULL;
        u->docoff = NULL;
        r->term = NULL;
        xg_gdict_free(&g);
        return nomem();
    }
    memcpy(u->doclen, g.doclen, in->n_docs * sizeof *u->doclen);
    for (uint32_t t = 0; t < g.n_terms; ++t) r->term[t] = in->buf + first + g.term_off[t];
    r->n_terms = g.n_terms;
    r->term_len = g.term_len;
    r->ids = g.ids;
    r->n_docs = in->n_docs;
    u->docoff[0] = 0;
    for (uint64_t d = 0; d < in->n_docs; ++d) u->docoff[d + 1] = u->docoff[d] + u->doclen[d];
    r->total_length = u->docoff[in->n_docs];
    r->dict_on_gpu = 1;
    free(g.doclen);
    free(g.term_off);
    return XG_OK;
}

/* Every word's term id, threads over byte ranges that start at documents:
 * phase 0 counts each range's documents, phase 1 maps its words. */
static int term_ids(struct run *u)
{
    const char *b = u->in->buf;
    const size_t len = u->in->len;
    size_t first = 0;
    while (first < len && b[first] == '\n') ++first;
    struct map *a = calloc(u->threads, sizeof *a);
    if (!a) return nomem();
    size_t lo = first;
    for (uint32_t t = 0; t < u->threads; ++t) {
        size_t hi = t + 1 == u->threads ? len : first + (len - first) / u->threads * (t + 1);
        if (hi < lo) hi = lo;
        while (hi < len && !is_doc_start(b, hi, first)) ++hi;
        a[t] = (struct map){u, lo, hi, first, 0, 0, 0};
        lo = hi;
    }
    xg_threads_run(u->threads, map_words, a, sizeof *a);
    uint64_t doc = 0;
    for (uint32_t t = 0; t < u->threads; ++t) {
        const uint64_t n = a[t].doc;
        a[t].doc = doc;
        a[t].phase = 1;
        doc += n;
    }
    int rc = XG_OK;
    if (doc != u->in->n_docs)
        rc = xg_set_error(XG_ERR_FORMAT, "qlm: %llu documents found, %llu expected",
                          (unsigned long long)doc, (unsigned long long)u->in->n_docs);
    if (!rc) xg_threads_run(u->threads, map_words, a, sizeof *a);
    for (uint32_t t = 0; !rc && t < u->threads; ++t)
        if (a[t].rc) rc = xg_set_error(XG_ERR_FORMAT, "qlm: a word missing from the dictionary");
    free(a);
    return rc;
}

/* --- chunks ------------------------------------------------------------- */

/* Whole documents, at most `max` words per chunk. */
static int plan(struct run *u, uint64_t max)
{
    const uint64_t n_docs = u->in->n_docs;
    uint32_t n = 0, cap = 16;
    u->chunk_doc = malloc((cap + 1) * sizeof *u->chunk_doc);
    if (!u->chunk_doc) return nomem();
    for (uint64_t d = 0; d < n_docs;) {
        if (u->doclen[d] > max)
            return xg_set_error(XG_ERR_NOMEM, "%s: document %llu (%u words) does not "
                                "fit the --device-memory budget (chunks of at most "
                                "%llu words, %d bytes each)",
                                u->in->path ? u->in->path : "qlm",
                                (unsigned long long)(u->in->docids ? u->in->docids[d]
                                                                   : d + 1),
                                u->doclen[d], (unsigned long long)max,
                                BYTES_PER_WORD);
        if (n == cap) {
            cap *= 2;
            uint64_t *nc = realloc(u->chunk_doc, (cap + 1) * sizeof *nc);
            if (!nc) return nomem();
            u->chunk_doc = nc;
        }
        u->chunk_doc[n++] = d;
        const uint64_t w0 = u->docoff[d];
        while (d < n_docs && u->docoff[d + 1] - w0 <= max) ++d;
    }
    u->chunk_doc[n] = n_docs;
    u->r->n_chunks = n;
    return XG_OK;
}

/* Chunk c's view (doc and doc_end are the caller's buffers; doc NULL:
 * not filled, the GPU engine computes it on the device). */
static void chunk(const struct run *u, uint32_t c, uint32_t *doc, uint32_t *doc_end,
                  struct xg_qlm_chunk *k)
{
    const uint64_t d0 = u->chunk_doc[c], d1 = u->chunk_doc[c + 1];
    const uint64_t w0 = u->docoff[d0];
    for (uint64_t d = d0; d < d1; ++d) {
        const uint32_t lo = (uint32_t)(u->docoff[d] - w0);
        doc_end[d - d0] = (uint32_t)(u->docoff[d + 1] - w0);
        for (uint32_t p = lo; doc && p < doc_end[d - d0]; ++p) doc[p] = (uint32_t)(d - d0);
    }
    *k = (struct xg_qlm_chunk){u->r->ids + w0, w0, (uint32_t)(u->docoff[d1] - w0),
                               doc, doc_end, (uint32_t)(d1 - d0), d0};
}

/* --- the global tables -------------------------------------------------- */

/* g = g merged with l (both sorted); counts of equal n-grams add up. */
static int merge(const uint32_t *ids, uint32_t n, struct xg_qlm_grams *g,
                 const struct xg_qlm_grams *l)
{
    struct xg_qlm_grams m = {0};
    uint64_t i = 0, j = 0;
    int rc = XG_OK;
    while (!rc && (i < g->n || j < l->n)) {
        int c = i == g->n ? 1 : j == l->n ? -1 : xg_qlm_cmp(ids, g->pos[i], l->pos[j], n);
        if (c < 0) { rc = xg_qlm_grams_push(&m, g->pos[i], g->z[i], g->df[i]); ++i; }
        else if (c > 0) { rc = xg_qlm_grams_push(&m, l->pos[j], l->z[j], l->df[j]); ++j; }
        else {
            rc = xg_qlm_grams_push(&m, g->pos[i], g->z[i] + l->z[j], g->df[i] + l->df[j]);
            ++i;
            ++j;
        }
    }
    if (rc) { xg_qlm_grams_free(&m); return nomem(); }
    xg_qlm_grams_free(g);
    *g = m;
    return XG_OK;
}

/* f(t_1^{n-1}, C) of every n-gram, the row offsets and the cursors. */
static int tables(struct run *u)
{
    struct xg_qlm_result *r = u->r;
    struct xg_qlm_tables *t = &u->t;
    const uint32_t sigma = u->o->sigma;
    uint64_t n_grams = 0;
    for (uint32_t n = 1; n <= sigma; ++n) {
        t->base[n] = n_grams;
        n_grams += t->g[n].n;
        t->w[n] = malloc((t->g[n].n + 1) * sizeof *t->w[n]);
        if (!t->w[n]) return nomem();
        const struct xg_qlm_grams *h = &t->g[n - 1];
        uint64_t j = 0;
        for (uint64_t i = 0; i < t->g[n].n; ++i) {
            if (n == 1) { t->w[1][i] = r->total_length; continue; }
            /* Prefixes of sorted n-grams come in order: walk table n-1. */
            while (j < h->n && xg_qlm_cmp(t->ids, h->pos[j], t->g[n].pos[i], n - 1) < 0) ++j;
            if (j == h->n || xg_qlm_cmp(t->ids, h->pos[j], t->g[n].pos[i], n - 1))
                return xg_set_error(XG_ERR_FORMAT, "qlm: internal error: an n-gram "
                                    "without its history (n = %u)", n);
            t->w[n][i] = h->z[j];
        }
    }
    t->base[sigma + 1] = n_grams;
    r->n_grams = n_grams;
    r->gram_n = xg_big_alloc(n_grams + 1);
    r->gram_pos = xg_big_alloc((n_grams + 1) * sizeof *r->gram_pos);
    r->gram_off = xg_big_alloc((n_grams + 1) * sizeof *r->gram_off);
    t->cursor = malloc((n_grams + 1) * sizeof *t->cursor);
    if (!r->gram_n || !r->gram_pos || !r->gram_off || !t->cursor) return nomem();
    uint64_t at = 0;
    for (uint32_t n = 1; n <= sigma; ++n)
        for (uint64_t i = 0; i < t->g[n].n; ++i) {
            const uint64_t g = t->base[n] + i;
            r->gram_n[g] = (uint8_t)n;
            r->gram_pos[g] = t->g[n].pos[i];
            r->gram_off[g] = t->cursor[g] = at;
            at += t->g[n].df[i];
        }
    r->gram_off[n_grams] = at;
    r->n_rows = at;
    r->docids = xg_big_alloc((at + 1) * sizeof *r->docids);
    r->prob = xg_big_alloc((at + 1) * sizeof *r->prob);
    if (u->o->counts) r->counts = xg_big_alloc((4 * at + 1) * sizeof *r->counts);
    if (!r->docids || !r->prob || (u->o->counts && !r->counts)) return nomem();
    t->r = r;
    t->docids = u->in->docids;
    t->lambda = u->o->lambda;
    return XG_OK;
}

/* --- the two passes ----------------------------------------------------- */

static void progress(const struct run *u, const char *what, uint32_t c)
{
    if (u->o->progress)
        fprintf(stderr, "\rxapian-gpu qlm: %s, chunk %u of %u   ", what, c + 1,
                u->r->n_chunks);
}

static struct xg_qlm_gpu_args gpu_args(const struct run *u, const struct xg_qlm_chunk *k)
{
    return (struct xg_qlm_gpu_args){u->o->sigma, u->o->sort, u->r->n_terms,
                                    u->in->docids ? u->in->docids + k->doc_base : NULL,
                                    u->o->lambda, u->o->counts};
}

/* One chunk of one pass on the GPU (which sorts on the device each time);
 * pass 1's lists are merged as the twin's are. */
static int gpu_chunk(struct run *u, int pass, const struct xg_qlm_chunk *k)
{
    const struct xg_qlm_gpu_args a = gpu_args(u, k);
    if (pass == 2) return xg_qlm_gpu_pass2(u->g, k, &a, &u->t, u->r->seconds);
    struct xg_qlm_grams l[XG_QLM_MAX_SIGMA + 1];
    memset(l, 0, sizeof l);
    int rc = xg_qlm_gpu_pass1(u->g, k, &a, l, u->r->seconds);
    double t0 = xg_now();
    for (uint32_t n = 1; n <= u->o->sigma; ++n) {
        if (!rc) rc = merge(u->r->ids, n, &u->t.g[n], &l[n]);
        xg_qlm_grams_free(&l[n]);
    }
    u->r->seconds[XG_QLM_STEP_MERGE] += xg_now() - t0;
    return rc;
}

static int passes(struct run *u)
{
    struct xg_qlm_result *r = u->r;
    const uint32_t sigma = u->o->sigma;
    uint64_t max_words = 0, max_docs = 0;
    for (uint32_t c = 0; c < r->n_chunks; ++c) {
        const uint64_t d0 = u->chunk_doc[c], d1 = u->chunk_doc[c + 1];
        if (u->docoff[d1] - u->docoff[d0] > max_words) max_words = u->docoff[d1] - u->docoff[d0];
        if (d1 - d0 > max_docs) max_docs = d1 - d0;
    }
    uint32_t *doc = malloc((max_words + 1) * sizeof *doc);
    uint32_t *doc_end = malloc((max_docs + 1) * sizeof *doc_end);
    uint32_t *sa = malloc((max_words + 1) * sizeof *sa);
    uint8_t *lcp = malloc(max_words + 1);
    int rc = doc && doc_end && sa && lcp ? XG_OK : nomem();
    u->t.ids = r->ids;
    /* One chunk: pass 2 reuses pass 1's sort. */
    for (int pass = 1; pass <= 2 && !rc; ++pass) {
        if (pass == 2) {
            double t0 = xg_now();
            rc = tables(u);
            r->seconds[XG_QLM_STEP_MERGE] += xg_now() - t0;
        }
        for (uint32_t c = 0; c < r->n_chunks && !rc; ++c) {
            progress(u, pass == 1 ? "pass 1 (collection counts)" : "pass 2 (probabilities)", c);
            struct xg_qlm_chunk k;
            chunk(u, c, u->g ? NULL : doc, doc_end, &k);
            if (u->g) {
                rc = gpu_chunk(u, pass, &k);
                continue;
            }
            double t0 = xg_now();
            if (pass == 1 || r->n_chunks > 1)
                rc = xg_qlm_sort_ref(&k, sigma, u->o->sort, u->threads, sa, lcp);
            double t1 = xg_now();
            r->seconds[XG_QLM_STEP_SORT] += t1 - t0;
            if (rc) break;
            if (pass == 2) {
                rc = xg_qlm_count_ref(&k, sa, lcp, sigma, u->threads, NULL, &u->t);
                r->seconds[XG_QLM_STEP_PROB] += xg_now() - t1;
                continue;
            }
            struct xg_qlm_grams l[XG_QLM_MAX_SIGMA + 1];
            memset(l, 0, sizeof l);
            rc = xg_qlm_count_ref(&k, sa, lcp, sigma, u->threads, l, NULL);
            double t2 = xg_now();
            r->seconds[XG_QLM_STEP_COUNT] += t2 - t1;
            for (uint32_t n = 1; n <= sigma; ++n) {
                if (!rc) rc = merge(r->ids, n, &u->t.g[n], &l[n]);
                xg_qlm_grams_free(&l[n]);
            }
            r->seconds[XG_QLM_STEP_MERGE] += xg_now() - t2;
        }
    }
    /* Every n-gram got exactly its df rows. */
    for (uint64_t g = 0; !rc && g < r->n_grams; ++g)
        if (u->t.cursor[g] != r->gram_off[g + 1])
            rc = xg_set_error(XG_ERR_FORMAT, "qlm: internal error: n-gram %llu has "
                              "%llu rows, df %llu", (unsigned long long)g,
                              (unsigned long long)(u->t.cursor[g] - r->gram_off[g]),
                              (unsigned long long)(r->gram_off[g + 1] - r->gram_off[g]));
    free(doc);
    free(doc_end);
    free(sa);
    free(lcp);
    return rc;
}

/* In core on the GPU: the one chunk in one pass, no tables to merge. */
static int gpu_whole(struct run *u)
{
    uint32_t *doc_end = malloc((u->in->n_docs + 1) * sizeof *doc_end);
    int rc = doc_end ? XG_OK : nomem();
    if (!rc) {
        struct xg_qlm_chunk k;
        chunk(u, 0, NULL, doc_end, &k);
        const struct xg_qlm_gpu_args a = gpu_args(u, &k);
        progress(u, "GPU, in core", 0);
        rc = xg_qlm_gpu_whole(u->g, &k, &a, u->r, u->r->seconds);
    }
    free(doc_end);
    return rc;
}

/* The table's arrays (not the dictionary nor the ids). */
static void free_table(struct xg_qlm_result *r)
{
    free(r->gram_n);
    free(r->gram_pos);
    free(r->gram_off);
    free(r->docids);
    free(r->prob);
    free(r->counts);
    r->gram_n = NULL;
    r->gram_pos = r->gram_off = r->counts = NULL;
    r->docids = NULL;
    r->prob = NULL;
    r->n_grams = r->n_rows = 0;
}

/* Back to the state before the passes (the dictionary and ids stay). */
static void reset(struct run *u)
{
    free_table(u->r);
    for (uint32_t n = 0; n <= XG_QLM_MAX_SIGMA; ++n) {
        xg_qlm_grams_free(&u->t.g[n]);
        free(u->t.w[n]);
    }
    free(u->t.cursor);
    memset(&u->t, 0, sizeof u->t);
}

/* The engine: the GPU when it opened (xg_qlm_run), else the twin; with
 * auto, any GPU failure hands the run to the CPU twin. */
static int engines(struct run *u)
{
    const int want = u->o->engine;
    if (u->g) {
        u->r->engine = XG_QLM_GPU;
        int rc = u->r->n_chunks == 1 ? gpu_whole(u) : passes(u);
        xg_qlm_gpu_close(u->g);
        u->g = NULL;
        if (!rc || want == XG_QLM_GPU) return rc;
        reset(u);
    }
    u->r->engine = XG_QLM_CPU;
    return passes(u);
}

void xg_qlm_result_free(struct xg_qlm_result *r)
{
    free(r->term);
    free(r->term_len);
    free(r->ids);
    free_table(r);
    memset(r, 0, sizeof *r);
}

int xg_qlm_run(const struct xg_text *in, const struct xg_qlm_opts *o,
               struct xg_qlm_result *r)
{
    memset(r, 0, sizeof *r);
    if (o->sigma < 1 || o->sigma > XG_QLM_MAX_SIGMA)
        return xg_set_error(XG_ERR_ARG, "qlm: sigma must be in 1..%d", XG_QLM_MAX_SIGMA);
    if (!(o->lambda >= 0 && o->lambda <= 1))
        return xg_set_error(XG_ERR_ARG, "qlm: lambda must be in [0, 1]");
    struct run u;
    memset(&u, 0, sizeof u);
    u.in = in;
    u.o = o;
    u.r = r;
    u.threads = o->threads ? o->threads : xg_threads_cores();
    if (u.threads > 256) u.threads = 256;
    r->sigma = o->sigma;
    /* The GPU engine (asked for, or auto and a device opens) opens first:
     * its stream and pinned buffers also serve the device dictionary. */
    if (o->engine != XG_QLM_CPU && xg_qlm_gpu_open(u.threads, &u.g)) {
        if (o->engine == XG_QLM_GPU) return xg_last_error_code();
        xg_clear_error();
    }
    double t0 = xg_now();
    /* In core, the GPU engine builds the dictionary on the device unless
     * told not to (--host-dictionary); the host does whenever the device
     * cannot (a hash shared by two words, ...), and always for the twin,
     * the reference. */
    int rc = u.g && !o->host_dictionary && !o->device_memory ? gpu_dictionary(&u)
                                                             : XG_ERR_ARG;
    double t1 = xg_now();
    if (rc) {
        rc = dictionary(&u);
        t1 = xg_now();
        if (!rc) rc = term_ids(&u);
    }
    r->seconds[XG_QLM_STEP_DICT] = t1 - t0;
    r->seconds[XG_QLM_STEP_IDS] = xg_now() - t1;
    uint64_t max = o->device_memory ? o->device_memory / BYTES_PER_WORD : MAX_CHUNK_WORDS;
    if (max > MAX_CHUNK_WORDS) max = MAX_CHUNK_WORDS;
    if (max < 1) max = 1;
    if (!rc) rc = plan(&u, max);
    if (!rc) rc = engines(&u);
    if (o->progress) fputc('\n', stderr);
    xg_qlm_gpu_close(u.g);   /* still open only if the run stopped early */
    xg_text_dict_free(&u.dict);
    free(u.doclen);
    free(u.docoff);
    free(u.chunk_doc);
    for (uint32_t n = 0; n <= XG_QLM_MAX_SIGMA; ++n) {
        xg_qlm_grams_free(&u.t.g[n]);
        free(u.t.w[n]);
    }
    free(u.t.cursor);
    if (rc) {
        const uint32_t nc = r->n_chunks;
        xg_qlm_result_free(r);
        r->n_chunks = nc;
    }
    return rc;
}
