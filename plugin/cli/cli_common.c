/** @file cli_common.c
 *  @brief Option parsing and query-file helpers shared by the subcommands.
 */
#include "cli.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../gpu/runtime/clock.h"
#include "../../gpu/runtime/error.h"
#include "../../gpu/text/vocab.h"
#include "xg_config.h"

int xg_cli_fail(void)
{
    fprintf(stderr, "xapian-gpu: %s\n", xg_last_error());
    return 1;
}

int xg_cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "xapian-gpu %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see 'xapian-gpu %s --help')\n", cmd);
    return 2;
}

/* The long options whose names begin with `name` (len bytes): how many,
 * and, when `list` is given, "--a, --b, ..." into it. */
static int long_matches(const struct option *o, const char *name, size_t len,
                        char *list, size_t size)
{
    int n = 0;
    size_t at = 0;
    for (; o->name; ++o) {
        if (strncmp(o->name, name, len)) continue;
        if (list && at < size)
            at += (size_t)snprintf(list + at, size - at, "%s--%s", n ? ", " : "",
                                   o->name);
        ++n;
    }
    return n;
}

/* Whether "--name=..." named a long option without a value whose value is
 * `val`: the one spelled exactly so, else the one it abbreviates. */
static int takes_no_value(const struct option *o, const char *name, size_t len,
                          int val)
{
    const struct option *hit = NULL;
    for (; o->name; ++o) {
        if (strncmp(o->name, name, len)) continue;
        if (strlen(o->name) == len) {
            hit = o;
            break;
        }
        if (!hit) hit = o;
    }
    return hit && hit->has_arg == no_argument && hit->val == val;
}

int xg_cli_getopt(const char *cmd, const char *help, int argc, char **argv,
                  const char *shortopts, const struct option *longopts,
                  int *status)
{
    enum { MAX_LONG = 64 };
    struct option all[MAX_LONG];
    char so[64];
    size_t n = 0;
    for (; longopts && longopts[n].name; ++n) {
        if (n + 3 > MAX_LONG) abort();  /* a table larger than ever written */
        assert(longopts[n].val != 'h' && longopts[n].val != 'v');
        all[n] = longopts[n];
    }
    all[n++] = (struct option){"help", no_argument, 0, 'h'};
    all[n++] = (struct option){"version", no_argument, 0, 'v'};
    all[n] = (struct option){0, 0, 0, 0};
    assert(!strchr(shortopts, 'h') && !strchr(shortopts, 'v') &&
           shortopts[0] != ':');
    if ((size_t)snprintf(so, sizeof so, ":%shv", shortopts) >= sizeof so) abort();
    *status = 2;
    opterr = 0;
    int c = getopt_long(argc, argv, so, all, NULL);
    if (c == 'h') {
        fputs(help, stdout);
        *status = 0;
        return XG_CLI_EXIT;
    }
    if (c == 'v') {
        printf("xapian-gpu %s - xapian-gpu %s\n", cmd, XG_VERSION);
        *status = 0;
        return XG_CLI_EXIT;
    }
    if (c != ':' && c != '?') return c;
    /* A usage error.  getopt has stepped past the element holding the
     * option, unless it stopped inside a cluster of short options; optopt
     * is the short option, or the long option's value when it was given a
     * value it takes none of, or 0 for an unknown or ambiguous long one. */
    const char *e = optind > 1 && optind <= argc ? argv[optind - 1] : "";
    const int len = !strncmp(e, "--", 2) && e[2] ? (int)strcspn(e, "=") : 0;
    char list[256] = "";
    if (c == ':' && len)
        *status = xg_cli_usage(cmd, "option '%.*s' needs a value", len, e);
    else if (c == ':')
        *status = xg_cli_usage(cmd, "option '-%c' needs a value", optopt);
    else if (len && optopt == 0 &&
             long_matches(all, e + 2, (size_t)len - 2, list, sizeof list) > 1)
        *status = xg_cli_usage(cmd, "ambiguous option '%.*s' (%s)", len, e, list);
    else if (len && optopt == 0)
        *status = xg_cli_usage(cmd, "unknown option '%.*s'", len, e);
    else if (len && e[len] == '=' && takes_no_value(all, e + 2, (size_t)len - 2, optopt))
        *status = xg_cli_usage(cmd, "option '%.*s' takes no value", len, e);
    else if (optopt > ' ' && optopt < 127)
        *status = xg_cli_usage(cmd, "unknown option '-%c'", optopt);
    else
        *status = xg_cli_usage(cmd, "unknown option '%s'", e);
    return XG_CLI_EXIT;
}

