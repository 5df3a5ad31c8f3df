/** @file test_list_cache.c
 *  @brief Tests of gpu/query/list_cache.{h,c}: arguments and errors, pinned
 *         buddy offsets, coalescing, exact LRU victims, and a long random
 *         workload checked against a naive model and brute-force scans.
 *
 *  The model (naive buddy over a per-unit array, LRU by timestamps) follows
 *  the policy list_cache.h states: smallest free order, then lowest
 *  address; least recently acquired unpinned list evicted first.  The scans
 *  check what holds for any policy: lists inside the pool, aligned, not
 *  overlapping, pinned lists never moved.
 *
 *  Usage: test_list_cache [--seed N].  Prints the seed, one "ok" line per
 *  check group and "N passed, 0 failed"; exits 1 at the first failure.
 */
#include "../gpu/query/list_cache.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../gpu/runtime/error.h"

/* ---- harness ---------------------------------------------------------- */

#include "test_util.h"

/* ---- helpers ---------------------------------------------------------- */

#define U 256u

static uint64_t blk(uint64_t size) /* block bytes for a list of `size` */
{
    uint64_t b = U;
    while (b < size)
        b *= 2;
    return b;
}

static void stats_eq(const struct xg_lcache *c, uint64_t hits,
                     uint64_t misses, uint64_t ev, uint64_t loaded,
                     uint64_t res_bytes, uint64_t res_lists)
{
    struct xg_lcache_stats s;
    xg_lcache_stats(c, &s);
    CHECK(s.hits == hits && s.misses == misses && s.evictions == ev &&
              s.bytes_loaded == loaded && s.resident_bytes == res_bytes &&
              s.resident_lists == res_lists,
          "stats h%" PRIu64 " m%" PRIu64 " e%" PRIu64 " l%" PRIu64
          " rb%" PRIu64 " rl%" PRIu64 ", want h%" PRIu64 " m%" PRIu64
          " e%" PRIu64 " l%" PRIu64 " rb%" PRIu64 " rl%" PRIu64,
          s.hits, s.misses, s.evictions, s.bytes_loaded, s.resident_bytes,
          s.resident_lists, hits, misses, ev, loaded, res_bytes, res_lists);
}

/* Acquire expecting success with the given load flag; returns offset. */
static uint64_t acq_ok(struct xg_lcache *c, uint32_t t, uint64_t size,
                       int want_load)
{
    uint64_t off = ~0ull;
    int load = -1;
    int rc = xg_lcache_acquire(c, t, size, &off, &load);
    CHECK(rc == XG_OK, "acquire(%u, %" PRIu64 ") = %d: %s", t, size, rc,
          xg_last_error());
    CHECK(load == want_load, "acquire(%u) load %d, want %d", t, load,
          want_load);
    return off;
}

static void acq_fail(struct xg_lcache *c, uint32_t t, uint64_t size,
                     int want_rc)
{
    uint64_t off = 12345;
    int load = 7;
    xg_clear_error();
    int rc = xg_lcache_acquire(c, t, size, &off, &load);
    CHECK(rc == want_rc, "acquire(%u, %" PRIu64 ") = %d, want %d", t, size,
          rc, want_rc);
    CHECK(xg_last_error_code() == want_rc && xg_last_error()[0] != '\0' &&
              strchr(xg_last_error(), '\n') == NULL,
          "error message not set (code %d, '%s')", xg_last_error_code(),
          xg_last_error());
    CHECK(off == 12345 && load == 7, "failed acquire wrote its outputs");
}

struct span { uint64_t off, end; uint32_t term; };

static int cmp_span(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    return (x->off > y->off) - (x->off < y->off);
}

/* Brute force over all terms: every resident list lies in the usable pool,
 * its block is aligned to its size (so to 256), no two blocks overlap, and
 * the count and block bytes equal the stats.  Returns the resident count. */
