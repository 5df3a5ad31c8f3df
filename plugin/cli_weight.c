/** @file cli_weight.c
 *  @brief xapian-gpu weight --db DB -o OUT: the BM25 weight of every
 *         (term, document) posting of a Xapian database, each exactly the
 *         weight Xapian gives that document for the one-term query.
 *
 *  This is the first part of issue 5: the database input, computed on the
 *  CPU in one pass over the postings (shim: every term's list in combined
 *  docid order, with the database's own document lengths and statistics),
 *  through the one BM25 (gpu/bm25.h).  Text inputs, the GPU pipeline, the
 *  binary format and out-of-core chunking are not built yet (docs/cli.md).
 *
 *  Output: TSV, `term<TAB>docid<TAB>weight`, terms in byte order, docids
 *  ascending, weights %.17g; or the binary form of docs/weight.md
 *  (--format bin).  Written to OUT.tmp and renamed, so a failure leaves no
 *  partial file.
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../gpu/bm25.h"
#include "../gpu/error.h"
#include "../shim/xg_shim.h"
#include "cli.h"

static const char help[] =
    "usage: xapian-gpu weight --db DB [--db SHARD...] -o OUT [OPTIONS]\n"
    "Write the BM25 weight of every posting: for each term and document,\n"
    "the weight Xapian's BM25Weight gives the document for the one-term\n"
    "query, as 'term<TAB>docid<TAB>weight' (%.17g), terms in byte order.\n"
    "  -o OUT                  output file (written atomically)\n"
    "  --format tsv|bin        text, or the binary form of docs/weight.md\n"
    "  --bm25 K1,K2,K3,B,MINLEN  BM25Weight parameters (1,0,1,0.5,0.5)\n"
    "  --quiet                 no progress on stderr\n";

/* The binary form (docs/weight.md), little-endian. */
#define XG_WEIGHT_MAGIC "XGWEIGHT"
#define XG_WEIGHT_VERSION 1u
struct xg_weight_header {
    char magic[8];
    uint32_t version, flags;
    uint64_t n_terms, n_records;
    uint64_t dict_offset;       /* the dictionary follows the records */
};
_Static_assert(sizeof(struct xg_weight_header) == 40, "weight header size");

struct weigher {
    FILE *out;
    int binary;
    struct xg_weight_header hdr;
    char *dict;                 /* binary: u32 length + bytes per term */
    size_t dict_len, dict_cap;
    const char *path;
    struct xg_bm25_params p;
    struct xg_bm25_query q;
    uint64_t n_docs, terms, postings, n_terms_hint;
    uint32_t *docids;           /* live docids ascending */
    double *kd;                 /* K_d per live document, same order */
    uint32_t *lens;
    int progress;
};

/* Index of `docid` among the live docids (it is one: postings are live). */
static uint64_t doc_index(const struct weigher *w, uint32_t docid)
{
    uint64_t lo = 0, hi = w->n_docs;
    while (lo < hi) {
        uint64_t mid = (lo + hi) >> 1;
        if (w->docids[mid] < docid) lo = mid + 1; else hi = mid;
    }
    return lo;
}

static int on_term(void *ctx, const char *term, size_t term_len,
                   const uint32_t *docids, const uint32_t *wdfs, uint32_t n,
                   const uint32_t *shard_df)
{
    (void)shard_df;
    struct weigher *w = ctx;
    /* BM25Weight::init for the one-term query: wqf 1, factor 1. */
    const double tw = xg_bm25_termweight(&w->p, w->n_docs, n, 1, 1.0);
    const uint32_t term_id = (uint32_t)w->hdr.n_terms;
    if (w->binary) {
        const uint32_t len = (uint32_t)term_len;
        if (w->dict_len + 4 + term_len > w->dict_cap) {
            size_t cap = 2 * (w->dict_cap + 4 + term_len);
            char *d = realloc(w->dict, cap);
            if (!d) return xg_set_error(XG_ERR_NOMEM, "out of memory");
            w->dict = d;
            w->dict_cap = cap;
        }
        memcpy(w->dict + w->dict_len, &len, 4);
        memcpy(w->dict + w->dict_len + 4, term, term_len);
        w->dict_len += 4 + term_len;
    }
    ++w->hdr.n_terms;
    w->hdr.n_records += n;
    uint64_t at = 0;
    for (uint32_t i = 0; i < n; ++i) {
        /* Docids ascend in both lists: walk forward instead of searching. */
        while (at < w->n_docs && w->docids[at] < docids[i]) ++at;
        if (at == w->n_docs || w->docids[at] != docids[i])
            at = doc_index(w, docids[i]);
        double weight = xg_bm25_sumpart_kd(tw, w->kd[at], wdfs[i]);
        if (w->p.k2 != 0) weight = weight + xg_bm25_sumextra(&w->q, w->lens[at]);
        if (w->binary) {
            unsigned char rec[16];
            memcpy(rec, &term_id, 4);
            memcpy(rec + 4, &docids[i], 4);
            memcpy(rec + 8, &weight, 8);
            if (fwrite(rec, 16, 1, w->out) != 1)
                return xg_set_error(XG_ERR_IO, "%s: write failed", w->path);
            continue;
        }
        fwrite(term, 1, term_len, w->out);
        if (fprintf(w->out, "\t%u\t%.17g\n", docids[i], weight) < 0)
            return xg_set_error(XG_ERR_IO, "%s: write failed", w->path);
    }
    w->postings += n;
    if (w->progress && (++w->terms & 0xFFFF) == 0)
        fprintf(stderr, "\rxapian-gpu weight: %llu terms, %llu postings",
                (unsigned long long)w->terms,
                (unsigned long long)w->postings);
    return XG_OK;
}

