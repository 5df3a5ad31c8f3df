/** @file cpu_load.c
 *  @brief Runnable threads per core, sampled from /proc/loadavg
 *         (cpu_load.h).
 */
#include "cpu_load.h"

#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define SAMPLE_NS 5000000ull   /* 5 ms between samples */
#define NEVER UINT64_MAX

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void xg_cpu_load_init(struct xg_cpu_load *l, const char *path)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    l->cores = n > 0 ? (unsigned)n : 1;
    l->path = path ? path : "/proc/loadavg";
    atomic_store(&l->pressure_milli, 1000);
    atomic_store(&l->next_ns, 0);
}

int xg_cpu_load_parse(const char *line, unsigned *runnable)
{
    /* Three load averages, then "RUNNABLE/TOTAL". */
    const char *p = line;
    for (int field = 0; field < 3; ++field) {
        while (*p == ' ') ++p;
        if (!*p || *p == '\n') return -1;
        while (*p && *p != ' ' && *p != '\n') ++p;
    }
    while (*p == ' ') ++p;
    char *end;
    unsigned long r = strtoul(p, &end, 10);
    if (end == p || *end != '/' || r > 1000000) return -1;
    *runnable = (unsigned)r;
    return 0;
}

/* One sample: runnable threads other than the reader, per core; -1 if
 * the file cannot be read. */
static double sample(const struct xg_cpu_load *l)
{
    char buf[128];
    int fd = open(l->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    unsigned runnable;
    if (n <= 0) return -1;
    buf[n] = '\0';
    if (xg_cpu_load_parse(buf, &runnable)) return -1;
    return (runnable ? runnable - 1 : 0) / (double)l->cores;
}

double xg_cpu_load_pressure(struct xg_cpu_load *l)
{
    uint64_t due = atomic_load_explicit(&l->next_ns, memory_order_relaxed);
    if (due != NEVER) {
        const uint64_t t = now_ns();
        /* One thread takes the sample; the others read the last one. */
        if (t >= due && atomic_compare_exchange_strong(&l->next_ns, &due,
                                                       t + SAMPLE_NS)) {
            const double s = sample(l);
            if (s < 0) {
                atomic_store(&l->next_ns, NEVER); /* not Linux: stay at 1 */
            } else {
                const double old =
                    atomic_load(&l->pressure_milli) / 1000.0;
                const double v = 0.7 * old + 0.3 * s;
                atomic_store(&l->pressure_milli, (uint64_t)(v * 1000 + 0.5));
            }
        }
    }
    return atomic_load_explicit(&l->pressure_milli, memory_order_relaxed) /
           1000.0;
}
