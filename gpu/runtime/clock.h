/** @file clock.h
 *  @brief xg_now: the monotonic wall clock that every product times its
 *         host steps with (the device steps are timed with events,
 *         device.h); xg_thread_cpu_now: a thread's own CPU time;
 *         xg_process_cpu_now: all of the process's threads'.
 */
#ifndef XG_CLOCK_H
#define XG_CLOCK_H

#include <time.h>

static inline double xg_clock_seconds(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Wall-clock seconds, for the host steps' times. */
static inline double xg_now(void) { return xg_clock_seconds(CLOCK_MONOTONIC); }

/* The calling thread's CPU seconds: a step's own work, without the time
 * it waited for a core (what a one-thread calibration measures). */
static inline double xg_thread_cpu_now(void)
{
    return xg_clock_seconds(CLOCK_THREAD_CPUTIME_ID);
}

/* The process's CPU seconds, every thread's (a benchmark's host cost). */
static inline double xg_process_cpu_now(void)
{
    return xg_clock_seconds(CLOCK_PROCESS_CPUTIME_ID);
}

#endif
