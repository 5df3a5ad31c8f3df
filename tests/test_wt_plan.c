/** @file test_wt_plan.c
 *  @brief The weight pipeline's chunk plan (gpu/weight/wt_plan.c) on random texts
 *         in the seed format (leading and trailing blank lines, runs of
 *         them, documents across the 64 KB counting blocks) and budgets
 *         from one document to all: the chunks cover the text from its
 *         first word without gaps, each starts a document, each fits the
 *         budget (2 bytes per byte, 64 per word) unless it is one document
 *         (then the plan must refuse), its word bound is not below its
 *         words, and the documents the plan counted are the ones a plain
 *         count finds.
 */
#include "../gpu/weight/wt_int.h"
#include "test_util.h"

static uint64_t words(const char *b, size_t lo, size_t hi)
{
    uint64_t n = 0;
    for (size_t q = lo; q < hi; ++q) n += b[q] != '\n' && (q == 0 || b[q - 1] == '\n');
    return n;
}

static int doc_start(const char *b, size_t p, size_t first)
{
    return p == first || (p >= 2 && b[p] != '\n' && b[p - 1] == '\n' && b[p - 2] == '\n');
}

/* A text of about `bytes` bytes: words of 1-12 letters, documents of
 * 1-`doc_words` words, separated by 1-3 blank lines. */
static char *make_text(size_t bytes, uint32_t doc_words, size_t *len)
{
    char *b = malloc(bytes + 64);
    CHECK(b != NULL, "malloc");
    size_t n = 0;
    for (uint32_t k = rng_below(3); k; --k) b[n++] = '\n';
    while (n < bytes) {
        for (uint32_t w = 1 + rng_below(doc_words); w && n + 16 < bytes + 32; --w) {
            for (uint32_t l = 1 + rng_below(12); l; --l) b[n++] = (char)('a' + rng_below(26));
            b[n++] = '\n';
        }
        for (uint32_t k = 1 + rng_below(3); k && n < bytes + 60; --k) b[n++] = '\n';
    }
    *len = n;
    return b;
}

static void check_plan(const char *b, size_t len, uint64_t avail, const char *what)
{
    struct xg_wt_chunk *ch = NULL;
    uint32_t n = 0;
    int counted = 0;
    size_t first = 0;
    while (first < len && b[first] == '\n') ++first;
    const int rc = xg_wt_plan("test", b, len, avail, 1 + rng_below(8), &ch, &n,
                              &counted);
    if (rc) {
        /* Only a document too large for any chunk may refuse. */
        CHECK(rc == XG_ERR_NOMEM, "%s: plan failed: %s", what, xg_last_error());
        size_t p = first, q = p + 1;
        int too_big = 0;
        while (p < len && !too_big) {
            while (q < len && !doc_start(b, q, first)) ++q;
            too_big = XG_WT_PER_BYTE * (uint64_t)(q - p) +
                      XG_WT_PER_WORD * words(b, p, q) > avail;
            p = q++;
        }
        CHECK(too_big, "%s: refused (%s), yet every document fits %llu", what,
              xg_last_error(), (unsigned long long)avail);
        return;
    }
    size_t p = first;
    for (uint32_t c = 0; c < n; ++c) {
        const size_t lo = (size_t)(ch[c].buf - b), hi = lo + ch[c].len;
        CHECK(lo == p && hi > lo, "%s: chunk %u at %zu, expected %zu", what, c, lo, p);
        CHECK(doc_start(b, lo, first), "%s: chunk %u does not start a document", what, c);
        const uint64_t w = words(b, lo, hi);
        CHECK(ch[c].words >= w, "%s: chunk %u: bound %llu < %llu words", what, c,
              (unsigned long long)ch[c].words, (unsigned long long)w);
        CHECK(n == 1 || XG_WT_PER_BYTE * (uint64_t)ch[c].len +
                                   XG_WT_PER_WORD * ch[c].words <= avail,
              "%s: chunk %u over the budget", what, c);
        if (counted) {
            const uint32_t d = xg_wt_count_docs(b, lo, hi, 3);
            CHECK(ch[c].n_docs == d, "%s: chunk %u: %u documents planned, %u counted", what,
                  c, ch[c].n_docs, d);
        }
        p = hi;
    }
    CHECK(p == len, "%s: chunks end at %zu of %zu", what, p, len);
    free(ch);
}

int main(int argc, char **argv)
{
    rng_state = seed_used = parse_seed(argc, argv);
    for (int r = 0; r < 60; ++r) {
        size_t len = 0;
        const size_t bytes = 1 + rng_below(r < 40 ? 300000 : 3000000);
        char *b = make_text(bytes, 1 + rng_below(r % 3 ? 400 : 20000), &len);
        char what[64];
        snprintf(what, sizeof what, "text %d (%zu bytes)", r, len);
        const uint64_t avails[] = {64 * 20 + 40, 1 << 14, 1 << 17, 1 << 20,
                                   (uint64_t)len * 40, UINT64_MAX};
        for (size_t k = 0; k < sizeof avails / sizeof *avails; ++k)
            check_plan(b, len, avails[k], what);
        free(b);
    }
    group_ok("60 texts, six budgets each: coverage, starts, bounds, documents");
    printf("%d passed, 0 failed\n", n_passed);
    return 0;
}
