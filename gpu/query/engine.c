/** @file engine.c
 *  @brief The engine's host side: loading, batching, the twin pipeline, and
 *         MSet assembly (see engine.h).  The device side is engine_cuda.c.
 */
#include "engine_int.h"

#include <stdlib.h>
#include <string.h>

#include "accumulate.h"
#include "decode.h"
#include "../runtime/clock.h"
#include "../runtime/error.h"
#include "../runtime/fault.h"
#include "../runtime/knobs.h"
#include "finish.h"
#include "intersect.h"
#include "merge.h"
#include "topk.h"

int xg_dindex_block_ref(const struct xg_dindex *ix, uint32_t t, uint32_t blk,
                        uint32_t *docs, uint32_t *wdfs, uint32_t *n);

/* Fault injection (tests): the n-th next allocation of either pipeline
 * fails as if memory ran out (runtime/fault.h, which the device pool
 * honours too). */
void xg_engine_fail_next_alloc(int n) { xg_fault_fail_next_alloc(n); }

/* calloc for the twin pipeline, honouring fault injection. */
static void *talloc(size_t n, size_t size)
{
    return xg_fault_take() ? NULL : calloc(n, size);
}

int xg_engine_plan_memory(struct xg_gpu *e, uint64_t budget)
{
    const struct xg_index *ix = e->ix;
    const struct xg_fmt_section *s = ix->sec;
    const uint64_t n_terms = ix->hdr->n_terms, n_docs = ix->hdr->n_docs;
    /* Always resident: everything but the lists. */
    const uint64_t meta =
        s[XG_SEC_SKIP].length + n_terms * (sizeof(struct xg_fmt_term) +
                                           sizeof(struct xg_fmt_term_lr) + 8) +
        s[XG_SEC_BLOOM].length + s[XG_SEC_HASHSEG].length + n_docs * 8 +
        (n_docs + 1) * sizeof(double) +
        (e->hix.impacts ? s[XG_SEC_IMPACTS].length : 0);
    const uint64_t reserve = budget / 4, lists = ix->postings_len;
    /* The positions only beside every list: phrases over lists that come
     * and go stay on the CPU matcher. */
    const uint64_t positions = xg_fmt_has_positions(ix)
                                   ? s[XG_SEC_POSITIONS].length : 0;
    uint64_t pool = e->o.list_cache;
    /* A budget the caller set leaves no room for a second batch's
     * buffers, and a list cache places each batch's lists itself. */
    e->n_slots = e->o.memory_budget || pool || xg_knob_one_slot() ? 1
                 : xg_knob_slots() ? xg_knob_slots()
                                   : XG_ENGINE_SLOTS_DEFAULT;
    e->positions_resident = 0;
    if (!pool) {
        const uint64_t all = meta + lists + XG_POSTINGS_PAD + reserve;
        if (positions && (!budget || all + positions <= budget))
            e->positions_resident = 1;
        if (!budget || all <= budget)
            return XG_OK;
        if (meta + reserve + XG_POSTINGS_PAD >= budget)
            return xg_set_error(XG_ERR_NOMEM, "GPU: the index's metadata "
                                "(%llu bytes) leaves no room for its lists "
                                "in a %llu-byte budget",
                                (unsigned long long)meta,
                                (unsigned long long)budget);
        pool = budget - meta - reserve - XG_POSTINGS_PAD;
        e->n_slots = 1;
    }
    e->list_bytes = malloc(n_terms * sizeof *e->list_bytes);
    if (!e->list_bytes) return xg_set_error(XG_ERR_NOMEM, "out of memory");
    uint64_t longest = 0;
    for (uint64_t t = 0; t < n_terms; ++t) {
        int rc = xg_fmt_list_bytes(ix, t, &e->list_bytes[t]);
        if (rc) return rc;
        if (e->list_bytes[t] > longest) longest = e->list_bytes[t];
    }
    int rc = xg_lcache_create(pool, n_terms, &e->cache);
    if (rc) return rc;
    /* The buddy pool's largest block is the largest power of two of
     * XG_LCACHE_UNIT units in it. */
    uint64_t block = XG_LCACHE_UNIT;
    while (block * 2 <= pool) block *= 2;
    if (longest > block)
        return xg_set_error(XG_ERR_NOMEM, "GPU: the longest list (%llu bytes)"
                            " does not fit a %llu-byte list cache",
                            (unsigned long long)longest,
                            (unsigned long long)pool);
    e->cache_pool = pool;
    e->st.cache_pool = pool;
    return XG_OK;
}

