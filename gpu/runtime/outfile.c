/** @file outfile.c
 *  @brief Output files written whole or not at all (outfile.h).
 */
#include "outfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

int xg_outfile_open(struct xg_outfile *o, const char *path)
{
    memset(o, 0, sizeof *o);
    o->path = path;
    size_t n = strlen(path) + 5;
    if (!(o->tmp = malloc(n)))
        return xg_set_error(XG_ERR_NOMEM, "out of memory");
    snprintf(o->tmp, n, "%s.tmp", path);
    if (!(o->f = fopen(o->tmp, "wb"))) {
        int rc = xg_set_error(XG_ERR_IO, "%s: cannot write: %s", o->tmp,
                              strerror(errno));
        free(o->tmp);
        o->tmp = NULL;
        return rc;
    }
    return XG_OK;
}

int xg_outfile_close(struct xg_outfile *o, int ok)
{
    int rc = XG_OK;
    if (!o->f) return XG_OK;
    const int bad = ferror(o->f);
    if ((fclose(o->f) || bad) && ok)
        rc = xg_set_error(XG_ERR_IO, "%s: write failed", o->tmp);
    o->f = NULL;
    if (ok && !rc && rename(o->tmp, o->path))
        rc = xg_set_error(XG_ERR_IO, "%s: cannot write: %s", o->path,
                          strerror(errno));
    if (!ok || rc) remove(o->tmp);
    free(o->tmp);
    o->tmp = NULL;
    return rc;
}
