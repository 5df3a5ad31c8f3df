/** @file outfile.c
 *  @brief Output files written whole or not at all (outfile.h).
 */
#include "outfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"

/* Remove the temporaries beside path that runs killed before their
 * rename left (PATH.tmp.PID.XXXXXX, PID no longer running).  A live
 * run's, or a PID reused since, is left alone. */
static void remove_stale(const char *path)
{
    char *d = strdup(path), *b = strdup(path);
    DIR *dir = d && b ? opendir(dirname(d)) : NULL;
    if (dir) {
        const char *base = basename(b);
        const size_t bn = strlen(base);
        struct dirent *e;
        while ((e = readdir(dir))) {
            const char *n = e->d_name;
            if (strncmp(n, base, bn) || strncmp(n + bn, ".tmp.", 5)) continue;
            char *end;
            errno = 0;
            const long pid = strtol(n + bn + 5, &end, 10);
            if (errno || pid <= 0 || *end != '.' || strlen(end) != 7) continue;
            if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
            struct stat st;
            if (fstatat(dirfd(dir), n, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                S_ISREG(st.st_mode))
                unlinkat(dirfd(dir), n, 0);
        }
        closedir(dir);
    }
    free(d);
    free(b);
}

/* Make a rename into path's directory durable. */
static void sync_dir(const char *path)
{
    char *d = strdup(path);
    if (!d) return;
    int fd = open(dirname(d), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(d);
}

int xg_outfile_open(struct xg_outfile *o, const char *path)
{
    memset(o, 0, sizeof *o);
    o->path = path;
    /* Only a regular file is replaced: renaming over a device (a copy of
     * /dev/null, a tape) or a FIFO would put a plain file in its place. */
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return xg_set_error(XG_ERR_IO, "%s: not a regular file; refusing to "
                            "replace it", path);
    remove_stale(path);
    size_t n = strlen(path) + 40;
    if (!(o->tmp = malloc(n)))
        return xg_set_error(XG_ERR_NOMEM, "out of memory");
    /* A name of its own (created exclusively): two runs writing the same
     * PATH never share a temporary file; the PID in it lets a later run
     * tell a killed run's leftover from a live one. */
    snprintf(o->tmp, n, "%s.tmp.%ld.XXXXXX", path, (long)getpid());
    int fd = mkstemp(o->tmp);
    if (fd < 0 || !(o->f = fdopen(fd, "wb"))) {
        int rc = xg_set_error(XG_ERR_IO, "%s: cannot write: %s", path,
                              strerror(errno));
        if (fd >= 0) {
            close(fd);
            remove(o->tmp);
        }
        free(o->tmp);
        o->tmp = NULL;
        return rc;
    }
    /* mkstemp's 0600, widened to what fopen would have given. */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    return XG_OK;
}

int xg_outfile_close(struct xg_outfile *o, int ok)
{
    int rc = XG_OK;
    if (!o->f) return XG_OK;
    int err = ferror(o->f) ? (errno ? errno : EIO) : 0;
    if (!err && ok && (fflush(o->f) || fsync(fileno(o->f)))) err = errno;
    if (fclose(o->f) && !err) err = errno;
    if (err && ok)
        rc = xg_set_error(XG_ERR_IO, "%s: write failed: %s", o->path,
                          strerror(err));
    o->f = NULL;
    if (ok && !rc && rename(o->tmp, o->path))
        rc = xg_set_error(XG_ERR_IO, "%s: cannot write: %s", o->path,
                          strerror(errno));
    else if (ok && !rc)
        sync_dir(o->path);
    if (!ok || rc) remove(o->tmp);
    free(o->tmp);
    o->tmp = NULL;
    return rc;
}
