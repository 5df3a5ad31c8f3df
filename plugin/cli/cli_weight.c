/** @file cli_weight.c
 *  @brief xapian-gpu weight: the weight of every (term, document) of a
 *         collection, from a Xapian database (--db: plugin/weight_db.h,
 *         each weight exactly Xapian's one-term-query weight) or from text
 *         (--text in the seed 000 format, --tsv docid<TAB>text tokenized as
 *         TermGenerator does), through the pipeline of gpu/weight/wt.h on
 *         the GPU or its multi-threaded CPU twin.
 *
 *  Output (weight_out.c): TSV `term<TAB>docid<TAB>weight` (%.17g), terms in
 *  byte order, docids ascending, or the binary form of docs/weight.md;
 *  written to OUT.tmp and renamed, so a failure leaves no partial file.
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../gpu/runtime/error.h"
#include "../../gpu/index/format.h"
#include "../../gpu/index/format_read.h"
#include "../../gpu/runtime/threads.h"
#include "../../gpu/weight/wt.h"
#include "../../gpu/text/tokenize.h"
#include "../../shim/xg_export.h"
#include "../../shim/xg_shim.h"
#include "../weight_db.h"
#include "cli.h"
#include "weight_out.h"

static const char help[] =
    "usage: xapian-gpu weight (--db DB [--db SHARD...] | --text FILE | --tsv FILE)\n"
    "                         -o OUT [OPTIONS]\n"
    "Write the weight of every (term, document) as 'term<TAB>docid<TAB>weight'\n"
    "(%.17g), terms in byte order, docids ascending (docs/weight.md).\n"
    "  -d, --db DB             a Xapian database: each weight is Xapian's\n"
    "                          BM25Weight for the one-term query\n"
    "  --text FILE             one word per line, documents separated by\n"
    "                          empty lines (seed 000 format); docids 1, 2, ...\n"
    "  --tsv FILE              docid<TAB>text lines, tokenized like Xapian's\n"
    "                          TermGenerator without stemming\n"
    "  -o OUT                  output file (written atomically)\n"
    "  --format tsv|bin        text, or the binary form of docs/weight.md\n"
    "  --formula xapian|seed   BM25Weight of Xapian 1.4.22 (default), or\n"
    "                          seed 000 eq. 1 (text inputs)\n"
    "  --k1 K1 --b B           BM25 parameters (xapian: 1, 0.5; seed: 1.2, 0.75)\n"
    "  --bm25 K1,K2,K3,B,MINLEN  all BM25Weight parameters (1,0,1,0.5,0.5)\n"
    "  --engine auto|gpu|cpu   text inputs: GPU when present (auto), or\n"
    "                          the multi-threaded CPU twin\n"
    "  --threads N             CPU twin threads (all cores)\n"
    "  --device-memory BYTES   process in chunks under this budget\n"
    "                          (suffix K, M or G; default: in core)\n"
    "  --vocabulary FILE       text inputs: a fixed vocabulary, one word per\n"
    "                          line; every other word counts as <unk>\n"
    "  --impacts               with --db: also (re)write the database's GPU\n"
    "                          index with these weights' BM25 parts\n"
    "                          quantized to one byte per posting (k2 = 0)\n"
    "  --index INDEX           where --impacts writes the index (default:\n"
    "                          as xapian-gpu export)\n"
    "  --quiet                 no progress on stderr\n";

/* --- --db: the database's own postings (weight_db.h) -------------------- */

struct db_writer {
    struct xg_wout *w;
    uint64_t terms, postings;
    int progress;
};

static int write_term(void *ctx, const char *term, size_t term_len,
                      const uint32_t *docids, const double *weights, uint32_t n)
{
    struct db_writer *d = ctx;
    int rc = xg_wout_term(d->w, term, term_len, docids, weights, n);
    d->postings += n;
    if (d->progress && (++d->terms & 0xFFFF) == 0)
        fprintf(stderr, "\rxapian-gpu weight: %llu terms, %llu postings",
                (unsigned long long)d->terms, (unsigned long long)d->postings);
    return rc;
}

static int weigh_db(const char **dbs, size_t n_dbs, const struct xg_bm25_params *p,
                    struct xg_wout *out, int progress, uint64_t *n_docs,
                    uint64_t *n_postings)
{
    struct db_writer d = {out, 0, 0, progress};
    int rc = xg_weight_db((const char *const *)dbs, n_dbs, p, write_term, &d,
                          n_docs, n_postings);
    if (progress) fputc('\n', stderr);
    return rc;
}

/* --impacts: the GPU index of the database with its postings' BM25 parts
 * for these parameters, quantized (gpu/index/impact.h); the export computes
 * them with the same bm25.h functions as the weights above. */
