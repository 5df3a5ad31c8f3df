/** @file cli_synth.c
 *  @brief xapian-gpu synth docs|text|queries: write the synthetic collection
 *         of seed paper 000 (section 5.1) into a Xapian database or as
 *         text, or a matching query file.
 *
 *  `synth docs` calls xg_shim_synth_db() (shim/tools/shim_synth.cc); `synth
 *  text` writes the same documents as "docid<TAB>word word ..." lines (each
 *  word as many times as its wdf), for engines that index text, such as
 *  the peers of tests/gpu/peers.py; `synth queries` writes
 *  "qid<TAB>word word ..." lines from xg_synth_query() (shim/tools/synth.c),
 *  qids 1..N.  Files are written through a temporary renamed into place, so
 *  a reader never sees half a file, or to stdout for "-".  All are
 *  deterministic in their options.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../gpu/runtime/error.h"
#include "cli.h"
#include "../../shim/tools/synth.h"

static const char help[] =
    "usage: xapian-gpu synth docs --docs N [OPTIONS] DB\n"
    "       xapian-gpu synth text --docs N [OPTIONS] OUT.tsv\n"
    "       xapian-gpu synth queries --queries N [OPTIONS] OUT.tsv\n"
    "Generate the synthetic benchmark collection (log-normal document\n"
    "lengths, words drawn from a Zipf vocabulary) as a database or as text,\n"
    "or a query set for it.  'xapian-gpu synth MODE --help' lists a mode's\n"
    "options.\n";

/* The options that pick the collection, shared by docs and text. */
#define COLLECTION_HELP                                                      \
    "  --docs N       number of documents (1..4294967295; required)\n"       \
    "  --vocab V      vocabulary size in words (1000000)\n"                  \
    "  --zipf S       Zipf exponent: P(rank r) ~ r^-S (1.0)\n"               \
    "  --mu M         mean of ln(document length) (6.0)\n"                   \
    "  --sigma S      standard deviation of ln(document length) (1.1)\n"    \
    "  --seed X       collection seed, 64-bit (1)\n"
#define COLLECTION_OPTS                                                     \
    {"docs", required_argument, 0, 'n'},                                    \
    {"vocab", required_argument, 0, 'V'},                                   \
    {"zipf", required_argument, 0, 'z'},                                    \
    {"mu", required_argument, 0, 'm'},                                      \
    {"sigma", required_argument, 0, 's'},                                   \
    {"seed", required_argument, 0, 'x'}

static const char help_docs[] =
    "usage: xapian-gpu synth docs --docs N [OPTIONS] DB\n"
    "Write N synthetic documents into a new compacted glass database DB\n"
    "(docids 1..N; words 'qa', 'qb', ... by Zipf rank, added with their\n"
    "counts as wdf, no positions, no data).  The collection depends only on\n"
    "the options below, never on --threads.\n"
    COLLECTION_HELP
    "  --threads T    builder threads (0: one per core; 0)\n"
    "  --shards N     N glass shards under DB plus a XAPIANDB stub, document\n"
    "                 d in shard (d-1) mod N as local docid (d-1)/N+1, as\n"
    "                 index --shards (1)\n"
    "  --quiet        no progress output\n";

static const char help_text[] =
    "usage: xapian-gpu synth text --docs N [OPTIONS] OUT.tsv\n"
    "Write the N documents 'synth docs' writes, with the same options, as\n"
    "'docid<TAB>word word ...' lines (docids 1..N) to OUT.tsv ('-':\n"
    "standard output): each word as many times as its wdf, words in rank\n"
    "order, so a document's length is its number of words.  For engines\n"
    "that index text; index it without stemming.\n"
    COLLECTION_HELP;

static const char help_queries[] =
    "usage: xapian-gpu synth queries --queries N [OPTIONS] OUT.tsv\n"
    "Write N queries as 'qid<TAB>word word ...' lines (qids 1..N) to\n"
    "OUT.tsv ('-': standard output).  Each query has 2 to 5 distinct words\n"
    "(uniform), each of rank floor(V^U) for U uniform in [0, 1): spread\n"
    "log-uniformly from the commonest words to the rarest.  Search them\n"
    "without stemming (the words are not English).\n"
    "  --queries N    number of queries (1..4294967295; required)\n"
    "  --vocab V      vocabulary size; use the collection's (1000000)\n"
    "  --seed X       query set seed, 64-bit (1)\n";

/* Parse a 64-bit unsigned value (decimal, or 0x hex); 0 on success. */
static int parse_u64(const char *cmd, const char *opt, const char *v,
                     uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 0);
    if (!*v || *end || errno || v[0] == '-') {
        xg_cli_usage(cmd, "%s expects an unsigned 64-bit integer, got '%s'",
                     opt, v);
        return -1;
    }
    *out = (uint64_t)x;
    return 0;
}