int xg_cli_weight(int argc, char **argv)
{
    static const struct option opts[] = {
        {"db", required_argument, 0, 'd'},
        {"bm25", required_argument, 0, 'w'},
        {"quiet", no_argument, 0, 'q'},
        {"format", required_argument, 0, 'f'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    const char *dbs[64], *out = NULL;
    size_t n_dbs = 0;
    int quiet = 0, c;
    struct weigher w;
    memset(&w, 0, sizeof w);
    const struct xg_bm25_params defaults = XG_BM25_DEFAULTS;
    w.p = defaults;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'd':
            if (n_dbs == 64) return xg_cli_usage("weight", "too many --db");
            dbs[n_dbs++] = optarg;
            break;
        case 'o': out = optarg; break;
        case 'w':
            if (xg_cli_bm25("weight", optarg, &w.p)) return 2;
            break;
        case 'q': quiet = 1; break;
        case 'f':
            if (!strcmp(optarg, "bin")) w.binary = 1;
            else if (strcmp(optarg, "tsv"))
                return xg_cli_usage("weight", "--format must be tsv or bin, "
                                    "got '%s'", optarg);
            break;
        case 'h': fputs(help, stdout); return 0;
        default:
            return xg_cli_usage("weight", "unknown option or missing value: %s",
                                argv[optind - 1]);
        }
    }
    if (!n_dbs || !out)
        return xg_cli_usage("weight", "--db DB and -o OUT are required");
    if (optind < argc)
        return xg_cli_usage("weight", "unexpected argument '%s'", argv[optind]);

    xg_db *db;
    if (xg_shim_db_open(dbs, n_dbs, &db)) return xg_cli_fail();
    struct xg_db_stats st;
    int rc = xg_shim_db_stats(db, &st);
    char *tmp = malloc(strlen(out) + 8);
    w.n_docs = st.n_docs;
    w.docids = malloc((st.n_docs + 1) * sizeof *w.docids);
    w.lens = malloc((st.n_docs + 1) * sizeof *w.lens);
    w.kd = malloc((st.n_docs + 1) * sizeof *w.kd);
    if (!rc && (!tmp || !w.docids || !w.lens || !w.kd))
        rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
    if (!rc) rc = xg_shim_db_doclens(db, w.docids, w.lens);
    if (!rc) {
        /* The database's own statistics, as Xapian's weighting sees them. */
        xg_bm25_query_init(&w.p, st.n_docs, st.total_length, 1, &w.q);
        for (uint64_t i = 0; i < st.n_docs; ++i)
            w.kd[i] = xg_bm25_kd(&w.q, w.lens[i]);
        sprintf(tmp, "%s.tmp", out);
        w.path = tmp;
        w.out = fopen(tmp, "w");
        if (!w.out) rc = xg_set_error(XG_ERR_IO, "%s: cannot write", tmp);
        memcpy(w.hdr.magic, XG_WEIGHT_MAGIC, 8);
        w.hdr.version = XG_WEIGHT_VERSION;
        /* The header is rewritten with the counts at the end. */
        if (!rc && w.binary && fwrite(&w.hdr, sizeof w.hdr, 1, w.out) != 1)
            rc = xg_set_error(XG_ERR_IO, "%s: write failed", tmp);
    }
    w.progress = !quiet && isatty(2);
    if (!rc) rc = xg_shim_db_each_term(db, on_term, &w);
    if (!rc && w.binary) {
        w.hdr.dict_offset = sizeof w.hdr + 16 * w.hdr.n_records;
        if (fwrite(w.dict, 1, w.dict_len, w.out) != w.dict_len ||
            fseek(w.out, 0, SEEK_SET) ||
            fwrite(&w.hdr, sizeof w.hdr, 1, w.out) != 1)
            rc = xg_set_error(XG_ERR_IO, "%s: write failed", tmp);
    }
    if (w.out) {
        if (fclose(w.out) && !rc)
            rc = xg_set_error(XG_ERR_IO, "%s: write failed", tmp);
        if (!rc && rename(tmp, out))
            rc = xg_set_error(XG_ERR_IO, "%s: cannot write", out);
        if (rc) remove(tmp);
    }
    if (w.progress) fputc('\n', stderr);
    if (!rc && !quiet)
        fprintf(stderr, "xapian-gpu weight: %llu postings of %llu documents "
                "to %s\n", (unsigned long long)w.postings,
                (unsigned long long)st.n_docs, out);
    xg_shim_db_close(db);
    free(tmp);
    free(w.docids);
    free(w.lens);
    free(w.kd);
    free(w.dict);
    return rc ? xg_cli_fail() : 0;
}
