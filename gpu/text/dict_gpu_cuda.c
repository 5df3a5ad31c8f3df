/** @file dict_gpu_cuda.c
 *  @brief The GPU dictionary's host side (text/dict_gpu.h): device buffers, the
 *         sequence of text/dict_gpu.cu's steps, the ranking rounds and the copies
 *         back, on the owner's device (runtime/device.h: its stream, staging
 *         and stream-ordered pool).  Built only with CUDA.
 */
#include "dict_gpu.h"
#include "dict_gpu_items.h"

#include <stdlib.h>
#include <string.h>

#include "../runtime/device.h"
#include "../runtime/knobs.h"

int xg_gdict_tmp_bytes(uint32_t n, size_t *bytes);
uint32_t xg_gdict_start_tiles(uint32_t n);
int xg_gdict_starts_gpu(const unsigned char *t, uint32_t n, uint32_t *tiles, uint32_t *d_start,
                        uint32_t *d_count, void *tmp, size_t tmp_bytes, cudaStream_t st);
int xg_gdict_words_gpu(const unsigned char *t, uint32_t n, const uint32_t *start, uint32_t nw,
                       uint64_t mask, uint32_t *len, uint64_t *key, uint32_t *idx,
                       uint8_t *docflag, uint32_t *d_dstart, uint32_t *d_count, void *tmp,
                       size_t tmp_bytes, cudaStream_t st);
int xg_gdict_doclen_gpu(const uint32_t *dstart, uint32_t nd, uint32_t nw, uint32_t *doclen,
                        cudaStream_t st);
int xg_gdict_sort_gpu(uint64_t *k0, uint64_t *k1, uint32_t *v0, uint32_t *v1, uint32_t n,
                      int bits, int *in_second, void *tmp, size_t tmp_bytes, cudaStream_t st);
int xg_gdict_groups_gpu(const uint64_t *key, const uint32_t *val, uint32_t n, uint32_t *head,
                        uint32_t *gid, uint32_t *rep, uint32_t *d_count, void *tmp,
                        size_t tmp_bytes, cudaStream_t st);
int xg_gdict_check_gpu(const unsigned char *t, const uint32_t *start, const uint32_t *len,
                       const uint64_t *key, const uint32_t *sidx, const uint32_t *gid,
                       const uint32_t *rep, uint32_t n, uint32_t *err, cudaStream_t st);
int xg_gdict_iota_gpu(uint32_t *a, uint32_t n, cudaStream_t st);
int xg_gdict_round_keys_gpu(const unsigned char *t, const uint32_t *start, const uint32_t *len,
                            const uint32_t *rep, const uint32_t *perm, const uint32_t *group,
                            uint32_t nt, uint32_t r, int by_length, uint64_t *key,
                            cudaStream_t st);
int xg_gdict_regroup_gpu(const uint64_t *key, const uint32_t *len, const uint32_t *rep,
                         const uint32_t *perm, uint32_t nt, uint32_t compared, uint32_t *head,
                         uint32_t *group, uint32_t *d_count, void *tmp, size_t tmp_bytes,
                         cudaStream_t st);
int xg_gdict_invert_gpu(const uint32_t *perm, uint32_t nt, uint32_t *rank, cudaStream_t st);
int xg_gdict_ranks_gpu(const uint32_t *perm, const uint32_t *rep, const uint32_t *start,
                       const uint32_t *len, uint32_t nt, uint32_t *rank, uint32_t *term_off,
                       uint32_t *term_len, cudaStream_t st);
int xg_gdict_ids_gpu(const uint32_t *sidx, const uint32_t *gid, const uint32_t *rank,
                     uint32_t nw, uint32_t *ids, cudaStream_t st);
int xg_gdict_sorted_pairs_gpu(const uint32_t *sidx, const uint32_t *gid, const uint32_t *rank,
                              const uint32_t *dstart, uint32_t nd, uint32_t nw, uint32_t nt,
                              int dbits, uint32_t *run_start, uint32_t *count,
                              uint32_t *out_start, uint64_t *key, void *tmp, size_t tmp_bytes,
                              cudaStream_t st);

