/** @file test_kernel_topk.c
 *  @brief The selection (top-k candidates) kernel against its twin: on the
 *         twin's accumulated rows of random lists (many ties at the cut),
 *         and on tests/select_cases.h's rows that stress the histograms'
 *         bins, where both must also agree with brute force, and the
 *         kernel must leave its scratch zero for the next batch.
 *         Exits 77 when there is no CUDA device.
 *  usage: test_kernel_topk [--seed N]
 */
#include "kernel_common.h"
#include "../select_cases.h"

/* The stress cases, twice on the same scratch. */
static int test_cases(void)
{
    struct select_case c;
    CHECK(select_case_make(&c, rnd) == 0, "out of memory");
    const size_t rows = (size_t)SC_QUERIES * SC_DOCS;
    struct xg_dcand *hc = calloc(c.cand_room, sizeof *hc),
                    *gc = calloc(c.cand_room, sizeof *gc);
    struct xg_dqresult hr[SC_QUERIES], gr[SC_QUERIES];
    struct xg_select_args hs = {c.q,      c.acc,   c.mask, SC_DOCS,
                                c.icount, c.icand, XG_SELECT_MARGIN,
                                hc,       hr,      NULL,   NULL, NULL,
                                c.touched, NULL, NULL};
    CHECK(hc && gc && xg_select_ref(&hs, SC_QUERIES) == XG_OK, "twin");
    struct xg_dquery *dq = to_dev(c.q, sizeof c.q);
    double *dacc = to_dev(c.acc, rows * sizeof *c.acc);
    uint32_t *dmask = to_dev(c.mask, rows * sizeof *c.mask);
    uint32_t *dicount = to_dev(c.icount, sizeof c.icount);
    struct xg_dcand *dicand =
        to_dev(c.icand, (size_t)SC_QUERIES * SC_ICAND * sizeof *c.icand);
    uint32_t *dtouched =
        to_dev(c.touched, (size_t)SC_QUERIES * SC_DOCS * sizeof *c.touched);
    struct xg_dcand *dc;
    struct xg_dqresult *dr;
    struct xg_select_state *dst;
    uint32_t *dhist;
    const size_t hist_n = (size_t)SC_QUERIES * XG_SELECT_BINS;
    CUDA(cudaMalloc((void **)&dc, c.cand_room * sizeof *dc));
    CUDA(cudaMalloc((void **)&dr, sizeof gr));
    CUDA(cudaMalloc((void **)&dst, SC_QUERIES * sizeof *dst));
    CUDA(cudaMalloc((void **)&dhist, hist_n * 4));
    CUDA(cudaMemset(dst, 0, SC_QUERIES * sizeof *dst));
    CUDA(cudaMemset(dhist, 0, hist_n * 4));
    struct xg_select_args gs = {dq,      dacc,  dmask, SC_DOCS,
                                dicount, dicand, XG_SELECT_MARGIN,
                                dc,      dr,    dst,   dhist, NULL,
                                dtouched, NULL, NULL};
    uint32_t *hist = malloc(hist_n * 4);
    struct xg_select_state st[SC_QUERIES];
    char why[256];
    CHECK(hist, "out of memory");
    for (int run = 0; run < 2; ++run) {
        CUDA(xg_select_gpu(&gs, SC_QUERIES, SC_DOCS, 0));
        CUDA(cudaDeviceSynchronize());
        CUDA(cudaMemcpy(gr, dr, sizeof gr, cudaMemcpyDeviceToHost));
        CUDA(cudaMemcpy(gc, dc, c.cand_room * sizeof *gc,
                        cudaMemcpyDeviceToHost));
        for (uint32_t i = 0; i < SC_QUERIES; ++i) {
            CHECK(gr[i].matched == hr[i].matched &&
                  gr[i].n_cand == hr[i].n_cand &&
                  gr[i].overflow == hr[i].overflow &&
                  gr[i].threshold == hr[i].threshold &&
                  gr[i].max_score == hr[i].max_score,
                  "case q%u (run %d): gpu %llu/%u/%u thr %.17g, twin "
                  "%llu/%u/%u thr %.17g", i, run,
                  (unsigned long long)gr[i].matched, gr[i].n_cand,
                  gr[i].overflow, gr[i].threshold,
                  (unsigned long long)hr[i].matched, hr[i].n_cand,
                  hr[i].overflow, hr[i].threshold);
            CHECK(select_case_check(&c, i, &gr[i], gc, why, sizeof why) == 0,
                  "gpu: %s", why);
            CHECK(select_case_check(&c, i, &hr[i], hc, why, sizeof why) == 0,
                  "twin: %s", why);
        }
        CUDA(cudaMemcpy(hist, dhist, hist_n * 4, cudaMemcpyDeviceToHost));
        CUDA(cudaMemcpy(st, dst, sizeof st, cudaMemcpyDeviceToHost));
        for (size_t b = 0; b < hist_n; ++b)
            CHECK(!hist[b], "run %d: histogram of q%zu bin %zu left %u", run,
                  b / XG_SELECT_BINS, b % XG_SELECT_BINS, hist[b]);
        static const struct xg_select_state zero;
        for (uint32_t i = 0; i < SC_QUERIES; ++i)
            CHECK(!memcmp(&st[i], &zero, sizeof zero),
                  "run %d: q%u's state left nonzero", run, i);
    }
    printf("ok select on %u stress cases, twice: as the twin and brute "
           "force, scratch left zero\n", SC_QUERIES);
    ++passed;
    cudaFree(dq);
    cudaFree(dacc);
    cudaFree(dmask);
    cudaFree(dicount);
    cudaFree(dicand);
    cudaFree(dtouched);
    cudaFree(dc);
    cudaFree(dr);
    cudaFree(dst);
    cudaFree(dhist);
    free(hist);
    free(hc);
    free(gc);
    select_case_free(&c);
    return 0;
}

int main(int argc, char **argv)
{
    int rc = kernel_start("test_kernel_topk", argc, argv);
    if (rc) return rc;
    rc = test_or_pipeline(OR_SELECT);
    if (!rc) rc = test_cases();
    return kernel_finish(rc);
}
