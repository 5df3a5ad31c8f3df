/** @file clock.h
 *  @brief xg_now: the monotonic wall clock that every product times its
 *         host steps with (the device steps are timed with events,
 *         device.h); xg_thread_cpu_now: a thread's own CPU time;
 *         xg_process_cpu_now: all of the process's threads'.
 */
#ifndef XG_CLOCK_H
#define XG_CLOCK_H

#include <time.h>

/* Wall-clock seconds, for the host steps' times. */
static inline double xg_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The calling thread's CPU seconds: a step's own work, without the time
 * it waited for a core (what a one-thread calibration measures). */
static inline double xg_thread_cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The process's CPU seconds, every thread's (a benchmark's host cost). */
static inline double xg_process_cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#endif
