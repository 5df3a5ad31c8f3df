/** @file cli_synth.c
 *  @brief xapian-gpu synth docs|queries: write the synthetic collection of
 *         seed paper 000 (section 5.1) into a Xapian database, or a
 *         matching query file.
 *
 *  `synth docs` calls xg_shim_synth_db() (shim/tools/shim_synth.cc); `synth
 *  queries` writes "qid<TAB>word word ..." lines from xg_synth_query()
 *  (shim/tools/synth.c), qids 1..N, to a file (through a temporary renamed into
 *  place, so a reader never sees half a file) or to stdout for "-".
 *  Both are deterministic in their options.
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
    "       xapian-gpu synth queries --queries N [OPTIONS] OUT.tsv\n"
    "Generate the synthetic benchmark collection (log-normal document\n"
    "lengths, words drawn from a Zipf vocabulary) or a query set for it.\n"
    "'xapian-gpu synth docs --help' and 'synth queries --help' list the\n"
    "options.\n";

static const char help_docs[] =
    "usage: xapian-gpu synth docs --docs N [OPTIONS] DB\n"
    "Write N synthetic documents into a new compacted glass database DB\n"
    "(docids 1..N; words 'qa', 'qb', ... by Zipf rank, added with their\n"
    "counts as wdf, no positions, no data).  The collection depends only on\n"
    "the options below, never on --threads.\n"
    "  --docs N       number of documents (1..4294967295; required)\n"
    "  --vocab V      vocabulary size in words (1000000)\n"
    "  --zipf S       Zipf exponent: P(rank r) ~ r^-S (1.0)\n"
    "  --mu M         mean of ln(document length) (6.0)\n"
    "  --sigma S      standard deviation of ln(document length) (1.1)\n"
    "  --seed X       collection seed, 64-bit (1)\n"
    "  --threads T    builder threads (0: one per core; 0)\n"
    "  --shards N     N glass shards under DB plus a XAPIANDB stub, document\n"
    "                 d in shard (d-1) mod N as local docid (d-1)/N+1, as\n"
    "                 index --shards (1)\n"
    "  --quiet        no progress output\n";

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

static int synth_docs(int argc, char **argv)
{
    static const char cmd[] = "synth docs";
    struct xg_synth_params p = XG_SYNTH_DEFAULTS;
    uint32_t n_docs = 0, threads = 0, shards = 1;
    int quiet = 0, c, status;
    static const struct option opts[] = {
        {"docs", required_argument, 0, 'n'},
        {"shards", required_argument, 0, 'S'},
        {"vocab", required_argument, 0, 'V'},
        {"zipf", required_argument, 0, 'z'},
        {"mu", required_argument, 0, 'm'},
        {"sigma", required_argument, 0, 's'},
        {"seed", required_argument, 0, 'x'},
        {"threads", required_argument, 0, 't'},
        {"quiet", no_argument, 0, 'q'},
        {0, 0, 0, 0}};
    optind = 1;
    while ((c = xg_cli_getopt(cmd, help_docs, argc, argv, "q", opts, &status)) != -1) {
        switch (c) {
        case 'n':
            if (xg_cli_uint(cmd, "--docs", optarg, 1, UINT32_MAX, &n_docs))
                return 2;
            break;
        case 'V':
            if (xg_cli_uint(cmd, "--vocab", optarg, 1, UINT32_MAX, &p.vocab))
                return 2;
            break;
        case 'z':
            if (parse_double(cmd, "--zipf", optarg, 0, 100, &p.zipf_s))
                return 2;
            break;
        case 'm':
            if (parse_double(cmd, "--mu", optarg, -100, 100, &p.mu)) return 2;
            break;
        case 's':
            if (parse_double(cmd, "--sigma", optarg, 0, 100, &p.sigma))
                return 2;
            break;
        case 'x':
            if (parse_u64(cmd, "--seed", optarg, &p.seed)) return 2;
            break;
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
    if (n_docs == 0)
        return xg_cli_usage(cmd, "--docs N is required");
    if (argc - optind != 1)
        return xg_cli_usage(cmd, "expected one DB");
    p.n_docs = n_docs;
    if (shards > n_docs)
        return xg_cli_usage(cmd, "--shards must not exceed --docs");
    if (xg_shim_synth_db(argv[optind], &p, threads, shards, quiet))
        return xg_cli_fail();
    return 0;
}

/* Write the queries to f; XG_OK or XG_ERR_IO naming `name`. */
static int write_queries(FILE *f, const char *name, uint32_t n, uint32_t vocab,
                         uint64_t seed)
{
    uint32_t ranks[XG_SYNTH_QUERY_MAX_TERMS], k;
    char word[XG_SYNTH_WORD_MAX];
    for (uint32_t q = 0; q < n; ++q) {
        xg_synth_query(seed, q, vocab, ranks, &k);
        fprintf(f, "%" PRIu32 "\t", q + 1);
        for (uint32_t i = 0; i < k; ++i) {
            xg_synth_word(ranks[i], word);
            if (i) fputc(' ', f);
            fputs(word, f);
        }
        fputc('\n', f);
    }
    if (fflush(f) != 0 || ferror(f))
        return xg_set_error(XG_ERR_IO, "%s: write error: %s", name,
                            strerror(errno));
    return XG_OK;
}

static int synth_queries(int argc, char **argv)
{
    static const char cmd[] = "synth queries";
    uint32_t n = 0, vocab = 1000000u;
    uint64_t seed = 1;
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
            if (xg_cli_uint(cmd, "--queries", optarg, 1, UINT32_MAX, &n))
                return 2;
            break;
        case 'V':
            if (xg_cli_uint(cmd, "--vocab", optarg, 1, UINT32_MAX, &vocab))
                return 2;
            break;
        case 'x':
            if (parse_u64(cmd, "--seed", optarg, &seed)) return 2;
            break;
        default: return status;     /* --help, --version, bad usage */
        }
    }
    if (n == 0)
        return xg_cli_usage(cmd, "--queries N is required");
    if (argc - optind != 1)
        return xg_cli_usage(cmd, "expected one OUT.tsv ('-' for stdout)");
    const char *out = argv[optind];
    if (!strcmp(out, "-")) {
        if (write_queries(stdout, "<stdout>", n, vocab, seed))
            return xg_cli_fail();
        return 0;
    }

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
    int rc = write_queries(f, tmp, n, vocab, seed);
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

int xg_cli_synth(int argc, char **argv)
{
    if (argc < 2)
        return xg_cli_usage("synth", "expected 'docs' or 'queries'");
    if (argv[1][0] == '-' && argv[1][1]) {
        /* An option before the mode: --help, --version, or bad usage. */
        int status;
        optind = 1;
        if (xg_cli_getopt("synth", help, 2, argv, "", NULL, &status) != -1)
            return status;
    }
    if (!strcmp(argv[1], "docs"))
        return synth_docs(argc - 1, argv + 1);
    if (!strcmp(argv[1], "queries"))
        return synth_queries(argc - 1, argv + 1);
    return xg_cli_usage("synth", "unknown mode '%s' (expected 'docs' or "
                        "'queries')", argv[1]);
}