/* Make every list of the batch resident and pinned: copy in the ones the
 * cache had not, and record where they went.  XG_ERR_NOMEM when they do
 * not fit together (the caller splits the batch). */
static int place_lists(struct xg_gpu *e, const struct xg_batch *b)
{
    if (!e->cache) return XG_OK;
    xg_lcache_unpin_all(e->cache);
    e->n_patch = 0;
    int rc = XG_OK;
    for (uint32_t i = 0; i < b->n_lists && !rc; ++i) {
        const uint32_t t = b->lists[i].term;
        uint64_t off;
        int load;
        rc = xg_lcache_acquire(e->cache, t, e->list_bytes[t], &off, &load);
        if (rc || !load) continue;
        if (e->n_patch + 1 > e->cap_patch) {
            uint32_t c = e->cap_patch ? 2 * e->cap_patch : 256;
            uint64_t *p = realloc(e->patch, 2 * (size_t)c * sizeof *p);
            if (!p) return xg_set_error(XG_ERR_NOMEM, "out of memory");
            e->patch = p;
            e->cap_patch = c;
        }
        e->patch[2 * e->n_patch] = t;
        e->patch[2 * e->n_patch + 1] = off;
        ++e->n_patch;
        if (e->o.use_device) {
            rc = xg_engine_dev_load_list(e, t, off);
        } else {
            memcpy(e->hpool + off, e->ix->postings + e->ix->terms[t].postings_offset,
                   e->list_bytes[t]);
            e->list_off[t] = off;
        }
    }
    /* Lists placed before a failure stay resident: record them too. */
    if (e->o.use_device) {
        int rc2 = xg_engine_dev_patch_offsets(e);
        if (!rc) rc = rc2;
    }
    return rc;
}

/* K_d is set for p and these statistics. */
static int kd_is(const struct xg_gpu *e, const struct xg_bm25_params *p,
                 uint64_t n_docs, uint64_t total_length)
{
    return e->kd_valid && !memcmp(&e->kd_params, p, sizeof *p) &&
           e->kd_n_docs == n_docs && e->kd_total_length == total_length;
}

/* K_d of every document for p and the collection statistics n_docs,
 * total_length (the average length); kept until either changes.  Called
 * with no search using K_d (acquire). */
static int set_kd(struct xg_gpu *e, const struct xg_bm25_params *p,
                  uint64_t n_docs, uint64_t total_length)
{
    if (kd_is(e, p, n_docs, total_length)) return XG_OK;
    struct xg_bm25_query q;
    xg_bm25_query_init(p, n_docs, total_length, 0, &q);
    for (uint64_t d = 0; d < e->ix->hdr->n_docs; ++d)
        e->h_kd[d] = xg_bm25_kd(&q, e->ix->doclens[d]);
    e->kd_params = *p;
    e->kd_n_docs = n_docs;
    e->kd_total_length = total_length;
    e->kd_valid = 1;
    return e->o.use_device ? xg_engine_dev_set_kd(e) : XG_OK;
}

