/** @file qlm_nocuda.c
 *  @brief The qlm pipeline's GPU engine in a build without CUDA: no
 *         device, so --engine gpu fails with XG_ERR_NODEVICE and --engine
 *         auto runs the CPU twin; likewise qlm-search's GPU scorer.
 */
#include "../runtime/error.h"
#include "qlm_int.h"
#include "qlm_score.h"

static int none(void)
{
    return xg_set_error(XG_ERR_NODEVICE, "qlm: no GPU engine in this build");
}

int xg_qlm_gpu_open(uint32_t threads, xg_qlm_gpu **g)
{
    (void)threads;
    *g = NULL;
    return none();
}

void xg_qlm_gpu_close(xg_qlm_gpu *g) { (void)g; }

struct xg_device *xg_qlm_gpu_device(xg_qlm_gpu *g)
{
    (void)g;
    return NULL;
}

int xg_qlm_gpu_pass1(xg_qlm_gpu *g, const struct xg_qlm_chunk *c,
                     const struct xg_qlm_gpu_args *a, struct xg_qlm_grams *out,
                     double *seconds)
{
    (void)g; (void)c; (void)a; (void)out; (void)seconds;
    return none();
}

int xg_qlm_gpu_pass2(xg_qlm_gpu *g, const struct xg_qlm_chunk *c,
                     const struct xg_qlm_gpu_args *a, const struct xg_qlm_tables *t,
                     double *seconds)
{
    (void)g; (void)c; (void)a; (void)t; (void)seconds;
    return none();
}

int xg_qlm_gpu_whole(xg_qlm_gpu *g, const struct xg_qlm_chunk *c,
                     const struct xg_qlm_gpu_args *a, struct xg_qlm_result *r,
                     double *seconds)
{
    (void)g; (void)c; (void)a; (void)r; (void)seconds;
    return none();
}

/* qlm-search's GPU scorer (qlm_score.h). */
int xg_qlm_score_gpu_open(const struct xg_qlm_table *t, xg_qlm_scorer_gpu **s)
{
    (void)t;
    *s = NULL;
    return xg_set_error(XG_ERR_NODEVICE, "qlm-search: no GPU engine in this build");
}

void xg_qlm_score_gpu_close(xg_qlm_scorer_gpu *s) { (void)s; }

int xg_qlm_score_gpu(xg_qlm_scorer_gpu *s, const struct xg_qlm_table *t,
                     const char *text, uint32_t k, struct xg_qlm_hit **hits,
                     uint32_t *n_hits)
{
    (void)s; (void)t; (void)text; (void)k;
    *hits = NULL;
    *n_hits = 0;
    return xg_set_error(XG_ERR_NODEVICE, "qlm-search: no GPU engine in this build");
}