static int write_impacts(const char **dbs, size_t n_dbs, const struct xg_bm25_params *p,
                         const char *index, int progress, int quiet)
{
    struct xg_export_opts eo;
    xg_export_opts_init(&eo);
    eo.bm25 = *p;
    eo.progress = progress;
    eo.impacts = 1;
    xg_db *db;
    if (xg_shim_db_open(dbs, n_dbs, &db)) return XG_ERR_IO;
    char *path = index ? strdup(index) : xg_fmt_default_path(dbs[0]);
    struct xg_export_report rep;
    int rc = path ? xg_export(db, path, &eo, &rep)
                  : xg_set_error(XG_ERR_NOMEM, "out of memory");
    if (!rc && !quiet)
        fprintf(stderr, "xapian-gpu weight: GPU index with impacts (%llu bytes) "
                "to %s\n", (unsigned long long)rep.section_bytes[XG_SEC_IMPACTS],
                path);
    free(path);
    xg_shim_db_close(db);
    return rc;
}

/* --- --text / --tsv: the pipeline --------------------------------------- */

static int parse_bytes(const char *v, uint64_t *out)
{
    char *end;
    unsigned long long x = strtoull(v, &end, 10);
    if (end == v) return -1;
    if (*end == 'K' || *end == 'k') { x <<= 10; ++end; }
    else if (*end == 'M' || *end == 'm') { x <<= 20; ++end; }
    else if (*end == 'G' || *end == 'g') { x <<= 30; ++end; }
    if (*end || x == 0) return -1;
    *out = x;
    return 0;
}

static int parse_double(const char *v, double *out)
{
    char *end;
    double x = strtod(v, &end);
    if (end == v || *end || !(x >= 0)) return -1;
    *out = x;
    return 0;
}