int xg_engine_open(const struct xg_index *ix, const struct xg_engine_opts *o,
                   xg_gpu **out)
{
    int rc;
    struct xg_gpu *e = calloc(1, sizeof *e);
    *out = NULL;
    if (!e) return xg_set_error(XG_ERR_NOMEM, "out of memory");
    e->ix = ix;
    e->o = *o;
    pthread_mutex_init(&e->mu, NULL);
    pthread_cond_init(&e->cv, NULL);
    if (!e->o.max_batch) e->o.max_batch = 256;
    e->h_kd = malloc((ix->hdr->n_docs + 1) * sizeof *e->h_kd);
    if (!e->h_kd) {
        rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
        goto fail;
    }
    e->list_off = malloc((ix->hdr->n_terms + 1) * sizeof *e->list_off);
    if (!e->list_off) {
        rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
        goto fail;
    }
    for (uint64_t t = 0; t < ix->hdr->n_terms; ++t)
        e->list_off[t] = ix->terms[t].postings_offset;
    e->hix.list_off = e->list_off;
    e->hix.postings = ix->postings;
    e->hix.skip = ix->skip;
    e->hix.terms = ix->terms;
    e->hix.terms_lr = ix->terms_lr;
    e->hix.bloom = ix->bloom;
    e->hix.hashseg = ix->hashseg;
    e->hix.docids = ix->docids;
    e->hix.doclens = ix->doclens;
    e->hix.kd = e->h_kd;
    if (o->impacts >= 0 && ix->impacts) {
        e->hix.impacts = ix->impacts;
        e->hix.impact_codes = ix->impact_codes;
    }
    e->hix.n_docs = (uint32_t)ix->hdr->n_docs;
    e->hix.n_shards = ix->hdr->n_shards;
    e->hix.bloom_hashes = ix->hdr->bloom_hashes;
    if (o->use_device) {
        if ((rc = xg_engine_dev_open(e))) goto fail; /* plans its memory */
    } else {
        /* The twins honour the same budget, with a host pool. */
        if ((rc = xg_engine_plan_memory(e, o->memory_budget))) goto fail;
        if (e->cache) {
            /* Impacts follow the lists: only resident ones are used. */
            e->hix.impacts = NULL;
            e->hix.impact_codes = NULL;
            e->hpool = calloc(1, e->cache_pool + XG_POSTINGS_PAD);
            if (!e->hpool) {
                rc = xg_set_error(XG_ERR_NOMEM, "out of memory (list cache)");
                goto fail;
            }
            e->hix.postings = e->hpool;
        }
    }
    e->st.impacts_resident = e->hix.impacts != NULL;
    if (e->positions_resident) {
        e->hix.pos_offsets = ix->pos_offsets;
        e->hix.pos_data = ix->pos_data;
    }
    *out = e;
    return XG_OK;
fail:
    xg_engine_close(e);
    return rc;
}

void xg_engine_close(xg_gpu *e)
{
    if (!e) return;
    if (e->o.use_device) {
        xg_engine_dev_close(e); /* frees its pinned h_res, h_cand */
    } else {
        for (int i = 0; i < XG_ENGINE_SLOTS; ++i) {
            free(e->slot[i].h_res);
            free(e->slot[i].h_cand);
        }
    }
    for (int i = 0; i < XG_ENGINE_SLOTS; ++i) xg_batch_free(&e->slot[i].batch);
    pthread_mutex_destroy(&e->mu);
    pthread_cond_destroy(&e->cv);
    xg_lcache_destroy(e->cache);
    free(e->list_bytes);
    free(e->list_off);
    free(e->hpool);
    free(e->patch);
    free(e->h_kd);
    free(e);
}

const struct xg_engine_stats *xg_engine_stats(const xg_gpu *e)
{
    return &e->st;
}

uint32_t xg_engine_slots(const xg_gpu *e) { return e->n_slots; }

int xg_engine_host_room(struct xg_slot *s)
{
    const struct xg_batch *b = &s->batch;
    if (b->n_queries > s->cap_res) {
        void *p = realloc(s->h_res, b->n_queries * sizeof *s->h_res);
        if (!p) return xg_set_error(XG_ERR_NOMEM, "out of memory");
        s->h_res = p;
        s->cap_res = b->n_queries;
    }
    if (b->cand_total > s->cap_cand) {
        void *p = realloc(s->h_cand, b->cand_total * sizeof *s->h_cand);
        if (!p) return xg_set_error(XG_ERR_NOMEM, "out of memory");
        s->h_cand = p;
        s->cap_cand = b->cand_total;
    }
    return XG_OK;
}

