/** @file list_cache.c
 *  @brief LRU cache of posting lists in a device pool: buddy allocator,
 *         intrusive LRU list and pinning (see list_cache.h).
 *
 *  Units are 256 bytes; a block of order k is 2^k units at a unit offset
 *  that is a multiple of 2^k.  Free blocks of order k are bits (unit >> k)
 *  of a hierarchical bitmap.  Per term: LRU links, unit offset and the batch
 *  number that pinned it (struct term), and its block order (order[],
 *  NOT_RESIDENT when absent).
 */
#include "list_cache.h"

#include <stdlib.h>
#include <string.h>

#include "../runtime/error.h"

#define NIL UINT32_MAX
#define NOT_RESIDENT 0xFFu
#define UNIT_SHIFT 8
#define MAX_ORDER 32  /* 2^32 units = XG_LCACHE_MAX_POOL */
#define MAX_LEVELS 7  /* 64^6 >= 2^33 bits */

/* Bit i of level l+1 says word i of level l is nonzero, so set, clear and
 * find-first cost one word per level. */
struct hbits {
    uint64_t *lev[MAX_LEVELS];
    int n_lev;
};

struct term {
    uint32_t prev, next; /* LRU neighbours towards MRU / LRU end */
    uint32_t off;        /* unit offset of its block, when resident */
    uint32_t pin;        /* == batch: pinned in this batch */
};

struct xg_lcache {
    uint64_t pool_bytes;
    uint64_t n_units;
    int max_order; /* order of the largest (first) top-level block */
    struct hbits free_blocks[MAX_ORDER + 1];
    uint32_t n_terms;
    struct term *t;
    uint8_t *order;
    uint32_t mru, lru; /* list ends, NIL when empty */
    uint32_t batch;    /* 1..UINT32_MAX; 0 means "never pinned" */
    uint64_t n_pinned, pinned_bytes;
    struct xg_lcache_stats st;
};

/* ---- hierarchical bitmap ----------------------------------------------- */

static int hb_init(struct hbits *h, uint64_t n_bits)
{
    uint64_t words = (n_bits + 63) / 64;
    h->n_lev = 0;
    for (;;) {
        h->lev[h->n_lev] = calloc(words, sizeof(uint64_t));
        if (!h->lev[h->n_lev])
            return -1;
        ++h->n_lev;
        if (words == 1)
            return 0;
        words = (words + 63) / 64;
    }
}

static void hb_free(struct hbits *h)
{
    for (int l = 0; l < h->n_lev; ++l)
        free(h->lev[l]);
    h->n_lev = 0;
}

static int hb_test(const struct hbits *h, uint64_t i)
{
    return (int)((h->lev[0][i >> 6] >> (i & 63)) & 1u);
}

static void hb_set(struct hbits *h, uint64_t i)
{
    for (int l = 0; l < h->n_lev; ++l, i >>= 6) {
        uint64_t was = h->lev[l][i >> 6];
        h->lev[l][i >> 6] = was | (1ull << (i & 63));
        if (was) /* the summary bit above is already set */
            return;
    }
}

static void hb_clear(struct hbits *h, uint64_t i)
{
    for (int l = 0; l < h->n_lev; ++l, i >>= 6) {
        h->lev[l][i >> 6] &= ~(1ull << (i & 63));
        if (h->lev[l][i >> 6]) /* word still nonzero: summary stays */
            return;
    }
}

static int hb_any(const struct hbits *h)
{
    return h->lev[h->n_lev - 1][0] != 0;
}

/* The lowest set bit; the bitmap must not be empty. */
static uint64_t hb_first(const struct hbits *h)
{
    uint64_t i = 0;
    for (int l = h->n_lev - 1; l >= 0; --l)
        i = (i << 6) | (uint64_t)__builtin_ctzll(h->lev[l][i]);
    return i;
}

/* ---- buddy allocator --------------------------------------------------- */

/* A unit offset of a free block of order k, or -1 if no free block of
 * order >= k exists. */
static int64_t buddy_alloc(struct xg_lcache *c, int k)
{
    int j = k;
    while (j <= c->max_order && !hb_any(&c->free_blocks[j]))
        ++j;
    if (j > c->max_order)
        return -1;
    uint64_t u = hb_first(&c->free_blocks[j]) << j;
    hb_clear(&c->free_blocks[j], u >> j);
    while (j > k) { /* keep the lower half, free the upper one */
        --j;
        hb_set(&c->free_blocks[j], (u >> j) + 1);
    }
    return (int64_t)u;
}