int xg_cli_uint(const char *cmd, const char *opt, const char *v, uint32_t lo,
                uint32_t hi, uint32_t *out)
{
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (!*v || *end || errno || v[0] == '-' || x < lo || x > hi) {
        xg_cli_usage(cmd, "%s expects an integer in %u..%u, got '%s'", opt,
                     lo, hi, v);
        return -1;
    }
    *out = (uint32_t)x;
    return 0;
}

int xg_cli_amount(const char *cmd, const char *opt, const char *v,
                  const char *unit, double hi, double *out)
{
    char *end;
    errno = 0;
    const double x = strtod(v, &end);
    if (!*v || *end || errno || !(x >= 0) || x > hi) {
        xg_cli_usage(cmd, "%s expects %s (0 to %g), got '%s'", opt, unit, hi,
                     v);
        return -1;
    }
    *out = x;
    return 0;
}

int xg_cli_bm25(const char *cmd, const char *v, struct xg_bm25_params *p)
{
    double vals[5] = {p->k1, p->k2, p->k3, p->b, p->min_normlen};
    const char *s = v;
    for (int i = 0; i < 5 && *s; ++i) {
        char *end;
        errno = 0;
        vals[i] = strtod(s, &end);
        if (end == s || errno || (*end && *end != ',') || !isfinite(vals[i]) ||
            vals[i] < 0) {
            xg_cli_usage(cmd, "--bm25 expects K1,K2,K3,B,MIN_NORMLEN "
                         "(finite non-negative numbers), got '%s'", v);
            return -1;
        }
        s = *end ? end + 1 : end;
    }
    if (*s || vals[3] > 1) {
        xg_cli_usage(cmd, "--bm25 expects at most 5 values and B <= 1, got "
                     "'%s'", v);
        return -1;
    }
    p->k1 = vals[0]; p->k2 = vals[1]; p->k3 = vals[2];
    p->b = vals[3]; p->min_normlen = vals[4];
    return 0;
}

double xg_cli_now(void) { return xg_now(); }

double xg_cli_cpu_seconds(long pid)
{
    double t = xg_process_cpu_now();
    if (pid <= 0) return t;
    /* /proc/PID/stat: utime and stime are fields 14 and 15, after the
     * command name in brackets (which may hold spaces). */
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return t;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *p = strrchr(buf, ')');
    unsigned long long ut, st;
    if (p && sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
                    "%llu %llu", &ut, &st) == 2)
        t += (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
    return t;
}

int xg_cli_vocabulary(const char *cmd, const char *path, uint32_t threads, int quiet,
                      struct xg_text *in)
{
    struct xg_text_vocab *v;
    int rc = xg_text_vocab_load(path, threads, &v);
    if (rc) return rc;
    uint64_t unknown = 0;
    rc = xg_text_vocab_apply(v, in, threads, &unknown);
    if (!rc && !quiet)
        fprintf(stderr, "xapian-gpu %s: vocabulary of %llu words; %llu words of the input "
                "are not in it and count as %s\n", cmd,
                (unsigned long long)xg_text_vocab_size(v), (unsigned long long)unknown,
                XG_TEXT_UNKNOWN);
    xg_text_vocab_free(v);
    return rc;
}
