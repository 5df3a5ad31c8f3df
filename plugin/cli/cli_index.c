/** @file cli_index.c
 *  @brief xapian-gpu index TSV DB: build a Xapian database as omindex would
 *         index body text (TermGenerator, Stem("english"), STEM_SOME), or
 *         without a stemmer.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../../shim/tools/indexer.h"
#include "cli.h"

static const char help[] =
    "usage: xapian-gpu index [OPTIONS] TSV DB\n"
    "Index TSV lines 'docid<TAB>text' into a new Xapian database DB with\n"
    "TermGenerator and the english stemmer (STEM_SOME), keeping the docids.\n"
    "  --stem english|none  the stemmer (english); none: unstemmed terms only\n"
    "  --shards N         N glass shards under DB plus a XAPIANDB stub (1)\n"
    "  --delete-every M   then delete every M-th document (0: none)\n"
    "  --docid-scale S    store docid*S (sparse docid spaces; 1)\n"
    "  --quiet            no progress output\n";

int xg_cli_index(int argc, char **argv)
{
    struct xg_index_opts o = {1, 0, 1, 0, 0};
    static const struct option opts[] = {
        {"stem", required_argument, 0, 'S'},
        {"shards", required_argument, 0, 's'},
        {"delete-every", required_argument, 0, 'd'},
        {"docid-scale", required_argument, 0, 'x'},
        {"quiet", no_argument, 0, 'q'},
        {0, 0, 0, 0}};
    int c, status;
    optind = 1;
    while ((c = xg_cli_getopt("index", help, argc, argv, "q", opts, &status)) != -1) {
        switch (c) {
        case 's':
            if (xg_cli_uint("index", "--shards", optarg, 1, 256, &o.n_shards)) return 2;
            break;
        case 'd':
            if (xg_cli_uint("index", "--delete-every", optarg, 0, 1u << 30,
                            &o.delete_every))
                return 2;
            break;
        case 'x':
            if (xg_cli_uint("index", "--docid-scale", optarg, 1, 1u << 30,
                            &o.docid_scale))
                return 2;
            break;
        case 'S':
            if (!strcmp(optarg, "english")) o.stem_none = 0;
            else if (!strcmp(optarg, "none")) o.stem_none = 1;
            else return xg_cli_usage("index", "--stem: want english or none, not %s", optarg);
            break;
        case 'q': o.quiet = 1; break;
        default: return status;     /* --help, --version, bad usage */
        }
    }
    if (argc - optind != 2)
        return xg_cli_usage("index", "expected TSV and DB");
    if (!o.quiet && !isatty(2)) o.quiet = 1;
    if (xg_shim_index_tsv(argv[optind], argv[optind + 1], &o)) return xg_cli_fail();
    return 0;
}
