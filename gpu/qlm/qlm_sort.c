/** @file qlm_sort.c
 *  @brief Step 2 of seed 002 on the CPU: the chunk's sigma-word suffixes
 *         sorted by prefix doubling over term ids (Algorithm 1) or, as the
 *         benchmark's alternative, by a comparison sort of sigma-word keys;
 *         then the array of leading words shared by neighbours that the
 *         counts of step 3 read.
 *
 *  Prefix doubling, as the GPU will run it: ranks start as term id + 1
 *  (0 is "past the end of the document", below every word); each round
 *  sorts, inside each segment of equal rank, the pairs (rank of the
 *  suffix k words on, position) and gives every item the index + 1 of the
 *  head of its run of equal keys (order-preserving ranks, computed
 *  locally: Manber-Myers).  A suffix with at most k words left in its
 *  document gets 0 as the second key, so n-grams never cross documents.
 *  After the round p (sorted words) grows by k; k doubles and is clipped
 *  so p ends exactly at sigma.  Ties end up by position in both sorts.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/error.h"
#include "qlm_int.h"

#define MAX_THREADS 256
/* Segments a thread takes at once from the shared counter. */
#define SEG_BLOCK 64

struct seg {
    uint32_t lo, hi;
};

struct dbl {
    const struct xg_qlm_chunk *c;
    uint32_t *sa, *rank;
    uint64_t *key, *tmp;
    const struct seg *segs;
    uint64_t n_segs;
    atomic_uint_fast64_t *next;
    uint32_t k;
    int phase;              /* 0: keys and sort; 1: ranks and segments */
    struct seg *out;        /* phase 1: this thread's new segments */
    uint64_t n_out, cap_out;
    int rc;
};

static void seg_keys(struct dbl *a, struct seg s)
{
    const struct xg_qlm_chunk *c = a->c;
    for (uint32_t i = s.lo; i < s.hi; ++i) {
        const uint32_t p = a->sa[i];
        const uint64_t k2 = xg_qlm_len(c, p) > a->k ? a->rank[p + a->k] : 0;
        a->key[i] = k2 << 32 | p;
    }
    xg_qlm_sort_u64(a->key + s.lo, s.hi - s.lo, a->tmp + s.lo);
}

/* Ranks from the sorted keys of [lo, hi) (all of one old rank); runs of
 * more than one item become the next round's segments. */
static int seg_ranks(uint32_t *sa, uint32_t *rank, const uint64_t *key,
                     uint32_t lo, uint32_t hi, struct seg **out, uint64_t *n_out,
                     uint64_t *cap_out)
{
    for (uint32_t i = lo; i < hi;) {
        uint32_t j = i;
        while (j < hi && key[j] >> 32 == key[i] >> 32) {
            sa[j] = (uint32_t)key[j];
            rank[sa[j]] = i + 1;
            ++j;
        }
        if (j - i > 1) {
            if (*n_out == *cap_out) {
                *cap_out = 2 * *cap_out + 256;
                struct seg *ns = realloc(*out, *cap_out * sizeof *ns);
                if (!ns) return XG_ERR_NOMEM;
                *out = ns;
            }
            (*out)[(*n_out)++] = (struct seg){i, j};
        }
        i = j;
    }
    return XG_OK;
}

static void *dbl_thread(void *arg)
{
    struct dbl *a = arg;
    for (;;) {
        uint64_t s0 = atomic_fetch_add(a->next, SEG_BLOCK);
        if (s0 >= a->n_segs) break;
        uint64_t s1 = s0 + SEG_BLOCK < a->n_segs ? s0 + SEG_BLOCK : a->n_segs;
        for (uint64_t s = s0; s < s1 && !a->rc; ++s) {
            if (a->phase == 0) seg_keys(a, a->segs[s]);
            else a->rc = seg_ranks(a->sa, a->rank, a->key, a->segs[s].lo,
                                   a->segs[s].hi, &a->out, &a->n_out, &a->cap_out);
        }
    }
    return NULL;
}

static int doubling(const struct xg_qlm_chunk *c, uint32_t sigma, uint32_t threads,
                    uint32_t *sa)
{
    const uint32_t n = c->n_words;
    uint32_t *rank = malloc(((size_t)n + 1) * sizeof *rank);
    uint64_t *key = malloc(((size_t)n + 1) * sizeof *key);
    uint64_t *tmp = malloc(((size_t)n + 1) * sizeof *tmp);
    struct dbl *a = calloc(threads, sizeof *a);
    struct seg *segs = NULL;
    uint64_t n_segs = 0, cap = 0;
    int rc = rank && key && tmp && a ? XG_OK : XG_ERR_NOMEM;
    if (!rc) {
        /* Round 0: sort by the first word. */
        for (uint32_t i = 0; i < n; ++i) key[i] = (uint64_t)(c->ids[i] + 1u) << 32 | i;
        xg_qlm_sort_u64(key, n, tmp);
        rc = seg_ranks(sa, rank, key, 0, n, &segs, &n_segs, &cap);
    }
    uint32_t p = 1, k = 1;
    while (!rc && p < sigma && n_segs) {
        atomic_uint_fast64_t next;
        for (int phase = 0; phase < 2 && !rc; ++phase) {
            atomic_init(&next, 0);
            for (uint32_t t = 0; t < threads; ++t)
                a[t] = (struct dbl){c, sa, rank, key, tmp, segs, n_segs, &next, k,
                                    phase, NULL, 0, 0, 0};
            xg_threads_run(threads, dbl_thread, a, sizeof *a);
            if (phase == 0) continue;
            /* The new segments: the threads' lists, one after another. */
            uint64_t total = 0;
            for (uint32_t t = 0; t < threads; ++t) {
                if (a[t].rc) rc = XG_ERR_NOMEM;
                total += a[t].n_out;
            }
            if (!rc && total > cap) {
                struct seg *ns = realloc(segs, total * sizeof *ns);
                if (!ns) rc = XG_ERR_NOMEM;
                else { segs = ns; cap = total; }
            }
            n_segs = 0;
            for (uint32_t t = 0; t < threads; ++t) {
                if (!rc && a[t].n_out)  /* no segments: no array */
                    memcpy(segs + n_segs, a[t].out, a[t].n_out * sizeof *segs);
                n_segs += a[t].n_out;
                free(a[t].out);
            }
        }
        p += k;
        k *= 2;
        if (p + k > sigma) k = sigma - p;
    }
    free(rank);
    free(key);
    free(tmp);
    free(a);
    free(segs);
    return rc;
}

