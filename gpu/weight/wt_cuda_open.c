/** @file wt_cuda_open.c
 *  @brief The weight pipeline's GPU engine opened and closed, on top of
 *         its core (wt_cuda.c) and satellites (wt_cuda_pass.c,
 *         wt_cuda_place.c, wt_cuda_dict.c, wt_cuda_whole.c), whose device
 *         memory closing gives back: the one file that calls them all.
 *         The device is the runtime's (runtime/device.h), opened with its
 *         stream, events and pinned counters kept for the process's next
 *         run.  Built only with CUDA.
 */
#include <stdlib.h>

#include "../runtime/knobs.h"
#include "wt_cuda_int.h"

void xg_wt_gpu_close(xg_wt_gpu *g)
{
    if (!g) return;
    if (g->dev.stream) cudaStreamSynchronize(g->dev.stream);
    xg_wt_release_chunk(g);
    xg_wt_free_tables(g);
    xg_wt_whole_release(g);
    xg_wt_dd_release(g);
    xg_wt_place_release(g);
    xg_pool_free_async(&g->dev.pool, (void **)&g->d_small, 64);
    xg_device_close(&g->dev);
    free(g);
}

static int open_dev(struct xg_wt_gpu *g, uint64_t budget, uint64_t *free_bytes)
{
    /* The pool keeps what runs free for the process's next run. */
    const struct xg_device_opts o = {
        .who = "weight GPU", .ordinal = -1, .budget = budget,
        .min_budget = XG_WT_MIN_BUDGET, .marks = XG_WT_MAX_MARKS, .small_bytes = 64,
        .staging_threads = xg_threads_cores(), .keep_pool = 1, .park = 1};
    int rc = xg_device_open(&g->dev, &o);
    *free_bytes = g->dev.free_at_open;
    if (rc) return rc;
    g->h_small = g->dev.h_small;
    return xg_pool_alloc_async(&g->dev.pool, (void **)&g->d_small, 64, "counters");
}

int xg_wt_gpu_open(uint64_t budget, xg_wt_gpu **out, uint64_t *free_bytes)
{
    *out = NULL;
    *free_bytes = 0;
    struct xg_wt_gpu *g = calloc(1, sizeof *g);
    if (!g) return xg_set_error(XG_ERR_NOMEM, "weight: out of memory");
    int rc = open_dev(g, budget, free_bytes);
    if (rc) {
        xg_wt_gpu_close(g);
        return rc;
    }
    *out = g;
    return XG_OK;
}

void xg_wt_gpu_pin_input(xg_wt_gpu *g, const char *buf, size_t len)
{
    xg_staging_pin(&g->dev.stage, buf, len);
    /* XG_WT_NO_AHEAD=1: one stream only, to measure what the overlap buys
     * (docs/benchmarks.md). */
    g->ahead = !xg_knob_wt_no_ahead();
}

void xg_wt_gpu_next(xg_wt_gpu *g, const struct xg_wt_chunk *next)
{
    g->next = next;
}

void xg_wt_gpu_lock_host(xg_wt_gpu *g, void *p, size_t n)
{
    xg_staging_lock(&g->dev.stage, p, n);
}

void xg_wt_gpu_unlock_host(xg_wt_gpu *g)
{
    xg_staging_unlock(&g->dev.stage);
}
