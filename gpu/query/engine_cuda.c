/** @file engine_cuda.c
 *  @brief The engine's device side: the resident index, each slot's
 *         batch buffers and lane (its stream), and the launch sequence
 *         (decode/accumulate, intersect, select, finish).  Built only
 *         with CUDA.
 *
 *  The device, its stream, the budgeted pool and the timing are the
 *  runtime's (runtime/device.h).  Every CUDA call goes through
 *  XG_CUDA_CHECK, which turns a failure into XG_ERR_CUDA (or XG_ERR_NOMEM
 *  for an allocation) with the CUDA error string; the caller then falls
 *  back to the CPU matcher.  Allocations respect the memory budget and can
 *  be made to fail on purpose (xg_engine_fail_next_alloc, the runtime's
 *  fault hook) so the error paths are tested.
 */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accumulate.h"
#include "decode.h"
#include "engine_int.h"
#include "../runtime/device.h"
#include "../runtime/error.h"
#include "../runtime/fault.h"
#include "../runtime/knobs.h"
#include "finish.h"
#include "intersect.h"
#include "merge.h"
#include "../index/pfor.h"
#include "topk.h"

/* Candidate room a batch copies back whole with its results (256 KiB:
 * about 10 us over the bus); a larger one's pack kernel writes the
 * candidates across the bus into the pinned buffer itself. */
#define XG_ONE_TRIP_BYTES (256u << 10)

/* A slot's device side: its lane and its batch's buffers. */
struct dslot {
    struct xg_device_lane lane;
    cudaEvent_t ev_kernels;         /* its batch's last kernel done */
    uint8_t *d_desc, *h_desc;
    size_t cap_desc;
    double *d_acc;
    uint32_t *d_mask;
    uint64_t cap_rows, cap_mask;    /* in cells (rows * n_docs) */
    uint32_t *d_docs, *d_wdfs;
    uint64_t cap_decoded, cap_wdfs;
    uint32_t *d_icount;
    uint64_t cap_icount;
    uint32_t *d_touched;            /* sparse queries' touched documents */
    uint64_t cap_touched;
    struct xg_dcand *d_icand, *d_cand;
    uint64_t cap_icand, cap_cand;
    uint32_t *d_cand_wdf;           /* the finish's: wdfs by list, */
    unsigned long long *d_cand_in;  /* and the lists, of each candidate */
    uint64_t cap_cand_wdf, cap_cand_in;
    struct xg_dqresult *d_res;
    uint64_t cap_res;
    struct xg_select_state *d_sel;
    uint64_t cap_sel;
    uint32_t *d_hist;
    uint64_t cap_hist;
    uint8_t *d_bsel;                /* AND: selected blocks */
    uint64_t cap_bsel;
    uint32_t *d_mpos;               /* AND: merge-path positions */
    uint64_t cap_mpos;
    struct xg_dqresult *h_res;      /* pinned host copies */
    struct xg_dcand *h_cand;        /* pinned and mapped */
    struct xg_dcand *h_cand_dev;    /* h_cand as the device addresses it */
    uint64_t cap_hres, cap_hcand;
};

struct dev {
    struct xg_device d;             /* stream, pool, blocking waits */
    struct xg_dindex dix;
    void *index_mem[12];
    uint64_t index_bytes[12];
    uint8_t *pool;                  /* list cache pool (index_mem[0]) */
    uint8_t *stage;                 /* pinned staging for list uploads */
    uint64_t stage_cap, stage_used;
    uint64_t *d_list_off, *d_patch;
    uint64_t cap_patch;
    double *d_kd;
    struct dslot slot[XG_ENGINE_SLOTS]; /* slot 0 on the device's stream */
    pthread_mutex_t alloc_mu;       /* the pool, for slots side by side */
    /* Large batches' kernels run in turn, in the order the batches were
     * queued: a batch of 256 fills the device alone, and two side by side
     * would share its caches and finish both late.  Copies and host work
     * still overlap the other slot's kernels.  A small batch leaves most
     * of the device idle: it runs beside the other slot's, and queues
     * without waiting for the other's launches. */
    pthread_mutex_t order_mu;
    cudaEvent_t last_kernels;       /* of the large batch queued last */
    int overlap;                    /* XG_SLOTS_OVERLAP: no turns */
    uint32_t finish_wdfs;           /* XG_FINISH_WDFS (finish.h) */
};

