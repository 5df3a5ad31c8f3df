/** @file cli.h
 *  @brief The xapian-gpu subcommands and their shared option helpers.
 *
 *  One subcommand per file (cli_<name>.c exporting xg_cli_<name>);
 *  cli_main.c only holds the table that dispatches and prints --help.
 *  Every subcommand returns the process exit status: 0 success, 1 a fault
 *  (one line on stderr naming the file and the fault; ab and bench also
 *  when an MSet differs), 2 bad usage (docs/cli.md, "Exit status").
 */
#ifndef XG_CLI_H
#define XG_CLI_H

#include <stdint.h>

#include "../xapian-gpu.h"
#include "query_file.h"

int xg_cli_index(int argc, char **argv);
int xg_cli_split(int argc, char **argv);
int xg_cli_export(int argc, char **argv);
int xg_cli_search(int argc, char **argv);
int xg_cli_ab(int argc, char **argv);
int xg_cli_bench(int argc, char **argv);
int xg_cli_synth(int argc, char **argv);
int xg_cli_calibrate(int argc, char **argv);
int xg_cli_weight(int argc, char **argv);
int xg_cli_qlm(int argc, char **argv);
int xg_cli_qlm_search(int argc, char **argv);
int xg_cli_serve(int argc, char **argv);
int xg_cli_connect(int argc, char **argv);

/* "xapian-gpu: <last error>" on stderr; returns 1. */
int xg_cli_fail(void);

/* Usage error: "xapian-gpu CMD: <msg>" + hint; returns 2. */
int xg_cli_usage(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* getopt_long's answer when the subcommand must exit now with *status. */
#define XG_CLI_EXIT (-2)

/* getopt_long over a subcommand's own options (`shortopts` without a
 * leading ':'; `longopts` ending in a zero entry or NULL; neither uses 'h'
 * or 'v') and the options every subcommand takes:
 *   -h, --help      `help` on stdout, exit status 0;
 *   -v, --version   "xapian-gpu CMD - xapian-gpu VERSION" on stdout, 0;
 * and bad usage, one line on stderr naming CMD, exit status 2: an unknown
 * or ambiguous option, an option missing its value, or one given a value
 * it takes none of.  Returns the next option's value as getopt_long does,
 * -1 after the last option, or XG_CLI_EXIT with *status the exit status
 * (*status is 2 whenever the answer is not -1 or an option of longopts or
 * shortopts).  The caller sets optind = 1 before the first call. */
struct option;
int xg_cli_getopt(const char *cmd, const char *help, int argc, char **argv,
                  const char *shortopts, const struct option *longopts,
                  int *status);

/* A non-negative amount of `unit` (seconds, milliseconds ...) at most
 * `hi` from option `opt`'s value v; 0, or -1 after a usage line. */
int xg_cli_amount(const char *cmd, const char *opt, const char *v,
                  const char *unit, double hi, double *out);

/* Parse an unsigned integer option value in [lo, hi]; 0 on success. */
int xg_cli_uint(const char *cmd, const char *opt, const char *v, uint32_t lo,
                uint32_t hi, uint32_t *out);

/* Parse "K1,K2,K3,B,MIN_NORMLEN" (missing trailing values keep defaults). */
int xg_cli_bm25(const char *cmd, const char *v, struct xg_bm25_params *p);


/* Monotonic seconds. */
double xg_cli_now(void);

/* CPU seconds (user and system) this process has used, plus those of
 * process pid where pid > 0 (read from /proc; a child bench started). */
double xg_cli_cpu_seconds(long pid);

/* --vocabulary FILE of weight and qlm (text/vocab.h): every word of *in the
 * file lacks becomes <unk>; a summary line on stderr unless quiet.
 * XG_OK or the loader's error (its message set). */
struct xg_text;
int xg_cli_vocabulary(const char *cmd, const char *path, uint32_t threads, int quiet,
                      struct xg_text *in);

#endif