static void buddy_free(struct xg_lcache *c, uint64_t u, int k)
{
    while (k < c->max_order) {
        uint64_t b = u ^ (1ull << k);
        /* A top-level block's buddy would end past the pool (they are laid
         * out largest first); test that rather than its spare bitmap bit. */
        if (b + (1ull << k) > c->n_units ||
            !hb_test(&c->free_blocks[k], b >> k))
            break;
        hb_clear(&c->free_blocks[k], b >> k);
        u &= ~(1ull << k);
        ++k;
    }
    hb_set(&c->free_blocks[k], u >> k);
}

/* The order of the smallest block holding `size` bytes, size <= 2^40. */
static int order_for(uint64_t size)
{
    uint64_t units = (size + XG_LCACHE_UNIT - 1) >> UNIT_SHIFT;
    return units <= 1 ? 0 : 64 - __builtin_clzll(units - 1);
}

static uint64_t block_bytes(int k)
{
    return (uint64_t)XG_LCACHE_UNIT << k;
}

/* ---- LRU list ---------------------------------------------------------- */

static void lru_unlink(struct xg_lcache *c, uint32_t x)
{
    struct term *e = &c->t[x];
    if (e->prev != NIL)
        c->t[e->prev].next = e->next;
    else
        c->mru = e->next;
    if (e->next != NIL)
        c->t[e->next].prev = e->prev;
    else
        c->lru = e->prev;
}

static void lru_push_mru(struct xg_lcache *c, uint32_t x)
{
    struct term *e = &c->t[x];
    e->prev = NIL;
    e->next = c->mru;
    if (c->mru != NIL)
        c->t[c->mru].prev = x;
    else
        c->lru = x;
    c->mru = x;
}

static void evict(struct xg_lcache *c, uint32_t x)
{
    int k = c->order[x];
    lru_unlink(c, x);
    buddy_free(c, c->t[x].off, k);
    c->order[x] = NOT_RESIDENT;
    c->st.evictions++;
    c->st.resident_lists--;
    c->st.resident_bytes -= block_bytes(k);
}

static void pin(struct xg_lcache *c, uint32_t x)
{
    if (c->t[x].pin == c->batch)
        return;
    c->t[x].pin = c->batch;
    c->n_pinned++;
    c->pinned_bytes += block_bytes(c->order[x]);
}

/* ---- API --------------------------------------------------------------- */

int xg_lcache_create(uint64_t pool_bytes, uint64_t n_terms,
                     struct xg_lcache **out)
{
    if (!out)
        return xg_set_error(XG_ERR_ARG, "list_cache: NULL out pointer");
    *out = NULL;
    if (pool_bytes < XG_LCACHE_UNIT || pool_bytes > XG_LCACHE_MAX_POOL)
        return xg_set_error(XG_ERR_ARG,
                            "list_cache: pool of %llu bytes is outside "
                            "256 .. 2^40",
                            (unsigned long long)pool_bytes);
    if (n_terms == 0 || n_terms > UINT32_MAX)
        return xg_set_error(XG_ERR_ARG,
                            "list_cache: %llu terms is outside 1 .. 2^32-1",
                            (unsigned long long)n_terms);
    struct xg_lcache *c = calloc(1, sizeof *c);
    if (!c)
        return xg_set_error(XG_ERR_NOMEM, "list_cache: out of host memory");
    c->pool_bytes = pool_bytes;
    c->n_units = pool_bytes >> UNIT_SHIFT;
    c->max_order = 63 - __builtin_clzll(c->n_units);
    c->n_terms = (uint32_t)n_terms;
    c->mru = c->lru = NIL;
    c->batch = 1;
    /* calloc: pin 0 ("never pinned"); links and offsets are set when a
     * term becomes resident. */
    c->t = calloc(n_terms, sizeof *c->t);
    c->order = malloc(n_terms);
    int ok = c->t && c->order;
    for (int k = 0; ok && k <= c->max_order && k <= MAX_ORDER; ++k)
        ok = hb_init(&c->free_blocks[k], c->n_units >> k) == 0;
    if (!ok) {
        xg_lcache_destroy(c);
        return xg_set_error(XG_ERR_NOMEM,
                            "list_cache: out of host memory for %llu terms "
                            "and a %llu-byte pool",
                            (unsigned long long)n_terms,
                            (unsigned long long)pool_bytes);
    }
    memset(c->order, NOT_RESIDENT, n_terms);
    /* Top-level blocks, largest first, one per set bit of n_units
     * (n_units <= 2^32, so bits above MAX_ORDER are clear). */
    uint64_t u = 0;
    for (int k = MAX_ORDER; k >= 0; --k)
        if (c->n_units & (1ull << k)) {
            hb_set(&c->free_blocks[k], u >> k);
            u += 1ull << k;
        }
    *out = c;
    return XG_OK;
}