static uint64_t scan(const struct xg_lcache *c, uint32_t n_terms,
                     const uint64_t *size, uint64_t pool_bytes,
                     struct span *sp)
{
    uint64_t n = 0, bytes = 0, usable = pool_bytes / U * U;
    for (uint32_t t = 0; t < n_terms; ++t) {
        uint64_t off;
        if (!xg_lcache_lookup(c, t, &off))
            continue;
        uint64_t b = blk(size[t]);
        CHECK(off % U == 0 && off % b == 0,
              "term %u offset %" PRIu64 " not aligned to 256 / block %" PRIu64,
              t, off, b);
        CHECK(off + size[t] <= pool_bytes && off + b <= usable,
              "term %u [%" PRIu64 ", +%" PRIu64 ") outside the pool %" PRIu64,
              t, off, b, pool_bytes);
        sp[n].off = off;
        sp[n].end = off + b;
        sp[n].term = t;
        ++n;
        bytes += b;
    }
    qsort(sp, n, sizeof *sp, cmp_span);
    for (uint64_t i = 1; i < n; ++i)
        CHECK(sp[i - 1].end <= sp[i].off,
              "terms %u [%" PRIu64 ", %" PRIu64 ") and %u at %" PRIu64
              " overlap", sp[i - 1].term, sp[i - 1].off, sp[i - 1].end,
              sp[i].term, sp[i].off);
    struct xg_lcache_stats s;
    xg_lcache_stats(c, &s);
    CHECK(s.resident_lists == n && s.resident_bytes == bytes,
          "stats say %" PRIu64 " lists / %" PRIu64 " bytes, scan finds %"
          PRIu64 " / %" PRIu64, s.resident_lists, s.resident_bytes, n, bytes);
    return n;
}

/* ---- groups ----------------------------------------------------------- */

static void test_arguments(void)
{
    struct xg_lcache *c = (struct xg_lcache *)1;
    CHECK(xg_lcache_create(255, 10, &c) == XG_ERR_ARG && c == NULL,
          "pool 255 accepted");
    CHECK(xg_lcache_create(XG_LCACHE_MAX_POOL + 1, 10, &c) == XG_ERR_ARG,
          "pool 2^40+1 accepted");
    CHECK(xg_lcache_create(4096, 0, &c) == XG_ERR_ARG, "0 terms accepted");
    CHECK(xg_lcache_create(4096, (uint64_t)UINT32_MAX + 1, &c) ==
              XG_ERR_ARG, "2^32 terms accepted");
    CHECK(xg_lcache_create(4096, 10, NULL) == XG_ERR_ARG, "NULL out");
    CHECK(xg_lcache_create(1 << 20, 100, &c) == XG_OK && c, "create: %s",
          xg_last_error());
    uint64_t off;
    int load;
    acq_fail(c, 5, 0, XG_ERR_ARG);
    acq_fail(c, 100, 10, XG_ERR_ARG);
    acq_fail(c, UINT32_MAX, 10, XG_ERR_ARG);
    acq_fail(c, 5, (1 << 20) + 1, XG_ERR_NOMEM);
    acq_fail(c, 5, UINT64_MAX, XG_ERR_NOMEM);
    CHECK(xg_lcache_acquire(c, 5, 10, NULL, &load) == XG_ERR_ARG &&
              xg_lcache_acquire(c, 5, 10, &off, NULL) == XG_ERR_ARG &&
              xg_lcache_acquire(NULL, 5, 10, &off, &load) == XG_ERR_ARG,
          "NULL pointer accepted");
    stats_eq(c, 0, 0, 0, 0, 0, 0);

    uint64_t o5 = acq_ok(c, 5, 1000, 1);
    CHECK(o5 % U == 0 && o5 + 1000 <= (1 << 20), "offset %" PRIu64, o5);
    CHECK(acq_ok(c, 5, 1000, 0) == o5, "second acquire moved the list");
    stats_eq(c, 1, 1, 0, 1000, 1024, 1);
    CHECK(xg_lcache_lookup(c, 5, &off) == 1 && off == o5, "lookup 5");
    CHECK(xg_lcache_lookup(c, 5, NULL) == 1, "lookup 5, NULL offset");
    CHECK(xg_lcache_lookup(c, 6, &off) == 0 && xg_lcache_lookup(c, 100, &off)
              == 0 && xg_lcache_lookup(c, UINT32_MAX, &off) == 0,
          "lookup of absent / out-of-range term");
    /* Same block order is the same list; another order is a caller bug. */
    CHECK(acq_ok(c, 5, 1024, 0) == o5, "1024 bytes in the 1024 block");
    acq_fail(c, 5, 1025, XG_ERR_ARG);
    acq_fail(c, 5, 512, XG_ERR_ARG);
    xg_lcache_unpin_all(c);
    CHECK(acq_ok(c, 5, 1000, 0) == o5, "hit after unpin_all");
    stats_eq(c, 3, 1, 0, 1000, 1024, 1);
    /* A whole-pool list must evict 5, even though 5 was just used... */
    acq_fail(c, 7, 1 << 20, XG_ERR_NOMEM); /* ...but 5 is pinned */
    CHECK(xg_lcache_lookup(c, 5, &off) == 1 && off == o5, "pinned evicted");
    xg_lcache_unpin_all(c);
    CHECK(acq_ok(c, 7, 1 << 20, 1) == 0, "whole-pool list not at 0");
    CHECK(xg_lcache_lookup(c, 5, &off) == 0, "5 not evicted");
    stats_eq(c, 3, 2, 1, 1000 + (1 << 20), 1 << 20, 1);
    xg_lcache_destroy(c);
    xg_lcache_destroy(NULL);
    group_ok("create/acquire arguments (ARG, NOMEM), hit keeps offset, load "
             "flags, lookup, exact stats, pinned lists survive");
}

