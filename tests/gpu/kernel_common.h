/** @file kernel_common.h
 *  @brief What the per-kernel GPU tests share (tests/gpu/test_kernel_*.c,
 *         one file per kernel, split from test_kernels.c): the random
 *         index on host and device, CHECK/CUDA, the AND batch (and_case)
 *         and the test bodies run by several files (test_intersect for
 *         intersect and merge, test_or_pipeline for accumulate, topk and
 *         finish).  Header-only: everything is static inline.
 *  usage of each test: test_kernel_NAME [--seed N]; exit 77 without a
 *  CUDA device.
 */
#ifndef XG_TESTS_GPU_KERNEL_COMMON_H
#define XG_TESTS_GPU_KERNEL_COMMON_H
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../gpu/query/accumulate.h"
#include "../../gpu/query/decode.h"
#include "../../gpu/runtime/error.h"
#include "../../gpu/query/finish.h"
#include "../../gpu/runtime/knobs.h"
#include "../../gpu/query/engine_types.h"
#include "../../gpu/query/intersect.h"
#include "../../gpu/index/impact.h"
#include "../../gpu/index/list_encode.h"
#include "../../gpu/query/member.h"
#include "../../gpu/query/merge.h"
#include "../../gpu/query/topk.h"

static uint64_t rng;
static uint64_t rnd(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int passed, failed;
static int full_span; /* --bench: every list spans the whole range */
#define CHECK(cond, ...)                                                    \
    do {                                                                    \
        if (!(cond)) {                                                      \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                     \
            printf(__VA_ARGS__);                                            \
            printf("\n");                                                   \
            ++failed;                                                       \
            return 1;                                                       \
        }                                                                   \
    } while (0)
#define CUDA(call) CHECK((call) == cudaSuccess, "%s: %s", #call,            \
                         cudaGetErrorString(cudaGetLastError()))

/* A small index built from random lists, on host and device. */
struct tindex {
    uint32_t n_terms, n_docs;
    struct xg_buf post, skip, bloom, hashseg;
    struct xg_fmt_term *terms;
    struct xg_fmt_term_lr *lr;
    uint32_t *docids, *doclens;
    double *kd;
    struct xg_dindex h, d;
    void *dmem[10];
    uint32_t **lists, **wdfs, *df;
    uint64_t *list_off;
};

/* Lists stay where the encoder put them: list_off = postings_offset. */
static inline void set_list_off(struct tindex *t)
{
    free(t->list_off);
    t->list_off = malloc((t->n_terms + 1) * sizeof *t->list_off);
    for (uint32_t i = 0; i < t->n_terms; ++i)
        t->list_off[i] = t->terms[i].postings_offset;
    t->h.list_off = t->list_off;
}

static inline void *dup_to_device(struct tindex *t, int slot, const void *p, size_t n,
                           size_t pad)
{
    void *d = NULL;
    if (cudaMalloc(&d, n + pad + 8) != cudaSuccess) return NULL;
    cudaMemset(d, 0, n + pad + 8);
    if (n) cudaMemcpy(d, p, n, cudaMemcpyHostToDevice);
    t->dmem[slot] = d;
    return d;
}

/* Lists: n_terms random ascending lists of dense numbers in
 * [base, base + span); gap scale chosen per list so every bit width
 * appears; wdfs with occasional huge values (exceptions). */
static inline int build(struct tindex *t, uint32_t n_terms, uint32_t n_docs,
                 uint32_t base, const uint32_t *dfs, int with_docs)
{
    memset(t, 0, sizeof *t);
    t->n_terms = n_terms;
    t->n_docs = n_docs;
    t->terms = calloc(n_terms, sizeof *t->terms);
    t->lr = calloc(n_terms, sizeof *t->lr);
    t->lists = calloc(n_terms, sizeof *t->lists);
    t->wdfs = calloc(n_terms, sizeof *t->wdfs);
    t->df = calloc(n_terms, sizeof *t->df);
    struct xg_list_sink sink = {&t->post, &t->skip, &t->bloom, &t->hashseg};
    struct xg_list_params lp = {n_docs, 8, 3, 32, NULL, 0, NULL};
    for (uint32_t i = 0; i < n_terms; ++i) {
        uint32_t df = dfs[i];
        uint64_t full = (uint64_t)n_docs - base;
        /* A window of 2^8 .. 2^32 numbers: dense and sparse lists, so the
         * gaps need every bit width. */
        uint64_t span = (uint64_t)1 << (8 + rnd() % 25);
        if (span > full || full_span) span = full;
        uint64_t off = rnd() % (full - span + 1);
        if (df > span) df = (uint32_t)span;
        uint32_t *l = malloc((df + 1) * sizeof *l);
        uint32_t *w = malloc((df + 1) * sizeof *w);
        /* Sorted sample of df distinct values from [base, n_docs). */
        uint64_t left = span, need = df;
        uint32_t k = 0;
        for (uint64_t v = 0; need && v < span; ++v) {
            if (rnd() % left < need) {
                l[k++] = (uint32_t)(base + off + v);
                --need;
            }
            --left;
            /* Skip ahead on sparse lists to keep this fast. */
            if (need && left > 64 * need && (rnd() & 1)) {
                uint64_t jump = rnd() % (left / (8 * need) + 1);
                v += jump;
                left -= jump;
            }
        }
        df = k;
        for (uint32_t j = 0; j < df; ++j)
            w[j] = rnd() % 50 == 0 ? (uint32_t)(rnd() % 100000) : 1 + rnd() % 7;
        t->lists[i] = l;
        t->wdfs[i] = w;
        t->df[i] = df;
        if (df == 0) continue;
        CHECK(xg_list_encode(l, w, df, &lp, &sink, &t->terms[i], &t->lr[i]) ==
                  XG_OK, "encode: %s", xg_last_error());
    }
    if (with_docs) {
        t->docids = malloc(n_docs * sizeof *t->docids);
        t->doclens = malloc(n_docs * sizeof *t->doclens);
        t->kd = malloc(n_docs * sizeof *t->kd);
        for (uint32_t d = 0; d < n_docs; ++d) {
            t->docids[d] = 2 * d + 1; /* sparse docids, two shards */
            t->doclens[d] = 1 + rnd() % 2000;
            t->kd[d] = 0.5 + (double)(rnd() % 1000) / 997.0;
        }
    }
    struct xg_dindex *h = &t->h, *d = &t->d;
    h->postings = t->post.data;
    h->skip = (const void *)t->skip.data;
    h->terms = t->terms;
    h->terms_lr = t->lr;
    h->bloom = (const void *)t->bloom.data;
    h->hashseg = (const void *)t->hashseg.data;
    h->docids = t->docids;
    h->doclens = t->doclens;
    h->kd = t->kd;
    h->n_docs = n_docs;
    h->n_shards = 2;
    h->bloom_hashes = 3;
    set_list_off(t);
    *d = *h;
    d->list_off = dup_to_device(t, 9, t->list_off, n_terms * 8, 0);
    d->postings = dup_to_device(t, 0, t->post.data, t->post.len, 8192);
    d->skip = dup_to_device(t, 1, t->skip.data, t->skip.len, 0);
    d->terms = dup_to_device(t, 2, t->terms, n_terms * sizeof *t->terms, 0);
    d->terms_lr = dup_to_device(t, 3, t->lr, n_terms * sizeof *t->lr, 0);
    d->bloom = dup_to_device(t, 4, t->bloom.data, t->bloom.len, 0);
    d->hashseg = dup_to_device(t, 5, t->hashseg.data, t->hashseg.len, 0);
    if (with_docs) {
        d->docids = dup_to_device(t, 6, t->docids, n_docs * 4, 0);
        d->doclens = dup_to_device(t, 7, t->doclens, n_docs * 4, 0);
        d->kd = dup_to_device(t, 8, t->kd, n_docs * 8, 0);
    }
    CHECK(d->postings && d->skip && d->terms, "device upload failed");
    return 0;
}