void xg_lcache_destroy(struct xg_lcache *c)
{
    if (!c)
        return;
    for (int k = 0; k <= MAX_ORDER; ++k)
        hb_free(&c->free_blocks[k]);
    free(c->t);
    free(c->order);
    free(c);
}

int xg_lcache_acquire(struct xg_lcache *c, uint32_t term, uint64_t size,
                      uint64_t *offset, int *load)
{
    if (!c || !offset || !load)
        return xg_set_error(XG_ERR_ARG, "list_cache: NULL argument");
    if (term >= c->n_terms)
        return xg_set_error(XG_ERR_ARG,
                            "list_cache: term %u out of range (%u terms)",
                            term, c->n_terms);
    if (size == 0)
        return xg_set_error(XG_ERR_ARG, "list_cache: term %u has size 0",
                            term);
    if (size > c->n_units << UNIT_SHIFT)
        return xg_set_error(XG_ERR_NOMEM,
                            "list_cache: term %u: %llu bytes exceed the "
                            "%llu-byte pool",
                            term, (unsigned long long)size,
                            (unsigned long long)c->pool_bytes);
    int k = order_for(size);
    if (k > c->max_order)
        return xg_set_error(XG_ERR_NOMEM,
                            "list_cache: term %u: %llu bytes need a "
                            "%llu-byte block; the largest in the %llu-byte "
                            "pool is %llu",
                            term, (unsigned long long)size,
                            (unsigned long long)block_bytes(k),
                            (unsigned long long)c->pool_bytes,
                            (unsigned long long)block_bytes(c->max_order));
    if (c->order[term] != NOT_RESIDENT) {
        if (c->order[term] != k)
            return xg_set_error(XG_ERR_ARG,
                                "list_cache: term %u acquired with %llu "
                                "bytes but resident in a %llu-byte block",
                                term, (unsigned long long)size,
                                (unsigned long long)block_bytes(
                                    c->order[term]));
        lru_unlink(c, term);
        lru_push_mru(c, term);
        pin(c, term);
        c->st.hits++;
        *offset = (uint64_t)c->t[term].off << UNIT_SHIFT;
        *load = 0;
        return XG_OK;
    }
    int64_t u;
    while ((u = buddy_alloc(c, k)) < 0) {
        /* Lists pinned in this batch were all touched after every
         * unpinned one, so a pinned LRU end means nothing is evictable. */
        if (c->lru == NIL || c->t[c->lru].pin == c->batch)
            return xg_set_error(XG_ERR_NOMEM,
                                "list_cache: term %u: no %llu-byte block "
                                "free beside %llu pinned lists (%llu bytes) "
                                "in the %llu-byte pool",
                                term, (unsigned long long)block_bytes(k),
                                (unsigned long long)c->n_pinned,
                                (unsigned long long)c->pinned_bytes,
                                (unsigned long long)c->pool_bytes);
        evict(c, c->lru);
    }
    c->t[term].off = (uint32_t)u;
    c->order[term] = (uint8_t)k;
    lru_push_mru(c, term);
    pin(c, term);
    c->st.misses++;
    c->st.bytes_loaded += size;
    c->st.resident_lists++;
    c->st.resident_bytes += block_bytes(k);
    *offset = (uint64_t)u << UNIT_SHIFT;
    *load = 1;
    return XG_OK;
}

void xg_lcache_unpin_all(struct xg_lcache *c)
{
    if (!c)
        return;
    c->n_pinned = c->pinned_bytes = 0;
    if (++c->batch == 0) {
        /* Wrapped after 2^32 batches: forget old batch numbers so none
         * can equal a new one. */
        for (uint32_t x = 0; x < c->n_terms; ++x)
            c->t[x].pin = 0;
        c->batch = 1;
    }
}

int xg_lcache_lookup(const struct xg_lcache *c, uint32_t term,
                     uint64_t *offset)
{
    if (!c || term >= c->n_terms || c->order[term] == NOT_RESIDENT)
        return 0;
    if (offset)
        *offset = (uint64_t)c->t[term].off << UNIT_SHIFT;
    return 1;
}

void xg_lcache_stats(const struct xg_lcache *c, struct xg_lcache_stats *st)
{
    if (c && st)
        *st = c->st;
}