int xg_cli_weight(int argc, char **argv)
{
    static const struct option opts[] = {
        {"db", required_argument, 0, 'd'},
        {"text", required_argument, 0, 'x'},
        {"tsv", required_argument, 0, 't'},
        {"bm25", required_argument, 0, 'w'},
        {"k1", required_argument, 0, '1'},
        {"b", required_argument, 0, '2'},
        {"formula", required_argument, 0, 'F'},
        {"engine", required_argument, 0, 'e'},
        {"threads", required_argument, 0, 'j'},
        {"device-memory", required_argument, 0, 'm'},
        {"hash-mask", required_argument, 0, 'H'},
        {"quiet", no_argument, 0, 'q'},
        {"impacts", no_argument, 0, 'I'},
        {"index", required_argument, 0, 'X'},
        {"vocabulary", required_argument, 0, 'V'},
        {"format", required_argument, 0, 'f'},
        {0, 0, 0, 0}};
    const char *dbs[64], *out = NULL, *text = NULL, *tsv = NULL;
    size_t n_dbs = 0;
    const char *vocab = NULL, *index = NULL;
    int impacts = 0;
    int quiet = 0, binary = 0, c, status, have_k1 = 0, have_b = 0;
    double k1 = 0, b = 0;
    struct xg_wt_opts o;
    memset(&o, 0, sizeof o);
    const struct xg_bm25_params defaults = XG_BM25_DEFAULTS;
    o.bm25 = defaults;
    optind = 1;
    while ((c = xg_cli_getopt("weight", help, argc, argv, "d:o:", opts,
                              &status)) != -1) {
        switch (c) {
        case 'd':
            if (n_dbs == 64) return xg_cli_usage("weight", "too many --db");
            dbs[n_dbs++] = optarg;
            break;
        case 'x': text = optarg; break;
        case 't': tsv = optarg; break;
        case 'o': out = optarg; break;
        case 'w':
            if (xg_cli_bm25("weight", optarg, &o.bm25)) return 2;
            break;
        case '1':
            if (parse_double(optarg, &k1))
                return xg_cli_usage("weight", "--k1 must be a number >= 0");
            have_k1 = 1;
            break;
        case '2':
            if (parse_double(optarg, &b) || b > 1)
                return xg_cli_usage("weight", "--b must be a number in [0, 1]");
            have_b = 1;
            break;
        case 'F':
            if (!strcmp(optarg, "seed")) o.formula = XG_WT_SEED;
            else if (strcmp(optarg, "xapian"))
                return xg_cli_usage("weight", "--formula must be xapian or seed");
            break;
        case 'e':
            if (!strcmp(optarg, "gpu")) o.engine = XG_WT_GPU;
            else if (!strcmp(optarg, "cpu")) o.engine = XG_WT_CPU;
            else if (strcmp(optarg, "auto"))
                return xg_cli_usage("weight", "--engine must be auto, gpu or cpu");
            break;
        case 'j':
            if (xg_cli_uint("weight", "--threads", optarg, 1, 256, &o.threads)) return 2;
            break;
        case 'm':
            if (parse_bytes(optarg, &o.device_memory))
                return xg_cli_usage("weight", "--device-memory must be BYTES[K|M|G] > 0");
            break;
        case 'H':
            o.hash_mask = strtoull(optarg, NULL, 0);
            break;
        case 'q': quiet = 1; break;
        case 'I': impacts = 1; break;
        case 'X': index = optarg; break;
        case 'V': vocab = optarg; break;
        case 'f':
            if (!strcmp(optarg, "bin")) binary = 1;
            else if (strcmp(optarg, "tsv"))
                return xg_cli_usage("weight", "--format must be tsv or bin, got '%s'", optarg);
            break;
        default: return status;     /* --help, --version, bad usage */
        }
    }
    if ((n_dbs > 0) + (text != NULL) + (tsv != NULL) != 1 || !out)
        return xg_cli_usage("weight", "one of --db DB, --text FILE, --tsv FILE, and -o OUT "
                            "are required");
    if (optind < argc)
        return xg_cli_usage("weight", "unexpected argument '%s'", argv[optind]);
    if ((impacts || index) && !n_dbs)
        return xg_cli_usage("weight", "--impacts and --index need --db");
    if (index && !impacts)
        return xg_cli_usage("weight", "--index is where --impacts writes");
    if (vocab && n_dbs)
        return xg_cli_usage("weight", "--vocabulary needs --text or --tsv (with --db each "
                            "weight is Xapian's own, for the database's terms)");
    if (o.formula == XG_WT_SEED) {
        if (n_dbs) return xg_cli_usage("weight", "--formula seed needs --text or --tsv");
        o.bm25.k1 = 1.2;
        o.bm25.b = 0.75;
    }
    if (have_k1) o.bm25.k1 = k1;
    if (have_b) o.bm25.b = b;
    /* Refused before anything is written. */
    if (impacts && o.bm25.k2 != 0)
        return xg_cli_usage("weight", "--impacts needs k2 = 0 (impacts hold the "
                            "per-term parts only)");
    const int progress = !quiet && isatty(2);
    o.progress = progress;

    struct xg_wout w;
    memset(&w, 0, sizeof w);
    uint64_t n_docs = 0, n_postings = 0;
    int rc;
    if (n_dbs) {
        rc = xg_wout_open(&w, out, binary);
        if (!rc) rc = weigh_db(dbs, n_dbs, &o.bm25, &w, progress, &n_docs, &n_postings);
        int rc2 = xg_wout_close(&w, !rc);
        if (!rc) rc = rc2;
        if (!rc && impacts) rc = write_impacts(dbs, n_dbs, &o.bm25, index, progress, quiet);
    } else {
        struct xg_text in;
        uint32_t threads = o.threads ? o.threads : xg_threads_cores();
        rc = text ? xg_text_load(text, threads, &in) : xg_text_load_tsv(tsv, &in);
        if (!rc && vocab) rc = xg_cli_vocabulary("weight", vocab, threads, quiet, &in);
        struct xg_wt_result r;
        memset(&r, 0, sizeof r);
        if (!rc) {
            struct xg_wt_input wi = {in.buf, in.len, in.docids, in.n_empty,
                                     in.path};
            rc = xg_wt_run(&wi, &o, &r);
        }
        if (!rc) rc = xg_wout_open(&w, out, binary);
        for (uint32_t t = 0; !rc && t < r.n_terms; ++t)
            rc = xg_wout_term(&w, r.term[t], r.term_len[t], r.docids + r.term_off[t],
                              r.weights + r.term_off[t], r.term_off[t + 1] - r.term_off[t]);
        int rc2 = xg_wout_close(&w, !rc);
        if (!rc) rc = rc2;
        if (!rc && !quiet) {
            fprintf(stderr, "xapian-gpu weight: %s engine%s, %u chunk(s), %u terms%s%s\n",
                    r.engine == XG_WT_GPU ? "GPU" : "CPU",
                    r.fell_back ? " (after a GPU hash collision)" : "", r.n_chunks,
                    r.n_terms, r.dict_on_gpu ? ", dictionary on the GPU" : "",
                    r.placed_on_gpu ? ", postings placed by the GPU" : "");
            if (r.dict_declined[0])
                fprintf(stderr, "xapian-gpu weight: the host built the dictionary: %s\n",
                        r.dict_declined);
        }
        n_docs = r.n_docs;
        n_postings = r.n_postings;
        xg_wt_result_free(&r);
        xg_text_free(&in);
    }
    if (!rc && !quiet)
        fprintf(stderr, "xapian-gpu weight: %llu postings of %llu documents to %s\n",
                (unsigned long long)n_postings, (unsigned long long)n_docs, out);
    return rc ? xg_cli_fail() : 0;
}