/* Every device buffer, freed together. */
struct work {
    cudaStream_t st;                /* the owner's device's */
    struct xg_staging *stage;
    /* On the owner's stream, counted apart from its budget (the owner
     * frees what it is handed with cudaFreeAsync). */
    struct xg_pool pool;
    unsigned char *t;
    uint8_t *flag;              /* per word: it starts a document */
    void *tmp;
    uint32_t *count;            /* [2]: a select's count, an error flag */
    uint32_t *tiles;            /* the word starts' scratch */
    int dbits;                  /* the pairs' document bits (on device) */
    uint32_t *start, *len, *v0, *v1, *head, *gid, *rep, *dstart, *doclen;
    uint32_t *p0, *p1, *group, *rank, *term_off, *term_len, *ids;
    uint64_t *k0, *k1;
    cudaEvent_t up[2];          /* around the text's upload */
};

static int bits_for(uint64_t v)
{
    return v ? 64 - __builtin_clzll(v) : 0;
}

/* k counters from the device, after the work before them. */
static int get_u32s(struct work *w, const uint32_t *d, uint32_t *v, int k)
{
    XG_CUDA_CHECK(cudaMemcpyAsync(v, d, (size_t)k * sizeof *v, cudaMemcpyDeviceToHost, w->st),
                  "GPU dictionary: count");
    XG_CUDA_CHECK(cudaStreamSynchronize(w->st), "GPU dictionary");
    return XG_OK;
}

static int get_u32(struct work *w, const uint32_t *d, uint32_t *v)
{
    return get_u32s(w, d, v, 1);
}

/* Stream-ordered, from the device's default pool: not the driver once a
 * run has grown it and the pool keeps it (the weight engine opens its
 * device with keep_pool). */
#define WHAT_ALLOC "GPU dictionary: cudaMallocAsync"
#define ALLOC(p, n)                                                                    \
    do {                                                                               \
        const int rc_ = xg_pool_alloc_async(&w->pool, (void **)&(p),                   \
                                            (size_t)(n) * sizeof *(p) + 8, WHAT_ALLOC); \
        if (rc_) return rc_;                                                           \
    } while (0)
#define STEP(call, what) XG_CUDA_CHECK((cudaError_t)(call), "GPU dictionary: " what)

/* Sort pairs in (*k, *v) with spares (*k2, *v2); the sorted ones end in
 * (*k, *v). */
static int sort(struct work *w, uint64_t **k, uint64_t **k2, uint32_t **v, uint32_t **v2,
                uint32_t n, int bits, size_t tmp_bytes)
{
    int second = 0;
    STEP(xg_gdict_sort_gpu(*k, *k2, *v, *v2, n, bits, &second, w->tmp, tmp_bytes, w->st),
         "sort");
    if (second) {
        uint64_t *tk = *k;
        *k = *k2;
        *k2 = tk;
        uint32_t *tv = *v;
        *v = *v2;
        *v2 = tv;
    }
    return XG_OK;
}

/* Step 3 for nt distinct terms, term k's bytes t[start[rep[k]], +
 * len[rep[k]]): a round of their first 8 bytes, then rounds of (group,
 * next 4 bytes) while terms longer than the bytes compared are tied,
 * then, if any are still tied, (group, length), until w->p0 lists the
 * terms in byte order.  Uses w->p0, p1, group and head (nt entries),
 * w->count, w->tmp, and ka (nt 64-bit keys). */
