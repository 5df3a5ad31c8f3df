/** @file test_cpu_load.c
 *  @brief The planner's CPU pressure (plugin/cpu_load.c): the
 *         /proc/loadavg parser, sampling a file we write, and the
 *         fallback to 1 where the file cannot be read.
 */
#include <unistd.h>

#include "../plugin/cpu_load.h"
#include "test_util.h"

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f)) {
        perror(path);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "/tmp";
    unsigned r = 0;
    CHECK(xg_cpu_load_parse("0.50 0.40 0.30 5/300 12345\n", &r) == 0 && r == 5,
          "5/300");
    CHECK(xg_cpu_load_parse("12.01 9.00 7.50 65/1200 99", &r) == 0 && r == 65,
          "65/1200");
    CHECK(xg_cpu_load_parse("0.50 0.40 0.30\n", &r) == -1, "three fields");
    CHECK(xg_cpu_load_parse("0.50 0.40 0.30 x/300 1\n", &r) == -1, "x/300");
    CHECK(xg_cpu_load_parse("0.50 0.40 0.30 5 1\n", &r) == -1, "no slash");
    CHECK(xg_cpu_load_parse("", &r) == -1, "empty");
    group_ok("parse /proc/loadavg lines");

    /* A file saying 1 + 4 * cores runnable: the reader excluded, the
     * smoothed pressure climbs from 1 towards 4 as samples come in. */
    char path[4096], text[128];
    snprintf(path, sizeof path, "%s/test-cpu-loadavg", dir);
    struct xg_cpu_load l;
    xg_cpu_load_init(&l, path);
    snprintf(text, sizeof text, "1.00 1.00 1.00 %u/500 4242\n",
             1 + 4 * l.cores);
    write_file(path, text);
    double p = 0;
    for (int i = 0; i < 40; ++i) {
        p = xg_cpu_load_pressure(&l);
        nanosleep(&(struct timespec){0, 6000000}, NULL); /* > 5 ms */
    }
    CHECK(p > 3.9 && p <= 4.0, "pressure %g, want about 4", p);
    group_ok("pressure climbs to runnable / cores");
    /* An idle machine: back towards 0. */
    write_file(path, "0.00 0.00 0.00 1/500 4242\n");
    for (int i = 0; i < 40; ++i) {
        p = xg_cpu_load_pressure(&l);
        nanosleep(&(struct timespec){0, 6000000}, NULL);
    }
    CHECK(p < 0.1, "pressure %g, want about 0", p);
    group_ok("pressure falls on an idle machine");
    unlink(path);

    /* No such file (not Linux): the pressure stays at 1. */
    snprintf(path, sizeof path, "%s/no-such-dir/loadavg", dir);
    xg_cpu_load_init(&l, path);
    for (int i = 0; i < 3; ++i) p = xg_cpu_load_pressure(&l);
    CHECK(p == 1.0, "pressure %g without the file, want 1", p);
    group_ok("no /proc/loadavg: pressure 1");

    printf("%d passed, 0 failed\n", n_passed);
    return 0;
}
