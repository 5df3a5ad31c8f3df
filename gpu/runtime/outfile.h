/** @file outfile.h
 *  @brief An output file that appears whole or not at all: written as
 *         PATH.tmp and renamed over PATH only when every write succeeded.
 *
 *  Every file the tools write (weights, n-gram tables, cost models, A/B
 *  reports and samples) goes through this, so a failure leaves no partial
 *  file behind and is one error naming the file.
 */
#ifndef XG_OUTFILE_H
#define XG_OUTFILE_H

#include <stdio.h>

struct xg_outfile {
    FILE *f;                /* writes go here (PATH.tmp) */
    const char *path;
    char *tmp;
};

/* Open PATH.tmp for writing (binary).  XG_OK, XG_ERR_IO ("PATH.tmp:
 * cannot write: reason") or XG_ERR_NOMEM; nothing to close on error. */
int xg_outfile_open(struct xg_outfile *o, const char *path);

/* ok: close and rename over PATH; XG_ERR_IO ("PATH.tmp: write failed",
 * "PATH: cannot write: reason") if any write, the close or the rename
 * failed, and then PATH.tmp is removed.  !ok: close and remove, XG_OK. */
int xg_outfile_close(struct xg_outfile *o, int ok);

#endif
