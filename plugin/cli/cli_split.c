/** @file cli_split.c
 *  @brief xapian-gpu split --shards N DB... OUT: an existing database as N
 *         shards with the same docids, one per `serve` (docs/server.md).
 */
#include <getopt.h>
#include <stdio.h>
#include <unistd.h>

#include "../../shim/tools/split.h"
#include "cli.h"

static const char help[] =
    "usage: xapian-gpu split --shards N [OPTIONS] DB... OUT\n"
    "Copy every document of DB (several: combined; a stub: its shards) into\n"
    "a new directory OUT of N glass shards and a XAPIANDB stub.  Document d\n"
    "goes to OUT/shard((d-1) mod N) as local docid (d-1)/N+1, so the stub's\n"
    "docids are DB's.  Then export each shard (xapian-gpu export\n"
    "OUT/shardI) and run one `serve` per shard (docs/server.md).\n"
    "  --shards N   the number of shards (2..256), required\n"
    "  --quiet      no progress output\n";

int xg_cli_split(int argc, char **argv)
{
    struct xg_split_opts o = {0, 0};
    static const struct option opts[] = {
        {"shards", required_argument, 0, 's'},
        {"quiet", no_argument, 0, 'q'},
        {0, 0, 0, 0}};
    int c, status;
    optind = 1;
    while ((c = xg_cli_getopt("split", help, argc, argv, "q", opts, &status)) != -1) {
        switch (c) {
        case 's':
            if (xg_cli_uint("split", "--shards", optarg, 2, 256, &o.n_shards)) return 2;
            break;
        case 'q': o.quiet = 1; break;
        default: return status;     /* --help, --version, bad usage */
        }
    }
    if (!o.n_shards) return xg_cli_usage("split", "--shards N is required");
    if (argc - optind < 2) return xg_cli_usage("split", "expected DB... and OUT");
    if (!o.quiet && !isatty(2)) o.quiet = 1;
    uint64_t n;
    const char *out = argv[argc - 1];
    if (xg_shim_split((const char *const *)argv + optind,
                      (size_t)(argc - 1 - optind), out, &o, &n))
        return xg_cli_fail();
    if (!o.quiet)
        fprintf(stderr, "%s: %llu documents in %u shards\n", out,
                (unsigned long long)n, o.n_shards);
    return 0;
}
