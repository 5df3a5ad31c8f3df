/** @file engine_nocuda.c
 *  @brief The engine's device side in a build without CUDA: there is no
 *         device, so opening one fails with XG_ERR_NODEVICE and callers use
 *         the CPU matcher (or the twin pipeline, use_device = 0).
 */
#include <stdio.h>

#include "engine_int.h"
#include "../runtime/error.h"

int xg_engine_device_info(int device, char *buf, size_t n)
{
    (void)device;
    snprintf(buf, n, "built without CUDA");
    return XG_ERR_NODEVICE;
}

int xg_engine_dev_open(struct xg_gpu *e)
{
    (void)e;
    return xg_set_error(XG_ERR_NODEVICE, "GPU: built without CUDA");
}

int xg_engine_dev_set_kd(struct xg_gpu *e)
{
    (void)e;
    return xg_set_error(XG_ERR_NODEVICE, "GPU: built without CUDA");
}

int xg_engine_dev_run(struct xg_gpu *e, struct xg_slot *s)
{
    (void)e;
    (void)s;
    return xg_set_error(XG_ERR_NODEVICE, "GPU: built without CUDA");
}

void xg_engine_dev_close(struct xg_gpu *e) { (void)e; }

int xg_engine_dev_load_list(struct xg_gpu *e, uint32_t t, uint64_t off)
{
    (void)e;
    (void)t;
    (void)off;
    return xg_set_error(XG_ERR_NODEVICE, "GPU: built without CUDA");
}

int xg_engine_dev_patch_offsets(struct xg_gpu *e)
{
    (void)e;
    return xg_set_error(XG_ERR_NODEVICE, "GPU: built without CUDA");
}