/* Parse a finite number in [lo, hi]; 0 on success. */
static int parse_double(const char *cmd, const char *opt, const char *v,
                        double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (!*v || *end || errno || !isfinite(x) || x < lo || x > hi) {
        xg_cli_usage(cmd, "%s expects a number in %g..%g, got '%s'", opt, lo,
                     hi, v);
        return -1;
    }
    *out = x;
    return 0;
}

/* Option c of COLLECTION_OPTS into p: 0, -1 after a usage error (a bad
 * value), 1 when c is not one of them. */
static int collection_opt(const char *cmd, int c, const char *arg,
                          struct xg_synth_params *p)
{
    uint32_t n;
    switch (c) {
    case 'n':
        if (xg_cli_uint(cmd, "--docs", arg, 1, UINT32_MAX, &n)) return -1;
        p->n_docs = n;
        return 0;
    case 'V':
        return xg_cli_uint(cmd, "--vocab", arg, 1, UINT32_MAX, &p->vocab);
    case 'z':
        return parse_double(cmd, "--zipf", arg, 0, 100, &p->zipf_s);
    case 'm':
        return parse_double(cmd, "--mu", arg, -100, 100, &p->mu);
    case 's':
        return parse_double(cmd, "--sigma", arg, 0, 100, &p->sigma);
    case 'x':
        return parse_u64(cmd, "--seed", arg, &p->seed);
    default:
        return 1;
    }
}

static int synth_docs(int argc, char **argv)
{
    static const char cmd[] = "synth docs";
    struct xg_synth_params p = XG_SYNTH_DEFAULTS;
    uint32_t threads = 0, shards = 1;
    int quiet = 0, c, status;
    static const struct option opts[] = {
        COLLECTION_OPTS,
        {"shards", required_argument, 0, 'S'},
        {"threads", required_argument, 0, 't'},
        {"quiet", no_argument, 0, 'q'},
        {0, 0, 0, 0}};
    optind = 1;
    while ((c = xg_cli_getopt(cmd, help_docs, argc, argv, "q", opts, &status)) != -1) {
        int r = collection_opt(cmd, c, optarg, &p);
        if (r < 0) return 2;
        if (r == 0) continue;
        switch (c) {
        case 't':
            if (xg_cli_uint(cmd, "--threads", optarg, 0, 1024, &threads))
                return 2;
            break;
        case 'S':
            if (xg_cli_uint(cmd, "--shards", optarg, 1, 256, &shards))
                return 2;
            break;
        case 'q': quiet = 1; break;
        default: return status;     /* --help, --version, bad usage */
        }
    }
    if (p.n_docs == 0)
        return xg_cli_usage(cmd, "--docs N is required");
    if (argc - optind != 1)
        return xg_cli_usage(cmd, "expected one DB");
    if (shards > p.n_docs)
        return xg_cli_usage(cmd, "--shards must not exceed --docs");
    if (xg_shim_synth_db(argv[optind], &p, threads, shards, quiet))
        return xg_cli_fail();
    return 0;
}

/* Write `name` through fn(f, name, ctx): to stdout for "-", else through
 * NAME.tmp-PID renamed into place.  0, or xg_cli_fail()'s status. */
static int write_out(const char *out,
                     int (*fn)(FILE *f, const char *name, const void *ctx),
                     const void *ctx)
{
    if (!strcmp(out, "-"))
        return fn(stdout, "<stdout>", ctx) ? xg_cli_fail() : 0;
    size_t tlen = strlen(out) + 32;
    char *tmp = malloc(tlen);
    if (!tmp) {
        xg_set_error(XG_ERR_NOMEM, "out of memory");
        return xg_cli_fail();
    }
    snprintf(tmp, tlen, "%s.tmp-%ld", out, (long)getpid());
    FILE *f = fopen(tmp, "wx");
    if (!f) {
        xg_set_error(XG_ERR_IO, "%s: cannot create: %s", tmp, strerror(errno));
        free(tmp);
        return xg_cli_fail();
    }
    int rc = fn(f, tmp, ctx);
    if (fclose(f) != 0 && rc == XG_OK)
        rc = xg_set_error(XG_ERR_IO, "%s: write error: %s", tmp,
                          strerror(errno));
    if (rc == XG_OK && rename(tmp, out) != 0)
        rc = xg_set_error(XG_ERR_IO, "%s: cannot rename %s into place: %s",
                          out, tmp, strerror(errno));
    if (rc != XG_OK)
        unlink(tmp);
    free(tmp);
    return rc == XG_OK ? 0 : xg_cli_fail();
}

static int flushed(FILE *f, const char *name)
{
    if (fflush(f) != 0 || ferror(f))
        return xg_set_error(XG_ERR_IO, "%s: write error: %s", name,
                            strerror(errno));
    return XG_OK;
}

