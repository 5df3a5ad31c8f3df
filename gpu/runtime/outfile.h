/** @file outfile.h
 *  @brief An output file that appears whole or not at all: written to a
 *         temporary file of its own beside PATH (PATH.tmp.PID.XXXXXX,
 *         created exclusively), flushed to disk, and renamed over PATH
 *         (the rename made durable) only when every write succeeded and
 *         PATH is a regular file or absent.
 *
 *  Every file the tools write (GPU indexes, weights, n-gram tables, cost
 *  models, A/B reports and samples) goes through this, so a failure
 *  leaves no partial file behind and is one error naming the file.  A run
 *  killed before its rename leaves its temporary; the next run writing
 *  the same PATH removes every such leftover whose PID is gone.
 */
#ifndef XG_OUTFILE_H
#define XG_OUTFILE_H

#include <stdio.h>

struct xg_outfile {
    FILE *f;                /* writes go here (the temporary file) */
    const char *path;
    char *tmp;
};

/* Open a temporary file beside PATH for writing (binary).  XG_OK,
 * XG_ERR_IO ("PATH: not a regular file; refusing to replace it", "PATH:
 * cannot write: reason") or XG_ERR_NOMEM; nothing to close on error. */
int xg_outfile_open(struct xg_outfile *o, const char *path);

/* ok: flush to disk, close and rename over PATH; XG_ERR_IO ("PATH: write
 * failed: reason", "PATH: cannot write: reason") if any write, the sync,
 * the close or the rename failed, and then the temporary file is
 * removed.  !ok: close and remove, XG_OK. */
int xg_outfile_close(struct xg_outfile *o, int ok);

#endif