static inline void release(struct tindex *t)
{
    for (int i = 0; i < 10; ++i) cudaFree(t->dmem[i]);
    free(t->list_off);
    for (uint32_t i = 0; i < t->n_terms; ++i) {
        free(t->lists[i]);
        free(t->wdfs[i]);
    }
    free(t->lists); free(t->wdfs); free(t->df);
    free(t->terms); free(t->lr);
    free(t->docids); free(t->doclens); free(t->kd);
    xg_buf_free(&t->post); xg_buf_free(&t->skip);
    xg_buf_free(&t->bloom); xg_buf_free(&t->hashseg);
}

static inline void *to_dev(const void *p, size_t n)
{
    void *d = NULL;
    if (cudaMalloc(&d, n + 8) != cudaSuccess) return NULL;
    cudaMemcpy(d, p, n, cudaMemcpyHostToDevice);
    return d;
}

/* Lists of one batch over every term (decoded = prefix of df). */
static inline struct xg_dlist *all_lists(const struct tindex *t, uint64_t *total,
                                  uint64_t *blocks)
{
    struct xg_dlist *l = calloc(t->n_terms, sizeof *l);
    uint64_t dec = 0, blk = 0;
    for (uint32_t i = 0; i < t->n_terms; ++i) {
        l[i].term = i;
        l[i].df = t->df[i];
        l[i].n_blocks = (t->df[i] + 127) / 128;
        l[i].block_start = blk;
        l[i].decoded = dec;
        blk += l[i].n_blocks;
        dec += t->df[i];
    }
    *total = dec;
    *blocks = blk;
    return l;
}


