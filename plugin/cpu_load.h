/** @file cpu_load.h
 *  @brief How contended the host's cores are, for the planner: runnable
 *         threads per online core.
 *
 *  Stock Xapian's latency grows with CPU contention (64 application
 *  threads on 16 cores wait four times their CPU time), while a query
 *  handed to the GPU waits on the device.  The cost model's stock time is
 *  measured on one thread, so the planner scales it by this pressure
 *  (docs/plugin.md).  The figure is Linux's instantaneous count of
 *  runnable threads (/proc/loadavg, fourth field), read by at most one
 *  thread every 5 ms and smoothed; elsewhere it stays 1.
 *
 *  Beside it, the share of the cores' time spent busy since the previous
 *  sample (/proc/stat's first line), smoothed: the work stealing of idle
 *  cores needs it, because the runnable count is read by a thread that is
 *  planning a query, so it is sampled when application threads are awake
 *  (64 threads woken at once by a GPU batch read as 4 per core although
 *  the cores idle while the next batch runs); the time counters have no
 *  such bias.  Elsewhere it stays 1 (busy).
 */
#ifndef XG_CPU_LOAD_H
#define XG_CPU_LOAD_H

#include <stdatomic.h>
#include <stdint.h>

struct xg_cpu_load {
    _Atomic uint64_t next_ns;       /* when the next sample is due */
    _Atomic uint64_t pressure_milli;/* smoothed runnable / cores, x1000 */
    _Atomic uint64_t busy_milli;    /* smoothed busy share, x1000 */
    uint64_t stat_busy, stat_total; /* the last /proc/stat counters (the
                                       sampling thread's; 0: none yet) */
    unsigned cores;
    const char *path;               /* /proc/loadavg (tests: another) */
    const char *stat_path;          /* /proc/stat (tests: another) */
};

/* Start at pressure 1 and busy 1 with the online core count; NULL paths
 * are /proc/loadavg and /proc/stat. */
void xg_cpu_load_init(struct xg_cpu_load *l, const char *path,
                      const char *stat_path);

/* Runnable threads per core (at least 0), sampling when due. */
double xg_cpu_load_pressure(struct xg_cpu_load *l);

/* The share of the cores' time spent busy lately (0 to 1), as of the
 * last sample xg_cpu_load_pressure took. */
double xg_cpu_load_busy(const struct xg_cpu_load *l);

/* The busy and total time counters of /proc/stat's first line ("cpu  user
 * nice system idle iowait irq softirq steal ..."; idle and iowait are not
 * busy): 0, or -1 if the text does not start with such a line. */
int xg_cpu_load_parse_stat(const char *text, uint64_t *busy, uint64_t *total);

/* The runnable count in a /proc/loadavg line ("0.5 0.4 0.3 5/300 123"):
 * 0 and *runnable, or -1 if the line is not of that form. */
int xg_cpu_load_parse(const char *line, unsigned *runnable);

#endif
