/** @file outfile.c
 *  @brief Output files written whole or not at all (outfile.h).
 */
#include "outfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"

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
    size_t n = strlen(path) + 11;
    if (!(o->tmp = malloc(n)))
        return xg_set_error(XG_ERR_NOMEM, "out of memory");
    /* A name of its own (created exclusively): two runs writing the same
     * PATH never share a temporary file. */
    snprintf(o->tmp, n, "%s.tmpXXXXXX", path);
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
    if (!ok || rc) remove(o->tmp);
    free(o->tmp);
    o->tmp = NULL;
    return rc;
}
