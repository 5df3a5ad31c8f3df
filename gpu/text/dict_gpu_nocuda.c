/** @file dict_gpu_nocuda.c
 *  @brief Without CUDA there is no GPU dictionary: the host one answers.
 */
#include "dict_gpu.h"

#include <string.h>

#include "../runtime/error.h"

int xg_gdict_build(const char *text, size_t len, struct xg_device *owner,
                   struct xg_gdict *out)
{
    (void)text;
    (void)len;
    (void)owner;
    memset(out, 0, sizeof *out);
    return xg_set_error(XG_ERR_NODEVICE, "GPU dictionary: built without CUDA");
}

void xg_gdict_free(struct xg_gdict *d)
{
    (void)d;
}