static int rank_rounds(struct work *w, const unsigned char *t, const uint32_t *start,
                       const uint32_t *len, const uint32_t *rep, uint32_t nt, uint64_t *ka,
                       size_t tmp_bytes)
{
    STEP(xg_gdict_iota_gpu(w->p0, nt, w->st), "ranking");
    STEP(cudaMemsetAsync(w->group, 0, (size_t)nt * 4, w->st), "ranking");
    uint64_t *const ka0 = ka, *kb = NULL;
    ALLOC(kb, nt);
    uint32_t left[2] = {0, 0};      /* unresolved, tied (regroup) */
    int rc = XG_OK;
    for (uint32_t r = 0;; ++r) {
        if (r == XG_GDICT_MAX_ROUNDS) {
            rc = xg_set_error(XG_ERR_UNSUPPORTED, "GPU dictionary: words share more than "
                              "%u bytes", xg_gdict_round_bytes(r - 1));
            break;
        }
        const int last = r > 0 && !left[0];
        if (xg_gdict_round_keys_gpu(t, start, len, rep, w->p0, w->group, nt, r, last, ka,
                                    w->st)) {
            rc = xg_set_error(XG_ERR_CUDA, "GPU dictionary: ranking");
            break;
        }
        const int bits = r == 0 && !last ? 64 : 32 + bits_for(nt);
        rc = sort(w, &ka, &kb, &w->p0, &w->p1, nt, bits, tmp_bytes);
        if (rc || last) break;
        if (xg_gdict_regroup_gpu(ka, len, rep, w->p0, nt, xg_gdict_round_bytes(r), w->head,
                                 w->group, w->count, w->tmp, tmp_bytes, w->st)) {
            rc = xg_set_error(XG_ERR_CUDA, "GPU dictionary: ranking");
            break;
        }
        if ((rc = get_u32s(w, w->count, left, 2))) break;
        if (!left[1]) break;        /* no two terms tied: ranked */
        /* left[0]: terms tied so far and longer; none: one more round, by
         * length (ties of trailing zero bytes) */
    }
    cudaFreeAsync(ka == ka0 ? kb : ka, w->st);
    return rc;
}