static void test_buddy_layout(void)
{
    struct xg_lcache *c;
    /* 16 units, one block: lowest address of the smallest fitting order. */
    CHECK(xg_lcache_create(4096, 10, &c) == XG_OK, "create");
    CHECK(acq_ok(c, 0, 256, 1) == 0, "a");
    CHECK(acq_ok(c, 1, 300, 1) == 512, "b");
    CHECK(acq_ok(c, 2, 1, 1) == 256, "c");
    CHECK(acq_ok(c, 3, 2048, 1) == 2048, "d");
    CHECK(acq_ok(c, 4, 1024, 1) == 1024, "e");
    acq_fail(c, 5, 1, XG_ERR_NOMEM); /* full, all pinned */
    stats_eq(c, 0, 5, 0, 256 + 300 + 1 + 2048 + 1024, 4096, 5);
    xg_lcache_destroy(c);

    /* 6 units + 100 bytes: top-level blocks of 4 units at 0 and 2 at 4. */
    CHECK(xg_lcache_create(1536 + 100, 10, &c) == XG_OK, "create");
    acq_fail(c, 0, 1537, XG_ERR_NOMEM);  /* > usable 1536 */
    acq_fail(c, 0, 1100, XG_ERR_NOMEM);  /* needs 2048 > largest 1024 */
    CHECK(acq_ok(c, 0, 1024, 1) == 0, "A");
    CHECK(acq_ok(c, 1, 512, 1) == 1024, "B");
    acq_fail(c, 2, 200, XG_ERR_NOMEM);
    stats_eq(c, 0, 2, 0, 1536, 1536, 2);
    xg_lcache_unpin_all(c);
    /* Evicts A (LRU); A's block cannot merge with B's top block. */
    CHECK(acq_ok(c, 2, 300, 1) == 0, "C");
    CHECK(xg_lcache_lookup(c, 0, NULL) == 0, "A resident");
    CHECK(acq_ok(c, 3, 256, 1) == 512 && acq_ok(c, 4, 256, 1) == 768, "D E");
    stats_eq(c, 0, 5, 1, 1536 + 300 + 512, 1536, 4);
    xg_lcache_destroy(c);

    /* Coalescing: 256 one-unit lists, then the whole pool, then again. */
    CHECK(xg_lcache_create(65536, 1000, &c) == XG_OK, "create");
    for (uint32_t t = 0; t < 256; ++t)
        CHECK(acq_ok(c, t, 1 + rng_below(256), 1) == (uint64_t)t * U,
              "fill %u", t);
    xg_lcache_unpin_all(c);
    CHECK(acq_ok(c, 999, 65536, 1) == 0, "whole pool");
    struct xg_lcache_stats s;
    xg_lcache_stats(c, &s);
    CHECK(s.evictions == 256 && s.resident_lists == 1, "evicted %" PRIu64,
          s.evictions);
    xg_lcache_unpin_all(c);
    for (uint32_t t = 300; t < 556; ++t)
        CHECK(acq_ok(c, t, 256, 1) == (uint64_t)(t - 300) * U, "refill %u",
              t);
    xg_lcache_stats(c, &s);
    CHECK(s.evictions == 257 && s.resident_lists == 256 &&
              s.resident_bytes == 65536, "refill stats");
    xg_lcache_destroy(c);
    group_ok("buddy offsets pinned (split, lowest address, non-power-of-two "
             "top blocks, too-large lists), coalescing back to the whole pool");
}

