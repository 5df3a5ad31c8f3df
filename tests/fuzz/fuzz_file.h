/** @file fuzz_file.h
 *  @brief The libFuzzer targets' one helper: the readers under test take a
 *         path (as the commands do), so each input is written to a private
 *         file first, and every refusal must be the one-line message that
 *         names that file.
 */
#ifndef XG_TESTS_FUZZ_FILE_H
#define XG_TESTS_FUZZ_FILE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../gpu/runtime/error.h"

static char xg_fuzz_path[64];

static void xg_fuzz_file_remove(void)
{
    unlink(xg_fuzz_path);
}

/* Write d[0, n) to this process's input file and return its path. */
static inline const char *xg_fuzz_file(const uint8_t *d, size_t n)
{
    char *path = xg_fuzz_path;
    static int fd = -1;
    if (fd < 0) {
        const char *dir = getenv("TMPDIR");
        snprintf(path, sizeof xg_fuzz_path, "%s/xg-fuzz-XXXXXX",
                 dir && strlen(dir) < 40 ? dir : "/tmp");
        fd = mkstemp(path);
        if (fd < 0) { perror("mkstemp"); abort(); }
        atexit(xg_fuzz_file_remove);
    }
    if (ftruncate(fd, 0) || pwrite(fd, d, n, 0) != (ssize_t)n) {
        perror(path);
        abort();
    }
    return path;
}

/* A reader's refusal: a negative XG_ERR_* code and one line naming the
 * file.  Anything else is a finding. */
static inline void xg_fuzz_refusal(int rc, const char *path)
{
    const char *msg = xg_last_error();
    if (rc >= 0 || !msg || !strstr(msg, path) || strchr(msg, '\n')) {
        fprintf(stderr, "bad refusal: rc %d, message \"%s\"\n", rc,
                msg ? msg : "(none)");
        abort();
    }
}

#endif