/* Grow a batch buffer to hold `need` elements of `elem` bytes.  Batch
 * buffers come from the stream-ordered allocator, whose pool keeps what
 * is freed (the device opens with keep_pool): growing one for a larger
 * batch neither waits for the device nor maps new memory each time, where
 * cudaFree and cudaMalloc stall every query in flight. */
static int dgrow(struct dev *d, cudaStream_t st, void **p, uint64_t *cap,
                 uint64_t need, size_t elem, const char *what)
{
    /* A fault point (runtime/fault.h) even when the kept buffer is large
     * enough, so that injected faults reach steady-state batches too. */
    if (xg_fault_take())
        return xg_set_error(XG_ERR_NOMEM, "GPU: %s: injected failure", what);
    if (need <= *cap && *p) return XG_OK;
    uint64_t c = *cap ? *cap : 1024;
    while (c < need) c *= 2;
    pthread_mutex_lock(&d->alloc_mu);
    xg_pool_free_on(&d->d.pool, st, p, *cap * elem);
    *cap = 0;
    int rc = xg_pool_alloc_on(&d->d.pool, st, p, c * elem, what);
    pthread_mutex_unlock(&d->alloc_mu);
    if (!rc) *cap = c;
    return rc;
}

/* dgrow for scratch the kernels leave zeroed (the selection's state and
 * histograms): zeroed once, when it is (re)allocated. */
static int dgrow_zeroed(struct dev *d, cudaStream_t st, void **p,
                        uint64_t *cap, uint64_t need, size_t elem,
                        const char *what)
{
    const void *before = *p;
    const uint64_t cap_before = *cap;
    int rc = dgrow(d, st, p, cap, need, elem, what);
    if (rc || (*p == before && *cap == cap_before)) return rc;
    XG_CUDA_CHECK(cudaMemsetAsync(*p, 0, *cap * elem, st), what);
    return XG_OK;
}

int xg_engine_device_info(int device, char *buf, size_t n)
{
    struct xg_device_facts f;
    int rc = xg_device_facts(device, &f, buf, n);
    if (rc) return rc;
    snprintf(buf, n, "%s (%d SMs, %.0f GiB, %.0f MB L2)", f.name, f.sm_count,
             f.total_bytes / 1073741824.0, f.l2_bytes / 1e6);
    return XG_OK;
}

static int upload(struct dev *d, int slot, const void *src, size_t n,
                  size_t pad, const char *what, const void **dst)
{
    void *p;
    int rc = xg_pool_alloc(&d->d.pool, &p, n + pad, what);
    if (rc) return rc;
    d->index_mem[slot] = p;
    d->index_bytes[slot] = n + pad;
    XG_CUDA_CHECK(cudaMemcpy(p, src, n, cudaMemcpyHostToDevice), what);
    if (pad) XG_CUDA_CHECK(cudaMemset((uint8_t *)p + n, 0, pad), what);
    *dst = p;
    return XG_OK;
}

