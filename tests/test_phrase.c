/** @file test_phrase.c
 *  @brief The phrase test (gpu/query/phrase.h) and the position decoder
 *         (gpu/index/positions.h) on random inputs, against their
 *         definitions written the slow way: for an exact phrase, every
 *         base from 0 up; for a wider window, every choice of one position
 *         per term; NEAR against every choice of one position per term
 *         over disjoint sets.  Positions are drawn from a small range so
 *         that terms
 *         collide, repeat and fall just inside and outside the windows.
 *
 *  Usage: test_phrase [--seed N] (test_util.h).
 */
#include "../gpu/index/positions.h"
#include "../gpu/query/phrase.h"
#include "test_util.h"

#define MAX_TERMS 5
#define MAX_POS 12

/* Exact: some base >= 0 with base + i in term i's positions for all i. */
static int exact_slow(uint32_t pos[][MAX_POS], const uint32_t *count,
                      uint32_t n, uint32_t range)
{
    for (uint64_t base = 0; base <= range; ++base) {
        uint32_t i = 0;
        for (; i < n; ++i) {
            uint32_t j = 0;
            while (j < count[i] && pos[i][j] != base + i) ++j;
            if (j == count[i]) break;
        }
        if (i == n) return 1;
    }
    return 0;
}

/* Windowed: p_0 < p_1 < ... < p_(n-1), one per term, spanning at most
 * `window` positions (last - first + 1), by trying every choice. */
static int window_slow(uint32_t pos[][MAX_POS], const uint32_t *count,
                       uint32_t n, uint32_t window, uint32_t i,
                       uint64_t first, uint64_t prev)
{
    if (i == n) return prev - first + 1 <= window;
    for (uint32_t j = 0; j < count[i]; ++j) {
        if (i && pos[i][j] <= prev) continue;
        if (window_slow(pos, count, n, window, i + 1, i ? first : pos[i][j],
                        pos[i][j]))
            return 1;
    }
    return 0;
}

