/** @file cli_serve.c
 *  @brief xapian-gpu serve: a Xapian remote-protocol server over TCP and a
 *         Unix socket (plugin/serve/server.h, docs/server.md).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../shim/xg_shim.h"
#include "../serve/server.h"
#include "cli.h"

static const char help[] =
    "usage: xapian-gpu serve [OPTIONS] DB [DB...]\n"
    "Serve the databases (several combine, as xapian-tcpsrv DB DB...) over\n"
    "Xapian 1.4's remote protocol, on a TCP port and/or a Unix socket.\n"
    "Searches the engines serve are answered from the index `xapian-gpu\n"
    "export` wrote, with the bytes xapian-tcpsrv would send; everything else\n"
    "by a xapian-progsrv child per connection (docs/server.md).\n"
    "Clients: remote_open(HOST, PORT), or a stub file holding\n"
    "'remote HOST:PORT' or 'remote :xapian-gpu connect SOCKET'.\n"
    "  -p, --port N              TCP port (0: a free one, named on stderr)\n"
    "  -I, --host, --interface H TCP address to listen on (default: all)\n"
    "  -u, --unix PATH           Unix socket to listen on\n"
    "  --engine E                who answers searches: auto (the GPU where\n"
    "                            the cost model says it is faster, else\n"
    "                            stock), gpu, cpu (the exact CPU matcher),\n"
    "                            xapian (every message to xapian-progsrv);\n"
    "                            default auto\n"
    "  --device-memory MIB       GPU memory budget (default: 90% of free)\n"
    "  -j, --threads N           searches answered on the host's CPU at\n"
    "                            once (the CPU matcher, stock in-process);\n"
    "                            more wait their turn (default 0: no\n"
    "                            limit; each connection has its thread)\n"
    "  --batch-wait MS           how long a GPU batch waits for more\n"
    "                            searches (default 0: it leaves as soon as\n"
    "                            the GPU is free; batches form while it is\n"
    "                            busy)\n"
    "  --gpu-spin MS             how long the thread waiting for a GPU\n"
    "                            batch polls before it sleeps (5; 0:\n"
    "                            sleeps at once)\n"
    "  --gpu-lanes N             GPU batches in flight at once, 1 or 2\n"
    "                            (2: one is built and finished while the\n"
    "                            other runs; a second copy of the index on\n"
    "                            the device, only without --device-memory)\n"
    "  -t, --timeout SECS        close a connection idle this long (60;\n"
    "                            0: never)\n"
    "  -m, --max-connections N   connections at once; more are closed at\n"
    "                            once with a line on stderr (1024; 0: no\n"
    "                            limit)\n"
    "  --max-message BYTES       a client message's size limit (67108864)\n"
    "  --drain SECS              on SIGTERM, how long requests in flight\n"
    "                            may take to finish (10)\n"
    "  --progsrv PROGRAM         the stock server to relay to\n"
    "                            (xapian-progsrv)\n"
    "  --spare-children N        xapian-progsrv children kept started for\n"
    "                            new connections (8; 0: each connection\n"
    "                            starts its own); one is handed over only\n"
    "                            if no commit came since it started (glass\n"
    "                            databases; others get none)\n"
    "  --reexport                when the database moves past the index\n"
    "                            (another process indexed), write a new\n"
    "                            index beside it in the background and\n"
    "                            serve new connections from it; until then\n"
    "                            stock answers them (default: off)\n"
    "  --reexport-every SECS     how often it checks (2; implies --reexport)\n"
    "  --verbose                 a line for each connection opened/closed\n"
    "Databases are served read-only: writes get Xapian's error, as from\n"
    "xapian-tcpsrv without --writable. SIGTERM or SIGINT stops the server:\n"
    "requests in flight finish, the children are reaped, exit status 0.\n";

int xg_cli_serve(int argc, char **argv)
{
    struct xg_serve_opts o;
    memset(&o, 0, sizeof o);
    o.port = -1;
    o.timeout = 60;
    o.max_conn = 1024;
    o.max_message = 64u << 20;
    o.drain = 10;
    o.progsrv = "xapian-progsrv";
    o.engine = XG_ENGINE_AUTO;
    o.batch_wait_ms = 0;
    o.gpu_spin_ms = 5;
    o.spare_children = 8;
    static const struct option opts[] = {
        {"port", required_argument, 0, 'p'},
        {"host", required_argument, 0, 'I'},
        {"interface", required_argument, 0, 'I'},
        {"unix", required_argument, 0, 'u'},
        {"timeout", required_argument, 0, 't'},
        {"max-connections", required_argument, 0, 'm'},
        {"max-message", required_argument, 0, 'M'},
        {"drain", required_argument, 0, 'D'},
        {"progsrv", required_argument, 0, 'P'},
        {"verbose", no_argument, 0, 'V'},
        {"engine", required_argument, 0, 'E'},
        {"device-memory", required_argument, 0, 'G'},
        {"batch-wait", required_argument, 0, 'B'},
        {"gpu-spin", required_argument, 0, 'S'},
        {"gpu-lanes", required_argument, 0, 'L'},
        {"writable", no_argument, 0, 'w'},
        {"reexport", no_argument, 0, 'R'},
        {"reexport-every", required_argument, 0, 'r'},
        {"spare-children", required_argument, 0, 'C'},
        {"threads", required_argument, 0, 'j'},
        {0, 0, 0, 0}};
    int c, status;
    uint32_t u;
    optind = 1;
    while ((c = xg_cli_getopt("serve", help, argc, argv, "p:I:u:t:m:j:", opts,
                              &status)) != -1) {
        switch (c) {
        case 'p':
            if (xg_cli_uint("serve", "--port", optarg, 0, 65535, &u)) return 2;
            o.port = (int)u;
            break;
        case 'I': o.host = optarg; break;
        case 'u': o.unix_path = optarg; break;
        case 't':
            if (xg_cli_amount("serve", "--timeout", optarg, "seconds", 1e7, &o.timeout)) return 2;
            break;
        case 'm':
            if (xg_cli_uint("serve", "--max-connections", optarg, 0, 1u << 20,
                            &u)) return 2;
            o.max_conn = u;
            break;
        case 'M':
            if (xg_cli_uint("serve", "--max-message", optarg, 1, UINT32_MAX,
                            &u)) return 2;
            o.max_message = u;
            break;
        case 'D':
            if (xg_cli_amount("serve", "--drain", optarg, "seconds", 1e7, &o.drain)) return 2;
            break;
        case 'P': o.progsrv = optarg; break;
        case 'j':
            if (xg_cli_uint("serve", "--threads", optarg, 0, 4096, &u))
                return 2;
            o.threads = (int)u;
            break;
        case 'C':
            if (xg_cli_uint("serve", "--spare-children", optarg, 0, 256, &u))
                return 2;
            o.spare_children = (int)u;
            break;
        case 'V': o.verbose = 1; break;
        case 'R': o.reexport = 1; break;
        case 'r':
            if (xg_cli_amount("serve", "--reexport-every", optarg, "seconds", 1e7,
                             &o.reexport_every))
                return 2;
            if (o.reexport_every <= 0)
                return xg_cli_usage("serve", "--reexport-every must be more "
                                    "than 0 seconds");
            o.reexport = 1;
            break;
        case 'E':
            if (!strcmp(optarg, "auto")) o.engine = XG_ENGINE_AUTO;
            else if (!strcmp(optarg, "gpu")) o.engine = XG_ENGINE_GPU;
            else if (!strcmp(optarg, "cpu")) o.engine = XG_ENGINE_CPU;
            else if (!strcmp(optarg, "xapian")) o.engine = XG_ENGINE_XAPIAN;
            else
                return xg_cli_usage("serve", "--engine must be auto, gpu, cpu "
                                    "or xapian, got '%s'", optarg);
            break;
        case 'B': {
            double ms;
            if (xg_cli_amount("serve", "--batch-wait", optarg, "milliseconds", 1e7, &ms)) return 2;
            o.batch_wait_ms = ms;
            break;
        }
        case 'S':
            if (xg_cli_amount("serve", "--gpu-spin", optarg, "milliseconds",
                              100, &o.gpu_spin_ms)) return 2;
            break;
        case 'L':
            if (xg_cli_uint("serve", "--gpu-lanes", optarg, 1, 2, &u)) return 2;
            o.gpu_lanes = (int)u;
            break;
        case 'G':
            if (xg_cli_uint("serve", "--device-memory (MiB)", optarg, 1,
                            1u << 24, &u)) return 2;
            o.device_memory = (uint64_t)u << 20;
            break;
        case 'w':
            return xg_cli_usage("serve", "--writable is not supported: serve "
                                "is read-only");
        default: return status;     /* --help, --version, bad usage */
        }
    }
    if (optind >= argc) return xg_cli_usage("serve", "no database given");
    if (o.port < 0 && !o.unix_path)
        return xg_cli_usage("serve", "give --port N or --unix PATH");
    if (o.host && o.port < 0)
        return xg_cli_usage("serve", "--host needs --port");
    o.dbs = argv + optind;
    o.ndb = argc - optind;
    /* Open the databases once now, as xapian-tcpsrv does, so that a wrong
     * path is one line and exit 1 rather than an error per client. */
    xg_db *db;
    if (xg_shim_db_open((const char *const *)o.dbs, (size_t)o.ndb, &db))
        return xg_cli_fail();
    xg_shim_db_close(db);
    return xg_serve_run(&o);
}
