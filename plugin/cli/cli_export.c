/** @file cli_export.c
 *  @brief xapian-gpu export DB: write the GPU index (docs/format.md).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../gpu/index/format.h"
#include "../../gpu/index/format_read.h"
#include "../../shim/xg_export.h"
#include "cli.h"

static const char help[] =
    "usage: xapian-gpu export [OPTIONS] DB [DB...]\n"
    "Write the GPU index of a Xapian database (several DBs combine as\n"
    "shards, as Xapian::Database::add_database does).\n"
    "  -o, --output INDEX            index path (default: DB/xapian-gpu.idx\n"
    "                                for a directory, DB.xapian-gpu.idx else)\n"
    "  --bloom-bits-per-posting N    Bloom filter size per list (8; 0: none)\n"
    "  --bloom-hashes K              Bloom hash functions, 1..16 (3)\n"
    "  --hashseg-target N            mean postings per hash segment (32)\n"
    "  --bm25 K1,K2,K3,B,MINLEN      parameters of the block upper bounds\n"
    "                                and of the impacts\n"
    "  --no-impacts                  no one-byte quantized BM25 impacts per\n"
    "                                posting (by default the index has them:\n"
    "                                the GPU engine picks OR candidates from\n"
    "                                them and rescores exactly; +1 byte per\n"
    "                                posting); --impacts: the default\n"
    "  --no-positions                no term positions (by default the index\n"
    "                                holds Xapian's positions when the\n"
    "                                database has them)\n"
    "  --no-values                   no document values (by default the\n"
    "                                index holds those of slots 0-255 up to\n"
    "                                16 bytes long, for value ranges)\n"
    "  --scan-baseline               first time a bare pass over every\n"
    "                                posting through Xapian, and report the\n"
    "                                export's time against it\n"
    "  --quiet                       no progress bar, no summary\n";

int xg_cli_export(int argc, char **argv)
{
    struct xg_export_opts o;
    const char *out = NULL;
    int quiet = 0, scan = 0, c, status;
    xg_export_opts_init(&o);
    static const struct option opts[] = {
        {"output", required_argument, 0, 'o'},
        {"bloom-bits-per-posting", required_argument, 0, 'b'},
        {"bloom-hashes", required_argument, 0, 'k'},
        {"hashseg-target", required_argument, 0, 't'},
        {"bm25", required_argument, 0, 'w'},
        {"scan-baseline", no_argument, 0, 's'},
        {"impacts", no_argument, 0, 'I'},
        {"no-impacts", no_argument, 0, 'N'},
        {"no-positions", no_argument, 0, 'P'},
        {"no-values", no_argument, 0, 'V'},
        {"quiet", no_argument, 0, 'q'},
        {0, 0, 0, 0}};
    optind = 1;
    while ((c = xg_cli_getopt("export", help, argc, argv, "o:q", opts,
                              &status)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'b':
            if (xg_cli_uint("export", "--bloom-bits-per-posting", optarg, 0, 64,
                            &o.bloom_bits_per_posting)) return 2;
            break;
        case 'k':
            if (xg_cli_uint("export", "--bloom-hashes", optarg, 1, 16,
                            &o.bloom_hashes)) return 2;
            break;
        case 't':
            if (xg_cli_uint("export", "--hashseg-target", optarg, 1, 1u << 20,
                            &o.hashseg_target)) return 2;
            break;
        case 'w':
            if (xg_cli_bm25("export", optarg, &o.bm25)) return 2;
            break;
        case 's': scan = 1; break;
        case 'I': o.impacts = 1; break;
        case 'N': o.impacts = 0; break;
        case 'P': o.positions = 0; break;
        case 'V': o.values = 0; break;
        case 'q': quiet = 1; break;
        default: return status;     /* --help, --version, bad usage */
        }
    }
    if (optind >= argc) return xg_cli_usage("export", "no database given");
    o.progress = !quiet && isatty(2);

    xg_db *db;
    if (xg_shim_db_open((const char *const *)argv + optind,
                        (size_t)(argc - optind), &db))
        return xg_cli_fail();
    char *path = out ? strdup(out) : xg_fmt_default_path(argv[optind]);
    double scan_s = 0;
    uint64_t scan_n = 0, scan_sum = 0;
    int rc = 0;
    if (scan) {
        double t = xg_cli_now();
        if (xg_shim_db_scan_postings(db, &scan_n, &scan_sum)) {
            rc = xg_cli_fail();
            goto done;
        }
        scan_s = xg_cli_now() - t;
    }
    struct xg_export_report rep;
    if (xg_export(db, path, &o, &rep)) {
        rc = xg_cli_fail();
        goto done;
    }
    if (!quiet) {
        uint64_t post_bytes = 0;
        xg_shim_db_postlist_bytes(db, &post_bytes);
        printf("exported %llu documents, %llu terms, %llu postings in %.3f s "
               "(%.1f M postings/s) to %s\n",
               (unsigned long long)rep.n_docs, (unsigned long long)rep.n_terms,
               (unsigned long long)rep.n_postings, rep.seconds,
               rep.n_postings / (rep.seconds > 0 ? rep.seconds : 1e-9) / 1e6,
               path);
        double np = rep.n_postings ? (double)rep.n_postings : 1.0;
        printf("index %llu bytes (%.2f bytes/posting); postings+skips %.2f "
               "bytes/posting; Xapian postlist tables %llu bytes (%.2f "
               "bytes/posting)\n",
               (unsigned long long)rep.file_bytes, rep.file_bytes / np,
               (rep.section_bytes[XG_SEC_POSTINGS] +
                rep.section_bytes[XG_SEC_SKIP]) / np,
               (unsigned long long)post_bytes, post_bytes / np);
        if (rep.positions)
            printf("positions: %.1f MB (Xapian's position table: %.1f MB)\n",
                   rep.section_bytes[XG_SEC_POSITIONS] / 1e6,
                   rep.xapian_position_bytes / 1e6);
        else
            printf("positions: none (%s)\n", o.positions
                   ? "not every shard of the database has them"
                   : "--no-positions");
        if (o.values)
            printf("values: %u slots, %.1f MB%s\n", rep.value_slots,
                   rep.section_bytes[XG_SEC_VALUES] / 1e6,
                   rep.value_slots_long ? " (slots with values longer than "
                   "16 bytes left out: value ranges on them go to stock)"
                   : "");
        printf("sections:");
        for (unsigned i = 0; i < XG_SEC_COUNT; ++i)
            printf(" %s=%llu", xg_fmt_section_name(i),
                   (unsigned long long)rep.section_bytes[i]);
        printf("\n");
        if (scan)
            printf("bare Xapian pass: %llu postings in %.3f s (%.1f M "
                   "postings/s); export/bare = %.2f\n",
                   (unsigned long long)scan_n, scan_s,
                   scan_n / (scan_s > 0 ? scan_s : 1e-9) / 1e6,
                   rep.seconds / (scan_s > 0 ? scan_s : 1e-9));
    }
done:
    free(path);
    xg_shim_db_close(db);
    return rc;
}