static int build(struct work *w, const char *text, uint32_t n, struct xg_gdict *out,
                 const struct xg_gdict_device *dev)
{
    const int on_device = dev != NULL;
    size_t tmp_bytes = 0;
    STEP(xg_gdict_tmp_bytes(n, &tmp_bytes), "workspace");
    ALLOC(w->t, n);
    ALLOC(w->count, 2);
    ALLOC(w->start, n / 2 + 1);
    int rc = xg_pool_alloc_async(&w->pool, &w->tmp, tmp_bytes + 8, WHAT_ALLOC);
    if (rc) return rc;
    XG_CUDA_CHECK(cudaEventCreate(&w->up[0]), "GPU dictionary: event");
    XG_CUDA_CHECK(cudaEventCreate(&w->up[1]), "GPU dictionary: event");
    XG_CUDA_CHECK(cudaEventRecord(w->up[0], w->st), "GPU dictionary: event");
    rc = xg_staging_htod(w->stage, w->t, text, n);
    if (rc) return rc;
    XG_CUDA_CHECK(cudaEventRecord(w->up[1], w->st), "GPU dictionary: event");
    /* 1. words */
    uint32_t nw = 0, nd = 0, nt = 0, err = 0;
    ALLOC(w->tiles, 2 * xg_gdict_start_tiles(n));
    STEP(xg_gdict_starts_gpu(w->t, n, w->tiles, w->start, w->count, w->tmp, tmp_bytes, w->st),
         "word starts");
    if ((rc = get_u32(w, w->count, &nw))) return rc;
    if (!nw) return xg_set_error(XG_ERR_UNSUPPORTED, "GPU dictionary: no words");
    if (dev && dev->on_words) dev->on_words(dev->arg, nw);
    ALLOC(w->flag, nw);         /* each word's document flag */
    ALLOC(w->len, nw);
    ALLOC(w->k0, nw);
    ALLOC(w->k1, nw);
    ALLOC(w->v0, nw);
    ALLOC(w->v1, nw);
    ALLOC(w->head, nw);
    ALLOC(w->gid, nw);
    ALLOC(w->rep, nw);
    ALLOC(w->dstart, nw);
    if (!on_device) ALLOC(w->ids, nw);
    STEP(xg_gdict_words_gpu(w->t, n, w->start, nw, xg_knob_test_gdict_mask(), w->len, w->k0,
                            w->v0, w->flag, w->dstart, w->count, w->tmp, tmp_bytes, w->st),
         "words");
    if ((rc = get_u32(w, w->count, &nd))) return rc;
    ALLOC(w->doclen, nd);
    STEP(xg_gdict_doclen_gpu(w->dstart, nd, nw, w->doclen, w->st), "document lengths");
    /* 2. terms: runs of equal keys, each hashed one checked byte by byte */
    if ((rc = sort(w, &w->k0, &w->k1, &w->v0, &w->v1, nw, 64, tmp_bytes))) return rc;
    STEP(xg_gdict_groups_gpu(w->k0, w->v0, nw, w->head, w->gid, w->rep, w->count, w->tmp,
                             tmp_bytes, w->st), "terms");
    if ((rc = get_u32(w, w->count, &nt))) return rc;
    STEP(cudaMemsetAsync(w->count + 1, 0, 4, w->st), "check");
    STEP(xg_gdict_check_gpu(w->t, w->start, w->len, w->k0, w->v0, w->gid, w->rep, nw,
                            w->count + 1, w->st), "check");
    if ((rc = get_u32(w, w->count + 1, &err))) return rc;
    if (err)
        return xg_set_error(XG_ERR_UNSUPPORTED, "GPU dictionary: two words share a hash");
    /* 3. byte order (k1 is free for the terms' keys) */
    ALLOC(w->p0, nt);
    ALLOC(w->p1, nt);
    ALLOC(w->group, nt);
    if ((rc = rank_rounds(w, w->t, w->start, w->len, w->rep, nt, w->k1, tmp_bytes))) return rc;
    /* 4. ids */
    ALLOC(w->rank, nt);
    ALLOC(w->term_off, nt);
    ALLOC(w->term_len, nt);
    STEP(xg_gdict_ranks_gpu(w->p0, w->rep, w->start, w->len, nt, w->rank, w->term_off,
                            w->term_len, w->st), "ranks");
    if (on_device) {    /* k0 is free: the pairs go there (p0, p1 and group too) */
        w->dbits = bits_for(nd - 1);
        STEP(xg_gdict_sorted_pairs_gpu(w->v0, w->gid, w->rank, w->dstart, nd, nw, nt,
                                       w->dbits, w->p0, w->p1, w->group, w->k0,
                                       w->tmp, tmp_bytes, w->st), "pairs");
    } else {
        STEP(xg_gdict_ids_gpu(w->v0, w->gid, w->rank, nw, w->ids, w->st), "ids");
    }
    out->ids = on_device ? NULL : malloc((size_t)nw * 4 + 4);
    out->doclen = malloc((size_t)nd * 4 + 4);
    out->term_off = on_device ? NULL : malloc((size_t)nt * 4 + 4);
    out->term_len = malloc((size_t)nt * 4 + 4);
    if ((!on_device && (!out->ids || !out->term_off)) || !out->doclen || !out->term_len)
        return xg_set_error(XG_ERR_NOMEM, "GPU dictionary: out of memory");
    STEP(cudaMemcpyAsync(out->doclen, w->doclen, (size_t)nd * 4, cudaMemcpyDeviceToHost,
                         w->st), "copy back");
    if (!on_device)
        STEP(cudaMemcpyAsync(out->term_off, w->term_off, (size_t)nt * 4,
                             cudaMemcpyDeviceToHost, w->st), "copy back");
    STEP(cudaMemcpyAsync(out->term_len, w->term_len, (size_t)nt * 4, cudaMemcpyDeviceToHost,
                         w->st), "copy back");
    if (on_device) XG_CUDA_CHECK(cudaStreamSynchronize(w->st), "GPU dictionary");
    else if ((rc = xg_staging_dtoh(w->stage, out->ids, w->ids, (size_t)nw * 4))) return rc;
    float ms = 0;
    XG_CUDA_CHECK(cudaEventElapsedTime(&ms, w->up[0], w->up[1]), "GPU dictionary: timing");
    out->upload_seconds = ms * 1e-3;
    out->n_words = nw;
    out->n_docs = nd;
    out->n_terms = nt;
    return XG_OK;
}

/* Work on the owner's device's stream, with its staging. */
static void work_init(struct work *w, struct xg_device *owner)
{
    memset(w, 0, sizeof *w);
    w->stage = &owner->stage;
    w->st = owner->stream;
    w->pool = (struct xg_pool){owner->stream, "GPU dictionary", UINT64_MAX, 0};
}