int xg_engine_dev_open(struct xg_gpu *e)
{
    char info[256];
    if (xg_engine_device_info(e->o.device, info, sizeof info))
        return xg_set_error(XG_ERR_NODEVICE, "GPU: %s", info);
    struct dev *d = calloc(1, sizeof *d);
    if (!d) return xg_set_error(XG_ERR_NOMEM, "out of memory");
    e->dev = d;
    pthread_mutex_init(&d->alloc_mu, NULL);
    pthread_mutex_init(&d->order_mu, NULL);
    d->overlap = xg_knob_slots_overlap();
    d->finish_wdfs = xg_knob_finish_wdfs();
    /* The pool of the batch buffers keeps freed memory for the next
     * growth; xg_engine_dev_close gives it back.  The slots' lanes time
     * their batches. */
    const struct xg_device_opts dopts = {
        .who = "GPU", .ordinal = e->o.device, .budget = e->o.memory_budget,
        .marks = 0, .staging_threads = 1, .keep_pool = 1, .trim_at_close = 1,
        .blocking_sync = e->o.blocking_sync, .spin_us = e->o.wait_spin_us};
    int rc = xg_device_open(&d->d, &dopts);
    if (rc) return rc;
    const struct xg_index *ix = e->ix;
    const struct xg_fmt_section *s = ix->sec;
    uint64_t n_terms = ix->hdr->n_terms, n_docs = ix->hdr->n_docs;
    const void *p;
    if ((rc = xg_engine_plan_memory(e, d->d.pool.budget))) return rc;
    /* Slot 0 on the device's stream, the others on streams of their own:
     * a batch of each may be on the device at once. */
    for (uint32_t i = 0; i < e->n_slots; ++i) {
        if ((rc = xg_device_lane_open(&d->d, i > 0, &d->slot[i].lane)))
            return rc;
        XG_CUDA_CHECK(cudaEventCreateWithFlags(&d->slot[i].ev_kernels,
                                               cudaEventDisableTiming),
                      "event");
    }
    if (e->cache) {
        /* The lists come in per batch (xg_engine_dev_load_list). */
        void *pool;
        if ((rc = xg_pool_alloc(&d->d.pool, &pool, e->cache_pool + XG_POSTINGS_PAD,
                                "list cache")))
            return rc;
        d->index_mem[0] = pool;
        d->index_bytes[0] = e->cache_pool + XG_POSTINGS_PAD;
        d->pool = pool;
        XG_CUDA_CHECK(cudaMemset(pool, 0, e->cache_pool + XG_POSTINGS_PAD),
                      "list cache");
        d->dix.postings = pool;
        uint64_t longest = 0;
        for (uint64_t t = 0; t < n_terms; ++t)
            if (e->list_bytes[t] > longest) longest = e->list_bytes[t];
        d->stage_cap = longest > (32u << 20) ? longest : (32u << 20);
        XG_CUDA_CHECK(cudaMallocHost((void **)&d->stage, d->stage_cap),
                      "pinned staging buffer");
    } else {
        if ((rc = upload(d, 0, ix->postings, ix->postings_len,
                         XG_POSTINGS_PAD, "postings", &p)))
            return rc;
        d->dix.postings = p;
    }
    if ((rc = upload(d, 9, e->list_off, n_terms * sizeof *e->list_off, 0,
                     "list offsets", &p)))
        return rc;
    d->d_list_off = (uint64_t *)p;
    d->dix.list_off = p;
    if ((rc = upload(d, 1, ix->skip, s[XG_SEC_SKIP].length, 0, "skip", &p)))
        return rc;
    d->dix.skip = p;
    if ((rc = upload(d, 2, ix->terms, n_terms * sizeof *ix->terms, 0, "terms",
                     &p)))
        return rc;
    d->dix.terms = p;
    if ((rc = upload(d, 3, ix->terms_lr, n_terms * sizeof *ix->terms_lr, 0,
                     "regressions", &p)))
        return rc;
    d->dix.terms_lr = p;
    if ((rc = upload(d, 4, ix->bloom, s[XG_SEC_BLOOM].length, 0, "bloom", &p)))
        return rc;
    d->dix.bloom = p;
    if ((rc = upload(d, 5, ix->hashseg, s[XG_SEC_HASHSEG].length, 0,
                     "hash segments", &p)))
        return rc;
    d->dix.hashseg = p;
    if ((rc = upload(d, 6, ix->docids, n_docs * 4, 0, "docids", &p)))
        return rc;
    d->dix.docids = p;
    if ((rc = upload(d, 7, ix->doclens, n_docs * 4, 0, "doclens", &p)))
        return rc;
    d->dix.doclens = p;
    void *kd;
    if ((rc = xg_pool_alloc(&d->d.pool, &kd, (n_docs + 1) * sizeof(double), "kd")))
        return rc;
    d->index_mem[8] = kd;
    d->index_bytes[8] = (n_docs + 1) * sizeof(double);
    d->d_kd = kd;
    d->dix.kd = kd;
    if (e->cache) {
        /* Impacts follow the lists: only resident ones are used. */
        e->hix.impacts = NULL;
        e->hix.impact_codes = NULL;
    } else if (e->hix.impacts) {
        if ((rc = upload(d, 10, ix->impacts, s[XG_SEC_IMPACTS].length, 0,
                         "impacts", &p)))
            return rc;
        d->dix.impacts = p;
        d->dix.impact_codes =
            (const uint8_t *)((const struct xg_fmt_impact *)p + n_terms);
    }
    if (e->positions_resident) {
        /* The section whole: its block offsets, then the data. */
        if ((rc = upload(d, 11, ix->pos_offsets,
                         s[XG_SEC_POSITIONS].length, 0, "positions", &p)))
            return rc;
        d->dix.pos_offsets = p;
        d->dix.pos_data = (const uint8_t *)p +
                          (ix->pos_data - (const uint8_t *)ix->pos_offsets);
    }
    d->dix.n_docs = (uint32_t)n_docs;
    d->dix.n_shards = ix->hdr->n_shards;
    d->dix.bloom_hashes = ix->hdr->bloom_hashes;
    return XG_OK;
}

