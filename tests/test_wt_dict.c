/** @file test_wt_dict.c
 *  @brief The weight pipeline's dictionary merge (gpu/text/dict.c): lists
 *         (each naming a term once, as pass 1's do)
 *         merged on many threads (slot ranges, late terms past a range's
 *         end) give the same terms, df sums, count and collision flag as
 *         one thread, and every term is found; with hashes masked down to
 *         a few bits (long probe runs across ranges) as well.
 */
#include "../gpu/text/hash.h"
#include "../gpu/runtime/threads.h"
#include "../gpu/text/dict.h"
#include "test_util.h"

/* n_lists lists over a vocabulary of `vocab` random words (1-20 bytes,
 * some sharing their start); each list holds distinct words, df 1-9. */
static void make_lists(const char *pool, const uint32_t *off, uint32_t vocab,
                       uint32_t n_lists, uint64_t per_list, uint64_t hash_mask,
                       struct xg_text_dict_list *l)
{
    uint8_t *used = calloc(vocab, 1);
    CHECK(used != NULL, "calloc");
    for (uint32_t i = 0; i < n_lists; ++i) {
        l[i].terms = calloc(per_list, sizeof *l[i].terms);
        CHECK(l[i].terms != NULL, "calloc");
        memset(used, 0, vocab);
        uint64_t n = 0;
        for (uint64_t k = 0; k < per_list; ++k) {
            uint32_t w = rng_below(vocab);
            if (used[w]) continue;
            used[w] = 1;
            const char *s = pool + off[w];
            uint32_t len = off[w + 1] - off[w];
            const uint64_t h = xg_text_hash((const unsigned char *)s, len, hash_mask);
            l[i].terms[n++] = (struct xg_text_dict_ent){s, len, 0, h, 1 + rng_below(9), 0};
        }
        l[i].n = n;
    }
    free(used);
}

static void compare(const struct xg_text_dict *one, const struct xg_text_dict *many,
                    const char *label)
{
    CHECK(one->n == many->n, "%s: %llu terms with 1 thread, %llu with many",
          label, (unsigned long long)one->n, (unsigned long long)many->n);
    CHECK(one->collision == many->collision, "%s: collision flag %d vs %d",
          label, one->collision, many->collision);
    uint64_t seen = 0;
    for (uint64_t j = 0; j < one->cap; ++j) {
        const struct xg_text_dict_ent *a = &one->e[j];
        if (!a->s) continue;
        ++seen;
        const struct xg_text_dict_ent *b = xg_text_dict_find(many, a->s, a->len, a->hash);
        CHECK(b != NULL, "%s: term %.*s missing from the threaded merge", label,
              (int)a->len, a->s);
        CHECK(b->df == a->df, "%s: df %llu vs %llu for %.*s", label,
              (unsigned long long)b->df, (unsigned long long)a->df,
              (int)a->len, a->s);
    }
    CHECK(seen == one->n, "%s: %llu slots for %llu terms", label,
          (unsigned long long)seen, (unsigned long long)one->n);
}

int main(int argc, char **argv)
{
    seed_used = parse_seed(argc, argv);
    rng_state = seed_used;
    printf("test_wt_dict: seed %" PRIu64 "\n", seed_used);
    const uint32_t vocab = 300000;
    char *pool = malloc((size_t)vocab * 21);
    uint32_t *off = malloc((vocab + 1) * sizeof *off);
    CHECK(pool && off, "malloc");
    uint32_t at = 0;
    for (uint32_t w = 0; w < vocab; ++w) {
        off[w] = at;
        uint32_t len = rng_below(13);
        /* A third start with "abcdefgh": shared prefixes, like real text. */
        for (uint32_t i = 0; i < len; ++i)
            pool[at + i] = w % 3 == 0 && i < 8 ? "abcdefgh"[i]
                                               : (char)('a' + rng_below(26));
        at += len;
        /* Four letters of w last: every word distinct, as in a list. */
        for (uint32_t i = 0, x = w; i < 4; ++i, x /= 26) pool[at++] = (char)('a' + x % 26);
    }
    off[vocab] = at;
    const struct { uint32_t lists; uint64_t per_list; uint64_t mask; const char *what; } cases[] = {
        {1, 250000, UINT64_MAX, "one list of distinct terms (the GPU's)"},
        {4, 200000, UINT64_MAX, "four lists sharing most terms (the twin's)"},
        {3, 6000, 0xfff, "12-bit hashes: long probes across ranges"},
        {2, 2000, 0x3, "2-bit hashes: nearly every term late"},
        {3, 500, UINT64_MAX, "small lists"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        struct xg_text_dict_list l[4];
        memset(l, 0, sizeof l);
        make_lists(pool, off, vocab, cases[c].lists, cases[c].per_list,
                   cases[c].mask, l);
        for (uint32_t threads = 2; threads <= 16; threads *= 8) {
            struct xg_text_dict one, many;
            CHECK(!xg_text_dict_init(&one, 1 << 10) && !xg_text_dict_init(&many, 1 << 10),
                  "init");
            CHECK(!xg_text_dict_merge(&one, l, cases[c].lists, 1), "merge, 1 thread");
            CHECK(!xg_text_dict_merge_from(&many, l, cases[c].lists, threads, 0),
                  "merge, %u threads", threads);
            compare(&one, &many, cases[c].what);
            /* And on top of a table that already holds terms (the next
             * chunk's lists). */
            CHECK(!xg_text_dict_merge(&one, l, 1, 1), "again, 1 thread");
            CHECK(!xg_text_dict_merge_from(&many, l, 1, threads, 0), "again, %u threads",
                  threads);
            compare(&one, &many, cases[c].what);
            xg_text_dict_free(&one);
            xg_text_dict_free(&many);
        }
        for (uint32_t i = 0; i < cases[c].lists; ++i) free(l[i].terms);
        group_ok(cases[c].what);
    }
    free(pool);
    free(off);
    printf("%d passed, 0 failed\n", n_passed);
    return 0;
}
