/** @file fuzz_format.c
 *  @brief Fuzz target for the index reader (gpu/index/format_read.c).
 *
 *  Takes a valid index, mutates it (random bytes, header counts, offsets),
 *  recomputes every CRC so the mutation reaches the structural checks and
 *  the block decoder, then opens it and reads every term's every block
 *  (and each term's first wdf from the headers alone, which on the index
 *  as given must equal its decoded first block's).
 *  Passes if nothing crashes or reads out of bounds (run it under ASan or
 *  valgrind for the latter) and every failure is a clean error code.
 *  usage: fuzz_format INDEX [ITERATIONS] [--seed N]
 *         fuzz_format --fix-crcs INDEX   (recompute its CRCs in place: the
 *         tests' consistently tampered indexes)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../gpu/runtime/error.h"
#include "../gpu/index/format.h"
#include "../gpu/index/format_read.h"
#include "fuzz/fix_crcs.h"

static uint64_t rng_state;
static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Every position of every posting of block b of term t. */
static void read_positions(const struct xg_index *ix, uint64_t t, uint32_t b,
                           uint32_t n)
{
    const uint8_t *begin, *end;
    xg_fmt_block_positions(ix, t, b, &begin, &end);
    for (uint32_t j = 0; j < n; ++j) {
        struct xg_pos_cursor c;
        uint32_t pos;
        if (xg_pos_open(&c, begin, end, j)) break;
        while (xg_pos_next(&c, &pos)) {}
    }
}

/* Reads every block of every term; returns how many terms' first wdf
 * (xg_fmt_first_wdf, from the headers alone) differs from their first
 * block's decoded one. */
static uint64_t read_everything(const struct xg_index *ix)
{
    uint32_t docs[XG_FMT_BLOCK], wdfs[XG_FMT_BLOCK], n, first;
    uint64_t differ = 0;
    for (uint64_t t = 0; t < ix->hdr->n_terms; ++t) {
        const int first_ok = xg_fmt_first_wdf(ix, t, &first) == XG_OK;
        for (uint32_t b = 0; b < xg_fmt_n_blocks(ix, t); ++b) {
            if (xg_fmt_block_decode(ix, t, b, docs, wdfs, &n) != XG_OK) break;
            if (b == 0 && (!first_ok || first != wdfs[0])) ++differ;
            read_positions(ix, t, b, n);
        }
    }
    xg_fmt_lookup(ix, "the", 3);
    xg_fmt_lookup(ix, "Zboundari", 9);
    xg_fmt_lookup(ix, "", 0);
    return differ;
}

int main(int argc, char **argv)
{
    uint64_t seed = (uint64_t)time(NULL);
    int iters = 2000;
    const char *path = NULL;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed = strtoull(argv[++i], 0, 10);
        else if (!path) path = argv[i];
        else iters = atoi(argv[i]);
    }
    if (!path) {
        fprintf(stderr, "usage: fuzz_format INDEX [ITERATIONS] [--seed N]\n"
                        "       fuzz_format --fix-crcs INDEX\n");
        return 2;
    }
    if (!strcmp(path, "--fix-crcs") && argc == 3) {
        FILE *f = fopen(argv[2], "r+b");
        if (!f) { perror(argv[2]); return 1; }
        fseek(f, 0, SEEK_END);
        size_t n = (size_t)ftell(f);
        uint8_t *d = malloc(n ? n : 1);
        rewind(f);
        if (!d || fread(d, 1, n, f) != n) { fprintf(stderr, "read failed\n"); return 1; }
        xg_test_fix_crcs(d, n);
        rewind(f);
        if (fwrite(d, 1, n, f) != n || fclose(f)) { perror(argv[2]); return 1; }
        free(d);
        return 0;
    }
    printf("fuzz_format: seed %llu, %d iterations\n", (unsigned long long)seed, iters);
    rng_state = seed;
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); return 1; }
    fseek(f, 0, SEEK_END);
    size_t n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *good = malloc(n), *buf = malloc(n);
    if (!good || !buf || fread(good, 1, n, f) != n) { fprintf(stderr, "read failed\n"); return 1; }
    fclose(f);
    char tmp[] = "/tmp/xg-fuzz-XXXXXX";
    int fd = mkstemp(tmp);
    if (fd < 0) { perror("mkstemp"); return 1; }
    close(fd);
    {   /* The index as given: every term's first wdf read both ways. */
        struct xg_index *ix;
        if (xg_fmt_open(path, &ix) != XG_OK) {
            fprintf(stderr, "FAIL: %s: %s\n", path, xg_last_error());
            return 1;
        }
        const uint64_t differ = read_everything(ix);
        const uint64_t terms = ix->hdr->n_terms;
        xg_fmt_close(ix);
        if (differ) {
            fprintf(stderr, "FAIL: %llu of %llu terms: first wdf from the "
                    "headers differs from the decoded block's\n",
                    (unsigned long long)differ, (unsigned long long)terms);
            return 1;
        }
        printf("fuzz_format: %llu terms' first wdf from the headers equal to "
               "their decoded first block's\n", (unsigned long long)terms);
    }
    int opened = 0, refused = 0;
    for (int it = 0; it < iters; ++it) {
        memcpy(buf, good, n);
        size_t len = n;
        int kind = (int)(rnd() % 4);
        int muts = 1 + (int)(rnd() % 8);
        for (int m = 0; m < muts; ++m) {
            if (kind == 0) {                    /* random bytes anywhere */
                buf[rnd() % len] = (uint8_t)rnd();
            } else if (kind == 1) {             /* header/table fields */
                size_t at = rnd() % (XG_FMT_TABLES_END(1) < len ? XG_FMT_TABLES_END(1) : len);
                buf[at] ^= (uint8_t)(1u << (rnd() % 8));
            } else if (kind == 2) {             /* bytes past the tables */
                size_t lo = 1024 < len ? 1024 : 0;
                buf[lo + rnd() % (len - lo)] ^= (uint8_t)rnd();
            } else {                            /* truncate */
                if (len) len = rnd() % len;
            }
        }
        if (kind != 3) xg_test_fix_crcs(buf, len);
        f = fopen(tmp, "wb");
        if (!f || fwrite(buf, 1, len, f) != len) { fprintf(stderr, "write failed\n"); return 1; }
        fclose(f);
        struct xg_index *ix;
        int rc = xg_fmt_open(tmp, &ix);
        if (rc == XG_OK) {
            ++opened;
            read_everything(ix);
            xg_fmt_close(ix);
        } else {
            ++refused;
            if (rc > 0 || strstr(xg_last_error(), tmp) == NULL) {
                fprintf(stderr, "FAIL: bad error for refusal: %d %s\n", rc, xg_last_error());
                return 1;
            }
        }
    }
    unlink(tmp);
    printf("fuzz_format: %d opened and read fully, %d refused cleanly\n", opened, refused);
    printf("1 passed, 0 failed\n");
    free(good);
    free(buf);
    return 0;
}
