/** @file qlm_cuda_pass.c
 *  @brief The qlm GPU engine's three per-chunk entry points (qlm_int.h):
 *         in core, one pass that writes the table straight into the
 *         result; out of core, pass 1 (each chunk's distinct n-grams with
 *         their chunk counts, merged by the driver as the twin's are) and
 *         pass 2 (each chunk's rows with the global collection counts,
 *         placed at their n-gram's cursor).  Built only with CUDA.
 *
 *  Each level n runs on the device: the n-groups, the per-group sort of
 *  documents with f(x, d), and eq. 2; only the group and row arrays come
 *  back.  In pass 2 the host matches the chunk's n-grams (in order) with
 *  the global table of pass 1, a merge walk like the twin's find_global.
 */
#include <stdlib.h>
#include <string.h>

#include "../runtime/big_alloc.h"
#include "qlm_cuda_int.h"

static int nomem(void)
{
    return xg_set_error(XG_ERR_NOMEM, "qlm GPU: out of host memory");
}

/* Upload and sort, timed. */
static int prepare(xg_qlm_gpu *g, const struct xg_qlm_chunk *c,
                   const struct xg_qlm_gpu_args *a, double *seconds)
{
    int rc = xg_device_mark(&g->dev, -1, seconds);
    if (!rc) rc = xg_qlm_gpu_load(g, c, a);
    if (!rc) rc = xg_device_mark(&g->dev, XG_QLM_STEP_COPY, seconds);
    if (!rc) rc = xg_qlm_gpu_sort(g, c, a);
    if (!rc) rc = xg_device_mark(&g->dev, XG_QLM_STEP_SORT, seconds);
    return rc;
}

static struct xg_qlm_rowargs rowargs(xg_qlm_gpu *g, const struct xg_qlm_chunk *c,
                                     const struct xg_qlm_gpu_args *a, uint32_t n, int dbits)
{
    return (struct xg_qlm_rowargs){n, (uint32_t)dbits, c->n_words, g->d_doc_end, NULL, NULL,
                                   a->docids ? g->d_docids : NULL, c->doc_base, a->lambda};
}

/* The most rows (and n-grams) a chunk can have: every position starts one
 * n-gram of each length that fits in its document. */
static uint64_t row_bound(const struct xg_qlm_chunk *c, uint32_t sigma)
{
    uint64_t b = 0;
    for (uint32_t d = 0; d < c->n_docs; ++d) {
        const uint64_t len = c->doc_end[d] - (d ? c->doc_end[d - 1] : 0);
        for (uint32_t n = 1; n <= sigma && n <= len; ++n) b += len - n + 1;
    }
    return b;
}

static void *shrink(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    return q ? q : p;
}

