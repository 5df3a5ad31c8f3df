/** @file qlm_out.h
 *  @brief The qlm command's output (docs/qlm.md): TSV or the binary form,
 *         written to OUT.tmp and renamed only when complete.
 */
#ifndef XG_QLM_OUT_H
#define XG_QLM_OUT_H

#include "../../gpu/qlm/qlm.h"

/* Write r to path (binary: the XGQLM002 form, qlm_format.h).  Counts go out when r has
 * them.  Errors: XG_ERR_IO (naming the file), XG_ERR_NOMEM; OUT.tmp is
 * removed and OUT left untouched. */
int xg_qout_write(const char *path, int binary, const struct xg_qlm_result *r,
                  double lambda);

#endif
