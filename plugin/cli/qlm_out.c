/** @file qlm_out.c
 *  @brief The qlm command's writer: `w1 w2 ... wn<TAB>docid<TAB>probability`
 *         lines (%.17g; with --counts four more columns) or the binary form
 *         of docs/qlm.md (header, variable-length records, the dictionary
 *         last as in weight's binary form), atomically through OUT.tmp.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../gpu/index/crc32c.h"
#include "../../gpu/qlm/qlm_format.h"
#include "../../gpu/runtime/error.h"
#include "../../gpu/runtime/outfile.h"
#include "qlm_out.h"

/* fwrite that also runs the table's checksum over what it writes. */
static int put(FILE *f, const void *p, size_t size, size_t n, uint32_t *crc)
{
    if (fwrite(p, size, n, f) != n) return -1;
    *crc = xg_crc32c(*crc, p, size * n);
    return 0;
}

/* One n-gram's rows. */
static int put_rows(FILE *f, int binary, const struct xg_qlm_result *r, uint64_t g,
                    const char *words, size_t words_len, uint32_t *crc)
{
    const uint32_t n = r->gram_n[g];
    for (uint64_t i = r->gram_off[g]; i < r->gram_off[g + 1]; ++i) {
        const uint64_t *k = r->counts ? r->counts + 4 * i : NULL;
        if (binary) {
            uint32_t head[1 + XG_QLM_MAX_SIGMA + 1];
            head[0] = n;
            memcpy(head + 1, r->ids + r->gram_pos[g], n * sizeof *head);
            head[n + 1] = r->docids[i];
            if (put(f, head, 4, n + 2, crc) || put(f, &r->prob[i], 8, 1, crc) ||
                (k && put(f, k, 8, 4, crc)))
                return -1;
            continue;
        }
        fwrite(words, 1, words_len, f);
        if (fprintf(f, "\t%u\t%.17g", r->docids[i], r->prob[i]) < 0) return -1;
        if (k && fprintf(f, "\t%llu\t%llu\t%llu\t%llu", (unsigned long long)k[0],
                         (unsigned long long)k[1], (unsigned long long)k[2],
                         (unsigned long long)k[3]) < 0)
            return -1;
        if (putc('\n', f) == EOF) return -1;
    }
    return 0;
}

static int write_all(FILE *f, int binary, const struct xg_qlm_result *r, double lambda)
{
    struct xg_qlm_header h = {XG_QLM_MAGIC, r->sigma,
                              r->counts ? XG_QLM_FLAG_COUNTS : 0u, r->n_terms,
                              r->n_rows, 0, lambda, 0, 0};
    uint32_t crc = 0;
    if (binary && fwrite(&h, sizeof h, 1, f) != 1) return -1;
    char *words = NULL;
    size_t cap = 0;
    int rc = 0;
    for (uint64_t g = 0; !rc && g < r->n_grams; ++g) {
        size_t len = 0;
        for (uint32_t i = 0; !binary && i < r->gram_n[g]; ++i) {
            const uint32_t t = r->ids[r->gram_pos[g] + i];
            if (len + r->term_len[t] + 1 > cap) {
                cap = 2 * (len + r->term_len[t] + 1);
                char *nw = realloc(words, cap);
                if (!nw) { free(words); return -2; }
                words = nw;
            }
            if (i) words[len++] = ' ';
            memcpy(words + len, r->term[t], r->term_len[t]);
            len += r->term_len[t];
        }
        rc = put_rows(f, binary, r, g, words, len, &crc);
    }
    free(words);
    if (rc || !binary) return rc;
    /* The dictionary: u32 length + bytes per term id. */
    if (fflush(f)) return -1;
    long at = ftell(f);
    for (uint32_t t = 0; t < r->n_terms; ++t)
        if (put(f, &r->term_len[t], 4, 1, &crc) ||
            put(f, r->term[t], 1, r->term_len[t], &crc))
            return -1;
    h.dict_offset = (uint64_t)at;
    h.crc = crc;
    if (at < 0 || fseek(f, 0, SEEK_SET) || fwrite(&h, sizeof h, 1, f) != 1) return -1;
    return 0;
}

int xg_qout_write(const char *path, int binary, const struct xg_qlm_result *r,
                  double lambda)
{
    struct xg_outfile o;
    int rc = xg_outfile_open(&o, path);
    if (rc) return rc;
    static char buf[1 << 20];
    setvbuf(o.f, buf, _IOFBF, sizeof buf);
    int w = write_all(o.f, binary, r, lambda);
    if (w == -2) rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
    else if (w) rc = xg_set_error(XG_ERR_IO, "%s: write failed", o.tmp);
    int crc = xg_outfile_close(&o, !rc);
    return rc ? rc : crc;
}
