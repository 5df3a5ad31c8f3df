/** @file weight_out.c
 *  @brief The weight command's writer: `term<TAB>docid<TAB>weight` lines
 *         (%.17g) or the binary form of docs/weight.md (header, 16-byte
 *         records, dictionary last), atomically through OUT.tmp.
 */
#include <stdlib.h>
#include <string.h>

#include "../../gpu/runtime/error.h"
#include "weight_out.h"

#define XG_WEIGHT_MAGIC "XGWEIGHT"
#define XG_WEIGHT_VERSION 1u
/* The binary header, little-endian (docs/weight.md). */
struct xg_weight_header {
    char magic[8];          /* 0 */
    uint32_t version;       /* 8 */
    uint32_t flags;         /* 12 */
    uint64_t n_terms;       /* 16 */
    uint64_t n_records;     /* 24 */
    uint64_t dict_offset;   /* 32: the dictionary follows the records */
};
_Static_assert(sizeof(struct xg_weight_header) == 40, "weight header size");

int xg_wout_open(struct xg_wout *w, const char *path, int binary)
{
    memset(w, 0, sizeof *w);
    w->binary = binary;
    int rc = xg_outfile_open(&w->out, path);
    if (rc) return rc;
    static char buf[1 << 20];
    setvbuf(w->out.f, buf, _IOFBF, sizeof buf);
    struct xg_weight_header h = {XG_WEIGHT_MAGIC, XG_WEIGHT_VERSION, 0, 0, 0, 0};
    if (binary && fwrite(&h, sizeof h, 1, w->out.f) != 1)
        return xg_set_error(XG_ERR_IO, "%s: write failed", w->out.tmp);
    return XG_OK;
}

int xg_wout_term(struct xg_wout *w, const char *term, size_t len,
                 const uint32_t *docids, const double *weights, uint64_t n)
{
    const uint32_t id = (uint32_t)w->n_terms;
    if (w->binary) {
        const uint32_t l32 = (uint32_t)len;
        if (w->dict_len + 4 + len > w->dict_cap) {
            size_t cap = 2 * (w->dict_cap + 4 + len);
            char *d = realloc(w->dict, cap);
            if (!d) return xg_set_error(XG_ERR_NOMEM, "out of memory");
            w->dict = d;
            w->dict_cap = cap;
        }
        memcpy(w->dict + w->dict_len, &l32, 4);
        memcpy(w->dict + w->dict_len + 4, term, len);
        w->dict_len += 4 + len;
    }
    ++w->n_terms;
    w->n_records += n;
    for (uint64_t i = 0; i < n; ++i) {
        if (w->binary) {
            unsigned char rec[16];
            memcpy(rec, &id, 4);
            memcpy(rec + 4, &docids[i], 4);
            memcpy(rec + 8, &weights[i], 8);
            if (fwrite(rec, 16, 1, w->out.f) != 1)
                return xg_set_error(XG_ERR_IO, "%s: write failed", w->out.tmp);
            continue;
        }
        fwrite(term, 1, len, w->out.f);
        if (fprintf(w->out.f, "\t%u\t%.17g\n", docids[i], weights[i]) < 0)
            return xg_set_error(XG_ERR_IO, "%s: write failed", w->out.tmp);
    }
    return XG_OK;
}

int xg_wout_close(struct xg_wout *w, int ok)
{
    int rc = XG_OK;
    if (!w->out.f) return XG_OK; /* never opened */
    if (ok && w->binary) {
        struct xg_weight_header h = {XG_WEIGHT_MAGIC, XG_WEIGHT_VERSION, 0, w->n_terms,
                                     w->n_records, 40 + 16 * w->n_records};
        FILE *f = w->out.f;
        if (fwrite(w->dict, 1, w->dict_len, f) != w->dict_len ||
            fseek(f, 0, SEEK_SET) || fwrite(&h, sizeof h, 1, f) != 1)
            rc = xg_set_error(XG_ERR_IO, "%s: write failed", w->out.tmp);
    }
    int crc = xg_outfile_close(&w->out, ok && !rc);
    free(w->dict);
    w->dict = NULL;
    return rc ? rc : crc;
}