/* Equal sizes, full pool: each new list evicts exactly the least recently
 * acquired one and takes its block; lookups do not count as use. */
static void test_lru_order(void)
{
    enum { N = 16, TERMS = 4000 };
    struct xg_lcache *c;
    CHECK(xg_lcache_create(N * U, TERMS, &c) == XG_OK, "create");
    uint32_t res[N];
    uint64_t last[N], off[N], clock_ = 0;
    for (uint32_t i = 0; i < N; ++i) {
        res[i] = i;
        off[i] = acq_ok(c, i, 1 + rng_below(U), 1);
        last[i] = ++clock_;
    }
    xg_lcache_unpin_all(c);
    uint32_t next_term = N;
    uint64_t ev = 0;
    for (int round = 0; round < 3000; ++round) {
        /* Touch a random subset in random order, over a few batches. */
        int n_touch = (int)rng_below(N);
        for (int j = 0; j < n_touch; ++j) {
            uint32_t i = rng_below(N);
            CHECK(acq_ok(c, res[i], 1 + rng_below(U), 0) == off[i],
                  "hit moved");
            last[i] = ++clock_;
            if (rng_below(4) == 0)
                xg_lcache_unpin_all(c);
        }
        xg_lcache_unpin_all(c);
        uint32_t v = 0;
        for (uint32_t i = 1; i < N; ++i)
            if (last[i] < last[v])
                v = i;
        CHECK(xg_lcache_lookup(c, res[v], NULL) == 1, "victim absent");
        uint32_t t = next_term++ % TERMS;
        uint64_t o = acq_ok(c, t, 1 + rng_below(U), 1);
        ++ev;
        CHECK(o == off[v], "new list at %" PRIu64 ", victim's block %" PRIu64,
              o, off[v]);
        CHECK(xg_lcache_lookup(c, res[v], NULL) == 0,
              "round %d: LRU term %u still resident", round, res[v]);
        for (uint32_t i = 0; i < N; ++i) {
            uint64_t x;
            if (i != v)
                CHECK(xg_lcache_lookup(c, res[i], &x) == 1 && x == off[i],
                      "round %d: term %u evicted or moved (LRU was %u)",
                      round, res[i], res[v]);
        }
        struct xg_lcache_stats s;
        xg_lcache_stats(c, &s);
        CHECK(s.evictions == ev && s.resident_lists == N, "stats");
        res[v] = t;
        last[v] = ++clock_;
        if (rng_below(3) == 0)  /* sometimes the new list stays pinned */
            continue;
        xg_lcache_unpin_all(c);
    }
    /* Pinned lists are never victims: pin all, then a new list fails. */
    xg_lcache_unpin_all(c);
    for (uint32_t i = 0; i < N; ++i)
        acq_ok(c, res[i], 1, 0);
    acq_fail(c, next_term % TERMS, 1, XG_ERR_NOMEM);
    for (uint32_t i = 0; i < N; ++i) {
        uint64_t x;
        CHECK(xg_lcache_lookup(c, res[i], &x) == 1 && x == off[i],
              "pinned list lost on a failed acquire");
    }
    xg_lcache_destroy(c);
    group_ok("LRU: the one eviction needed takes the least recently acquired "
             "list and its block (3000 rounds); lookup is no use");
}

/* ---- the naive model --------------------------------------------------- */

