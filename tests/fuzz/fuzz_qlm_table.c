/** @file fuzz_qlm_table.c
 *  @brief libFuzzer target: the binary n-gram table reader (qlm_table.c)
 *         and the scorer that trusts what it accepted.
 *
 *  The input is a table (corpus/qlm_table: small `qlm --format bin
 *  --counts` outputs of the bundled sample).  Its CRC is recomputed
 *  unless the input's last byte is odd, so most mutations reach the
 *  structural checks.  A table that loads must answer every lookup
 *  consistently (each word finds its own id, each n-gram its own entry,
 *  each of its documents its own row) and score queries made of its own
 *  words without a fault; a refused table must give a negative code and
 *  one line naming the file.
 */
#include <stdint.h>
#include <string.h>

#include "../../gpu/index/crc32c.h"
#include "../../gpu/qlm/qlm_format.h"
#include "../../gpu/qlm/qlm_score.h"
#include "../../gpu/qlm/qlm_table.h"
#include "fuzz_file.h"

static void check_table(const struct xg_qlm_table *t)
{
    for (uint32_t i = 0; i < t->n_terms; ++i) {
        const char *s = t->dict + t->term_off[i];
        size_t len = (size_t)(t->term_off[i + 1] - t->term_off[i]);
        if (xg_qlm_table_term(t, s, len) != (int64_t)i) abort();
    }
    for (uint32_t n = 1; n <= t->sigma; ++n)
        for (uint64_t g = t->first_gram[n - 1]; g < t->first_gram[n]; ++g) {
            const struct xg_qlm_gram *e = &t->gram[g];
            if (xg_qlm_table_gram(t, t->ids + e->ids, n) != e) abort();
            for (uint64_t r = e->row; r < e->row + e->n_rows; ++r)
                if (xg_qlm_table_row(t, e, t->docid[r]) != (int64_t)r) abort();
        }
}

/* Queries of the table's own words: its first and last few. */
static void score_some(const struct xg_qlm_table *t)
{
    char text[1024];
    size_t len = 0;
    for (uint32_t i = 0; i < t->n_terms && i < 6; ++i) {
        uint32_t id = i % 2 ? t->n_terms - 1 - i / 2 : i / 2;
        size_t w = (size_t)(t->term_off[id + 1] - t->term_off[id]);
        if (len + w + 2 > sizeof text) break;
        memcpy(text + len, t->dict + t->term_off[id], w);
        len += w;
        text[len++] = ' ';
    }
    text[len] = '\0';
    struct xg_qlm_hit *hits = NULL;
    uint32_t n_hits = 0;
    if (xg_qlm_score_ref(t, text, 10, &hits, &n_hits) == XG_OK) free(hits);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *d = malloc(size ? size : 1);
    if (!d) return 0;
    memcpy(d, data, size);
    struct xg_qlm_header *h = (struct xg_qlm_header *)d;
    if (size >= sizeof *h && !(d[size - 1] & 1))
        h->crc = xg_crc32c(0, d + sizeof *h, size - sizeof *h);
    const char *path = xg_fuzz_file(d, size);
    free(d);
    struct xg_qlm_table t;
    int rc = xg_qlm_table_load(path, &t);
    if (rc != XG_OK) {
        xg_fuzz_refusal(rc, path);
        return 0;
    }
    check_table(&t);
    score_some(&t);
    xg_qlm_table_free(&t);
    return 0;
}