int xg_engine_dev_set_kd(struct xg_gpu *e)
{
    struct dev *d = e->dev;
    XG_CUDA_CHECK(cudaMemcpy(d->d_kd, e->h_kd,
                             e->ix->hdr->n_docs * sizeof(double),
                             cudaMemcpyHostToDevice), "kd upload");
    return XG_OK;
}

void xg_engine_dev_close(struct xg_gpu *e)
{
    struct dev *d = e->dev;
    if (!d) return;
    if (d->d.stream && d->d_patch) cudaFreeAsync(d->d_patch, d->d.stream);
    for (int k = 0; k < XG_ENGINE_SLOTS; ++k) {
        struct dslot *sl = &d->slot[k];
        if (sl->lane.stream) {
            void *batch[] = {sl->d_desc, sl->d_acc, sl->d_mask, sl->d_docs,
                             sl->d_wdfs, sl->d_icount, sl->d_icand,
                             sl->d_cand, sl->d_res, sl->d_sel, sl->d_hist,
                             sl->d_bsel, sl->d_mpos,
                             sl->d_cand_wdf, sl->d_cand_in, sl->d_touched};
            for (size_t i = 0; i < sizeof batch / sizeof batch[0]; ++i)
                if (batch[i]) cudaFreeAsync(batch[i], sl->lane.stream);
        }
        xg_device_lane_close(&sl->lane);
        if (sl->ev_kernels) cudaEventDestroy(sl->ev_kernels);
        cudaFreeHost(sl->h_desc);
        cudaFreeHost(sl->h_res);
        cudaFreeHost(sl->h_cand);
        e->slot[k].h_res = NULL;
        e->slot[k].h_cand = NULL;
    }
    for (int i = 0; i < 12; ++i)
        xg_pool_free(&d->d.pool, &d->index_mem[i], d->index_bytes[i]);
    cudaFreeHost(d->stage);
    /* After the batch buffers' frees: it trims the pool they went to. */
    xg_device_close(&d->d);
    pthread_mutex_destroy(&d->alloc_mu);
    pthread_mutex_destroy(&d->order_mu);
    free(d);
    e->dev = NULL;
}

/* Queue a copy of n host bytes to dst through the pinned staging buffer,
 * waiting for earlier copies out of it only when it is full. */
static int stage_upload(struct dev *d, void *dst, const void *src, uint64_t n,
                        const char *what)
{
    if (d->stage_used + n > d->stage_cap) {
        XG_CUDA_CHECK(xg_device_wait(&d->d), what);
        d->stage_used = 0;
    }
    memcpy(d->stage + d->stage_used, src, n);
    XG_CUDA_CHECK(cudaMemcpyAsync(dst, d->stage + d->stage_used, n,
                                  cudaMemcpyHostToDevice, d->d.stream), what);
    d->stage_used += (n + 15u) & ~(uint64_t)15u;
    return XG_OK;
}

int xg_engine_dev_load_list(struct xg_gpu *e, uint32_t t, uint64_t off)
{
    struct dev *d = e->dev;
    return stage_upload(d, d->pool + off,
                        e->ix->postings + e->ix->terms[t].postings_offset,
                        e->list_bytes[t], "list upload");
}

int xg_engine_dev_patch_offsets(struct xg_gpu *e)
{
    struct dev *d = e->dev;
    if (!e->n_patch) return XG_OK;
    int rc = dgrow(d, d->d.stream, (void **)&d->d_patch, &d->cap_patch,
                   2ull * e->n_patch, sizeof *e->patch, "list offsets");
    if (!rc)
        rc = stage_upload(d, d->d_patch, e->patch,
                          2ull * e->n_patch * sizeof *e->patch, "list offsets");
    if (rc) return rc;
    XG_CUDA_CHECK(xg_patch_list_offsets_gpu(d->d_list_off, d->d_patch,
                                            e->n_patch, d->d.stream),
                  "list offsets kernel");
    return XG_OK;
}

