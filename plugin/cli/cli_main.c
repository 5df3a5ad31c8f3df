/** @file cli_main.c
 *  @brief The xapian-gpu command: a table of subcommands, --help and
 *         --version.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "xg_config.h"

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *help;
} commands[] = {
    {"index", xg_cli_index, "index a TSV collection into a Xapian database"},
    {"split", xg_cli_split, "split a database into N shards, docids kept"},
    {"export", xg_cli_export, "write the GPU index of a Xapian database"},
    {"search", xg_cli_search, "answer queries with the stock or CPU matcher"},
    {"ab", xg_cli_ab, "compare engines on a query file: equality and speed"},
    {"bench", xg_cli_bench, "throughput of every engine, all cores and GPU"},
    {"synth", xg_cli_synth, "generate a synthetic collection or query set"},
    {"calibrate", xg_cli_calibrate, "fit the plugin's cost model on this machine"},
    {"weight", xg_cli_weight, "BM25 weight of every posting of a database"},
    {"qlm", xg_cli_qlm, "n-gram query likelihood of every (n-gram, document)"},
    {"qlm-search", xg_cli_qlm_search, "rank documents by n-gram query likelihood"},
    {"serve", xg_cli_serve, "serve databases over Xapian's remote protocol"},
    {"connect", xg_cli_connect, "bridge stdin/stdout to a serve Unix socket"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: xapian-gpu COMMAND [OPTIONS]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; ++i)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
    fprintf(f, "\n'xapian-gpu COMMAND --help' describes a command; "
               "docs/cli.md has the reference.\nEvery command takes -h, "
               "--help and -v, --version.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-v")) {
        printf("xapian-gpu %s\n", XG_VERSION);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; ++i)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "xapian-gpu: unknown command '%s' (see 'xapian-gpu "
                    "--help')\n", argv[1]);
    return 2;
}
