/** @file wt_plan.c
 *  @brief The weight pipeline's chunk plan (wt_int.h): chunks of whole
 *         documents sized by what a chunk costs on the device, from its
 *         bytes and its words (counted on all cores, per block of the
 *         text), and the documents of a byte range.  Shared by both
 *         engines, so the CPU twin chunks as the GPU does.
 */
#include <stdlib.h>
#include <string.h>

#include "../runtime/error.h"
#include "wt_int.h"

#define BLOCK ((size_t)1 << 16)     /* word counts are kept per block */
#define MAX_CHUNK ((size_t)1 << 31) /* offsets in a chunk are 32-bit */

static int is_doc_start(const char *b, size_t p, size_t len)
{
    return p < len && b[p] != '\n' && p >= 2 && b[p - 1] == '\n' && b[p - 2] == '\n';
}

/* ---- counting on all cores ----------------------------------------- */

/* Positions q in [lo, hi) (lo >= 2) where `doc_starts`: a document
 * starts (two newlines before, none at q), else a word starts (one
 * newline before, none at q). */
struct count_share {
    const unsigned char *b;
    size_t lo, hi;
    int doc_starts;
    uint64_t n;
};

static void *count_share(void *arg)
{
    struct count_share *c = arg;
    const unsigned char *b = c->b;
    uint64_t n = 0;
    /* Blocks whose count fits 16 bits: the compiler sums the flags in
     * 16-bit lanes, 3x faster than widening each to 64 bits. */
    for (size_t q = c->lo; q < c->hi;) {
        const size_t e = c->hi - q > UINT16_MAX ? q + UINT16_MAX : c->hi;
        uint16_t k = 0;
        if (c->doc_starts)
            for (; q < e; ++q) k += (b[q - 2] == '\n') & (b[q - 1] == '\n') & (b[q] != '\n');
        else
            for (; q < e; ++q) k += (b[q - 1] == '\n') & (b[q] != '\n');
        n += k;
    }
    c->n = n;
    return NULL;
}

uint32_t xg_wt_count_docs(const char *b, size_t lo, size_t hi, uint32_t threads)
{
    if (lo >= hi) return 0;
    if (hi - lo < 2) return 1;
    struct count_share c[XG_THREADS_MAX_SHARES];
    const uint32_t t = xg_threads_shares(threads, hi - lo, 20);
    const size_t first = lo + 2, span = hi - first;
    for (uint32_t i = 0; i < t; ++i)
        c[i] = (struct count_share){(const unsigned char *)b, first + span / t * i,
                                    i + 1 == t ? hi : first + span / t * (i + 1), 1, 0};
    xg_threads_run(t, count_share, c, sizeof *c);
    uint64_t n = 1;     /* lo itself */
    for (uint32_t i = 0; i < t; ++i) n += c[i].n;
    return (uint32_t)n;
}

/* Per block, the word starts and the document starts found by the
 * pattern (two newlines before, none at it): pre[k], pre_docs[k] = those
 * before block k (n_blocks + 1 entries each), so that the plan knows every
 * chunk's words and documents from one pass over the text. */
struct block_share {
    const char *b;
    size_t len;
    uint64_t *pre, *pre_docs;
    size_t lo, hi;          /* blocks */
};

static void *block_share(void *arg)
{
    const struct block_share *s = arg;
    for (size_t k = s->lo; k < s->hi; ++k) {
        const size_t a = k * BLOCK, e = a + BLOCK < s->len ? a + BLOCK : s->len;
        uint64_t n = a == 0 && s->b[0] != '\n', d = 0;
        if (e > (a ? a : 1)) {
            struct count_share c = {(const unsigned char *)s->b, a ? a : 1, e, 0, 0};
            count_share(&c);
            n += c.n;
        }
        if (e > (a > 2 ? a : 2)) {
            struct count_share c = {(const unsigned char *)s->b, a > 2 ? a : 2, e, 1, 0};
            count_share(&c);
            d = c.n;
        }
        s->pre[k + 1] = n;
        s->pre_docs[k + 1] = d;
    }
    return NULL;
}

static uint64_t *count_blocks(const char *b, size_t len, uint32_t threads, size_t *n_blocks,
                              uint64_t **pre_docs)
{
    const size_t nb = (len + BLOCK - 1) / BLOCK;
    uint64_t *pre = calloc(2 * (nb + 1), sizeof *pre);
    if (!pre) return NULL;
    *pre_docs = pre + nb + 1;
    struct block_share s[XG_THREADS_MAX_SHARES];
    const uint32_t t = xg_threads_shares(threads, nb, 0);
    for (uint32_t i = 0; i < t; ++i)
        s[i] = (struct block_share){b, len, pre, *pre_docs, nb * i / t, nb * (i + 1) / t};
    xg_threads_run(t, block_share, s, sizeof *s);
    for (size_t k = 0; k < nb; ++k) {
        pre[k + 1] += pre[k];
        (*pre_docs)[k + 1] += (*pre_docs)[k];
    }
    *n_blocks = nb;
    return pre;
}

/* Pattern document starts in [p, q) (p >= 2): whole blocks from the
 * counts, the partial ones at either end counted. */