#define ALIGN16(x) (((x) + 15u) & ~(size_t)15u)

/* The capacity a pinned buffer grows to: twice the need, and at least
 * `floor`, since each growth (cudaFreeHost) waits for the whole device. */
static uint64_t pinned_cap(uint64_t need, uint64_t floor)
{
    return 2 * (need + 1) > floor ? 2 * (need + 1) : floor;
}

/* A batch's descriptor arrays in device memory (one upload). */
struct descs {
    const struct xg_dquery *dq;
    const struct xg_dlist *dl;
    const uint32_t *dll;
    const double *dtw;
    const struct xg_plan_op *dpl;
    const uint32_t *diq;
    const uint64_t *dip;
    const uint32_t *dml;
    const uint64_t *dmp;
    const struct xg_dfilter *dfl;
    size_t size;
};

/* The batch's kernels on its slot's stream; in_turn: after those of the
 * large batch queued before it (on either slot), under d->order_mu. */
static int queue_kernels(struct dev *d, struct dslot *sl,
                         const struct xg_batch *b, const struct descs *ds,
                         int one_trip, int in_turn)
{
    cudaStream_t st = sl->lane.stream;
    const uint64_t n_docs = d->dix.n_docs;
    if (in_turn && d->last_kernels)
        XG_CUDA_CHECK(cudaStreamWaitEvent(st, d->last_kernels, 0),
                      "batch order");
    XG_CUDA_CHECK(cudaEventRecord(sl->lane.ev_start, st), "timing event");
    XG_CUDA_CHECK(cudaMemcpyAsync(sl->d_desc, sl->h_desc, ds->size,
                                  cudaMemcpyHostToDevice, st),
                  "descriptor upload");
    if (b->n_rows) {
        /* Impact rows live in the mask alone: a batch of them only needs
         * a third of the reset (and the selection reads as little). */
        if (b->exact_rows)
            XG_CUDA_CHECK(cudaMemsetAsync(sl->d_acc, 0,
                                          b->n_rows * n_docs * sizeof(double),
                                          st), "accumulator reset");
        XG_CUDA_CHECK(cudaMemsetAsync(sl->d_mask, 0,
                                      b->n_rows * n_docs * sizeof(uint32_t),
                                      st), "mask reset");
    }
    /* Per query: matches, then (ifail) a filter left undecided. */
    XG_CUDA_CHECK(cudaMemsetAsync(sl->d_icount, 0,
                                  2 * (b->n_queries + 1) * sizeof(uint32_t),
                                  st),
                  "count reset");
    XG_CUDA_CHECK(xg_accumulate_gpu(&d->dix, ds->dl, ds->dq, 0,
                                    b->n_dense_lists, 0, b->dense_blocks,
                                    sl->d_acc, sl->d_mask, sl->d_touched,
                                    sl->d_icount, st),
                  "accumulate kernel");
    /* AND: probes and whole lists, block selection, selected blocks,
     * merge paths, then the intersection. */
    struct xg_merge_args ma = {ds->dq, ds->dl, ds->diq, ds->dip, b->n_iq,
                               b->n_ml, ds->dml, ds->dmp, sl->d_docs,
                               sl->d_bsel, sl->d_mpos};
    if (b->n_iq)
        XG_CUDA_CHECK(cudaMemsetAsync(sl->d_bsel, 0, b->total_blocks, st),
                      "selection reset");
    XG_CUDA_CHECK(xg_decode_lists_gpu(&d->dix, ds->dl, b->n_dense_lists,
                                      b->n_lists, b->dense_blocks,
                                      b->total_blocks, NULL, sl->d_docs,
                                      sl->d_wdfs, st), "decode kernel");
    XG_CUDA_CHECK(xg_block_select_gpu(&d->dix, &ma, b->iprefix[b->n_iq], st),
                  "block selection kernel");
    XG_CUDA_CHECK(xg_decode_lists_gpu(&d->dix, ds->dl, b->n_dense_lists,
                                      b->n_lists, b->dense_blocks,
                                      b->total_blocks, sl->d_bsel, sl->d_docs,
                                      sl->d_wdfs, st), "decode kernel");
    XG_CUDA_CHECK(xg_mergepath_gpu(&ma, b->mprefix[b->n_ml], st),
                  "merge path kernel");
    struct xg_intersect_args ia = {ds->dq, ds->dl, ds->diq, ds->dip,
                                   b->n_iq, 0, sl->d_docs, sl->d_wdfs,
                                   sl->d_mpos, ds->dll, ds->dtw, ds->dpl,
                                   b->bm25, sl->d_icount, sl->d_icand,
                                   ds->dfl, sl->d_icount + b->n_queries + 1};
    XG_CUDA_CHECK(xg_intersect_gpu(&d->dix, &ia, b->iprefix[b->n_iq], st),
                  "intersect kernel");
    struct xg_select_args sa = {ds->dq, sl->d_acc, sl->d_mask, n_docs,
                                sl->d_icount, sl->d_icand, XG_SELECT_MARGIN,
                                sl->d_cand, sl->d_res, sl->d_sel,
                                sl->d_hist, sl->d_icount + b->n_queries + 1,
                                sl->d_touched, sl->d_mask, sl->d_cand_in};
    /* The most items a query's selection reads (the launch's split). */
    uint64_t max_items = 0;
    for (uint32_t i = 0; i < b->n_queries; ++i) {
        const struct xg_dquery *q = &b->queries[i];
        const uint64_t n = q->path != XG_DPATH_DENSE ? 0
                           : q->sparse ? q->match_bound : n_docs;
        if (n > max_items) max_items = n;
    }
    for (uint32_t i = 0; i < b->n_iq; ++i)
        if (b->iprefix[i + 1] - b->iprefix[i] > max_items)
            max_items = b->iprefix[i + 1] - b->iprefix[i];
    XG_CUDA_CHECK(xg_select_gpu(&sa, b->n_queries, max_items, st),
                  "select kernel");
    struct xg_finish_args fa = {ds->dq, ds->dl, sl->d_res, ds->dll, ds->dtw,
                                ds->dpl, b->bm25, sl->d_cand, sl->d_mask,
                                sl->d_cand_wdf, sl->d_cand_in, b->n_dense_lists,
                                b->dense_blocks, d->finish_wdfs};
    XG_CUDA_CHECK(xg_finish_gpu(&d->dix, &fa, b->n_queries, 1, st),
                  "finish kernel");
    if (!one_trip)
        XG_CUDA_CHECK(xg_pack_gpu(ds->dq, sl->d_res, sl->d_cand,
                                  b->n_queries, sl->h_cand_dev,
                                  st),
                      "pack kernel");
    if (in_turn) {
        XG_CUDA_CHECK(cudaEventRecord(sl->ev_kernels, st), "batch order");
        d->last_kernels = sl->ev_kernels;
    }
    return XG_OK;
}

