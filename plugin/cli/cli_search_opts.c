/** @file cli_search_opts.c
 *  @brief Option parsing shared by `search` and `ab`.
 */
#include "cli_search_opts.h"

/* Long options without a short letter. */
enum { OPT_OMEGA = 1000, OPT_QRELS, OPT_HTML, OPT_MODEL, OPT_SAMPLES,
       OPT_REPEAT, OPT_IMPACTS, OPT_CAND_MIN, OPT_SERVER, OPT_BATCH_WAIT,
       OPT_GPU_SPIN, OPT_WILDCARD, OPT_PARTIAL, OPT_FILTER, OPT_EXCLUDE };

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "ab_report.h"
#include "cli.h"

int xg_cli_search_args_parse(const char *cmd, int argc, char **argv,
                             const char *help, struct xg_cli_search_args *a)
{
    struct xg_search_opts defaults = XG_SEARCH_DEFAULTS;
    struct xg_engine_opts edefaults = XG_ENGINE_DEFAULTS;
    int is_ab = !strcmp(cmd, "ab") || !strcmp(cmd, "bench") ||
                !strcmp(cmd, "calibrate"), c, status;
    memset(a, 0, sizeof *a);
    a->gpu_spin_ms = -1;            /* the context's default */
    a->opts = defaults;
    a->engine_opts = edefaults;
    static const struct option opts[] = {
        {"db", required_argument, 0, 'd'},
        {"index", required_argument, 0, 'i'},
        {"engine", required_argument, 0, 'e'},
        {"engines", required_argument, 0, 'E'},
        {"op", required_argument, 0, 'O'},
        {"stem", required_argument, 0, 's'},
        {"stopper", required_argument, 0, 'S'},
        {"bm25", required_argument, 0, 'w'},
        {"queries", required_argument, 0, 'q'},
        {"json", optional_argument, 0, 'j'},
        {"threads", required_argument, 0, 'T'},
        {"batch", required_argument, 0, 'B'},
        {"device-memory", required_argument, 0, 'M'},
        {"member", required_argument, 0, 'm'},
        {"bloom", required_argument, 0, 'b'},
        {"batch-work", required_argument, 0, 'W'},
        {"list-cache", required_argument, 0, 'L'},
        {"omega", no_argument, 0, OPT_OMEGA},
        {"wildcard", no_argument, 0, OPT_WILDCARD},
        {"partial", no_argument, 0, OPT_PARTIAL},
        {"filter", required_argument, 0, OPT_FILTER},
        {"exclude", required_argument, 0, OPT_EXCLUDE},
        {"impacts", required_argument, 0, OPT_IMPACTS},
        {"cand-min", required_argument, 0, OPT_CAND_MIN},
        {"qrels", required_argument, 0, OPT_QRELS},
        {"html", required_argument, 0, OPT_HTML},
        {"model", required_argument, 0, OPT_MODEL},
        {"samples", required_argument, 0, OPT_SAMPLES},
        {"repeat", required_argument, 0, OPT_REPEAT},
        {"server", required_argument, 0, OPT_SERVER},
        {"batch-wait", required_argument, 0, OPT_BATCH_WAIT},
        {"gpu-spin", required_argument, 0, OPT_GPU_SPIN},
        {0, 0, 0, 0}};
    optind = 1;
    while ((c = xg_cli_getopt(cmd, help, argc, argv, "d:k:", opts, &status)) != -1) {
        switch (c) {
        case 'd':
            if (a->n_dbs == sizeof a->dbs / sizeof a->dbs[0])
                return xg_cli_usage(cmd, "too many --db");
            a->dbs[a->n_dbs++] = optarg;
            break;
        case 'i': a->index = optarg; break;
        case 'e':
            if (is_ab) return xg_cli_usage(cmd, "use --engines LIST");
            if (!strcmp(optarg, "xapian")) a->opts.engine = XG_ENGINE_XAPIAN;
            else if (!strcmp(optarg, "cpu")) a->opts.engine = XG_ENGINE_CPU;
            else if (!strcmp(optarg, "gpu")) a->opts.engine = XG_ENGINE_GPU;
            else if (!strcmp(optarg, "auto")) a->opts.engine = XG_ENGINE_AUTO;
            else return xg_cli_usage(cmd, "--engine must be xapian, cpu, gpu "
                                     "or auto, got '%s'", optarg);
            break;
        case 'E':
            if (!is_ab) return xg_cli_usage(cmd, "use --engine NAME");
            a->engines = optarg;
            break;
        case 'k':
            if (xg_cli_uint(cmd, "-k", optarg, 0, 1u << 24, &a->opts.k)) return 2;
            break;
        case 'O':
            if (!strcmp(optarg, "or")) a->opts.default_and = 0;
            else if (!strcmp(optarg, "and")) a->opts.default_and = 1;
            else if (!strcmp(optarg, "andor")) a->opts.default_and = 2;
            else return xg_cli_usage(cmd, "--op must be or, and or andor, "
                                     "got '%s'", optarg);
            break;
        case 's':
            if (!strcmp(optarg, "english")) a->opts.stem_english = 1;
            else if (!strcmp(optarg, "none")) a->opts.stem_english = 0;
            else return xg_cli_usage(cmd, "--stem must be english or none, "
                                     "got '%s'", optarg);
            break;
        case 'S':
            if (strcmp(optarg, "english"))
                return xg_cli_usage(cmd, "--stopper must be english, got '%s'",
                                    optarg);
            a->opts.stopper = "english";
            break;
        case 'w':
            if (xg_cli_bm25(cmd, optarg, &a->opts.bm25)) return 2;
            break;
        case 'q': a->queries = optarg; break;
        case 'j':
            if (is_ab) {
                if (!optarg) return xg_cli_usage(cmd, "--json=OUT needs a file");
                a->json_out = optarg;
            } else {
                if (optarg) return xg_cli_usage(cmd, "--json takes no value");
                a->json = 1;
            }
            break;
        case 'T':
            if (!is_ab) return xg_cli_usage(cmd, "--threads is for ab/bench");
            if (xg_cli_uint(cmd, "--threads", optarg, 1, 1024, &a->threads))
                return 2;
            break;
        case 'B':
            if (xg_cli_uint(cmd, "--batch", optarg, 1, 1024, &a->batch))
                return 2;
            a->engine_opts.max_batch = a->batch;
            break;
        case OPT_OMEGA:
            /* Omega's defaults: AND between words, English stemming. */
            a->opts.omega = 1;
            a->opts.default_and = 1;
            a->opts.stem_english = 1;
            break;
        case OPT_FILTER:
        case OPT_EXCLUDE: {
            const int filter = c == OPT_FILTER;
            size_t *n = filter ? &a->opts.n_filters : &a->opts.n_excludes;
            if (*n == XG_CLI_MAX_FILTERS)
                return xg_cli_usage(cmd, "more than %d --%s", XG_CLI_MAX_FILTERS,
                                    filter ? "filter" : "exclude");
            (filter ? a->filters : a->excludes)[(*n)++] = optarg;
            a->opts.filters = a->filters;
            a->opts.excludes = a->excludes;
            break;
        }
        case OPT_WILDCARD:
        case OPT_PARTIAL:
            a->opts.parser_flags |= XG_PARSE_FLAG_DEFAULT |
                (c == OPT_WILDCARD ? XG_PARSE_FLAG_WILDCARD
                                   : XG_PARSE_FLAG_PARTIAL);
            break;
        case OPT_SAMPLES:
            if (!is_ab)
                return xg_cli_usage(cmd, "--samples is for ab, bench and "
                                    "calibrate");
            a->samples_out = optarg;
            break;
        case OPT_REPEAT:
            if (!is_ab || !strcmp(cmd, "calibrate"))
                return xg_cli_usage(cmd, "--repeat is for ab and bench");
            if (xg_cli_uint(cmd, "--repeat", optarg, 1, XG_AB_MAX_PASSES,
                            &a->repeat))
                return 2;
            break;
        case OPT_MODEL:
            if (strcmp(cmd, "calibrate"))
                return xg_cli_usage(cmd, "--model is for calibrate");
            a->model = optarg;
            break;
        case OPT_SERVER:
            if (!is_ab)
                return xg_cli_usage(cmd, "--server is for ab and bench");
            a->server = optarg;
            break;
        case OPT_BATCH_WAIT:
        case OPT_GPU_SPIN: {
            /* The plugin engines' context: milliseconds, at most 1000. */
            const int wait = c == OPT_BATCH_WAIT;
            const char *name = wait ? "--batch-wait" : "--gpu-spin";
            if (!is_ab)
                return xg_cli_usage(cmd, "%s is for ab and bench", name);
            if (xg_cli_amount(cmd, name, optarg, "milliseconds", 1000,
                              wait ? &a->batch_wait_ms : &a->gpu_spin_ms))
                return 2;
            break;
        }
        case OPT_QRELS:
        case OPT_HTML:
            if (!is_ab)
                return xg_cli_usage(cmd, "--%s is for ab and bench",
                                    c == OPT_QRELS ? "qrels" : "html");
            if (c == OPT_QRELS) a->qrels = optarg; else a->html_out = optarg;
            break;
        case 'L': {
            uint32_t kib;
            if (xg_cli_uint(cmd, "--list-cache (KiB)", optarg, 1,
                            UINT32_MAX, &kib))
                return 2;
            a->engine_opts.list_cache = (uint64_t)kib << 10;
            break;
        }
        case 'M': {
            uint32_t mib;
            if (xg_cli_uint(cmd, "--device-memory (MiB)", optarg, 1,
                            1u << 24, &mib))
                return 2;
            a->engine_opts.memory_budget = (uint64_t)mib << 20;
            break;
        }
        case 'W': {
            uint32_t mp;
            if (xg_cli_uint(cmd, "--batch-work (M postings)", optarg, 0,
                            1u << 20, &mp))
                return 2;
            a->engine_opts.batch_work = (uint64_t)mp << 20;
            break;
        }
        case 'm':
            if (!strcmp(optarg, "auto")) a->engine_opts.member_method = XG_MEMBER_AUTO;
            else if (!strcmp(optarg, "binary")) a->engine_opts.member_method = XG_MEMBER_BINARY;
            else if (!strcmp(optarg, "lr")) a->engine_opts.member_method = XG_MEMBER_LR;
            else if (!strcmp(optarg, "hashseg")) a->engine_opts.member_method = XG_MEMBER_HASHSEG;
            else if (!strcmp(optarg, "merge")) a->engine_opts.member_method = XG_MEMBER_MERGE;
            else if (!strcmp(optarg, "block")) a->engine_opts.member_method = XG_MEMBER_BLOCK;
            else return xg_cli_usage(cmd, "--member must be auto, binary, lr, "
                                     "hashseg, merge or block, got '%s'", optarg);
            break;
        case 'b':
            if (!strcmp(optarg, "auto")) a->engine_opts.bloom = -1;
            else if (!strcmp(optarg, "on")) a->engine_opts.bloom = 1;
            else if (!strcmp(optarg, "off")) a->engine_opts.bloom = 0;
            else return xg_cli_usage(cmd, "--bloom must be auto, on or off, "
                                     "got '%s'", optarg);
            break;
        case OPT_CAND_MIN:
            if (xg_cli_uint(cmd, "--cand-min", optarg, 1, 1u << 24,
                            &a->engine_opts.cand_min))
                return 2;
            break;
        case OPT_IMPACTS:
            if (!strcmp(optarg, "auto")) a->engine_opts.impacts = 0;
            else if (!strcmp(optarg, "off")) a->engine_opts.impacts = -1;
            else return xg_cli_usage(cmd, "--impacts must be auto or off, "
                                     "got '%s'", optarg);
            break;
        default: return status;     /* --help, --version, bad usage */
        }
    }
    if (!a->n_dbs) return xg_cli_usage(cmd, "--db DB is required");
    a->first_arg = optind;
    if (a->queries && optind < argc)
        return xg_cli_usage(cmd, "give queries as arguments or --queries, "
                            "not both");
    if (!a->queries && optind >= argc)
        return xg_cli_usage(cmd, "no query given");
    return -1;
}

void xg_cli_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; ++p) {
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
        else fputc(*p, f);
    }
    fputc('"', f);
}
