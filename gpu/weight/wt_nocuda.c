/** @file wt_nocuda.c
 *  @brief The weight pipeline's GPU engine in a build without CUDA: no
 *         device, so --engine gpu fails with XG_ERR_NODEVICE and --engine
 *         auto runs the CPU twin.
 */
#include "../runtime/error.h"
#include "wt_int.h"

int xg_wt_gpu_open(uint64_t budget, xg_wt_gpu **g, uint64_t *free_bytes)
{
    (void)budget;
    *g = NULL;
    *free_bytes = 0;
    return xg_set_error(XG_ERR_NODEVICE, "weight: no GPU engine in this build");
}

void xg_wt_gpu_close(xg_wt_gpu *g) { (void)g; }

void xg_wt_gpu_pin_input(xg_wt_gpu *g, const char *buf, size_t len)
{
    (void)g; (void)buf; (void)len;
}

void xg_wt_gpu_next(xg_wt_gpu *g, const struct xg_wt_chunk *next)
{
    (void)g; (void)next;
}

void xg_wt_gpu_lock_host(xg_wt_gpu *g, void *p, size_t n)
{
    (void)g; (void)p; (void)n;
}

void xg_wt_gpu_unlock_host(xg_wt_gpu *g) { (void)g; }

int xg_wt_gpu_pass1(xg_wt_gpu *g, const struct xg_wt_chunk *c, uint64_t hash_mask,
                    uint32_t *doclen, struct xg_text_dict_list *list, double *seconds)
{
    (void)g; (void)c; (void)hash_mask; (void)doclen; (void)list; (void)seconds;
    return xg_set_error(XG_ERR_NODEVICE, "weight: no GPU engine in this build");
}

int xg_wt_gpu_tables(xg_wt_gpu *g, const struct xg_wt_tables *t)
{
    (void)g; (void)t;
    return xg_set_error(XG_ERR_NODEVICE, "weight: no GPU engine in this build");
}

int xg_wt_gpu_pass2(xg_wt_gpu *g, const struct xg_wt_chunk *c,
                    const struct xg_wt_tables *t, uint64_t room, uint32_t *doc,
                    double *weight, uint64_t *run, uint64_t *n, uint64_t *nr,
                    double *seconds)
{
    (void)g; (void)c; (void)t; (void)room; (void)doc; (void)weight; (void)run; (void)n;
    (void)nr; (void)seconds;
    return xg_set_error(XG_ERR_NODEVICE, "weight: no GPU engine in this build");
}

int xg_wt_gpu_place_open(xg_wt_gpu *g, struct xg_wt_result *r, const uint32_t *docids,
                         uint64_t n_docs, uint64_t keep)
{
    (void)g; (void)r; (void)docids; (void)n_docs; (void)keep;
    return xg_set_error(XG_ERR_NODEVICE, "weight: no GPU engine in this build");
}

int xg_wt_gpu_place_reserve(xg_wt_gpu *g, uint32_t *doc, double *w, uint64_t cap)
{
    (void)g; (void)doc; (void)w; (void)cap;
    return 1;
}

void xg_wt_gpu_place_grow(xg_wt_gpu *g, uint64_t n) { (void)g; (void)n; }

void xg_wt_gpu_place_drop(xg_wt_gpu *g) { (void)g; }

int xg_wt_gpu_place_chunk(xg_wt_gpu *g, const struct xg_wt_chunk *c,
                          const struct xg_wt_tables *t, double *seconds)
{
    (void)g; (void)c; (void)t; (void)seconds;
    return xg_set_error(XG_ERR_NODEVICE, "weight: no GPU engine in this build");
}

int xg_wt_gpu_place_close(xg_wt_gpu *g, int check)
{
    (void)g; (void)check;
    return XG_OK;
}

int xg_wt_gpu_whole_count(xg_wt_gpu *g, const struct xg_wt_chunk *c,
                          struct xg_wt_whole *w, double *seconds)
{
    (void)g; (void)c; (void)w; (void)seconds;
    return xg_set_error(XG_ERR_NODEVICE, "weight: no GPU engine in this build");
}

int xg_wt_gpu_whole_weights(xg_wt_gpu *g, const struct xg_wt_tables *t,
                            const uint32_t *docids, struct xg_wt_result *r)
{
    (void)g; (void)t; (void)docids; (void)r;
    return xg_set_error(XG_ERR_NODEVICE, "weight: no GPU engine in this build");
}

int xg_wt_gpu_dd_pass1(xg_wt_gpu *g, const struct xg_wt_chunk *c, uint64_t base,
                       uint64_t hash_mask, uint32_t *doclen, uint64_t *postings,
                       double *seconds)
{
    (void)g; (void)c; (void)base; (void)hash_mask; (void)doclen; (void)postings;
    (void)seconds;
    return xg_set_error(XG_ERR_NODEVICE, "weight: no GPU engine in this build");
}

int xg_wt_gpu_dd_finish(xg_wt_gpu *g, struct xg_wt_dd_out *out, double *seconds)
{
    (void)g; (void)out; (void)seconds;
    return xg_set_error(XG_ERR_NODEVICE, "weight: no GPU engine in this build");
}

void xg_wt_gpu_dd_drop(xg_wt_gpu *g) { (void)g; }

void xg_wt_gpu_traffic(double bytes[XG_WT_N_STEPS], int reset)
{
    (void)reset;
    for (int i = 0; i < XG_WT_N_STEPS; ++i) bytes[i] = 0;
}