static uint64_t pattern_docs(const char *b, const uint64_t *pre_docs, size_t p, size_t q)
{
    const size_t kp = (p + BLOCK - 1) / BLOCK, kq = q / BLOCK;
    struct count_share c = {(const unsigned char *)b, p, q, 1, 0};
    if (kp >= kq) {                     /* within one block, or two halves */
        count_share(&c);
        return c.n;
    }
    uint64_t n = pre_docs[kq] - pre_docs[kp];
    c.hi = kp * BLOCK;
    count_share(&c);
    n += c.n;
    c = (struct count_share){(const unsigned char *)b, kq * BLOCK, q, 1, 0};
    count_share(&c);
    return n + c.n;
}

/* ---- the plan -------------------------------------------------------- */

uint64_t xg_wt_chunk_need(size_t bytes, uint64_t words)
{
    return XG_WT_CHUNK_FIXED + XG_WT_PER_BYTE * (uint64_t)bytes + XG_WT_PER_WORD * words;
}

/* Words starting in [p, q), from above: the blocks it touches, or one
 * word per 2 bytes if that is fewer. */
static uint64_t words_in(const uint64_t *pre, size_t nb, size_t p, size_t q)
{
    size_t hi = (q + BLOCK - 1) / BLOCK;
    if (hi > nb) hi = nb;
    const uint64_t blocks = pre[hi] - pre[p / BLOCK], bytes = (q - p) / 2 + 1;
    return blocks < bytes ? blocks : bytes;
}

int xg_wt_plan(const char *name, const char *b, size_t len, uint64_t avail,
               uint32_t threads, struct xg_wt_chunk **out, uint32_t *n_out,
               int *docs_counted)
{
    *out = NULL;
    *n_out = 0;
    *docs_counted = 0;
    size_t p = 0;
    while (p < len && b[p] == '\n') ++p;        /* leading blank lines */
    /* No word count when even one word per 2 bytes fits. */
    const int fits = len <= MAX_CHUNK &&
                     xg_wt_chunk_need(len - p, (len - p) / 2 + 1) <= avail;
    size_t nb = 0;
    uint64_t *pre_docs = NULL;
    uint64_t *pre = fits ? NULL : count_blocks(b, len, threads, &nb, &pre_docs);
    if (!fits && !pre) return xg_set_error(XG_ERR_NOMEM, "weight: out of memory");
    size_t cap = 16, k = 0;
    struct xg_wt_chunk *ch = calloc(cap + 1, sizeof *ch);
    int rc = ch ? XG_OK : xg_set_error(XG_ERR_NOMEM, "weight: out of memory");
    while (!rc && p < len) {
        if (k + 2 > cap) {
            struct xg_wt_chunk *nc = realloc(ch, (2 * cap + 1) * sizeof *nc);
            if (!nc) {
                rc = xg_set_error(XG_ERR_NOMEM, "weight: out of memory");
                break;
            }
            cap *= 2;
            ch = nc;
        }
        size_t q = len;
        if (!fits) {
            /* The longest [p, x) that fits (need grows with x), ... */
            size_t lo = p, hi = len - p > MAX_CHUNK ? p + MAX_CHUNK : len;
            while (lo < hi) {
                const size_t mid = lo + (hi - lo + 1) / 2;
                if (xg_wt_chunk_need(mid - p, words_in(pre, nb, p, mid)) <= avail) lo = mid;
                else hi = mid - 1;
            }
            /* ... cut back to a document start, unless it reaches the end. */
            q = lo;
            if (q < len)
                while (q > p && !is_doc_start(b, q, len)) --q;
        }
        uint64_t words = fits ? (q - p) / 2 + 1 : words_in(pre, nb, p, q);
        if (q == p) {
            /* Not even the first document by the blocks' bound: it alone
             * if its exact words fit. */
            q = p + 1;
            while (q < len && !is_doc_start(b, q, len)) ++q;
            struct count_share c = {(const unsigned char *)b, p + 1, q, 0, 0};
            count_share(&c);
            words = 1 + c.n;
            if (xg_wt_chunk_need(q - p, words) > avail) {
                rc = xg_set_error(XG_ERR_NOMEM, "%s: the document at byte %zu (%zu "
                                  "bytes) does not fit the --device-memory budget "
                                  "(%llu bytes of device memory for a chunk)",
                                  name, p, q - p, (unsigned long long)avail);
                break;
            }
        }
        ch[k].buf = b + p;
        ch[k].len = q - p;
        ch[k].words = words;
        if (!fits) {
            /* p starts a document; the others are the pattern's in
             * (p, q) (none can be at p + 1, where b[p] is a word). */
            const size_t from = p + 1 > 2 ? p + 1 : 2;
            ch[k].n_docs = 1 + (uint32_t)(q > from ? pattern_docs(b, pre_docs, from, q) : 0);
        }
        ++k;
        p = q;
    }
    free(pre);
    if (!fits) *docs_counted = 1;
    if (rc) {
        free(ch);
        return rc;
    }
    *out = ch;
    *n_out = (uint32_t)k;
    return XG_OK;
}