struct model {
    uint64_t n_units, pool;
    int max_order;
    uint8_t *fr;          /* fr[u] = order + 1 if a free block starts at u */
    uint32_t n_terms;
    int *order;           /* -1 if not resident */
    uint64_t *off, *last; /* unit offset; last acquire time */
    uint8_t *pinned;
    uint64_t clock_, hits, misses, ev, loaded, res_bytes, res_lists;
};

static void m_init(struct model *m, uint64_t pool, uint32_t n_terms)
{
    memset(m, 0, sizeof *m);
    m->pool = pool;
    m->n_units = pool / U;
    m->max_order = 0;
    while ((2ull << m->max_order) <= m->n_units)
        ++m->max_order;
    m->fr = calloc(m->n_units, 1);
    m->n_terms = n_terms;
    m->order = malloc(n_terms * sizeof(int));
    m->off = calloc(n_terms, 8);
    m->last = calloc(n_terms, 8);
    m->pinned = calloc(n_terms, 1);
    CHECK(m->fr && m->order && m->off && m->last && m->pinned, "malloc");
    for (uint32_t t = 0; t < n_terms; ++t)
        m->order[t] = -1;
    uint64_t u = 0;
    for (int k = m->max_order; k >= 0; --k)
        if (m->n_units >> k & 1) {
            m->fr[u] = (uint8_t)(k + 1);
            u += 1ull << k;
        }
}

static void m_free_model(struct model *m)
{
    free(m->fr);
    free(m->order);
    free(m->off);
    free(m->last);
    free(m->pinned);
}

static int64_t m_alloc(struct model *m, int k)
{
    int64_t best = -1;
    int best_k = 99;
    for (uint64_t u = 0; u < m->n_units; ++u)
        if (m->fr[u] && m->fr[u] - 1 >= k && m->fr[u] - 1 < best_k) {
            best_k = m->fr[u] - 1;
            best = (int64_t)u;
        }
    if (best < 0)
        return -1;
    m->fr[best] = 0;
    for (int j = best_k - 1; j >= k; --j)
        m->fr[best + (1ll << j)] = (uint8_t)(j + 1);
    return best;
}

static void m_release(struct model *m, uint64_t u, int k)
{
    for (;;) {
        uint64_t b = u ^ (1ull << k);
        if (b + (1ull << k) > m->n_units || m->fr[b] != k + 1)
            break;
        m->fr[b] = 0;
        u = u < b ? u : b;
        ++k;
    }
    m->fr[u] = (uint8_t)(k + 1);
}

/* Predict acquire: rc, offset, load; records evicted terms in ev_out. */
static int m_acquire(struct model *m, uint32_t t, uint64_t size,
                     uint64_t *off, int *load, uint32_t *ev_out,
                     uint32_t *n_ev)
{
    *n_ev = 0;
    if (size > m->n_units * U)
        return XG_ERR_NOMEM;
    int k = 0;
    while ((U << k) < size)
        ++k;
    if (k > m->max_order)
        return XG_ERR_NOMEM;
    if (m->order[t] >= 0) {
        m->last[t] = ++m->clock_;
        m->pinned[t] = 1;
        m->hits++;
        *off = m->off[t] * U;
        *load = 0;
        return XG_OK;
    }
    int64_t u;
    while ((u = m_alloc(m, k)) < 0) {
        uint32_t v = UINT32_MAX;
        for (uint32_t x = 0; x < m->n_terms; ++x)
            if (m->order[x] >= 0 && !m->pinned[x] &&
                (v == UINT32_MAX || m->last[x] < m->last[v]))
                v = x;
        if (v == UINT32_MAX)
            return XG_ERR_NOMEM;
        m_release(m, m->off[v], m->order[v]);
        m->res_bytes -= U << m->order[v];
        m->res_lists--;
        m->order[v] = -1;
        m->ev++;
        ev_out[(*n_ev)++] = v;
    }
    m->order[t] = k;
    m->off[t] = (uint64_t)u;
    m->last[t] = ++m->clock_;
    m->pinned[t] = 1;
    m->misses++;
    m->loaded += size;
    m->res_bytes += U << k;
    m->res_lists++;
    *off = (uint64_t)u * U;
    *load = 1;
    return XG_OK;
}