/* Append v to *p as a varint. */
static void put_varint(uint8_t **p, uint32_t v)
{
    while (v >= 0x80) {
        *(*p)++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *(*p)++ = (uint8_t)v;
}

/* NEAR over disjoint position sets: some choice of one position per term
 * spans fewer than `window` positions (last - first < window). */
static int near_slow(uint32_t pos[][MAX_POS], const uint32_t *count,
                     uint32_t n, uint32_t window, uint32_t i, uint32_t lo,
                     uint32_t hi)
{
    if (i == n) return hi - lo < window;
    for (uint32_t k = 0; k < count[i]; ++k) {
        const uint32_t p = pos[i][k];
        if (near_slow(pos, count, n, window, i + 1, i && lo < p ? lo : p,
                      i && hi > p ? hi : p))
            return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    seed_used = parse_seed(argc, argv);
    rng_state = seed_used;
    printf("test_phrase: seed %" PRIu64 "\n", seed_used);
    uint32_t pos[MAX_TERMS][MAX_POS], count[MAX_TERMS];
    const uint32_t *ptr[MAX_TERMS];
    uint64_t held[2] = {0, 0};
    for (int round = 0; round < 200000; ++round) {
        const uint32_t n = 2 + rng_below(MAX_TERMS - 1);
        const uint32_t range = 4 + rng_below(20);
        for (uint32_t i = 0; i < n; ++i) {
            /* Ascending distinct positions in [0, range). */
            count[i] = 0;
            for (uint32_t v = 0; v < range && count[i] < MAX_POS; ++v)
                if (rng_below(range) < 3) pos[i][count[i]++] = v;
            ptr[i] = pos[i];
        }
        const uint32_t window = n + (rng_below(3) ? rng_below(6) : 0);
        const int want = window == n ? exact_slow(pos, count, n, range)
                                     : window_slow(pos, count, n, window, 0,
                                                   0, 0);
        const int got = xg_phrase_holds(ptr, count, n, window);
        CHECK(got == want, "round %d: %u terms, window %u: got %d, want %d",
              round, n, window, got, want);
        ++held[want];
    }
    CHECK(held[0] > 1000 && held[1] > 1000, "too few of one outcome: %llu "
          "held, %llu did not", (unsigned long long)held[1],
          (unsigned long long)held[0]);
    group_ok("phrase test against every base and every choice");

    /* NEAR: terms hold disjoint positions, as distinct terms do in a
     * document (the converter refuses a term repeated in a NEAR). */
    uint64_t near_held[2] = {0, 0};
    for (int round = 0; round < 200000; ++round) {
        const uint32_t n = 2 + rng_below(MAX_TERMS - 1);
        const uint32_t range = 4 + rng_below(40);
        for (uint32_t i = 0; i < n; ++i) count[i] = 0;
        for (uint32_t v = 0; v < range; ++v) {
            const uint32_t i = rng_below(n + 3);
            if (i < n && count[i] < MAX_POS) pos[i][count[i]++] = v;
        }
        for (uint32_t i = 0; i < n; ++i) ptr[i] = pos[i];
        const uint32_t window = n + rng_below(8);
        uint32_t at[MAX_TERMS];
        const int want = near_slow(pos, count, n, window, 0, 0, 0);
        const int got = xg_filter_holds(XG_QF_NEAR, ptr, count, n, window, at);
        CHECK(got == want, "NEAR round %d: %u terms, window %u: got %d, "
              "want %d", round, n, window, got, want);
        ++near_held[want];
    }
    CHECK(near_held[0] > 1000 && near_held[1] > 1000, "NEAR: too few of one "
          "outcome: %llu held, %llu did not",
          (unsigned long long)near_held[1], (unsigned long long)near_held[0]);
    group_ok("NEAR test against every choice of positions");

    /* The decoder: a block of postings with random positions, encoded as
     * positions.h says, read back posting by posting. */
    for (int round = 0; round < 2000; ++round) {
        static uint32_t want[128][64], n_want[128];
        static uint8_t buf[128 * 64 * 5 + 128 * 5];
        uint8_t *p = buf;
        const uint32_t postings = 1 + rng_below(128);
        for (uint32_t j = 0; j < postings; ++j) {
            n_want[j] = rng_below(4) ? rng_below(64) : 0;
            uint64_t at = rng_below(3) ? rng_below(100) : rng_u32() >> 8;
            for (uint32_t k = 0; k < n_want[j]; ++k) {
                want[j][k] = (uint32_t)at;
                at += 1 + (rng_below(4) ? rng_below(10) : rng_below(1u << 20));
                if (at > 0xffffffffu) n_want[j] = k + 1;
            }
            put_varint(&p, n_want[j]);
            for (uint32_t k = 0; k < n_want[j]; ++k)
                put_varint(&p, k ? want[j][k] - want[j][k - 1] : want[j][k]);
        }
        for (uint32_t j = 0; j < postings; ++j) {
            struct xg_pos_cursor c;
            CHECK(xg_pos_open(&c, buf, p, j) == 0, "round %d: open %u", round,
                  j);
            uint32_t k = 0, v;
            while (xg_pos_next(&c, &v)) {
                CHECK(k < n_want[j] && v == want[j][k], "round %d posting %u "
                      "position %u: %u", round, j, k, v);
                ++k;
            }
            CHECK(k == n_want[j], "round %d posting %u: %u of %u positions",
                  round, j, k, n_want[j]);
        }
        /* Cut short: some posting cannot be opened or read whole, and
         * nothing is read past the cut. */
        if (p - buf > 1) {
            struct xg_pos_cursor c;
            /* At least one byte: an empty range means "no positions". */
            const uint8_t *cut = buf + 1 + rng_below((uint32_t)(p - buf - 1));
            int failed = 0;
            for (uint32_t j = 0; j < postings && !failed; ++j) {
                uint32_t k = 0, v;
                if (xg_pos_open(&c, buf, cut, j)) {
                    failed = 1;
                    break;
                }
                while (xg_pos_next(&c, &v)) ++k;
                failed = k != n_want[j] || c.p > cut;
            }
            CHECK(failed, "round %d: data cut at %ld opened every posting",
                  round, (long)(cut - buf));
        }
    }
    group_ok("positions decoder round trip and truncation");
    printf("test_phrase: all %d groups passed\n", n_passed);
    return 0;
}
