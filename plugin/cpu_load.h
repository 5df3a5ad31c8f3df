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
 */
#ifndef XG_CPU_LOAD_H
#define XG_CPU_LOAD_H

#include <stdatomic.h>
#include <stdint.h>

struct xg_cpu_load {
    _Atomic uint64_t next_ns;       /* when the next sample is due */
    _Atomic uint64_t pressure_milli;/* smoothed runnable / cores, x1000 */
    unsigned cores;
    const char *path;               /* /proc/loadavg (tests: another) */
};

/* Start at pressure 1 with the online core count. */
void xg_cpu_load_init(struct xg_cpu_load *l, const char *path);

/* Runnable threads per core (at least 0), sampling when due. */
double xg_cpu_load_pressure(struct xg_cpu_load *l);

/* The runnable count in a /proc/loadavg line ("0.5 0.4 0.3 5/300 123"):
 * 0 and *runnable, or -1 if the line is not of that form. */
int xg_cpu_load_parse(const char *line, unsigned *runnable);

#endif
