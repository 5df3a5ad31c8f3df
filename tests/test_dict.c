/** @file test_dict.c
 *  @brief The front-coded dictionary (gpu/index/termdict.c): every term is found at
 *         its rank and absent terms are not, with and without the bucket
 *         search keys, on terms that share long prefixes (so many buckets
 *         have equal 8-byte keys), contain zero bytes, or are 1 byte long.
 *
 *  Usage: test_dict [--seed N] (test_util.h).
 */
#include "../gpu/index/termdict.h"
#include "test_util.h"

struct term {
    char s[32];
    size_t n;
};

static int by_bytes(const void *a, const void *b)
{
    const struct term *x = a, *y = b;
    int c = memcmp(x->s, y->s, x->n < y->n ? x->n : y->n);
    return c ? c : (x->n > y->n) - (x->n < y->n);
}

int main(int argc, char **argv)
{
    seed_used = parse_seed(argc, argv);
    rng_state = seed_used;
    printf("test_dict: seed %" PRIu64 "\n", seed_used);
    /* Terms: random suffixes on a few long shared prefixes, with zero
     * bytes and single bytes among them; sorted, duplicates dropped. */
    enum { N = 5000 };
    static const char *const prefixes[] = {"", "Zboundar", "Zboundary", "ab",
                                           "abcdefghijkl"};
    struct term *t = calloc(N, sizeof *t);
    CHECK(t != NULL, "calloc");
    for (int i = 0; i < N; ++i) {
        const char *p = prefixes[i % 5];
        size_t pn = strlen(p), sn = (size_t)(i % 7);
        memcpy(t[i].s, p, pn);
        for (size_t j = 0; j < sn; ++j)
            t[i].s[pn + j] = (char)"\0az\x7f\xff"[rng_below(5)];
        t[i].n = pn + sn;
    }
    qsort(t, N, sizeof *t, by_bytes);
    int n = 0;
    for (int i = 0; i < N; ++i)
        if (!n || by_bytes(&t[n - 1], &t[i])) t[n++] = t[i];

    struct xg_buf dict = {0}, index = {0};
    struct xg_dict_writer w = {&dict, &index, 0, NULL, 0, 0};
    for (int i = 0; i < n; ++i)
        CHECK(xg_dict_add(&w, t[i].s, t[i].n) == XG_OK, "add %d", i);
    CHECK(xg_dict_finish(&w) == XG_OK, "finish");
    const uint64_t *ix = (const uint64_t *)index.data;
    const uint64_t n_buckets = index.len / 8 - 1;
    struct xg_dict_hash hash;
    CHECK(xg_dict_hash_build(dict.data, dict.len, ix, n_buckets, (uint64_t)n,
                             &hash) == XG_OK && hash.slot, "hash");
    group_ok("build: sorted terms with shared prefixes and zero bytes");

    for (int k = 0; k < 2; ++k) {
        const struct xg_dict_hash *kk = k ? &hash : NULL;
        for (int i = 0; i < n; ++i)
            CHECK(xg_dict_lookup(dict.data, dict.len, ix, kk, n_buckets,
                                 (uint64_t)n, t[i].s, t[i].n) == i,
                  "term %d not found at its rank (hash %d)", i, k);
        /* Absent: each term with a byte appended (0x01 sorts between the
         * term and its extensions by 0x00... and 'a'), and with its last
         * byte dropped when that is not itself a term. */
        for (int i = 0; i < n; ++i) {
            struct term x = t[i];
            x.s[x.n++] = '\x01';
            CHECK(!bsearch(&x, t, (size_t)n, sizeof *t, by_bytes) &&
                      xg_dict_lookup(dict.data, dict.len, ix, kk, n_buckets,
                                     (uint64_t)n, x.s, x.n) == -1,
                  "term %d + 0x01 found (hash %d)", i, k);
            if (t[i].n) {
                x = t[i];
                --x.n;
                int64_t want = -1;
                struct term *hit = bsearch(&x, t, (size_t)n, sizeof *t, by_bytes);
                if (hit) want = hit - t;
                CHECK(xg_dict_lookup(dict.data, dict.len, ix, kk, n_buckets,
                                     (uint64_t)n, x.s, x.n) == want,
                      "term %d less its last byte (hash %d)", i, k);
            }
        }
        /* After the last term (no generated term has 7 bytes 0xff). */
        CHECK(xg_dict_lookup(dict.data, dict.len, ix, kk, n_buckets,
                             (uint64_t)n, "\xff\xff\xff\xff\xff\xff\xff",
                             7) == -1, "past the last term (hash %d)", k);
        group_ok(k ? "lookups through the hash" : "lookups over the buckets");
    }

    /* Collisions: a decoy slot with a term's tag but another id, placed
     * at the term's home slot (the real entry moves one on), must be
     * passed over; an absent term whose tag matches a present one's slot
     * must still be absent. */
    struct xg_dict_hash fake;
    fake.mask = hash.mask;
    fake.slot = calloc(hash.mask + 1, sizeof *fake.slot);
    CHECK(fake.slot != NULL, "calloc");
    for (int i = 0; i < n; i += 97) {
        memset(fake.slot, 0, (hash.mask + 1) * sizeof *fake.slot);
        uint64_t x = xg_dict_term_hash(t[i].s, t[i].n);
        uint64_t home = x & fake.mask, tag = x >> 32 << 32;
        int other = (i + 1) % n;
        fake.slot[home] = tag | (uint64_t)(other + 1);
        fake.slot[(home + 1) & fake.mask] = tag | (uint64_t)(i + 1);
        CHECK(xg_dict_lookup(dict.data, dict.len, ix, &fake, n_buckets,
                             (uint64_t)n, t[i].s, t[i].n) == i,
              "term %d behind a decoy", i);
        fake.slot[(home + 1) & fake.mask] = 0;
        CHECK(xg_dict_lookup(dict.data, dict.len, ix, &fake, n_buckets,
                             (uint64_t)n, t[i].s, t[i].n) == -1,
              "term %d found through another term's slot", i);
    }
    free(fake.slot);
    group_ok("hash collisions");
    xg_dict_hash_free(&hash);
    free(t);
    xg_buf_free(&dict);
    xg_buf_free(&index);
    printf("%d passed, 0 failed\n", n_passed);
    return 0;
}