/* The twin pipeline: the kernels' CPU twins on host buffers. */
static int run_ref(struct xg_gpu *e, struct xg_slot *s)
{
    struct xg_batch *b = &s->batch;
    const uint64_t n_docs = e->hix.n_docs;
    int rc = xg_engine_host_room(s);
    if (rc) return rc;
    double *acc = talloc(b->n_rows * n_docs + 1, sizeof *acc);
    uint32_t *mask = talloc(b->n_rows * n_docs + 1, sizeof *mask);
    uint32_t *docs = talloc(b->decoded_total + 1, sizeof *docs);
    uint32_t *wdfs = talloc(b->decoded_total + 1, sizeof *wdfs);
    /* Per query: matches, then (ifail) a filter left undecided. */
    uint32_t *icount = talloc(2 * (b->n_queries + 1), sizeof *icount);
    struct xg_dcand *icand = talloc(b->icand_total + 1, sizeof *icand);
    uint8_t *bsel = talloc(b->total_blocks + 1, sizeof *bsel);
    uint32_t *mpos = talloc(b->mpos_total + 1, sizeof *mpos);
    uint32_t *touched = talloc(b->touch_total + 1, sizeof *touched);
    if (!acc || !mask || !docs || !wdfs || !icount || !icand || !bsel ||
        !mpos || !touched) {
        rc = xg_set_error(XG_ERR_NOMEM, "out of memory (twin pipeline)");
        goto done;
    }
    if ((rc = xg_accumulate_ref(&e->hix, b->lists, b->queries, 0,
                                b->n_dense_lists, acc, mask, touched,
                                icount)))
        goto done;
    /* AND: probes and whole lists, block selection, selected blocks,
     * merge paths, then the intersection. */
    struct xg_merge_args ma = {b->queries, b->lists, b->iq, b->iprefix,
                               b->n_iq, b->n_ml, b->mlist, b->mprefix, docs,
                               bsel, mpos};
    if ((rc = xg_decode_lists_ref(&e->hix, b->lists, b->n_dense_lists,
                                  b->n_lists, NULL, docs, wdfs)) ||
        (rc = xg_block_select_ref(&e->hix, &ma)) ||
        (rc = xg_decode_lists_ref(&e->hix, b->lists, b->n_dense_lists,
                                  b->n_lists, bsel, docs, wdfs)) ||
        (rc = xg_mergepath_ref(&ma)))
        goto done;
    struct xg_intersect_args ia = {b->queries, b->lists, b->iq, b->iprefix,
                                   b->n_iq, 0, docs, wdfs, mpos, b->leaf_list,
                                   b->leaf_tw, b->plan, b->bm25, icount,
                                   icand, b->filters,
                                   icount + b->n_queries + 1};
    if ((rc = xg_intersect_ref(&e->hix, &ia))) goto done;
    struct xg_select_args sa = {b->queries, acc, mask, n_docs, icount, icand,
                                XG_SELECT_MARGIN, s->h_cand, s->h_res, NULL,
                                NULL, icount + b->n_queries + 1, touched,
                                NULL, NULL};
    if ((rc = xg_select_ref(&sa, b->n_queries))) goto done;
    struct xg_finish_args fa = {b->queries, b->lists, s->h_res, b->leaf_list,
                                b->leaf_tw, b->plan, b->bm25, s->h_cand,
                                NULL, NULL, NULL, 0, 0, XG_FINISH_BY_COST};
    rc = xg_finish_ref(&e->hix, &fa, b->n_queries);
done:
    free(acc);
    free(mask);
    free(docs);
    free(wdfs);
    free(icount);
    free(icand);
    free(bsel);
    free(mpos);
    free(touched);
    return rc;
}