int xg_qlm_gpu_whole(xg_qlm_gpu *g, const struct xg_qlm_chunk *c,
                     const struct xg_qlm_gpu_args *a, struct xg_qlm_result *r,
                     double *seconds)
{
    int rc = prepare(g, c, a, seconds);
    if (rc) return rc;
    /* Sized for the most there can be; untouched pages cost nothing, and
     * the arrays shrink to what was written. */
    const uint64_t bound = row_bound(c, a->sigma);
    r->gram_n = xg_big_alloc(bound + 1);
    r->gram_pos = xg_big_alloc((bound + 1) * sizeof *r->gram_pos);
    r->gram_off = xg_big_alloc((bound + 1) * sizeof *r->gram_off);
    r->docids = xg_big_alloc((bound + 1) * sizeof *r->docids);
    r->prob = xg_big_alloc((bound + 1) * sizeof *r->prob);
    if (a->counts) r->counts = xg_big_alloc((4 * bound + 1) * sizeof *r->counts);
    if (!r->gram_n || !r->gram_pos || !r->gram_off || !r->docids || !r->prob ||
        (a->counts && !r->counts))
        return nomem();
    uint64_t grams = 0, rows = 0;
    struct xg_qlm_lv prev, cur;
    memset(&prev, 0, sizeof prev);
    for (uint32_t n = 1; n <= a->sigma && !rc; ++n) {
        rc = xg_qlm_gpu_level(g, c, n, &cur);
        if (!rc) rc = xg_device_mark(&g->dev, XG_QLM_STEP_COUNT, seconds);
        if (rc || !cur.d.nL) break;
        const uint32_t ng = cur.d.ng, R = cur.d.R;
        XG_CUDA_CHECK(xg_qlm_grams_gpu(ng, cur.d.gstart, g->d_rowstart, cur.d.L, g->d_sa,
                                       c->word_base, rows, g->d_pos, NULL, NULL, g->d_off,
                                       g->dev.stream), "qlm GPU: n-grams");
        XG_CUDA_CHECK(xg_qlm_probs_gpu(cur.d, prev.d, rowargs(g, c, a, n, cur.dbits),
                                       g->d_odoc, g->d_oprob, a->counts ? g->d_ocnt : NULL,
                                       g->d_count, g->dev.stream), "qlm GPU: probabilities");
        rc = xg_device_mark(&g->dev, XG_QLM_STEP_PROB, seconds);
        if (!rc) rc = xg_staging_dtoh(&g->dev.stage, r->gram_pos + grams, g->d_pos, (size_t)ng * 8);
        if (!rc) rc = xg_staging_dtoh(&g->dev.stage, r->gram_off + grams, g->d_off, (size_t)ng * 8);
        if (!rc) rc = xg_staging_dtoh(&g->dev.stage, r->docids + rows, g->d_odoc, (size_t)R * 4);
        if (!rc) rc = xg_staging_dtoh(&g->dev.stage, r->prob + rows, g->d_oprob, (size_t)R * 8);
        if (!rc && a->counts)
            rc = xg_staging_dtoh(&g->dev.stage, r->counts + 4 * rows, g->d_ocnt, (size_t)R * 32);
        if (!rc) rc = xg_device_mark(&g->dev, XG_QLM_STEP_COPY, seconds);
        memset(r->gram_n + grams, (int)n, ng);
        grams += ng;
        rows += R;
        prev = cur;
    }
    if (!rc) rc = xg_qlm_gpu_check(g);
    if (!rc) rc = xg_device_marks_done(&g->dev, seconds);
    if (rc) return rc;
    r->gram_off[grams] = rows;
    r->n_grams = grams;
    r->n_rows = rows;
    r->gram_n = shrink(r->gram_n, grams + 1);
    r->gram_pos = shrink(r->gram_pos, (grams + 1) * sizeof *r->gram_pos);
    r->gram_off = shrink(r->gram_off, (grams + 1) * sizeof *r->gram_off);
    r->docids = shrink(r->docids, (rows + 1) * sizeof *r->docids);
    r->prob = shrink(r->prob, (rows + 1) * sizeof *r->prob);
    if (r->counts) r->counts = shrink(r->counts, (4 * rows + 1) * sizeof *r->counts);
    return XG_OK;
}

/* A chunk's n-gram list of ng entries, read from the device. */
static int get_grams(xg_qlm_gpu *g, uint32_t ng, struct xg_qlm_grams *l)
{
    l->pos = malloc(((size_t)ng + 1) * 8);
    l->z = malloc(((size_t)ng + 1) * 8);
    l->df = malloc(((size_t)ng + 1) * 8);
    if (!l->pos || !l->z || !l->df) return nomem();
    l->n = l->cap = ng;
    int rc = xg_staging_dtoh(&g->dev.stage, l->pos, g->d_pos, (size_t)ng * 8);
    if (!rc) rc = xg_staging_dtoh(&g->dev.stage, l->z, g->d_z, (size_t)ng * 8);
    if (!rc) rc = xg_staging_dtoh(&g->dev.stage, l->df, g->d_w, (size_t)ng * 8);
    return rc;
}