static void test_random_workload(void)
{
    static const uint64_t pools[] = {256,    1000,          4096,
                                     65536 + 768 + 100, 1 << 18,
                                     (3 << 17) + 5 * 256 + 7};
    enum { TERMS = 400, BATCHES = 2500 };
    uint64_t size[TERMS];
    struct span sp[TERMS];
    uint32_t evicted[TERMS], batch[64];
    uint64_t batch_off[64], total_ops = 0, total_fail = 0, total_ev = 0;
    for (size_t p = 0; p < sizeof pools / sizeof pools[0]; ++p) {
        uint64_t pool = pools[p];
        uint64_t largest = U;
        while (largest * 2 <= pool)
            largest *= 2;
        for (uint32_t t = 0; t < TERMS; ++t) {
            /* 1 .. pool/3, skewed small; a few larger than any block. */
            uint64_t s = 1 + ((rng_next() % (pool / 3)) >> rng_below(9));
            if (t % 97 == 13)
                s = largest + 1 + rng_next() % (pool - largest + 8);
            size[t] = s;
        }
        struct xg_lcache *c;
        CHECK(xg_lcache_create(pool, TERMS, &c) == XG_OK, "create %" PRIu64,
              pool);
        struct model m;
        m_init(&m, pool, TERMS);
        for (int b = 0; b < BATCHES; ++b) {
            int n = 1 + (int)rng_below(b % 10 == 0 ? 64 : 12);
            int n_pin = 0;
            for (int i = 0; i < n; ++i) {
                /* Skewed towards low ids so that hits are common. */
                uint32_t t = rng_below(1 + rng_below(TERMS));
                uint64_t moff = 0, off = ~0ull;
                int mload = -1, load = -1;
                uint32_t n_ev;
                int want = m_acquire(&m, t, size[t], &moff, &mload, evicted,
                                     &n_ev);
                int rc = xg_lcache_acquire(c, t, size[t], &off, &load);
                ++total_ops;
                CHECK(rc == want, "pool %" PRIu64 " batch %d: acquire(%u, %"
                      PRIu64 ") = %d (%s), model %d", pool, b, t, size[t],
                      rc, xg_last_error(), want);
                if (rc == XG_OK) {
                    CHECK(off == moff && load == mload,
                          "pool %" PRIu64 ": term %u at %" PRIu64 " load %d,"
                          " model %" PRIu64 " load %d", pool, t, off, load,
                          moff, mload);
                    CHECK(off % U == 0 && off + size[t] <= pool,
                          "term %u outside the pool", t);
                    int seen = 0;
                    for (int j = 0; j < n_pin; ++j)
                        if (batch[j] == t) {
                            seen = 1;
                            CHECK(batch_off[j] == off && load == 0,
                                  "re-acquire in batch moved term %u", t);
                        }
                    if (!seen) {
                        batch[n_pin] = t;
                        batch_off[n_pin++] = off;
                    }
                } else {
                    ++total_fail;
                    CHECK(xg_lcache_lookup(c, t, NULL) == 0,
                          "failed term %u resident", t);
                }
                total_ev += n_ev;
                for (uint32_t j = 0; j < n_ev; ++j)
                    CHECK(xg_lcache_lookup(c, evicted[j], NULL) == 0,
                          "term %u should have been evicted", evicted[j]);
                /* Pinned lists stay put, whatever happened. */
                for (int j = 0; j < n_pin; ++j) {
                    uint64_t x;
                    CHECK(xg_lcache_lookup(c, batch[j], &x) == 1 &&
                              x == batch_off[j],
                          "pinned term %u evicted or moved", batch[j]);
                }
                if (rc == XG_ERR_NOMEM && size[t] <= largest) {
                    /* Only pinned lists may remain. */
                    struct xg_lcache_stats s;
                    xg_lcache_stats(c, &s);
                    CHECK(s.resident_lists == (uint64_t)n_pin,
                          "NOMEM with %" PRIu64 " resident, %d pinned",
                          s.resident_lists, n_pin);
                }
                stats_eq(c, m.hits, m.misses, m.ev, m.loaded, m.res_bytes,
                         m.res_lists);
            }
            uint64_t nres = scan(c, TERMS, size, pool, sp);
            CHECK(nres == m.res_lists, "scan %" PRIu64 " vs model %" PRIu64,
                  nres, m.res_lists);
            for (uint64_t j = 0; j < nres; ++j)
                CHECK(m.order[sp[j].term] >= 0 &&
                          m.off[sp[j].term] * U == sp[j].off,
                      "term %u resident at %" PRIu64 " disagrees with model",
                      sp[j].term, sp[j].off);
            xg_lcache_unpin_all(c);
            memset(m.pinned, 0, TERMS);
        }
        xg_lcache_destroy(c);
        m_free_model(&m);
    }
    printf("     %" PRIu64 " acquisitions, %" PRIu64 " failed, %" PRIu64
           " evictions\n", total_ops, total_fail, total_ev);
    CHECK(total_fail > 100 && total_ev > 1000, "workload too easy");
    group_ok("random workload on 6 pools equals the naive model (offsets, "
             "loads, codes, victims, stats); scans: in pool, aligned, no "
             "overlap; pinned lists never move");
}