static inline int cmp_u32(const void *x, const void *y)
{
    const uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

static inline int cmp_cand(const void *x, const void *y)
{
    const struct xg_dcand *a = x, *b = y;
    return a->doc < b->doc ? -1 : a->doc > b->doc;
}

/* An AND batch of two-term queries (pairs of term ids), the way batch.c
 * lays it out: lists back to back, the shorter list of each pair probes
 * the other with `method` (XG_MEMBER_AUTO: xg_member_choose), MERGE lists
 * get positions.  Host descriptors, their device copies, and buffers. */
struct and_case {
    uint32_t nq, n_ml;
    struct xg_dquery *q;
    struct xg_dlist *l;
    uint32_t *leaf_list, *iq, *mlist;
    double *leaf_tw;
    struct xg_plan_op *plan;
    uint64_t *iprefix, *mprefix;
    uint64_t dec, blocks, icand, mpos_total;
    struct xg_merge_args dm;      /* device side */
    struct xg_intersect_args di;
    uint32_t *dd, *dw;
    struct xg_dfilter *filters;   /* the twin's position filters, or NULL */
    uint32_t *ifail;              /* the twin's flags (with filters) */
};

static inline int and_case_build(struct and_case *c, const struct tindex *t,
                          const uint32_t (*pairs)[2], uint32_t nq,
                          uint32_t method)
{
    memset(c, 0, sizeof *c);
    c->nq = nq;
    c->q = calloc(nq, sizeof *c->q);
    c->l = calloc(2 * nq, sizeof *c->l);
    c->leaf_list = calloc(2 * nq, sizeof *c->leaf_list);
    c->leaf_tw = calloc(2 * nq, sizeof *c->leaf_tw);
    c->iq = calloc(nq, sizeof *c->iq);
    c->mlist = calloc(nq + 1, sizeof *c->mlist);
    c->plan = calloc(6 * nq, sizeof *c->plan);
    c->iprefix = calloc(nq + 1, sizeof *c->iprefix);
    c->mprefix = calloc(nq + 1, sizeof *c->mprefix);
    for (uint32_t i = 0; i < nq; ++i) {
        struct xg_dquery *q = &c->q[i];
        q->path = XG_DPATH_INTERSECT;
        q->k = 10;
        q->n_lists = q->n_leaves = 2;
        q->list_first = q->leaf_first = 2 * i;
        q->plan_first = 6 * i;
        q->plan_stride = q->plan_len = 3;
        q->shortest = t->df[pairs[i][0]] <= t->df[pairs[i][1]] ? 0 : 1;
        q->icand_first = c->icand;
        const uint32_t sdf = t->df[pairs[i][q->shortest]];
        for (uint32_t j = 0; j < 2; ++j) {
            struct xg_dlist *x = &c->l[2 * i + j];
            x->query = i;
            x->term = pairs[i][j];
            x->df = t->df[x->term];
            x->n_blocks = (x->df + 127) / 128;
            x->block_start = c->blocks;
            x->decoded = c->dec;
            x->mpos = UINT64_MAX;
            c->blocks += x->n_blocks;
            c->dec += x->df;
            c->leaf_list[2 * i + j] = j;
            c->leaf_tw[2 * i + j] = 1.0 + 0.5 * j;
            if (j == q->shortest) continue;
            x->method = method == XG_MEMBER_AUTO
                            ? xg_member_choose(&t->terms[x->term],
                                               &t->lr[x->term], t->n_docs, sdf)
                            : method;
            if ((x->method & XG_MEMBER_KIND) == XG_MEMBER_MERGE) {
                x->mpos = c->mpos_total;
                c->mpos_total += sdf;
                c->mlist[c->n_ml] = 2 * i + j;
                c->mprefix[c->n_ml + 1] =
                    c->mprefix[c->n_ml] + xg_merge_tiles(sdf, x->df);
                ++c->n_ml;
            }
        }
        for (uint32_t s = 0; s < 2; ++s) {
            c->plan[6 * i + 3 * s] = (struct xg_plan_op){XG_PLAN_LEAF, (uint16_t)s};
            c->plan[6 * i + 3 * s + 1] =
                (struct xg_plan_op){XG_PLAN_LEAF, (uint16_t)(1 - s)};
            c->plan[6 * i + 3 * s + 2] = (struct xg_plan_op){XG_PLAN_AND, 2};
        }
        c->icand += sdf;
        c->iq[i] = i;
        c->iprefix[i + 1] = c->iprefix[i] + sdf;
    }
    /* Device copies and buffers (docs poisoned: a block the selection
     * missed would be read as garbage and change the result). */
    struct xg_merge_args *m = &c->dm;
    struct xg_intersect_args *a = &c->di;
    a->queries = m->queries = to_dev(c->q, nq * sizeof *c->q);
    a->lists = m->lists = to_dev(c->l, 2 * nq * sizeof *c->l);
    a->iq = m->iq = to_dev(c->iq, nq * sizeof *c->iq);
    a->iprefix = m->iprefix = to_dev(c->iprefix, (nq + 1) * sizeof *c->iprefix);
    a->n_iq = m->n_iq = nq;
    m->n_ml = c->n_ml;
    m->mlist = to_dev(c->mlist, (nq + 1) * sizeof *c->mlist);
    m->mprefix = to_dev(c->mprefix, (nq + 1) * sizeof *c->mprefix);
    a->leaf_list = to_dev(c->leaf_list, 2 * nq * sizeof *c->leaf_list);
    a->leaf_tw = to_dev(c->leaf_tw, 2 * nq * sizeof *c->leaf_tw);
    a->plan = to_dev(c->plan, 6 * nq * sizeof *c->plan);
    CUDA(cudaMalloc((void **)&c->dd, c->dec * 4 + 8));
    CUDA(cudaMalloc((void **)&c->dw, c->dec * 4 + 8));
    CUDA(cudaMemset(c->dd, 0xAB, c->dec * 4 + 8));
    CUDA(cudaMalloc((void **)&m->bsel, c->blocks + 8));
    CUDA(cudaMalloc((void **)&m->mpos, c->mpos_total * 4 + 8));
    CUDA(cudaMalloc((void **)&a->icount, nq * 4 + 8));
    CUDA(cudaMalloc((void **)&a->icand, (c->icand + 1) * sizeof *a->icand));
    a->docs = m->docs = c->dd;
    a->wdfs = c->dw;
    a->mpos = m->mpos;
    return 0;
}

/* The device's AND sequence, as engine_cuda.c runs it. */
static inline int and_case_launch(const struct tindex *t, struct and_case *c)
{
    CUDA(cudaMemsetAsync(c->dm.bsel, 0, c->blocks, 0));
    CUDA(cudaMemsetAsync(c->di.icount, 0, c->nq * 4, 0));
    CUDA(xg_decode_lists_gpu(&t->d, c->dm.lists, 0, 2 * c->nq, 0, c->blocks,
                             NULL, c->dd, c->dw, 0));
    CUDA(xg_block_select_gpu(&t->d, &c->dm, c->iprefix[c->nq], 0));
    CUDA(xg_decode_lists_gpu(&t->d, c->dm.lists, 0, 2 * c->nq, 0, c->blocks,
                             c->dm.bsel, c->dd, c->dw, 0));
    CUDA(xg_mergepath_gpu(&c->dm, c->mprefix[c->n_ml], 0));
    CUDA(xg_intersect_gpu(&t->d, &c->di, c->iprefix[c->nq], 0));
    return 0;
}

/* The twins' AND sequence: matches per query into count/cand, and the
 * block marks and merge positions for comparison. */
static inline int and_case_ref(const struct tindex *t, const struct and_case *c,
                        uint32_t *count, struct xg_dcand *cand,
                        uint8_t *bsel, uint32_t *mpos)
{
    uint32_t *docs = calloc(c->dec + 1, 4), *wdfs = calloc(c->dec + 1, 4);
    struct xg_merge_args m = {c->q, c->l, c->iq, c->iprefix, c->nq, c->n_ml,
                              c->mlist, c->mprefix, docs, bsel, mpos};
    struct xg_bm25_query bq;
    memset(&bq, 0, sizeof bq);
    struct xg_intersect_args a = {c->q, c->l, c->iq, c->iprefix, c->nq, 0,
                                  docs, wdfs, mpos, c->leaf_list, c->leaf_tw,
                                  c->plan, bq, count, cand, c->filters,
                                  c->ifail};
    if (c->ifail) memset(c->ifail, 0, c->nq * sizeof *c->ifail);
    memset(bsel, 0, c->blocks + 1);
    memset(count, 0, c->nq * sizeof *count);
    int rc = xg_decode_lists_ref(&t->h, c->l, 0, 2 * c->nq, NULL, docs, wdfs);
    if (!rc) rc = xg_block_select_ref(&t->h, &m);
    if (!rc) rc = xg_decode_lists_ref(&t->h, c->l, 0, 2 * c->nq, bsel, docs,
                                      wdfs);
    if (!rc) rc = xg_mergepath_ref(&m);
    if (!rc) rc = xg_intersect_ref(&t->h, &a);
    free(docs);
    free(wdfs);
    CHECK(rc == XG_OK, "twin AND sequence: %s", xg_last_error());
    return 0;
}

static inline void and_case_free(struct and_case *c)
{
    cudaFree((void *)c->di.queries); cudaFree((void *)c->di.lists);
    cudaFree((void *)c->di.iq); cudaFree((void *)c->di.iprefix);
    cudaFree((void *)c->dm.mlist); cudaFree((void *)c->dm.mprefix);
    cudaFree((void *)c->di.leaf_list); cudaFree((void *)c->di.leaf_tw);
    cudaFree((void *)c->di.plan); cudaFree(c->dd); cudaFree(c->dw);
    cudaFree(c->dm.bsel); cudaFree(c->dm.mpos);
    cudaFree(c->di.icount); cudaFree(c->di.icand);
    free(c->q); free(c->l); free(c->leaf_list); free(c->leaf_tw);
    free(c->iq); free(c->mlist); free(c->plan); free(c->iprefix);
    free(c->mprefix);
}

static inline const char *member_name(uint32_t m)
{
    static const char *kinds[] = {"binary", "lr", "hashseg", "merge", "block",
                                  "?", "?", "auto"};
    static char buf[32];
    snprintf(buf, sizeof buf, "%s%s", kinds[m & XG_MEMBER_KIND],
             m & XG_MEMBER_BLOOM ? "+bloom" : "");
    return buf;
}

/* Random positions for every posting of t's lists, laid out as the
 * POSITIONS section (positions.h): 0 to 4 positions in [0, 24) per
 * posting, so that phrases and NEARs hold on some documents, and on
 * every seventh posting of list `crowded` 40 of them, past what the
 * device reads (its queries are flagged for the CPU matcher). */
static inline void add_positions(struct tindex *t, uint32_t crowded,
                                 uint64_t **offsets, struct xg_buf *data)
{
    const uint64_t n_skip = t->skip.len / sizeof(struct xg_fmt_skip);
    uint64_t *off = calloc(n_skip + 1, sizeof *off);
    memset(data, 0, sizeof *data);
    for (uint32_t i = 0; i < t->n_terms; ++i) {
        for (uint32_t p = 0; p < t->df[i]; ++p) {
            if (p % XG_FMT_BLOCK == 0)
                off[t->terms[i].skip_first + p / XG_FMT_BLOCK] = data->len;
            const uint32_t n = i == crowded && p % 7 == 0 ? 40
                                                          : (uint32_t)(rnd() % 5);
            uint8_t b[5 * 41];
            size_t len = 0;
            uint32_t at = (uint32_t)(rnd() % 3), prev = 0;
            for (uint32_t k = 0; k <= n; ++k) {
                /* the count, then the first position and the gaps */
                uint32_t v = k == 0 ? n : k == 1 ? at : at - prev;
                do {
                    b[len++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
                    v >>= 7;
                } while (v);
                if (k >= 1) {
                    prev = at;
                    at += 1 + (uint32_t)(rnd() % (i == crowded ? 2 : 6));
                }
            }
            xg_buf_append(data, b, len);
        }
    }
    off[n_skip] = data->len;
    *offsets = off;
}

/* The same queries with a position filter each over their two terms
 * (phrase of window 2 and 4, NEAR of window 3, in turn), on random
 * positions (add_positions; list 5 crowded): the kernel's matches and
 * its flags for the CPU matcher against the twin's. */
static inline int filtered_pass(struct tindex *t, struct and_case *c,
                                uint32_t method)
{
    uint64_t *off;
    struct xg_buf data;
    add_positions(t, 5, &off, &data);
    const uint64_t n_skip = t->skip.len / sizeof(struct xg_fmt_skip);
    t->h.pos_offsets = off;
    t->h.pos_data = data.data;
    t->d.pos_offsets = to_dev(off, (n_skip + 1) * 8);
    t->d.pos_data = to_dev(data.data, data.len + 1);
    const uint32_t nq = c->nq;
    static const struct xg_dfilter kinds[3] = {
        {XG_QF_PHRASE, 2, 0, 2}, {XG_QF_PHRASE, 4, 0, 2}, {XG_QF_NEAR, 3, 0, 2}};
    c->filters = calloc(nq, sizeof *c->filters);
    c->ifail = calloc(nq, sizeof *c->ifail);
    struct xg_plan_op *plan = calloc(8 * nq, sizeof *plan);
    for (uint32_t i = 0; i < nq; ++i) {
        c->filters[i] = kinds[i % 3];
        c->q[i].filter_first = i;
        c->q[i].n_filters = 1;
        c->q[i].plan_first = 8 * i;
        c->q[i].plan_stride = c->q[i].plan_len = 4;
        for (uint32_t s = 0; s < 2; ++s) {
            memcpy(plan + 8 * i + 4 * s, c->plan + 6 * i + 3 * s, 3 * sizeof *plan);
            plan[8 * i + 4 * s + 3] = (struct xg_plan_op){XG_PLAN_FILTER, 0};
        }
    }
    free(c->plan);
    c->plan = plan;
    cudaFree((void *)c->di.queries);
    cudaFree((void *)c->di.plan);
    c->di.queries = c->dm.queries = to_dev(c->q, nq * sizeof *c->q);
    c->di.plan = to_dev(plan, 8 * nq * sizeof *plan);
    c->di.filters = to_dev(c->filters, nq * sizeof *c->filters);
    uint32_t *difail;
    CUDA(cudaMalloc((void **)&difail, nq * 4 + 8));
    CUDA(cudaMemset(difail, 0, nq * 4 + 8));
    c->di.ifail = difail;
    uint32_t hcount[8], gcount[8], gfail[8];
    struct xg_dcand *hc = calloc(c->icand + 1, sizeof *hc),
                    *gc = calloc(c->icand + 1, sizeof *gc);
    uint8_t *sel = calloc(c->blocks + 1, 1);
    uint32_t *pos = calloc(c->mpos_total + 1, 4);
    if (and_case_ref(t, c, hcount, hc, sel, pos)) return 1;
    if (and_case_launch(t, c)) return 1;
    CUDA(cudaDeviceSynchronize());
    CUDA(cudaMemcpy(gcount, c->di.icount, nq * 4, cudaMemcpyDeviceToHost));
    CUDA(cudaMemcpy(gfail, difail, nq * 4, cudaMemcpyDeviceToHost));
    CUDA(cudaMemcpy(gc, c->di.icand, c->icand * sizeof *gc,
                    cudaMemcpyDeviceToHost));
    uint64_t total = 0, flagged = 0;
    for (uint32_t i = 0; i < nq; ++i) {
        CHECK(gcount[i] == hcount[i] && !gfail[i] == !c->ifail[i],
              "%s filtered pair %u: gpu %u matches (flag %u), twin %u (flag "
              "%u)", member_name(method), i, gcount[i], gfail[i], hcount[i],
              c->ifail[i]);
        qsort(gc + c->q[i].icand_first, gcount[i], sizeof *gc, cmp_cand);
        qsort(hc + c->q[i].icand_first, hcount[i], sizeof *hc, cmp_cand);
        for (uint32_t j = 0; j < gcount[i]; ++j) {
            const struct xg_dcand *g = &gc[c->q[i].icand_first + j],
                                  *h = &hc[c->q[i].icand_first + j];
            CHECK(g->doc == h->doc && !memcmp(&g->weight, &h->weight, 8),
                  "%s filtered pair %u: match %u differs", member_name(method),
                  i, j);
        }
        total += gcount[i];
        flagged += c->ifail[i] != 0;
    }
    printf("ok intersect (%s) with position filters: %llu matches equal, "
           "%llu of %u queries flagged for the CPU matcher by both\n",
           member_name(method), (unsigned long long)total,
           (unsigned long long)flagged, nq);
    cudaFree(difail);
    cudaFree((void *)c->di.filters);
    cudaFree((void *)t->d.pos_offsets);
    cudaFree((void *)t->d.pos_data);
    t->h.pos_offsets = t->d.pos_offsets = NULL;
    t->h.pos_data = t->d.pos_data = NULL;
    free(c->filters);
    free(c->ifail);
    c->filters = NULL;
    c->ifail = NULL;
    free(off);
    xg_buf_free(&data);
    free(hc); free(gc); free(sel); free(pos);
    return 0;
}

/* AND of every pair shape, for one membership method. */
static inline int test_intersect(uint32_t method)
{
    /* Lists: 0 tiny, 1 huge, 2 = copy of 0 (identical), 3 disjoint from 0,
     * 4 single element, 5 medium. */
    uint32_t n_docs = 300000;
    uint32_t dfs[6] = {500, 250000, 500, 400, 1, 20000};
    struct tindex t;
    if (build(&t, 6, n_docs, 0, dfs, 1)) return 1;
    /* Make list 2 identical to list 0 and list 3 disjoint from it by
     * re-encoding them into fresh sections. */
    xg_buf_free(&t.post); xg_buf_free(&t.skip);
    xg_buf_free(&t.bloom); xg_buf_free(&t.hashseg);
    for (int i = 0; i < 10; ++i) { cudaFree(t.dmem[i]); t.dmem[i] = NULL; }
    t.lists[2] = realloc(t.lists[2], (t.df[0] + 1) * 4);
    t.wdfs[2] = realloc(t.wdfs[2], (t.df[0] + 1) * 4);
    memcpy(t.lists[2], t.lists[0], t.df[0] * 4);
    memcpy(t.wdfs[2], t.wdfs[0], t.df[0] * 4);
    t.df[2] = t.df[0];
    uint32_t k = 0;
    for (uint32_t v = 0; v < n_docs && k < t.df[3]; v += 3) {
        uint32_t *f = t.lists[0];
        uint32_t lo = 0, hi = t.df[0];
        while (lo < hi) { uint32_t m = (lo + hi) / 2; if (f[m] < v) lo = m + 1; else hi = m; }
        if (lo < t.df[0] && f[lo] == v) continue;
        t.lists[3][k++] = v;
    }
    t.df[3] = k;
    struct xg_list_sink sink = {&t.post, &t.skip, &t.bloom, &t.hashseg};
    struct xg_list_params lp = {n_docs, 8, 3, 32, NULL, 0, NULL};
    for (uint32_t i = 0; i < 6; ++i)
        CHECK(xg_list_encode(t.lists[i], t.wdfs[i], t.df[i], &lp, &sink,
                             &t.terms[i], &t.lr[i]) == XG_OK, "encode");
    t.h.postings = t.post.data; t.h.skip = (const void *)t.skip.data;
    t.h.bloom = (const void *)t.bloom.data;
    t.h.hashseg = (const void *)t.hashseg.data;
    set_list_off(&t);
    t.d = t.h;
    t.d.list_off = dup_to_device(&t, 9, t.list_off, 6 * 8, 0);
    t.d.postings = dup_to_device(&t, 0, t.post.data, t.post.len, 8192);
    t.d.skip = dup_to_device(&t, 1, t.skip.data, t.skip.len, 0);
    t.d.terms = dup_to_device(&t, 2, t.terms, 6 * sizeof *t.terms, 0);
    t.d.terms_lr = dup_to_device(&t, 3, t.lr, 6 * sizeof *t.lr, 0);
    t.d.bloom = dup_to_device(&t, 4, t.bloom.data, t.bloom.len, 0);
    t.d.hashseg = dup_to_device(&t, 5, t.hashseg.data, t.hashseg.len, 0);
    t.d.docids = dup_to_device(&t, 6, t.docids, n_docs * 4, 0);
    t.d.doclens = dup_to_device(&t, 7, t.doclens, n_docs * 4, 0);
    t.d.kd = dup_to_device(&t, 8, t.kd, n_docs * 8, 0);

    /* Queries: pairs (a AND b). */
    static const uint32_t pairs[][2] = {{0, 1}, {0, 2}, {0, 3}, {4, 1},
                                        {4, 0}, {5, 1}, {0, 5}, {3, 1}};
    const uint32_t nq = sizeof pairs / sizeof pairs[0];
    struct and_case c;
    if (and_case_build(&c, &t, pairs, nq, method)) return 1;
    uint32_t hcount[8];
    struct xg_dcand *hc = calloc(c.icand + 1, sizeof *hc);
    uint8_t *hsel = calloc(c.blocks + 1, 1), *gsel = calloc(c.blocks + 1, 1);
    uint32_t *hpos = calloc(c.mpos_total + 1, 4),
             *gpos = calloc(c.mpos_total + 1, 4);
    if (and_case_ref(&t, &c, hcount, hc, hsel, hpos)) return 1;
    /* The twin against a plain merge of the two input lists. */
    for (uint32_t i = 0; i < nq; ++i) {
        const uint32_t *a = t.lists[pairs[i][0]], *b = t.lists[pairs[i][1]];
        uint32_t na = t.df[pairs[i][0]], nb = t.df[pairs[i][1]], x = 0, y = 0,
                 both = 0;
        while (x < na && y < nb) {
            if (a[x] < b[y]) ++x;
            else if (a[x] > b[y]) ++y;
            else { ++both; ++x; ++y; }
        }
        CHECK(hcount[i] == both, "twin %s: pair %u: %u matches, merge says %u",
              member_name(method), i, hcount[i], both);
    }
    if (and_case_launch(&t, &c)) return 1;
    CUDA(cudaDeviceSynchronize());
    uint32_t gcount[8];
    struct xg_dcand *gc = calloc(c.icand + 1, sizeof *gc);
    CUDA(cudaMemcpy(gcount, c.di.icount, sizeof gcount, cudaMemcpyDeviceToHost));
    CUDA(cudaMemcpy(gc, c.di.icand, c.icand * sizeof *gc, cudaMemcpyDeviceToHost));
    CUDA(cudaMemcpy(gsel, c.dm.bsel, c.blocks, cudaMemcpyDeviceToHost));
    CUDA(cudaMemcpy(gpos, c.dm.mpos, c.mpos_total * 4, cudaMemcpyDeviceToHost));
    uint64_t selected = 0;
    for (uint64_t b = 0; b < c.blocks; ++b) {
        CHECK(gsel[b] == hsel[b], "%s: block %llu: selected %u, twin %u",
              member_name(method), (unsigned long long)b, gsel[b], hsel[b]);
        selected += hsel[b];
    }
    CHECK(!memcmp(gpos, hpos, c.mpos_total * 4), "%s: merge positions differ",
          member_name(method));
    uint64_t total = 0;
    for (uint32_t i = 0; i < nq; ++i) {
        CHECK(gcount[i] == hcount[i], "%s pair %u: gpu %u twin %u matches",
              member_name(method), i, gcount[i], hcount[i]);
        qsort(gc + c.q[i].icand_first, gcount[i], sizeof *gc, cmp_cand);
        qsort(hc + c.q[i].icand_first, hcount[i], sizeof *hc, cmp_cand);
        for (uint32_t j = 0; j < gcount[i]; ++j) {
            const struct xg_dcand *g = &gc[c.q[i].icand_first + j],
                                  *h = &hc[c.q[i].icand_first + j];
            CHECK(g->doc == h->doc && !memcmp(&g->weight, &h->weight, 8),
                  "%s pair %u: match %u differs", member_name(method), i, j);
        }
        total += gcount[i];
    }
    printf("ok intersect (%s): %u queries, %llu matches equal; %llu blocks "
           "selected, %llu merge positions equal\n", member_name(method), nq,
           (unsigned long long)total, (unsigned long long)selected,
           (unsigned long long)c.mpos_total);
    if (filtered_pass(&t, &c, method)) return 1;
    and_case_free(&c);
    free(hc); free(gc); free(hsel); free(gsel); free(hpos); free(gpos);
    release(&t);
    ++passed;
    return 0;
}


/* OR: accumulate, select (with ties), finish; kernels against twins.
 * Each stage's input is its twin's output, so any stage runs alone:
 * `stages` picks whose kernel is launched and compared (OR_*). */
enum { OR_ACCUMULATE = 1, OR_IMPACTS = 2, OR_SELECT = 4, OR_FINISH = 8 };
static inline int test_or_pipeline(unsigned stages)
{
    uint32_t n_docs = 200000, nt = 12;
    uint32_t dfs[12];
    for (uint32_t i = 0; i < nt; ++i) dfs[i] = 1 + (uint32_t)(rnd() % 60000);
    dfs[0] = 150000;
    struct tindex t;
    if (build(&t, nt, n_docs, 0, dfs, 1)) return 1;
    /* Ties: many documents with the same kd and wdf give equal weights. */
    for (uint32_t d = 0; d < n_docs; d += 2) t.kd[d] = 1.25;
    cudaMemcpy((void *)t.d.kd, t.kd, n_docs * 8, cudaMemcpyHostToDevice);
    const uint32_t nq = 4;
    struct xg_dquery q[4];
    struct xg_dlist l[12];
    uint32_t leaf_list[12];
    double leaf_tw[12];
    struct xg_plan_op plan[4 * 2 * 5];
    memset(q, 0, sizeof q);
    memset(l, 0, sizeof l);
    uint64_t blk = 0, cand = 0;
    uint32_t li = 0;
    for (uint32_t i = 0; i < nq; ++i) {
        q[i].path = XG_DPATH_DENSE;
        q[i].k = i == 3 ? 1000 : 10;
        q[i].n_lists = 3;
        q[i].list_first = li;
        q[i].n_leaves = 3;
        q[i].leaf_first = li;
        q[i].slot = i;
        q[i].plan_first = 10 * i;
        q[i].plan_stride = 5;
        q[i].plan_len = 5;
        q[i].cand_first = cand;
        q[i].wdf_first = cand * 3;
        q[i].cand_cap = 4096;
        cand += 4096;
        for (uint32_t j = 0; j < 3; ++j, ++li) {
            l[li].query = i;
            l[li].term = (i * 3 + j) % nt;
            l[li].df = t.df[l[li].term];
            l[li].n_blocks = (l[li].df + 127) / 128;
            l[li].block_start = blk;
            blk += l[li].n_blocks;
            l[li].decoded = UINT64_MAX;
            l[li].weight = 0.75 + 0.25 * j;
            l[li].group_mask = 1;
            leaf_list[li] = j;
            leaf_tw[li] = l[li].weight;
            q[i].match_bound += l[li].df;   /* OR: the dfs summed */
        }
        for (uint32_t s = 0; s < 2; ++s) { /* ((l0 l1 OR2) l2 OR2), two shapes */
            struct xg_plan_op *p = plan + 10 * i + 5 * s;
            p[0] = (struct xg_plan_op){XG_PLAN_LEAF, (uint16_t)(s ? 2 : 0)};
            p[1] = (struct xg_plan_op){XG_PLAN_LEAF, 1};
            p[2] = (struct xg_plan_op){XG_PLAN_OR2, 0};
            p[3] = (struct xg_plan_op){XG_PLAN_LEAF, (uint16_t)(s ? 0 : 2)};
            p[4] = (struct xg_plan_op){XG_PLAN_OR2, 0};
        }
    }
    uint64_t cells = (uint64_t)nq * n_docs;
    double *hacc = calloc(cells, 8), *gacc = malloc(cells * 8);
    uint32_t *hmask = calloc(cells, 4), *gmask = malloc(cells * 4);
    CHECK(xg_accumulate_ref(&t.h, l, q, 0, li, hacc, hmask, NULL, NULL) ==
              XG_OK, "twin acc");
    struct xg_dquery *dq = to_dev(q, sizeof q);
    struct xg_dlist *dl = to_dev(l, sizeof l);
    double *dacc;
    uint32_t *dmask;
    CUDA(cudaMalloc((void **)&dacc, cells * 8));
    CUDA(cudaMalloc((void **)&dmask, cells * 4));
    CUDA(cudaMemset(dacc, 0, cells * 8));
    CUDA(cudaMemset(dmask, 0, cells * 4));
    if (stages & OR_ACCUMULATE) {
    CUDA(xg_accumulate_gpu(&t.d, dl, dq, 0, li, 0, blk, dacc, dmask, NULL, NULL,
                           0));
    CUDA(cudaDeviceSynchronize());
    CUDA(cudaMemcpy(gacc, dacc, cells * 8, cudaMemcpyDeviceToHost));
    CUDA(cudaMemcpy(gmask, dmask, cells * 4, cudaMemcpyDeviceToHost));
    double worst = 0;
    for (uint64_t c = 0; c < cells; ++c) {
        CHECK(gmask[c] == hmask[c], "accumulate: mask %llu", (unsigned long long)c);
        double diff = fabs(gacc[c] - hacc[c]);
        double rel = hacc[c] ? diff / hacc[c] : diff;
        if (rel > worst) worst = rel;
    }
    CHECK(worst < 1e-14, "accumulate: relative difference %g", worst);
    printf("ok accumulate: %llu cells, masks equal, largest relative "
           "difference %.2g (atomics add in any order)\n",
           (unsigned long long)cells, worst);
    ++passed;
    }

    /* Impacts: the same lists' codes for the twin's K_d, each query as an
     * OR from impacts; the GPU's integer rows equal the twin's exactly,
     * and each lies in [exact, exact + margin] units (impact.h). */
    if (stages & OR_IMPACTS) {
        struct xg_buf codes = {0};
        struct xg_fmt_impact *im = calloc(nt, sizeof *im);
        for (uint32_t k = 0; k < nt; ++k)
            if (t.df[k])
                CHECK(xg_impact_list(t.lists[k], t.wdfs[k], t.df[k], t.kd,
                                     &codes, &im[k]) == XG_OK, "impacts");
        t.h.impacts = im;
        t.h.impact_codes = codes.data;
        t.d.impacts = to_dev(im, nt * sizeof *im);
        t.d.impact_codes = to_dev(codes.data, codes.len);
        struct xg_dquery iq[4];
        struct xg_dlist il[12];
        double unit[4];
        memcpy(iq, q, sizeof iq);
        memcpy(il, l, sizeof il);
        uint64_t touch_total = 0;
        for (uint32_t i = 0; i < nq; ++i) {
            double w[3], sc[3];
            uint32_t m[3];
            for (uint32_t j = 0; j < 3; ++j) {
                w[j] = il[3 * i + j].weight;
                sc[j] = im[il[3 * i + j].term].scale;
            }
            xg_impact_units(w, sc, 3, m, &iq[i].margin, &unit[i]);
            for (uint32_t j = 0; j < 3; ++j) il[3 * i + j].imp_mult = m[j];
            iq[i].impact_row = 1;
            /* Queries 0 and 3 list their touched documents (sparse). */
            if (i == 0 || i == 3) {
                iq[i].sparse = 1;
                iq[i].touch_first = touch_total;
                touch_total += iq[i].match_bound;
            }
        }
        uint32_t *irow = calloc(cells, 4);
        uint32_t *htouch = calloc(touch_total, 4), *gtouch = calloc(touch_total, 4);
        uint32_t htc[4] = {0}, gtc[4];
        CHECK(xg_accumulate_ref(&t.h, il, iq, 0, li, NULL, irow, htouch,
                                htc) == XG_OK,
              "twin impacts");
        struct xg_dquery *diq = to_dev(iq, sizeof iq);
        struct xg_dlist *dil = to_dev(il, sizeof il);
        uint32_t *dtouch, *dtc;
        CUDA(cudaMalloc((void **)&dtouch, touch_total * 4));
        CUDA(cudaMalloc((void **)&dtc, sizeof gtc));
        CUDA(cudaMemset(dtc, 0, sizeof gtc));
        CUDA(cudaMemset(dmask, 0, cells * 4));
        CUDA(xg_accumulate_gpu(&t.d, dil, diq, 0, li, 0, blk, NULL, dmask,
                               dtouch, dtc, 0));
        CUDA(cudaDeviceSynchronize());
        CUDA(cudaMemcpy(gmask, dmask, cells * 4, cudaMemcpyDeviceToHost));
        CUDA(cudaMemcpy(gtouch, dtouch, touch_total * 4,
                        cudaMemcpyDeviceToHost));
        CUDA(cudaMemcpy(gtc, dtc, sizeof gtc, cudaMemcpyDeviceToHost));
        /* A sparse query's touched list: each document with a nonzero
         * cell once, in any order on the GPU, in posting order in the
         * twin. */
        for (uint32_t i = 0; i < nq; ++i) {
            if (!iq[i].sparse) continue;
            uint64_t nz = 0;
            for (uint64_t d = 0; d < n_docs; ++d)
                nz += irow[(uint64_t)i * n_docs + d] != 0;
            CHECK(htc[i] == nz && gtc[i] == nz,
                  "touched q%u: twin %u gpu %u, nonzero cells %llu", i,
                  htc[i], gtc[i], (unsigned long long)nz);
            uint32_t *h = htouch + iq[i].touch_first;
            uint32_t *g = gtouch + iq[i].touch_first;
            qsort(h, nz, 4, cmp_u32);
            qsort(g, nz, 4, cmp_u32);
            for (uint64_t j = 0; j < nz; ++j) {
                CHECK(g[j] == h[j] && (!j || h[j] > h[j - 1]) &&
                      irow[(uint64_t)i * n_docs + h[j]] != 0,
                      "touched q%u: entry %llu: gpu %u twin %u", i,
                      (unsigned long long)j, g[j], h[j]);
            }
        }
        double slack = 0;
        uint64_t matched = 0;
        for (uint32_t i = 0; i < nq; ++i) {
            for (uint64_t d = 0; d < n_docs; ++d) {
                uint64_t c = (uint64_t)i * n_docs + d;
                CHECK(gmask[c] == irow[c], "impacts: row %llu: gpu %u twin %u",
                      (unsigned long long)c, gmask[c], irow[c]);
                CHECK((irow[c] != 0) == (hmask[c] != 0 || hacc[c] != 0),
                      "impacts: cell %llu: match bit", (unsigned long long)c);
                matched += irow[c] != 0;
                double exact = hacc[c] / unit[i];
                double over = irow[c] - exact;
                CHECK(over >= -1e-12 * exact && over <= iq[i].margin,
                      "impacts: cell %llu: row %u, exact %.17g units, margin "
                      "%g", (unsigned long long)c, irow[c], exact,
                      iq[i].margin);
                if (over / iq[i].margin > slack) slack = over / iq[i].margin;
            }
        }
        CHECK(matched > 0, "impacts: nothing matched");
        printf("ok accumulate from impacts: %llu matching cells, integer rows "
               "equal; every row within [exact, exact + margin] units "
               "(largest excess %.2f of the margin); touched lists of "
               "%u and %u documents equal the nonzero cells\n",
               (unsigned long long)matched, slack, gtc[0], gtc[3]);
        /* The selection over the touched lists (the kernel, sparse) and
         * over the whole rows (the twin, the same queries not sparse):
         * the same matches, threshold and candidate set. */
        {
            struct xg_dquery rq[4];
            memcpy(rq, iq, sizeof rq);
            for (uint32_t i = 0; i < nq; ++i) rq[i].sparse = 0;
            struct xg_dcand *hc2 = calloc(cand, sizeof *hc2);
            struct xg_dcand *gc2 = calloc(cand, sizeof *gc2);
            struct xg_dqresult hr2[4], gr2[4];
            struct xg_select_args hs2 = {rq, NULL, irow, n_docs, NULL, NULL,
                                         1e-12, hc2, hr2, NULL, NULL, NULL,
                                         NULL, NULL, NULL};
            CHECK(xg_select_ref(&hs2, nq) == XG_OK, "twin select, rows");
            struct xg_dcand *dc2;
            struct xg_dqresult *dr2;
            struct xg_select_state *dst2;
            uint32_t *dh2;
            CUDA(cudaMalloc((void **)&dc2, cand * sizeof *dc2));
            CUDA(cudaMalloc((void **)&dr2, sizeof gr2));
            CUDA(cudaMalloc((void **)&dst2, nq * sizeof *dst2));
            CUDA(cudaMalloc((void **)&dh2, nq * XG_SELECT_BINS * 4));
            CUDA(cudaMemset(dst2, 0, nq * sizeof *dst2));
            CUDA(cudaMemset(dh2, 0, nq * XG_SELECT_BINS * 4));
            struct xg_select_args gs2 = {diq, NULL, dmask, n_docs, dtc, NULL,
                                         1e-12, dc2, dr2, dst2, dh2, NULL,
                                         dtouch, NULL, NULL};
            CUDA(xg_select_gpu(&gs2, nq, n_docs, 0));
            CUDA(cudaDeviceSynchronize());
            CUDA(cudaMemcpy(gr2, dr2, sizeof gr2, cudaMemcpyDeviceToHost));
            CUDA(cudaMemcpy(gc2, dc2, cand * sizeof *gc2,
                            cudaMemcpyDeviceToHost));
            for (uint32_t i = 0; i < nq; ++i) {
                CHECK(gr2[i].matched == hr2[i].matched &&
                      gr2[i].n_cand == hr2[i].n_cand &&
                      gr2[i].overflow == hr2[i].overflow &&
                      gr2[i].threshold == hr2[i].threshold,
                      "select, touched lists q%u: gpu %llu/%u/%.17g twin "
                      "%llu/%u/%.17g", i, (unsigned long long)gr2[i].matched,
                      gr2[i].n_cand, gr2[i].threshold,
                      (unsigned long long)hr2[i].matched, hr2[i].n_cand,
                      hr2[i].threshold);
                qsort(gc2 + iq[i].cand_first, gr2[i].n_cand, sizeof *gc2,
                      cmp_cand);
                qsort(hc2 + iq[i].cand_first, hr2[i].n_cand, sizeof *hc2,
                      cmp_cand);
                for (uint32_t j = 0; j < gr2[i].n_cand; ++j)
                    CHECK(gc2[iq[i].cand_first + j].doc ==
                              hc2[iq[i].cand_first + j].doc &&
                          gc2[iq[i].cand_first + j].weight ==
                              hc2[iq[i].cand_first + j].weight,
                          "select, touched lists q%u: candidate %u", i, j);
            }
            printf("ok select over touched lists: queries 0 and 3 (%u and "
                   "%u candidates) as the twin's whole rows, bit for bit\n",
                   gr2[0].n_cand, gr2[3].n_cand);
            cudaFree(dc2);
            cudaFree(dr2);
            cudaFree(dst2);
            cudaFree(dh2);
            free(hc2);
            free(gc2);
        }
        cudaFree(dtouch);
        cudaFree(dtc);
        free(htouch);
        free(gtouch);
        /* The selection below reads the exact rows' masks again. */
        CUDA(cudaMemcpy(dmask, hmask, cells * 4, cudaMemcpyHostToDevice));
        t.h.impacts = NULL;
        t.h.impact_codes = NULL;
        cudaFree((void *)t.d.impacts);
        cudaFree((void *)t.d.impact_codes);
        cudaFree(diq);
        cudaFree(dil);
        t.d.impacts = NULL;
        t.d.impact_codes = NULL;
        free(irow);
        free(im);
        xg_buf_free(&codes);
        ++passed;
    }

    /* Selection on the twin's rows (so both see identical input). */
    CUDA(cudaMemcpy(dacc, hacc, cells * 8, cudaMemcpyHostToDevice));
    CUDA(cudaMemcpy(dmask, hmask, cells * 4, cudaMemcpyHostToDevice));
    struct xg_dcand *hc = calloc(cand, sizeof *hc), *gc = calloc(cand, sizeof *gc);
    struct xg_dqresult hr[4], gr[4];
    struct xg_select_args hs = {q, hacc, hmask, n_docs, NULL, NULL, 1e-12, hc, hr,
                                NULL, NULL, NULL, NULL, NULL, NULL};
    CHECK(xg_select_ref(&hs, nq) == XG_OK, "twin select");
    struct xg_dcand *dc;
    struct xg_dqresult *dr;
    CUDA(cudaMalloc((void **)&dc, cand * sizeof *dc));
    CUDA(cudaMalloc((void **)&dr, sizeof gr));
    struct xg_select_state *dst;
    uint32_t *dhist;
    CUDA(cudaMalloc((void **)&dst, nq * sizeof *dst));
    CUDA(cudaMalloc((void **)&dhist, nq * XG_SELECT_BINS * 4));
    CUDA(cudaMemset(dst, 0, nq * sizeof *dst));       /* the kernels keep */
    CUDA(cudaMemset(dhist, 0, nq * XG_SELECT_BINS * 4));        /* them zero after */
    struct xg_select_args gs = {dq, dacc, dmask, n_docs, NULL, NULL, 1e-12, dc, dr,
                                dst, dhist, NULL, NULL, NULL, NULL};
    if (!(stages & OR_SELECT)) {
        /* The finish alone: the twin's candidates, in docid order. */
        memcpy(gr, hr, sizeof gr);
        for (uint32_t i = 0; i < nq; ++i)
            qsort(hc + q[i].cand_first, hr[i].n_cand, sizeof *hc, cmp_cand);
        memcpy(gc, hc, cand * sizeof *gc);
        CUDA(cudaMemcpy(dr, hr, sizeof hr, cudaMemcpyHostToDevice));
    } else {
    CUDA(xg_select_gpu(&gs, nq, n_docs, 0));
    CUDA(cudaDeviceSynchronize());
    CUDA(cudaMemcpy(gr, dr, sizeof gr, cudaMemcpyDeviceToHost));
    CUDA(cudaMemcpy(gc, dc, cand * sizeof *gc, cudaMemcpyDeviceToHost));
    for (uint32_t i = 0; i < nq; ++i) {
        CHECK(gr[i].matched == hr[i].matched && gr[i].n_cand == hr[i].n_cand &&
              gr[i].overflow == hr[i].overflow,
              "select q%u: gpu %llu/%u twin %llu/%u", i,
              (unsigned long long)gr[i].matched, gr[i].n_cand,
              (unsigned long long)hr[i].matched, hr[i].n_cand);
        qsort(gc + q[i].cand_first, gr[i].n_cand, sizeof *gc, cmp_cand);
        qsort(hc + q[i].cand_first, hr[i].n_cand, sizeof *hc, cmp_cand);
        for (uint32_t j = 0; j < gr[i].n_cand; ++j)
            CHECK(gc[q[i].cand_first + j].doc == hc[q[i].cand_first + j].doc,
                  "select q%u: candidate %u differs", i, j);
        /* Every document at or above the k-th weight is a candidate. */
        CHECK(gr[i].n_cand >= (q[i].k < gr[i].matched ? q[i].k : gr[i].matched),
              "select q%u: fewer candidates than k", i);
    }
    printf("ok select: %u queries, same matched counts and candidate sets "
           "(%u, %u, %u, %u candidates)\n", nq, gr[0].n_cand, gr[1].n_cand,
           gr[2].n_cand, gr[3].n_cand);
    ++passed;
    }
    if (!(stages & OR_FINISH)) goto out;

    /* Finish: exact rescoring, bit for bit. */
    struct xg_bm25_query bq;
    memset(&bq, 0, sizeof bq);
    struct xg_finish_args hf = {q, l, hr, leaf_list, leaf_tw, plan, bq, hc,
                                NULL, NULL, NULL, 0, 0, XG_FINISH_BY_COST};
    CHECK(xg_finish_ref(&t.h, &hf, nq) == XG_OK, "twin finish");
    uint32_t *hmask0 = malloc(cells * 4);
    CHECK(hmask0, "out of memory");
    memcpy(hmask0, hmask, cells * 4);
    /* Cells that look marked but are not (an impact bound of 2^31 or
     * more, AND's 32nd group): each names a slot of another document. */
    for (uint64_t c = 0; c < cells; c += 3)
        hmask[c] |= 0x80000000u | (uint32_t)(c % 97);
    uint32_t *dwdf;
    unsigned long long *din;
    CUDA(cudaMalloc((void **)&dwdf, cand * 3 * sizeof *dwdf));
    CUDA(cudaMalloc((void **)&din, cand * sizeof *din));
    struct xg_dcand *gc0 = malloc(cand * sizeof *gc0);
    CHECK(gc0, "out of memory");
    memcpy(gc0, gc, cand * sizeof *gc0);
    struct xg_finish_args gf = {dq, dl, dr, to_dev(leaf_list, sizeof leaf_list),
                                to_dev(leaf_tw, sizeof leaf_tw),
                                to_dev(plan, sizeof plan), bq, dc, dmask, dwdf,
                                din, li, blk, XG_FINISH_BY_COST};
    /* Each way of finding the wdfs: the cost's choice, every query
     * gathered, every query looked up. */
    static const uint32_t ways[] = {XG_FINISH_BY_COST, XG_FINISH_GATHER,
                                    XG_FINISH_LOOKUP};
    static const char *const way_name[] = {"by cost", "gathered",
                                           "looked up"};
    for (unsigned w = 0; w < 3; ++w) {
        gf.wdfs_by = ways[w];
        CUDA(cudaMemcpy(dc, gc0, cand * sizeof *gc0, cudaMemcpyHostToDevice));
        CUDA(cudaMemcpy(dmask, hmask, cells * 4, cudaMemcpyHostToDevice));
        /* Stale entries from an earlier batch must not count. */
        CUDA(cudaMemset(dwdf, 0x5A, cand * 3 * sizeof *dwdf));
        CUDA(cudaMemset(din, 0xFF, cand * sizeof *din));
        CUDA(xg_finish_gpu(&t.d, &gf, nq, 0, 0));
        CUDA(cudaDeviceSynchronize());
        CUDA(cudaMemcpy(gc, dc, cand * sizeof *gc, cudaMemcpyDeviceToHost));
        uint64_t checked = 0;
        for (uint32_t i = 0; i < nq; ++i)
            for (uint32_t j = 0; j < gr[i].n_cand; ++j, ++checked) {
                const struct xg_dcand *g = &gc[q[i].cand_first + j],
                                      *h = &hc[q[i].cand_first + j];
                CHECK(g->doc == h->doc && g->matched == h->matched &&
                      !memcmp(&g->weight, &h->weight, 8),
                      "finish (%s) q%u cand %u: gpu %.17g twin %.17g",
                      way_name[w], i, j, g->weight, h->weight);
            }
        printf("ok finish, wdfs %s: %llu candidates rescored bit-equal\n",
               way_name[w], (unsigned long long)checked);
        ++passed;
    }
    free(gc0);
    uint64_t checked;
    {
        /* As the engine runs them: keep writes the marks and clears
         * cand_in, and the finish runs on its candidates in keep's order
         * with no mark launch (the selection runs here even where this
         * test left it out above). */
        CUDA(cudaMemcpy(dmask, hmask0, cells * 4, cudaMemcpyHostToDevice));
        CUDA(cudaMemset(dwdf, 0x5A, cand * 3 * sizeof *dwdf));
        CUDA(cudaMemset(din, 0xFF, cand * sizeof *din));
        struct xg_select_args gm = gs;
        gm.marks = dmask;
        gm.cand_in = din;
        CUDA(xg_select_gpu(&gm, nq, n_docs, 0));
        gf.wdfs_by = XG_FINISH_GATHER;  /* the marks are the gather's */
        CUDA(xg_finish_gpu(&t.d, &gf, nq, 1, 0));
        CUDA(cudaDeviceSynchronize());
        struct xg_dqresult mr[4];
        CUDA(cudaMemcpy(mr, dr, sizeof mr, cudaMemcpyDeviceToHost));
        CUDA(cudaMemcpy(gc, dc, cand * sizeof *gc, cudaMemcpyDeviceToHost));
        checked = 0;
        for (uint32_t i = 0; i < nq; ++i) {
            CHECK(mr[i].n_cand == hr[i].n_cand, "keep's marks q%u: %u "
                  "candidates, twin %u", i, mr[i].n_cand, hr[i].n_cand);
            qsort(gc + q[i].cand_first, mr[i].n_cand, sizeof *gc, cmp_cand);
            for (uint32_t j = 0; j < mr[i].n_cand; ++j, ++checked) {
                const struct xg_dcand *g = &gc[q[i].cand_first + j],
                                      *h = &hc[q[i].cand_first + j];
                CHECK(g->doc == h->doc && g->matched == h->matched &&
                      !memcmp(&g->weight, &h->weight, 8),
                      "keep's marks q%u cand %u: gpu %.17g twin %.17g", i, j,
                      g->weight, h->weight);
            }
        }
        printf("ok finish on keep's marks: %llu candidates rescored "
               "bit-equal, no mark launch\n", (unsigned long long)checked);
        ++passed;
    }
    free(hmask0);
    cudaFree(dwdf); cudaFree(din);
out:
    cudaFree(dq); cudaFree(dl); cudaFree(dacc); cudaFree(dmask);
    cudaFree(dc); cudaFree(dr); cudaFree(dst); cudaFree(dhist);
    free(hacc); free(gacc); free(hmask); free(gmask); free(hc); free(gc);
    release(&t);
    return 0;
}


/* Seed (--seed N, else the clock; printed for a replay) and the device
 * check: 0 to go on, or 77 (no CUDA device) for main to return. */
static inline int kernel_start(const char *name, int argc, char **argv)
{
    uint64_t seed = (uint64_t)time(NULL);
    for (int i = 1; i + 1 < argc; ++i)
        if (!strcmp(argv[i], "--seed")) seed = strtoull(argv[i + 1], 0, 10);
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        printf("SKIP: no CUDA device\n");
        return 77;
    }
    printf("%s: seed %llu (--seed %llu replays)\n", name,
           (unsigned long long)seed, (unsigned long long)seed);
    rng = seed;
    return 0;
}

/* The last line and the exit status of every kernel test. */
static inline int kernel_finish(int bad)
{
    printf("%d passed, %d failed\n", passed, failed + (bad && !failed));
    return bad || failed ? 1 : 0;
}

#endif