/* A query's work in postings: its shortest list for an AND of terms (the
 * candidates), all its lists otherwise. */
static uint64_t query_work(const struct xg_index *ix,
                           const struct xg_engine_query *eq)
{
    const struct xg_query *q = eq->q;
    uint64_t sum = 0, shortest = UINT64_MAX;
    for (uint32_t i = 0; i < q->n_leaves; ++i) {
        if (eq->leaf_term[i] < 0) continue;
        uint64_t df = ix->terms[eq->leaf_term[i]].df;
        sum += df;
        if (df < shortest) shortest = df;
    }
    if (q->op == XG_QOP_AND && q->n_groups > 1)
        return shortest == UINT64_MAX ? 0 : shortest;
    return sum;
}

/* Impacts hold g = wdf / (K_d + wdf) for the header's parameters and the
 * index's own average length: they bound this query's weights only when
 * its K_d is the same. */
static int impacts_fit(const struct xg_gpu *e, const struct xg_bm25_params *p,
                       const struct xg_batch_opts *bo)
{
    const struct xg_fmt_header *h = e->ix->hdr;
    return e->hix.impacts && p->k2 == 0 && bo->n_docs == h->n_docs &&
           bo->total_length == h->total_length && p->k1 == h->bm25_k1 &&
           p->b == h->bm25_b && p->min_normlen == h->bm25_min_normlen;
}

/* Answer queries qs[0..n) in batches with the given batch options (into
 * later[] where not NULL, as xg_batch_finish).  An OR from impacts whose
 * near-ties overflowed its candidate room is noted in retry[] (the bounds
 * are looser than exact sums, so the exact path may still fit it); the
 * others' statuses are final.  Runs on slot s; its statistics go to st,
 * not yet the engine's. */
static int search_batches(xg_gpu *e, struct xg_slot *s,
                          struct xg_engine_stats *st,
                          const struct xg_engine_query *qs,
                          uint32_t n, const struct xg_bm25_params *p,
                          const struct xg_batch_opts *bo,
                          struct xg_result *out, struct xg_later *later,
                          int *status, uint32_t *retry, uint32_t *n_retry)
{
    struct xg_batch *b = &s->batch;
    int rc = XG_OK;
    for (uint32_t first = 0, cnt; first < n; first += cnt) {
        /* Close the batch at max_batch queries or at the work threshold,
         * whichever comes first (always at least one query). */
        uint64_t work = 0;
        for (cnt = 0; first + cnt < n && cnt < e->o.max_batch; ++cnt) {
            uint64_t w = query_work(e->ix, &qs[first + cnt]);
            if (cnt && e->o.batch_work && work + w > e->o.batch_work) break;
            work += w;
        }
        /* With a list cache, halve the batch until its lists fit. */
        double t0 = xg_now();
        for (;;) {
            rc = xg_batch_build(b, e->ix, qs, first, cnt, p, bo, out,
                                status);
            if (!rc) rc = place_lists(e, b);
            if (rc != XG_ERR_NOMEM || !e->cache || cnt == 1) break;
            cnt /= 2;
            ++st->batch_splits;
        }
        if (rc == XG_ERR_NOMEM && e->cache && cnt == 1) {
            /* One query whose lists outgrow the cache: the CPU answers. */
            memset(&out[first], 0, sizeof out[first]);
            status[first] = XG_ERR_UNSUPPORTED;
            rc = XG_OK;
            continue;
        }
        if (rc || !b->n_queries) {
            if (rc) return rc;
            continue;
        }
        const double t1 = xg_now();
        rc = e->o.use_device ? xg_engine_dev_run(e, s) : run_ref(e, s);
        const double t2 = xg_now();
        if (!rc)
            rc = xg_batch_finish(b, e->ix, s->h_res, s->h_cand,
                                 e->o.use_device, out, later, status);
        if (rc) return rc;
        const double t3 = xg_now();
        st->build_seconds += t1 - t0;
        st->run_seconds += t2 - t1;
        st->finish_seconds += t3 - t2;
        ++st->batches;
        st->device_seconds += s->device_seconds;
        st->postings_decoded += b->total_blocks * XG_FMT_BLOCK;
        for (int m = 0; m < XG_MEMBER_KINDS; ++m)
            st->member_lists[m] += b->member_lists[m];
        st->bloom_lists += b->bloom_lists;
        for (uint32_t i = 0; i < b->n_queries; ++i) {
            st->candidates += s->h_res[i].n_cand;
            st->row_queries += b->queries[i].path == XG_DPATH_DENSE;
            st->intersect_queries += b->queries[i].path == XG_DPATH_INTERSECT;
            if (!b->queries[i].impact_row) continue;
            ++st->impact_queries;
            st->sparse_queries += b->queries[i].sparse;
            if (s->h_res[i].overflow && retry)
                retry[(*n_retry)++] = b->qmap[i];
        }
    }
    return XG_OK;
}