/* 10^6 resident lists among 10^7 term ids, batches of 1000 acquisitions. */
static void test_scale(void)
{
    const uint32_t n_terms = 10000000, n_lists = 1000000;
    const uint64_t pool = 704ull << 20; /* 512 + 128 + 64 MiB blocks */
    struct xg_lcache *c;
    CHECK(xg_lcache_create(pool, n_terms, &c) == XG_OK, "create: %s",
          xg_last_error());
    uint64_t *size = malloc((size_t)n_terms * 8);
    struct span *sp = malloc((size_t)n_lists * 2 * sizeof *sp);
    CHECK(size && sp, "malloc");
    for (uint32_t t = 0; t < n_terms; ++t)
        size[t] = 1 + rng_below(1024);
    uint64_t off, acq = 0;
    int load;
    for (uint32_t t = 0; t < n_lists; ++t) {
        CHECK(xg_lcache_acquire(c, t * 10, size[t * 10], &off, &load) ==
                  XG_OK && load == 1, "fill %u: %s", t, xg_last_error());
        ++acq;
        if (t % 1000 == 999)
            xg_lcache_unpin_all(c);
    }
    xg_lcache_unpin_all(c);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    const int n_batches = 300;
    for (int b = 0; b < n_batches; ++b) {
        for (int i = 0; i < 1000; ++i) {
            uint32_t t = rng_below(2 * n_lists) * 5;
            CHECK(xg_lcache_acquire(c, t, size[t], &off, &load) == XG_OK,
                  "acquire %u: %s", t, xg_last_error());
            ++acq;
        }
        xg_lcache_unpin_all(c);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 +
                 (double)(t1.tv_nsec - t0.tv_nsec)) / (n_batches * 1000.0);
    struct xg_lcache_stats s;
    xg_lcache_stats(c, &s);
    uint64_t nres = scan(c, n_terms, size, pool, sp);
    printf("     %" PRIu64 " lists resident (%.0f MiB of blocks), %" PRIu64
           " hits, %" PRIu64 " evictions; %.0f ns per acquisition\n", nres,
           (double)s.resident_bytes / (1 << 20), s.hits, s.evictions, ns);
    CHECK(s.hits + s.misses == acq && nres == s.misses - s.evictions &&
              s.hits > 0 && s.evictions > 0,
          "stats do not add up");
    free(size);
    free(sp);
    xg_lcache_destroy(c);
    group_ok("10^7 term ids, 10^6 resident lists: 300 batches of 1000 "
             "acquisitions, stats add up, scan clean");
}

int main(int argc, char **argv)
{
    seed_used = parse_seed(argc, argv);
    rng_state = seed_used;
    printf("test_list_cache: seed %" PRIu64 "\n", seed_used);
    test_arguments();
    test_buddy_layout();
    test_lru_order();
    test_random_workload();
    test_scale();
    printf("%d passed, 0 failed\n", n_passed);
    return 0;
}
