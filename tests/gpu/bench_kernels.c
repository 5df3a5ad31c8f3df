/** @file bench_kernels.c
 *  @brief Decode and intersection kernel throughput on large random lists
 *         (tests/gpu/run.sh kbench; was test_kernels --bench): medians of
 *         timed launches.  Exits 77 when there is no CUDA device.
 *  usage: bench_kernels [--seed N]
 */
#include "kernel_common.h"

static int cmp_f(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

/* Median of `reps` timed launches of `fn` after one warm-up. */
#define TIME_MEDIAN(reps, out_ms, launch)                                   \
    do {                                                                    \
        cudaEvent_t e0_, e1_;                                               \
        float ms_[32];                                                      \
        cudaEventCreate(&e0_);                                              \
        cudaEventCreate(&e1_);                                              \
        launch;                                                             \
        cudaDeviceSynchronize();                                            \
        for (int r_ = 0; r_ < (reps); ++r_) {                               \
            cudaEventRecord(e0_, 0);                                        \
            launch;                                                         \
            cudaEventRecord(e1_, 0);                                        \
            cudaEventSynchronize(e1_);                                      \
            cudaEventElapsedTime(&ms_[r_], e0_, e1_);                       \
        }                                                                   \
        qsort(ms_, (reps), sizeof(float), cmp_f);                           \
        out_ms = ms_[(reps) / 2];                                           \
        cudaEventDestroy(e0_);                                              \
        cudaEventDestroy(e1_);                                              \
    } while (0)

/* The whole AND sequence (decode, block selection, merge paths,
 * intersection) with each membership method, at three length ratios of
 * the probing list to the probed one: where each method pays. */
static int bench_and(void)
{
    enum { NT = 10 };
    uint32_t dfs[NT] = {2500000, 100000, 5000};
    for (int i = 3; i < NT; ++i) dfs[i] = 5000000;
    struct tindex t;
    if (build(&t, NT, 50000000, 0, dfs, 0)) return 1;
    double *kd = calloc(t.n_docs, 8);
    uint32_t *docids = malloc((size_t)t.n_docs * 4);
    for (uint32_t d = 0; d < t.n_docs; ++d) { kd[d] = 1.0; docids[d] = d + 1; }
    t.d.kd = to_dev(kd, (size_t)t.n_docs * 8);
    t.d.docids = to_dev(docids, (size_t)t.n_docs * 4);
    t.d.n_shards = 1;
    static const uint32_t methods[] = {XG_MEMBER_BINARY, XG_MEMBER_LR,
                                       XG_MEMBER_HASHSEG, XG_MEMBER_MERGE,
                                       XG_MEMBER_BLOCK, XG_MEMBER_AUTO};
    for (uint32_t r = 0; r < 3; ++r) {
        uint32_t pairs[NT - 3][2];
        for (uint32_t i = 0; i < NT - 3; ++i) {
            pairs[i][0] = r;
            pairs[i][1] = 3 + i;
        }
        for (size_t m = 0; m < sizeof methods / sizeof methods[0]; ++m) {
            struct and_case c;
            if (and_case_build(&c, &t, (const uint32_t (*)[2])pairs, NT - 3,
                               methods[m]))
                return 1;
            float ms, ms_step = 0;
            TIME_MEDIAN(9, ms, and_case_launch(&t, &c));
            /* The step the method adds: merge paths or block selection. */
            if (methods[m] == XG_MEMBER_MERGE)
                TIME_MEDIAN(9, ms_step,
                            xg_mergepath_gpu(&c.dm, c.mprefix[c.n_ml], 0));
            else if (methods[m] == XG_MEMBER_BLOCK)
                TIME_MEDIAN(9, ms_step,
                            xg_block_select_gpu(&t.d, &c.dm, c.iprefix[c.nq], 0));
            float ms_int;
            TIME_MEDIAN(9, ms_int,
                        (cudaMemsetAsync(c.di.icount, 0, c.nq * 4, 0),
                         xg_intersect_gpu(&t.d, &c.di, c.iprefix[c.nq], 0)));
            /* Leave the counts of one whole sequence for the report. */
            if (and_case_launch(&t, &c)) return 1;
            uint32_t cnt[NT];
            CUDA(cudaMemcpy(cnt, c.di.icount, (NT - 3) * 4,
                            cudaMemcpyDeviceToHost));
            uint64_t found = 0;
            for (int i = 0; i < NT - 3; ++i) found += cnt[i];
            printf("bench and 1:%-5u %-8s %7llu probes x %u lists of %u: "
                   "%.3f ms, %.2f G probes/s (%llu matches); of which "
                   "intersect %.3f ms, %s %.3f ms\n",
                   dfs[3] / t.df[r], member_name(methods[m]),
                   (unsigned long long)c.iprefix[c.nq], NT - 3, dfs[3], ms,
                   c.iprefix[c.nq] / (ms * 1e6), (unsigned long long)found,
                   ms_int, methods[m] == XG_MEMBER_MERGE ? "merge path"
                                                         : "selection",
                   ms_step);
            and_case_free(&c);
        }
    }
    cudaFree((void *)t.d.kd); cudaFree((void *)t.d.docids);
    free(kd); free(docids);
    release(&t);
    return 0;
}

/* Throughput of decode and intersection on large random lists
 * (--bench): medians of 9 launches timed with events. */
static int bench(void)
{
    enum { NT = 10 };
    uint32_t n_docs = 50000000, dfs[NT];
    /* Decode set: 10 lists of 5M postings (50M postings). */
    for (int i = 0; i < NT; ++i) dfs[i] = 5000000;
    struct tindex t;
    if (build(&t, NT, n_docs, 0, dfs, 0)) return 1;
    uint64_t total, blocks;
    struct xg_dlist *l = all_lists(&t, &total, &blocks);
    struct xg_dlist *dl = to_dev(l, NT * sizeof *l);
    uint32_t *dd, *dw;
    CUDA(cudaMalloc((void **)&dd, total * 4));
    CUDA(cudaMalloc((void **)&dw, total * 4));
    float ms;
    TIME_MEDIAN(9, ms, xg_decode_lists_gpu(&t.d, dl, 0, NT, 0, blocks, NULL, dd,
                                          dw, 0));
    double bytes = (double)t.post.len + t.skip.len + total * 8.0;
    printf("bench decode: %llu postings (%llu integers) in %.3f ms: %.1f G "
           "integers/s; %.0f GB/s moved (compressed in + skips + decoded "
           "out)\n", (unsigned long long)total, (unsigned long long)total * 2,
           ms, total * 2 / (ms * 1e6), bytes / (ms * 1e6));
    /* Intersection: the first list against each other one, every method. */
    struct xg_dquery q[NT - 1];
    struct xg_dlist ql[2 * (NT - 1)];
    uint32_t leaf_list[2 * (NT - 1)], iq[NT - 1];
    double leaf_tw[2 * (NT - 1)];
    struct xg_plan_op plan[(NT - 1) * 3 * 2];
    uint64_t iprefix[NT] = {0}, icand = 0;
    memset(q, 0, sizeof q);
    memset(ql, 0, sizeof ql);
    /* Short list: a 1-in-50 sample of list 0, so every probe is a hit in
     * list 0's copy and a ~10% hit in the others. */
    for (uint32_t i = 0; i < NT - 1; ++i) {
        q[i].path = XG_DPATH_INTERSECT;
        q[i].n_lists = 2;
        q[i].list_first = 2 * i;
        q[i].n_leaves = 2;
        q[i].leaf_first = 2 * i;
        q[i].plan_first = 6 * i;
        q[i].plan_stride = 3;
        q[i].plan_len = 3;
        q[i].shortest = 0;
        q[i].icand_first = icand;
        ql[2 * i] = l[0];
        ql[2 * i + 1] = l[i + 1];
        leaf_list[2 * i] = 0;
        leaf_list[2 * i + 1] = 1;
        leaf_tw[2 * i] = leaf_tw[2 * i + 1] = 1.0;
        for (uint32_t sh = 0; sh < 2; ++sh) {
            plan[6 * i + 3 * sh] = (struct xg_plan_op){XG_PLAN_LEAF, 0};
            plan[6 * i + 3 * sh + 1] = (struct xg_plan_op){XG_PLAN_LEAF, 1};
            plan[6 * i + 3 * sh + 2] = (struct xg_plan_op){XG_PLAN_AND, 2};
        }
        iq[i] = i;
        iprefix[i + 1] = iprefix[i] + l[0].df;
        icand += l[0].df;
    }
    /* kd for scoring matches. */
    double *kd = calloc(n_docs, 8);
    uint32_t *docids = malloc((size_t)n_docs * 4);
    for (uint32_t d = 0; d < n_docs; ++d) { kd[d] = 1.0; docids[d] = d + 1; }
    t.d.kd = to_dev(kd, (size_t)n_docs * 8);
    t.d.docids = to_dev(docids, (size_t)n_docs * 4);
    t.d.n_shards = 1;
    struct xg_dcand *dc;
    uint32_t *dcount;
    CUDA(cudaMalloc((void **)&dc, (icand + 1) * sizeof *dc));
    CUDA(cudaMalloc((void **)&dcount, NT * 4));
    static const uint32_t methods[] = {
        XG_MEMBER_BINARY, XG_MEMBER_LR, XG_MEMBER_HASHSEG,
        XG_MEMBER_BINARY | XG_MEMBER_BLOOM, XG_MEMBER_LR | XG_MEMBER_BLOOM,
        XG_MEMBER_HASHSEG | XG_MEMBER_BLOOM};
    static const char *names[] = {"binary", "lr", "hashseg", "binary+bloom",
                                  "lr+bloom", "hashseg+bloom"};
    for (int m = 0; m < 6; ++m) {
        for (uint32_t i = 0; i < 2 * (NT - 1); ++i) ql[i].method = methods[m];
        struct xg_intersect_args da;
        memset(&da, 0, sizeof da);
        da.queries = to_dev(q, sizeof q);
        da.lists = to_dev(ql, sizeof ql);
        da.iq = to_dev(iq, sizeof iq);
        da.iprefix = to_dev(iprefix, sizeof iprefix);
        da.n_iq = NT - 1;
        da.docs = dd;
        da.wdfs = dw;
        da.leaf_list = to_dev(leaf_list, sizeof leaf_list);
        da.leaf_tw = to_dev(leaf_tw, sizeof leaf_tw);
        da.plan = to_dev(plan, sizeof plan);
        da.icount = dcount;
        da.icand = dc;
        TIME_MEDIAN(9, ms, (cudaMemsetAsync(dcount, 0, NT * 4, 0),
                            xg_intersect_gpu(&t.d, &da, iprefix[NT - 1], 0)));
        uint32_t cnt[NT];
        cudaMemcpy(cnt, dcount, sizeof cnt, cudaMemcpyDeviceToHost);
        uint64_t found = 0;
        for (int i = 0; i < NT - 1; ++i) found += cnt[i];
        printf("bench intersect %-14s %llu candidate tests in %.3f ms: %.2f G "
               "tests/s (%llu matches)\n", names[m],
               (unsigned long long)iprefix[NT - 1], ms,
               iprefix[NT - 1] / (ms * 1e6), (unsigned long long)found);
        cudaFree((void *)da.queries); cudaFree((void *)da.lists);
        cudaFree((void *)da.iq); cudaFree((void *)da.iprefix);
        cudaFree((void *)da.leaf_list); cudaFree((void *)da.leaf_tw);
        cudaFree((void *)da.plan);
    }
    cudaFree(dc); cudaFree(dcount); cudaFree(dd); cudaFree(dw); cudaFree(dl);
    cudaFree((void *)t.d.kd); cudaFree((void *)t.d.docids);
    free(kd); free(docids); free(l);
    release(&t);
    return bench_and();
}

int main(int argc, char **argv)
{
    int rc = kernel_start("bench_kernels", argc, argv);
    if (rc) return rc;
    full_span = 1;
    return bench();
}
