/** @file cli_qlm.c
 *  @brief xapian-gpu qlm: the n-gram query-likelihood table of a text
 *         collection (issue 6, seed 002): for every n in 1..sigma and every
 *         (n-gram, document) pair, eq. 2 with Jelinek-Mercer smoothing,
 *         computed by the CPU twin of gpu/qlm/qlm.h from the inputs of `weight`
 *         (--text in the seed format, --tsv docid<TAB>text tokenized as
 *         TermGenerator does).
 *
 *  Output (qlm_out.c): TSV `w1 w2 ... wn<TAB>docid<TAB>probability`
 *  (%.17g), ordered by n, then n-gram (byte order of the words), then
 *  docid; or the binary form of docs/qlm.md; written to OUT.tmp and
 *  renamed, so a failure leaves no partial file.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../gpu/runtime/error.h"
#include "../../gpu/qlm/qlm.h"
#include "../../gpu/runtime/threads.h"
#include "../../gpu/weight/wt.h"
#include "../../gpu/text/tokenize.h"
#include "../../shim/xg_positions.h"
#include "cli.h"
#include "qlm_out.h"

/* Jelinek-Mercer's weight of the document model when none is given. */
#define DEFAULT_LAMBDA 0.5

static const char help[] =
    "usage: xapian-gpu qlm (--text FILE | --tsv FILE | --db DB [--db SHARD...])\n"
    "                      -o OUT [OPTIONS]\n"
    "Write, for every n in 1..sigma and every (n-gram, document) pair, the\n"
    "smoothed probability P(t_n | t_1..t_{n-1}, d) of seed 002 eq. 2 as\n"
    "'w1 w2 ... wn<TAB>docid<TAB>probability' (%.17g), by n, then n-gram in\n"
    "byte order, then docid (docs/qlm.md).\n"
    "  --text FILE             one word per line, documents separated by\n"
    "                          empty lines (seed format); docids 1, 2, ...\n"
    "  --tsv FILE              docid<TAB>text lines, tokenized like Xapian's\n"
    "                          TermGenerator without stemming\n"
    "  -d, --db DB             a Xapian database with positions (omindex):\n"
    "                          each document's unprefixed terms in position\n"
    "                          order; the database's docids\n"
    "  -o OUT                  output file (written atomically)\n"
    "  --sigma N               longest n-gram, 1..8 (2)\n"
    "  --lambda L              weight of the document model, 0..1 (0.5)\n"
    "  --format tsv|bin        text, or the binary form of docs/qlm.md\n"
    "  --counts                add f(x,d) f(h,d) f(x,C) f(h,C) to each row\n"
    "                          (h: x without its last word)\n"
    "  --sort doubling|compare suffix sort: prefix doubling (default) or a\n"
    "                          comparison sort of sigma-word keys\n"
    "  --engine auto|cpu|gpu   gpu: the GPU engine; cpu: the multi-threaded\n"
    "                          CPU twin (same bytes); auto: the GPU when a\n"
    "                          device opens, else the CPU\n"
    "  --threads N             CPU threads (all cores)\n"
    "  --device-memory BYTES   process in chunks of whole documents under\n"
    "                          this budget (suffix K, M or G; default: in core)\n"
    "  --host-dictionary       the GPU engine takes the dictionary and term\n"
    "                          ids from the host instead of building them on\n"
    "                          the device (same output; for comparison)\n"
    "  --vocabulary FILE       a fixed vocabulary, one word per line; every\n"
    "                          other word counts as <unk>\n"
    "  --quiet                 no progress or summary on stderr\n";

/* BYTES with an optional K, M or G suffix, > 0; 0 on success. */
static int bytes_arg(const char *v, uint64_t *out)
{
    static const char units[] = "KMG";
    char *end;
    unsigned long long x = strtoull(v, &end, 10);
    const char *u = *end ? strchr(units, *end & ~0x20) : NULL;
    if (u && *u) {
        x <<= 10 * (unsigned)(u - units + 1);
        ++end;
    }
    if (end == v || *end || x == 0 || v[0] == '-') return -1;
    *out = x;
    return 0;
}

/* --db: progress on a terminal, at most five lines a second. */
static void db_progress(void *ctx, uint64_t terms, uint64_t of, uint64_t positions, int done)
{
    double *last = ctx;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    const double t = ts.tv_sec + ts.tv_nsec * 1e-9;
    if (!done && t - *last < 0.2) return;
    *last = t;
    fprintf(stderr, "\rxapian-gpu qlm: reading positions: %llu of %llu terms, %llu positions%s",
            (unsigned long long)terms, (unsigned long long)of, (unsigned long long)positions,
            done ? "\n" : "");
}

/* --db: the documents' word sequences rebuilt from positions (xg_positions.h). */
static int load_db(const char **dbs, size_t n_dbs, uint32_t threads, int progress,
                   struct xg_text *in, struct xg_pos_stats *st)
{
    xg_db *db;
    memset(in, 0, sizeof *in);      /* freed by the caller on every path */
    if (xg_shim_db_open(dbs, n_dbs, &db)) return XG_ERR_IO;
    double last = 0;
    int rc = xg_shim_pos_read(db, threads, progress ? db_progress : NULL, &last, in, st);
    if (rc && last != 0) fputc('\n', stderr);     /* end the progress line */
    xg_shim_db_close(db);
    return rc;
}