/* --- the comparison sort ------------------------------------------------ */

struct cmp_ctx {
    const struct xg_qlm_chunk *c;
    uint32_t sigma;
};

static int cmp_keys(const void *x, const void *y, void *ctx)
{
    const struct cmp_ctx *k = ctx;
    const uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    const uint32_t la = xg_qlm_len(k->c, a), lb = xg_qlm_len(k->c, b);
    for (uint32_t i = 0; i < k->sigma && (i < la || i < lb); ++i) {
        const uint64_t wa = i < la ? (uint64_t)k->c->ids[a + i] + 1 : 0;
        const uint64_t wb = i < lb ? (uint64_t)k->c->ids[b + i] + 1 : 0;
        if (wa != wb) return wa < wb ? -1 : 1;
    }
    return (a > b) - (a < b);
}

struct part {
    struct cmp_ctx *ctx;
    uint32_t *v;
    size_t n;
};

static void *sort_part(void *arg)
{
    struct part *p = arg;
    qsort_r(p->v, p->n, sizeof *p->v, cmp_keys, p->ctx);
    return NULL;
}

static int compare(const struct xg_qlm_chunk *c, uint32_t sigma, uint32_t threads,
                   uint32_t *sa)
{
    const uint32_t n = c->n_words;
    struct cmp_ctx ctx = {c, sigma};
    struct part parts[MAX_THREADS];
    size_t lo[MAX_THREADS + 1];
    uint32_t *tmp = malloc(((size_t)n + 1) * sizeof *tmp);
    if (!tmp) return XG_ERR_NOMEM;
    for (uint32_t i = 0; i < n; ++i) sa[i] = i;
    for (uint32_t t = 0; t <= threads; ++t) lo[t] = (size_t)n * t / threads;
    for (uint32_t t = 0; t < threads; ++t)
        parts[t] = (struct part){&ctx, sa + lo[t], lo[t + 1] - lo[t]};
    xg_threads_run(threads, sort_part, parts, sizeof *parts);
    /* Merge the sorted runs pairwise until one is left. */
    uint32_t *src = sa, *dst = tmp;
    for (uint32_t width = 1; width < threads; width *= 2) {
        for (uint32_t t = 0; t < threads; t += 2 * width) {
            size_t i = lo[t], m = lo[t + width < threads ? t + width : threads];
            size_t e = lo[t + 2 * width < threads ? t + 2 * width : threads];
            size_t j = m, o = i;
            while (i < m && j < e)
                dst[o++] = cmp_keys(&src[j], &src[i], &ctx) < 0 ? src[j++] : src[i++];
            while (i < m) dst[o++] = src[i++];
            while (j < e) dst[o++] = src[j++];
        }
        uint32_t *s = src;
        src = dst;
        dst = s;
    }
    if (src != sa) memcpy(sa, src, (size_t)n * sizeof *sa);
    free(tmp);
    return XG_OK;
}

/* --- shared words of neighbours ----------------------------------------- */

struct lcp_arg {
    const struct xg_qlm_chunk *c;
    const uint32_t *sa;
    uint8_t *lcp;
    uint32_t sigma, lo, hi;
};

static void *lcp_range(void *arg)
{
    struct lcp_arg *a = arg;
    for (uint32_t i = a->lo; i < a->hi; ++i) {
        if (i == 0) { a->lcp[0] = 0; continue; }
        const uint32_t x = a->sa[i - 1], y = a->sa[i];
        uint32_t m = a->sigma, lx = xg_qlm_len(a->c, x), ly = xg_qlm_len(a->c, y);
        if (lx < m) m = lx;
        if (ly < m) m = ly;
        uint32_t l = 0;
        while (l < m && a->c->ids[x + l] == a->c->ids[y + l]) ++l;
        a->lcp[i] = (uint8_t)l;
    }
    return NULL;
}

int xg_qlm_sort_ref(const struct xg_qlm_chunk *c, uint32_t sigma, int how,
                    uint32_t threads, uint32_t *sa, uint8_t *lcp)
{
    if (threads < 1) threads = 1;
    if (threads > MAX_THREADS) threads = MAX_THREADS;
    int rc = how == XG_QLM_SORT_COMPARE ? compare(c, sigma, threads, sa)
                                        : doubling(c, sigma, threads, sa);
    if (rc) return xg_set_error(XG_ERR_NOMEM, "qlm: out of memory (sort)");
    struct lcp_arg a[MAX_THREADS];
    for (uint32_t t = 0; t < threads; ++t)
        a[t] = (struct lcp_arg){c, sa, lcp, sigma,
                                (uint32_t)((uint64_t)c->n_words * t / threads),
                                (uint32_t)((uint64_t)c->n_words * (t + 1) / threads)};
    xg_threads_run(threads, lcp_range, a, sizeof *a);
    return XG_OK;
}