int xg_qlm_gpu_pass1(xg_qlm_gpu *g, const struct xg_qlm_chunk *c,
                     const struct xg_qlm_gpu_args *a, struct xg_qlm_grams *out,
                     double *seconds)
{
    int rc = prepare(g, c, a, seconds);
    struct xg_qlm_lv cur;
    for (uint32_t n = 1; n <= a->sigma && !rc; ++n) {
        rc = xg_qlm_gpu_level(g, c, n, &cur);
        if (rc || !cur.d.nL) break;
        /* d_w holds the numbers of documents here. */
        XG_CUDA_CHECK(xg_qlm_grams_gpu(cur.d.ng, cur.d.gstart, g->d_rowstart, cur.d.L,
                                       g->d_sa, c->word_base, 0, g->d_pos, g->d_z, g->d_w,
                                       NULL, g->dev.stream), "qlm GPU: n-grams");
        rc = xg_device_mark(&g->dev, XG_QLM_STEP_COUNT, seconds);
        if (!rc) rc = get_grams(g, cur.d.ng, &out[n]);
        if (!rc) rc = xg_device_mark(&g->dev, XG_QLM_STEP_COPY, seconds);
    }
    if (!rc) rc = xg_device_marks_done(&g->dev, seconds);
    return rc;
}

/* Host buffers of pass 2, for one level of one chunk. */
struct p2 {
    uint64_t *pos, *z, *w, *gi;
    uint32_t *rs, *doc;
    double *prob;
    uint64_t *cnt;
};

static void p2_free(struct p2 *b)
{
    free(b->pos);
    free(b->z);
    free(b->w);
    free(b->gi);
    free(b->rs);
    free(b->doc);
    free(b->prob);
    free(b->cnt);
}

/* The global index, f(x, C) and f(h, C) of each of the chunk's n-grams of
 * one level (both lists in n-gram order). */
static int match(const struct xg_qlm_tables *t, uint32_t n, uint32_t ng, struct p2 *b)
{
    const struct xg_qlm_grams *G = &t->g[n];
    uint64_t gi = 0;
    for (uint32_t j = 0; j < ng; ++j) {
        while (gi < G->n && xg_qlm_cmp(t->ids, G->pos[gi], b->pos[j], n) < 0) ++gi;
        if (gi == G->n || xg_qlm_cmp(t->ids, G->pos[gi], b->pos[j], n))
            return xg_set_error(XG_ERR_FORMAT, "qlm GPU: an n-gram of pass 2 is missing "
                                "from pass 1 (n = %u)", n);
        b->gi[j] = gi;
        b->z[j] = G->z[gi];
        b->w[j] = t->w[n][gi];
    }
    return XG_OK;
}

/* Rows of each n-gram to its cursor; chunks come in document order. */
static void place(const struct xg_qlm_tables *t, uint32_t n, uint32_t ng, const struct p2 *b)
{
    struct xg_qlm_result *r = t->r;
    for (uint32_t j = 0; j < ng; ++j) {
        uint64_t *cursor = &t->cursor[t->base[n] + b->gi[j]];
        const uint32_t lo = b->rs[j], m = b->rs[j + 1] - lo;
        memcpy(r->docids + *cursor, b->doc + lo, (size_t)m * sizeof *r->docids);
        memcpy(r->prob + *cursor, b->prob + lo, (size_t)m * sizeof *r->prob);
        if (r->counts)
            memcpy(r->counts + 4 * *cursor, b->cnt + 4 * (size_t)lo, (size_t)m * 32);
        *cursor += m;
    }
}