int xg_engine_dev_run(struct xg_gpu *e, struct xg_slot *s)
{
    struct dev *d = e->dev;
    struct dslot *sl = &d->slot[s - e->slot];
    struct xg_batch *b = &s->batch;
    cudaStream_t st = sl->lane.stream;
    const uint64_t n_docs = d->dix.n_docs;
    int rc;
    /* Pinned host buffers: device-to-host copies at full speed. */
    if (b->n_queries > sl->cap_hres || !sl->h_res) {
        cudaFreeHost(sl->h_res);
        sl->h_res = NULL;
        sl->cap_hres = 0;
        uint64_t c = pinned_cap(b->n_queries, 1024);
        XG_CUDA_CHECK(cudaMallocHost((void **)&sl->h_res, c * sizeof *sl->h_res),
                      "pinned results");
        sl->cap_hres = c;
    }
    if (b->cand_total > sl->cap_hcand || !sl->h_cand) {
        cudaFreeHost(sl->h_cand);
        sl->h_cand = NULL;
        sl->cap_hcand = 0;
        uint64_t c = pinned_cap(b->cand_total, 1u << 16);
        XG_CUDA_CHECK(cudaHostAlloc((void **)&sl->h_cand,
                                    c * sizeof *sl->h_cand,
                                    cudaHostAllocMapped),
                      "pinned candidates");
        XG_CUDA_CHECK(cudaHostGetDevicePointer((void **)&sl->h_cand_dev,
                                               sl->h_cand, 0),
                      "pinned candidates");
        sl->cap_hcand = c;
    }
    s->h_res = sl->h_res;
    s->h_cand = sl->h_cand;

    /* One pinned buffer, one copy: every descriptor array of the batch. */
    size_t o_q = 0;
    size_t o_l = ALIGN16(o_q + b->n_queries * sizeof *b->queries);
    size_t o_ll = ALIGN16(o_l + b->n_lists * sizeof *b->lists);
    size_t o_tw = ALIGN16(o_ll + b->n_leaves * sizeof *b->leaf_list);
    size_t o_pl = ALIGN16(o_tw + b->n_leaves * sizeof *b->leaf_tw);
    size_t o_iq = ALIGN16(o_pl + b->n_plan * sizeof *b->plan);
    size_t o_ip = ALIGN16(o_iq + (b->n_iq + 1) * sizeof *b->iq);
    size_t o_ml = ALIGN16(o_ip + (b->n_iq + 1) * sizeof *b->iprefix);
    size_t o_mp = ALIGN16(o_ml + (b->n_ml + 1) * sizeof *b->mlist);
    size_t o_fl = ALIGN16(o_mp + (b->n_ml + 1) * sizeof *b->mprefix);
    size_t size = ALIGN16(o_fl + (b->n_filters + 1) * sizeof *b->filters);
    if (size > sl->cap_desc) {
        pthread_mutex_lock(&d->alloc_mu);
        xg_pool_free_on(&d->d.pool, st, (void **)&sl->d_desc, sl->cap_desc);
        cudaFreeHost(sl->h_desc);
        sl->h_desc = NULL;
        size_t c = pinned_cap(size, 1u << 20);
        rc = xg_pool_alloc_on(&d->d.pool, st, (void **)&sl->d_desc, c,
                              "batch descriptors");
        pthread_mutex_unlock(&d->alloc_mu);
        if (rc) return rc;
        XG_CUDA_CHECK(cudaMallocHost((void **)&sl->h_desc, c), "pinned buffer");
        sl->cap_desc = c;
    }
    uint8_t *h = sl->h_desc;
    memcpy(h + o_q, b->queries, b->n_queries * sizeof *b->queries);
    memcpy(h + o_l, b->lists, b->n_lists * sizeof *b->lists);
    memcpy(h + o_ll, b->leaf_list, b->n_leaves * sizeof *b->leaf_list);
    memcpy(h + o_tw, b->leaf_tw, b->n_leaves * sizeof *b->leaf_tw);
    memcpy(h + o_pl, b->plan, b->n_plan * sizeof *b->plan);
    memcpy(h + o_iq, b->iq, (b->n_iq + 1) * sizeof *b->iq);
    memcpy(h + o_ip, b->iprefix, (b->n_iq + 1) * sizeof *b->iprefix);
    if (b->n_ml) memcpy(h + o_ml, b->mlist, b->n_ml * sizeof *b->mlist);
    memcpy(h + o_mp, b->mprefix, (b->n_ml + 1) * sizeof *b->mprefix);
    if (b->n_filters)
        memcpy(h + o_fl, b->filters, b->n_filters * sizeof *b->filters);
    const struct descs ds = {
        (const void *)(sl->d_desc + o_q), (const void *)(sl->d_desc + o_l),
        (const void *)(sl->d_desc + o_ll), (const void *)(sl->d_desc + o_tw),
        (const void *)(sl->d_desc + o_pl), (const void *)(sl->d_desc + o_iq),
        (const void *)(sl->d_desc + o_ip), (const void *)(sl->d_desc + o_ml),
        (const void *)(sl->d_desc + o_mp), (const void *)(sl->d_desc + o_fl),
        size};

    const uint64_t cells = b->n_rows * n_docs + 1;
    if ((rc = dgrow(d, st, (void **)&sl->d_acc, &sl->cap_rows, cells,
                    sizeof(double), "accumulators")) ||
        (rc = dgrow(d, st, (void **)&sl->d_mask, &sl->cap_mask, cells,
                    sizeof(uint32_t), "match masks")) ||
        (rc = dgrow(d, st, (void **)&sl->d_docs, &sl->cap_decoded,
                    b->decoded_total + 1, sizeof(uint32_t),
                    "decoded docids")) ||
        (rc = dgrow(d, st, (void **)&sl->d_wdfs, &sl->cap_wdfs,
                    b->decoded_total + 1, sizeof(uint32_t), "decoded wdfs")))
        return rc;
    if ((rc = dgrow(d, st, (void **)&sl->d_icount, &sl->cap_icount,
                    2 * (b->n_queries + 1), sizeof(uint32_t),
                    "match counts")) ||
        (rc = dgrow(d, st, (void **)&sl->d_touched, &sl->cap_touched,
                    b->touch_total + 1, sizeof(uint32_t),
                    "touched documents")) ||
        (rc = dgrow(d, st, (void **)&sl->d_icand, &sl->cap_icand,
                    b->icand_total + 1, sizeof(struct xg_dcand),
                    "intersection output")) ||
        (rc = dgrow(d, st, (void **)&sl->d_cand, &sl->cap_cand, b->cand_total + 1,
                    sizeof(struct xg_dcand), "candidates")) ||
        (rc = dgrow(d, st, (void **)&sl->d_res, &sl->cap_res, b->n_queries + 1,
                    sizeof(struct xg_dqresult), "query results")) ||
        (rc = dgrow(d, st, (void **)&sl->d_cand_wdf, &sl->cap_cand_wdf,
                    b->wdf_total + 1,
                    sizeof(uint32_t), "candidate wdfs")) ||
        (rc = dgrow(d, st, (void **)&sl->d_cand_in, &sl->cap_cand_in,
                    b->cand_total + 1, sizeof(unsigned long long),
                    "candidate lists")) ||
        (rc = dgrow_zeroed(d, st, (void **)&sl->d_sel, &sl->cap_sel, b->n_queries + 1,
                    sizeof(struct xg_select_state), "selection state")) ||
        (rc = dgrow_zeroed(d, st, (void **)&sl->d_hist, &sl->cap_hist,
                    (b->n_queries + 1) * (uint64_t)XG_SELECT_BINS,
                    sizeof(uint32_t),
                    "selection histograms")) ||
        (rc = dgrow(d, st, (void **)&sl->d_bsel, &sl->cap_bsel,
                    b->total_blocks + 1, 1, "block selection")) ||
        (rc = dgrow(d, st, (void **)&sl->d_mpos, &sl->cap_mpos, b->mpos_total + 1,
                    sizeof(uint32_t), "merge positions")))
        return rc;

    /* Only the candidates cross back, packed.  A small batch's come with
     * its results, all the room they may fill, packed here afterwards: a
     * copy that size costs less than the pack kernels.  A larger batch's
     * pack kernel writes them into the mapped pinned buffer: one round
     * trip either way. */
    const uint64_t room = b->cand_total * sizeof *s->h_cand;
    const int one_trip = room <= XG_ONE_TRIP_BYTES;
    const int in_turn =
        !d->overlap && b->n_queries >= XG_TURN_MIN_QUERIES;
    if (in_turn) pthread_mutex_lock(&d->order_mu);
    rc = queue_kernels(d, sl, b, &ds, one_trip, in_turn);
    if (in_turn) pthread_mutex_unlock(&d->order_mu);
    if (rc) return rc;
    XG_CUDA_CHECK(cudaMemcpyAsync(s->h_res, sl->d_res,
                                  b->n_queries * sizeof *s->h_res,
                                  cudaMemcpyDeviceToHost, st), "results");
    if (one_trip)
        XG_CUDA_CHECK(cudaMemcpyAsync(s->h_cand, sl->d_cand, room,
                                      cudaMemcpyDeviceToHost, st),
                      "candidates");
    XG_CUDA_CHECK(cudaEventRecord(sl->lane.ev_end, st), "timing event");
    XG_CUDA_CHECK(xg_device_lane_wait(&d->d, &sl->lane), "batch");
    if (one_trip) {
        /* Back to back, as the pack kernel leaves them: each query's
         * room starts at or after the packed position. */
        uint64_t at = 0;
        for (uint32_t i = 0; i < b->n_queries; ++i) {
            const uint64_t from = b->queries[i].cand_first;
            const uint32_t n = s->h_res[i].n_cand;
            if (at != from)
                memmove(s->h_cand + at, s->h_cand + from,
                        n * sizeof *s->h_cand);
            at += n;
        }
    }
    d->stage_used = 0; /* every list upload has landed */
    s->device_seconds = xg_device_lane_seconds(&sl->lane);
    return XG_OK;
}