/* The collection statistics query eq is weighed with. */
static void weigh_key(const struct xg_gpu *e, const struct xg_engine_query *eq,
                      uint64_t *n_docs, uint64_t *total_length)
{
    *n_docs = eq->stats ? eq->stats->n_docs : e->ix->hdr->n_docs;
    *total_length = eq->stats ? eq->stats->total_length
                              : e->ix->hdr->total_length;
}

/* Take a free slot with K_d set for p and these statistics.  K_d changes
 * only while no search uses it; one waiting to change it holds back new
 * searches that would keep the old one. */
static int acquire(xg_gpu *e, const struct xg_bm25_params *p,
                   uint64_t n_docs, uint64_t total_length,
                   struct xg_slot **out)
{
    pthread_mutex_lock(&e->mu);
    struct xg_slot *s = NULL;
    for (;;) {
        const int same = kd_is(e, p, n_docs, total_length);
        for (uint32_t i = 0; i < e->n_slots && !s; ++i)
            if (!e->slot[i].busy) s = &e->slot[i];
        if (s && (same ? !e->kd_waiters : !e->kd_users)) break;
        s = NULL;
        e->kd_waiters += !same;
        pthread_cond_wait(&e->cv, &e->mu);
        e->kd_waiters -= !same;
    }
    int rc = set_kd(e, p, n_docs, total_length);
    if (!rc) {
        s->busy = 1;
        ++e->kd_users;
        *out = s;
    }
    pthread_mutex_unlock(&e->mu);
    return rc;
}

static void add_stats(struct xg_engine_stats *to,
                      const struct xg_engine_stats *d)
{
    to->batches += d->batches;
    to->postings_decoded += d->postings_decoded;
    to->candidates += d->candidates;
    to->device_seconds += d->device_seconds;
    to->build_seconds += d->build_seconds;
    to->run_seconds += d->run_seconds;
    to->finish_seconds += d->finish_seconds;
    to->batch_splits += d->batch_splits;
    to->row_queries += d->row_queries;
    to->intersect_queries += d->intersect_queries;
    to->impact_queries += d->impact_queries;
    to->sparse_queries += d->sparse_queries;
    to->impact_retries += d->impact_retries;
    for (int m = 0; m < XG_MEMBER_KINDS; ++m)
        to->member_lists[m] += d->member_lists[m];
    to->bloom_lists += d->bloom_lists;
}

/* A field added to struct xg_engine_stats changes its size and stops the
 * build here: add_stats and xg_engine_stats_since must learn it. */
_Static_assert(sizeof(struct xg_engine_stats) ==
                   (23 + XG_MEMBER_KINDS) * sizeof(uint64_t),
               "struct xg_engine_stats changed: update add_stats and "
               "xg_engine_stats_since");