static int level2(xg_qlm_gpu *g, const struct xg_qlm_chunk *c,
                  const struct xg_qlm_gpu_args *a, const struct xg_qlm_tables *t,
                  uint32_t n, const struct xg_qlm_lv *cur, const struct xg_qlm_lv *prev,
                  struct p2 *b, double *seconds)
{
    const uint32_t ng = cur->d.ng, R = cur->d.R;
    const int cnt = t->r->counts != NULL;
    XG_CUDA_CHECK(xg_qlm_grams_gpu(ng, cur->d.gstart, g->d_rowstart, cur->d.L, g->d_sa,
                                   c->word_base, 0, g->d_pos, NULL, NULL, NULL, g->dev.stream),
                  "qlm GPU: n-grams");
    int rc = xg_staging_dtoh(&g->dev.stage, b->pos, g->d_pos, (size_t)ng * 8);
    if (!rc) rc = xg_device_mark(&g->dev, XG_QLM_STEP_COPY, seconds);
    double t0 = xg_now();
    if (!rc) rc = match(t, n, ng, b);
    seconds[XG_QLM_STEP_MERGE] += xg_now() - t0;
    if (!rc) rc = xg_device_mark(&g->dev, -1, seconds);  /* host time is not a copy */
    if (!rc) rc = xg_staging_htod(&g->dev.stage, g->d_z, b->z, (size_t)ng * 8);
    if (!rc) rc = xg_staging_htod(&g->dev.stage, g->d_w, b->w, (size_t)ng * 8);
    if (!rc) rc = xg_device_mark(&g->dev, XG_QLM_STEP_COPY, seconds);
    if (rc) return rc;
    struct xg_qlm_rowargs ra = rowargs(g, c, a, n, cur->dbits);
    ra.z = g->d_z;
    ra.w = g->d_w;
    XG_CUDA_CHECK(xg_qlm_probs_gpu(cur->d, prev->d, ra, g->d_odoc, g->d_oprob,
                                   cnt ? g->d_ocnt : NULL, g->d_count, g->dev.stream),
                  "qlm GPU: probabilities");
    rc = xg_device_mark(&g->dev, XG_QLM_STEP_PROB, seconds);
    if (!rc) rc = xg_staging_dtoh(&g->dev.stage, b->rs, g->d_rowstart, ((size_t)ng + 1) * 4);
    if (!rc) rc = xg_staging_dtoh(&g->dev.stage, b->doc, g->d_odoc, (size_t)R * 4);
    if (!rc) rc = xg_staging_dtoh(&g->dev.stage, b->prob, g->d_oprob, (size_t)R * 8);
    if (!rc && cnt) rc = xg_staging_dtoh(&g->dev.stage, b->cnt, g->d_ocnt, (size_t)R * 32);
    if (!rc) rc = xg_device_mark(&g->dev, XG_QLM_STEP_COPY, seconds);
    t0 = xg_now();
    if (!rc) place(t, n, ng, b);
    seconds[XG_QLM_STEP_MERGE] += xg_now() - t0;
    if (!rc) rc = xg_device_mark(&g->dev, -1, seconds);
    return rc;
}

int xg_qlm_gpu_pass2(xg_qlm_gpu *g, const struct xg_qlm_chunk *c,
                     const struct xg_qlm_gpu_args *a, const struct xg_qlm_tables *t,
                     double *seconds)
{
    const size_t m = (size_t)c->n_words + 1;
    struct p2 b = {malloc(m * 8), malloc(m * 8), malloc(m * 8), malloc(m * 8),
                   malloc((m + 1) * 4), malloc(m * 4), malloc(m * 8),
                   t->r->counts ? malloc(m * 32) : NULL};
    int rc = b.pos && b.z && b.w && b.gi && b.rs && b.doc && b.prob &&
             (b.cnt || !t->r->counts) ? XG_OK : nomem();
    if (!rc) rc = prepare(g, c, a, seconds);
    struct xg_qlm_lv prev, cur;
    memset(&prev, 0, sizeof prev);
    for (uint32_t n = 1; n <= a->sigma && !rc; ++n) {
        rc = xg_qlm_gpu_level(g, c, n, &cur);
        if (!rc) rc = xg_device_mark(&g->dev, XG_QLM_STEP_COUNT, seconds);
        if (rc || !cur.d.nL) break;
        rc = level2(g, c, a, t, n, &cur, &prev, &b, seconds);
        prev = cur;
    }
    if (!rc) rc = xg_qlm_gpu_check(g);
    if (!rc) rc = xg_device_marks_done(&g->dev, seconds);
    p2_free(&b);
    return rc;
}