/* The documents of p as text lines (synth text). */
static int write_text(FILE *f, const char *name, const void *ctx)
{
    const struct xg_synth_params *p = ctx;
    struct xg_synth_zipf z;
    int rc = xg_synth_zipf_init(&z, p->vocab, p->zipf_s);
    if (rc) return rc;
    uint32_t *ranks = malloc(XG_SYNTH_MAX_LEN * sizeof *ranks);
    uint32_t *wdfs = malloc(XG_SYNTH_MAX_LEN * sizeof *wdfs);
    char word[XG_SYNTH_WORD_MAX];
    if (!ranks || !wdfs) rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
    for (uint64_t d = 0; d < p->n_docs && !rc; ++d) {
        uint32_t n = xg_synth_doc(p, &z, d, ranks, wdfs, XG_SYNTH_MAX_LEN);
        fprintf(f, "%" PRIu64 "\t", d + 1);
        for (uint32_t i = 0; i < n; ++i) {
            size_t len = xg_synth_word(ranks[i], word);
            for (uint32_t j = 0; j < wdfs[i]; ++j) {
                if (i || j) fputc(' ', f);
                fwrite(word, 1, len, f);
            }
        }
        fputc('\n', f);
        if (ferror(f)) rc = flushed(f, name);
    }
    free(ranks);
    free(wdfs);
    xg_synth_zipf_free(&z);
    return rc ? rc : flushed(f, name);
}

static int synth_text(int argc, char **argv)
{
    static const char cmd[] = "synth text";
    struct xg_synth_params p = XG_SYNTH_DEFAULTS;
    int c, status;
    static const struct option opts[] = {COLLECTION_OPTS, {0, 0, 0, 0}};
    optind = 1;
    while ((c = xg_cli_getopt(cmd, help_text, argc, argv, "", opts, &status)) != -1) {
        int r = collection_opt(cmd, c, optarg, &p);
        if (r < 0) return 2;
        if (r) return status;       /* --help, --version, bad usage */
    }
    if (p.n_docs == 0)
        return xg_cli_usage(cmd, "--docs N is required");
    if (argc - optind != 1)
        return xg_cli_usage(cmd, "expected one OUT.tsv ('-' for stdout)");
    if (xg_synth_params_check(&p)) return xg_cli_fail();
    return write_out(argv[optind], write_text, &p);
}

struct query_set {
    uint32_t n, vocab;
    uint64_t seed;
};

/* The queries (synth queries). */
static int write_queries(FILE *f, const char *name, const void *ctx)
{
    const struct query_set *qs = ctx;
    uint32_t ranks[XG_SYNTH_QUERY_MAX_TERMS], k;
    char word[XG_SYNTH_WORD_MAX];
    for (uint32_t q = 0; q < qs->n; ++q) {
        xg_synth_query(qs->seed, q, qs->vocab, ranks, &k);
        fprintf(f, "%" PRIu32 "\t", q + 1);
        for (uint32_t i = 0; i < k; ++i) {
            xg_synth_word(ranks[i], word);
            if (i) fputc(' ', f);
            fputs(word, f);
        }
        fputc('\n', f);
    }
    return flushed(f, name);
}

static int synth_queries(int argc, char **argv)
{
    static const char cmd[] = "synth queries";
    struct query_set qs = {0, 1000000u, 1};
    int c, status;
    static const struct option opts[] = {
        {"queries", required_argument, 0, 'n'},
        {"vocab", required_argument, 0, 'V'},
        {"seed", required_argument, 0, 'x'},
        {0, 0, 0, 0}};
    optind = 1;
    while ((c = xg_cli_getopt(cmd, help_queries, argc, argv, "", opts, &status)) != -1) {
        switch (c) {
        case 'n':
            if (xg_cli_uint(cmd, "--queries", optarg, 1, UINT32_MAX, &qs.n))
                return 2;
            break;
        case 'V':
            if (xg_cli_uint(cmd, "--vocab", optarg, 1, UINT32_MAX, &qs.vocab))
                return 2;
            break;
        case 'x':
            if (parse_u64(cmd, "--seed", optarg, &qs.seed)) return 2;
            break;
        default: return status;     /* --help, --version, bad usage */
        }
    }
    if (qs.n == 0)
        return xg_cli_usage(cmd, "--queries N is required");
    if (argc - optind != 1)
        return xg_cli_usage(cmd, "expected one OUT.tsv ('-' for stdout)");
    return write_out(argv[optind], write_queries, &qs);
}

int xg_cli_synth(int argc, char **argv)
{
    if (argc < 2)
        return xg_cli_usage("synth", "expected 'docs', 'text' or 'queries'");
    if (argv[1][0] == '-' && argv[1][1]) {
        /* An option before the mode: --help, --version, or bad usage. */
        int status;
        optind = 1;
        if (xg_cli_getopt("synth", help, 2, argv, "", NULL, &status) != -1)
            return status;
    }
    if (!strcmp(argv[1], "docs"))
        return synth_docs(argc - 1, argv + 1);
    if (!strcmp(argv[1], "text"))
        return synth_text(argc - 1, argv + 1);
    if (!strcmp(argv[1], "queries"))
        return synth_queries(argc - 1, argv + 1);
    return xg_cli_usage("synth", "unknown mode '%s' (expected 'docs', "
                        "'text' or 'queries')", argv[1]);
}