void xg_engine_stats_since(struct xg_engine_stats *s,
                           const struct xg_engine_stats *base)
{
    s->queries -= base->queries;
    s->served -= base->served;
    s->to_cpu -= base->to_cpu;
    s->batches -= base->batches;
    s->postings_decoded -= base->postings_decoded;
    s->candidates -= base->candidates;
    s->device_seconds -= base->device_seconds;
    s->build_seconds -= base->build_seconds;
    s->run_seconds -= base->run_seconds;
    s->finish_seconds -= base->finish_seconds;
    s->cache_hits -= base->cache_hits;
    s->cache_misses -= base->cache_misses;
    s->cache_evictions -= base->cache_evictions;
    s->cache_bytes_loaded -= base->cache_bytes_loaded;
    s->batch_splits -= base->batch_splits;
    s->row_queries -= base->row_queries;
    s->intersect_queries -= base->intersect_queries;
    s->impact_queries -= base->impact_queries;
    s->sparse_queries -= base->sparse_queries;
    s->impact_retries -= base->impact_retries;
    for (int m = 0; m < XG_MEMBER_KINDS; ++m)
        s->member_lists[m] -= base->member_lists[m];
    s->bloom_lists -= base->bloom_lists;
}

/* Give slot s back, with its search's statistics. */
static void release(xg_gpu *e, struct xg_slot *s,
                    const struct xg_engine_stats *st)
{
    pthread_mutex_lock(&e->mu);
    add_stats(&e->st, st);
    s->busy = 0;
    --e->kd_users;
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->mu);
}

/* Free each out[i] and later[i] (later may be NULL). */
static void free_answers(struct xg_result *out, struct xg_later *later,
                         uint32_t n)
{
    for (uint32_t i = 0; i < n; ++i) {
        xg_result_free(&out[i]);
        if (later) xg_later_free(&later[i]);
    }
}

/* xg_engine_search for queries that share one collection's statistics. */
static int search_one_key(xg_gpu *e, const struct xg_engine_query *qs,
                          uint32_t n, const struct xg_bm25_params *p,
                          struct xg_result *out, struct xg_later *later,
                          int *status)
{
    /* XG_TEST_IMPACT_SLACK=X widens the impact margins X times: a
     * superset of the candidates, so still exact, but overflowing. */
    struct xg_batch_opts bo = {e->o.member_method, e->o.bloom, 0,
                               e->o.cand_min ? e->o.cand_min : 4096u,
                               xg_knob_test_impact_slack(), 0, 0, 0, 0};
    weigh_key(e, &qs[0], &bo.n_docs, &bo.total_length);
    bo.all_sparse = xg_knob_test_sparse();
    bo.positions = e->hix.pos_offsets != NULL;
    struct xg_slot *s;
    int rc = acquire(e, p, bo.n_docs, bo.total_length, &s);
    if (rc) return rc;
    struct xg_engine_stats st;
    memset(&st, 0, sizeof st);
    bo.impacts = impacts_fit(e, p, &bo);
    uint32_t *retry = NULL, n_retry = 0;
    struct xg_engine_query *again = NULL;
    struct xg_result *again_out = NULL;
    struct xg_later *again_later = NULL;
    int *again_status = NULL;
    memset(out, 0, (size_t)n * sizeof *out);
    if (later) memset(later, 0, (size_t)n * sizeof *later);
    if (bo.impacts && !(retry = malloc((n ? n : 1) * sizeof *retry)))
        rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
    if (!rc)
        rc = search_batches(e, s, &st, qs, n, p, &bo, out, later, status,
                            retry, &n_retry);
    if (!rc && n_retry) {
        /* Impact bounds overflowed: the exact sums select these again. */
        st.impact_retries += n_retry;
        bo.impacts = 0;
        again = malloc(n_retry * sizeof *again);
        again_out = calloc(n_retry, sizeof *again_out);
        again_status = malloc(n_retry * sizeof *again_status);
        if (later) again_later = calloc(n_retry, sizeof *again_later);
        if (!again || !again_out || !again_status ||
            (later && !again_later)) {
            rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
        } else {
            for (uint32_t r = 0; r < n_retry; ++r) again[r] = qs[retry[r]];
            rc = search_batches(e, s, &st, again, n_retry, p, &bo, again_out,
                                again_later, again_status, NULL, NULL);
        }
        for (uint32_t r = 0; !rc && r < n_retry; ++r) {
            xg_result_free(&out[retry[r]]);
            out[retry[r]] = again_out[r];
            if (later) {
                xg_later_free(&later[retry[r]]);
                later[retry[r]] = again_later[r];
            }
            status[retry[r]] = again_status[r];
        }
        if (rc && again_out) free_answers(again_out, again_later, n_retry);
    }
    release(e, s, &st);
    free(retry);
    free(again);
    free(again_out);
    free(again_later);
    free(again_status);
    if (rc) {
        free_answers(out, later, n);
        return rc;
    }
    return XG_OK;
}