int xg_cli_qlm(int argc, char **argv)
{
    static const struct option opts[] = {
        {"text", required_argument, 0, 'x'},
        {"tsv", required_argument, 0, 't'},
        {"db", required_argument, 0, 'd'},
        {"sigma", required_argument, 0, 's'},
        {"lambda", required_argument, 0, 'l'},
        {"format", required_argument, 0, 'f'},
        {"counts", no_argument, 0, 'c'},
        {"sort", required_argument, 0, 'S'},
        {"engine", required_argument, 0, 'e'},
        {"threads", required_argument, 0, 'j'},
        {"device-memory", required_argument, 0, 'm'},
        {"host-dictionary", no_argument, 0, 'H'},
        {"vocabulary", required_argument, 0, 'V'},
        {"quiet", no_argument, 0, 'q'},
        {0, 0, 0, 0}};
    const char *out = NULL, *text = NULL, *tsv = NULL, *dbs[64], *vocab = NULL;
    size_t n_dbs = 0;
    int quiet = 0, binary = 0, c, status;
    struct xg_qlm_opts o;
    memset(&o, 0, sizeof o);
    o.sigma = 2;
    o.lambda = DEFAULT_LAMBDA;
    optind = 1;
    while ((c = xg_cli_getopt("qlm", help, argc, argv, "d:o:", opts, &status)) != -1) {
        char *end;
        switch (c) {
        case 'x': text = optarg; break;
        case 't': tsv = optarg; break;
        case 'd':
            if (n_dbs == 64) return xg_cli_usage("qlm", "too many --db");
            dbs[n_dbs++] = optarg;
            break;
        case 'o': out = optarg; break;
        case 's':
            if (xg_cli_uint("qlm", "--sigma", optarg, 1, XG_QLM_MAX_SIGMA, &o.sigma))
                return 2;
            break;
        case 'l':
            o.lambda = strtod(optarg, &end);
            if (end == optarg || *end || !(o.lambda >= 0 && o.lambda <= 1))
                return xg_cli_usage("qlm", "--lambda must be a number in [0, 1], got '%s'",
                                    optarg);
            break;
        case 'f':
            if (!strcmp(optarg, "bin")) binary = 1;
            else if (strcmp(optarg, "tsv"))
                return xg_cli_usage("qlm", "--format must be tsv or bin, got '%s'", optarg);
            break;
        case 'c': o.counts = 1; break;
        case 'S':
            if (!strcmp(optarg, "compare")) o.sort = XG_QLM_SORT_COMPARE;
            else if (strcmp(optarg, "doubling"))
                return xg_cli_usage("qlm", "--sort must be doubling or compare, got '%s'",
                                    optarg);
            break;
        case 'e':
            if (!strcmp(optarg, "gpu")) o.engine = XG_QLM_GPU;
            else if (!strcmp(optarg, "cpu")) o.engine = XG_QLM_CPU;
            else if (strcmp(optarg, "auto"))
                return xg_cli_usage("qlm", "--engine must be auto, gpu or cpu");
            break;
        case 'j':
            if (xg_cli_uint("qlm", "--threads", optarg, 1, 256, &o.threads)) return 2;
            break;
        case 'm':
            if (bytes_arg(optarg, &o.device_memory))
                return xg_cli_usage("qlm", "--device-memory must be BYTES[K|M|G] > 0");
            break;
        case 'H': o.host_dictionary = 1; break;
        case 'V': vocab = optarg; break;
        case 'q': quiet = 1; break;
        default: return status;     /* --help, --version, bad usage */
        }
    }
    if ((text != NULL) + (tsv != NULL) + (n_dbs > 0) != 1 || !out)
        return xg_cli_usage("qlm", "one of --text FILE, --tsv FILE, --db DB, and -o OUT "
                            "are required");
    if (optind < argc)
        return xg_cli_usage("qlm", "unexpected argument '%s'", argv[optind]);
    o.progress = !quiet && isatty(2);

    struct xg_text in;
    const uint32_t threads = o.threads ? o.threads : xg_threads_cores();
    const char *name = n_dbs ? dbs[0] : text ? text : tsv;
    struct xg_pos_stats pst;
    int rc = n_dbs ? load_db(dbs, n_dbs, threads, o.progress, &in, &pst)
             : text ? xg_text_load(text, threads, &in) : xg_text_load_tsv(tsv, &in);
    if (!rc && vocab) rc = xg_cli_vocabulary("qlm", vocab, threads, quiet, &in);
    struct xg_qlm_result r;
    memset(&r, 0, sizeof r);
    if (!rc && in.n_docs == 0)
        rc = xg_set_error(XG_ERR_FORMAT, "%s: no words (every document is empty)", name);
    if (!rc) {
        rc = xg_qlm_run(&in, &o, &r);
    }
    if (!rc) rc = xg_qout_write(out, binary, &r, o.lambda);
    if (!rc && !quiet)
        fprintf(stderr, "xapian-gpu qlm: %s engine, %u chunk(s), %u terms, %llu n-grams, "
                "%llu rows of %llu documents (sigma %u) to %s\n",
                r.engine == XG_QLM_GPU ? "GPU" : "CPU", r.n_chunks, r.n_terms,
                (unsigned long long)r.n_grams, (unsigned long long)r.n_rows,
                (unsigned long long)r.n_docs, o.sigma, out);
    if (!rc && !quiet && n_dbs)
        fprintf(stderr, "xapian-gpu qlm: %s: %llu documents (%llu without positional terms), "
                "%llu words from %llu positions of %llu terms (%llu dropped: position "
                "already held)\n", name, (unsigned long long)pst.n_docs,
                (unsigned long long)pst.n_empty, (unsigned long long)pst.n_words,
                (unsigned long long)pst.n_positions, (unsigned long long)pst.n_terms,
                (unsigned long long)pst.n_shared);
    xg_qlm_result_free(&r);
    xg_text_free(&in);
    return rc ? xg_cli_fail() : 0;
}