static int build_any(const char *text, size_t len, struct xg_device *owner,
                     struct xg_gdict *out, struct xg_gdict_device *dev)
{
    memset(out, 0, sizeof *out);
    if (len == 0 || len >= UINT32_MAX - 8)
        return xg_set_error(XG_ERR_UNSUPPORTED, "GPU dictionary: %zu bytes", len);
    int rc = xg_device_present("GPU dictionary");
    if (rc) return rc;
    struct work w;
    work_init(&w, owner);
    rc = build(&w, text, (uint32_t)len, out, dev);
    if (w.st) cudaStreamSynchronize(w.st);
    if (dev && !rc) {       /* handed over, not freed */
        dev->pairs = w.k0;
        dev->dbits = w.dbits;
        dev->term_off = w.term_off;
        w.k0 = NULL;
        w.term_off = NULL;
    }
    void *all[] = {w.t, w.flag, w.tmp, w.count, w.tiles, w.start, w.len, w.v0, w.v1, w.head, w.gid,
                   w.rep, w.dstart, w.doclen, w.p0, w.p1, w.group, w.rank, w.term_off,
                   w.term_len, w.ids, w.k0, w.k1};
    for (size_t i = 0; i < sizeof all / sizeof *all; ++i)
        if (all[i]) cudaFreeAsync(all[i], w.st);
    for (int i = 0; i < 2; ++i)
        if (w.up[i]) cudaEventDestroy(w.up[i]);
    if (rc) xg_gdict_free(out);
    return rc;
}

int xg_gdict_build(const char *text, size_t len, struct xg_device *owner, struct xg_gdict *out)
{
    return build_any(text, len, owner, out, NULL);
}

int xg_gdict_build_on_device(const char *text, size_t len, struct xg_device *owner,
                             struct xg_gdict *out, struct xg_gdict_device *dev)
{
    dev->pairs = NULL;
    dev->term_off = NULL;
    dev->dbits = 0;
    return build_any(text, len, owner, out, dev);
}

static int rank_only(struct work *w, const unsigned char *t, const uint32_t *start,
                     const uint32_t *len, uint32_t nt, uint32_t *rank)
{
    size_t tmp_bytes = 0;
    STEP(xg_gdict_tmp_bytes(nt, &tmp_bytes), "workspace");
    int rc = xg_pool_alloc_async(&w->pool, &w->tmp, tmp_bytes + 8, WHAT_ALLOC);
    if (rc) return rc;
    ALLOC(w->count, 2);
    ALLOC(w->rep, nt);
    ALLOC(w->p0, nt);
    ALLOC(w->p1, nt);
    ALLOC(w->group, nt);
    ALLOC(w->head, nt);
    ALLOC(w->k1, nt);
    STEP(xg_gdict_iota_gpu(w->rep, nt, w->st), "ranking");
    rc = rank_rounds(w, t, start, len, w->rep, nt, w->k1, tmp_bytes);
    if (!rc) STEP(xg_gdict_invert_gpu(w->p0, nt, rank, w->st), "ranking");
    return rc;
}

int xg_gdict_rank(struct xg_device *owner, const unsigned char *t, const uint32_t *start,
                  const uint32_t *len, uint32_t nt, uint32_t *rank)
{
    if (!nt) return XG_OK;
    struct work w;
    work_init(&w, owner);
    int rc = rank_only(&w, t, start, len, nt, rank);
    cudaStreamSynchronize(w.st);
    void *all[] = {w.tmp, w.count, w.rep, w.p0, w.p1, w.group, w.head, w.k1};
    for (size_t i = 0; i < sizeof all / sizeof *all; ++i)
        if (all[i]) cudaFreeAsync(all[i], w.st);
    return rc;
}

void xg_gdict_free(struct xg_gdict *d)
{
    free(d->ids);
    free(d->doclen);
    free(d->term_off);
    free(d->term_len);
    memset(d, 0, sizeof *d);
}