int xg_engine_search(xg_gpu *e, const struct xg_engine_query *qs,
                     uint32_t n, const struct xg_bm25_params *p,
                     struct xg_result *out, struct xg_later *later,
                     int *status)
{
    if (!n) return XG_OK;
    /* K_d per document follows the average length: the queries go in
     * groups of one collection's statistics (one group, but for a server
     * that answers both its own clients and sharded ones). */
    uint64_t n0, l0, nq, lq;
    uint32_t same = 0;
    weigh_key(e, &qs[0], &n0, &l0);
    for (uint32_t i = 0; i < n; ++i) {
        weigh_key(e, &qs[i], &nq, &lq);
        same += nq == n0 && lq == l0;
    }
    int rc = XG_OK;
    if (same == n) {
        rc = search_one_key(e, qs, n, p, out, later, status);
    } else {
        struct xg_engine_query *g = malloc(n * sizeof *g);
        uint32_t *at = malloc(n * sizeof *at);
        struct xg_result *gout = malloc(n * sizeof *gout);
        struct xg_later *glater =
            later ? malloc(n * sizeof *glater) : NULL;
        int *gst = malloc(n * sizeof *gst);
        uint8_t *done = calloc(n, 1);
        if (!g || !at || !gout || !gst || !done || (later && !glater))
            rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
        memset(out, 0, (size_t)n * sizeof *out);
        if (later) memset(later, 0, (size_t)n * sizeof *later);
        for (uint32_t first = 0; !rc && first < n; ++first) {
            if (done[first]) continue;
            uint32_t m = 0;
            weigh_key(e, &qs[first], &n0, &l0);
            for (uint32_t i = first; i < n; ++i) {
                weigh_key(e, &qs[i], &nq, &lq);
                if (done[i] || nq != n0 || lq != l0) continue;
                done[i] = 1;
                at[m] = i;
                g[m++] = qs[i];
            }
            rc = search_one_key(e, g, m, p, gout, glater, gst);
            for (uint32_t j = 0; !rc && j < m; ++j) {
                out[at[j]] = gout[j];
                if (later) later[at[j]] = glater[j];
                status[at[j]] = gst[j];
            }
        }
        if (rc) free_answers(out, later, n);
        free(g);
        free(at);
        free(gout);
        free(glater);
        free(gst);
        free(done);
    }
    if (rc) return rc;
    pthread_mutex_lock(&e->mu);
    for (uint32_t i = 0; i < n; ++i) {
        ++e->st.queries;
        if (status[i] == XG_OK) ++e->st.served; else ++e->st.to_cpu;
    }
    if (e->cache) {
        struct xg_lcache_stats cs;
        xg_lcache_stats(e->cache, &cs);
        e->st.cache_hits = cs.hits;
        e->st.cache_misses = cs.misses;
        e->st.cache_evictions = cs.evictions;
        e->st.cache_bytes_loaded = cs.bytes_loaded;
    }
    pthread_mutex_unlock(&e->mu);
    return XG_OK;
}
