/** @file test_kernel_decode.c
 *  @brief The decode kernel against its CPU twin: every bit width, exceptions,
 *         dense numbers near 2^32.
 *         Exits 77 when there is no CUDA device.
 *  usage: test_kernel_decode [--seed N]
 */
#include "kernel_common.h"

static int test_decode(void)
{
    /* Dense numbers up to 2^32 - 1, gap scales from 1 to 2^30. */
    uint32_t dfs[40];
    for (int i = 0; i < 40; ++i) dfs[i] = 1 + (uint32_t)(rnd() % 5000);
    dfs[0] = 1; dfs[1] = 128; dfs[2] = 129; dfs[3] = 127; dfs[4] = 256;
    struct tindex t;
    if (build(&t, 40, 0xFFFFFFFFu, 0xFFFFFFFFu - 4000000000u, dfs, 0)) return 1;
    uint64_t total, blocks;
    struct xg_dlist *l = all_lists(&t, &total, &blocks);
    uint32_t *hd = malloc(total * 4), *hw = malloc(total * 4);
    uint32_t *gd = malloc(total * 4), *gw = malloc(total * 4);
    CHECK(xg_decode_lists_ref(&t.h, l, 0, t.n_terms, NULL, hd, hw) == XG_OK,
          "twin decode: %s", xg_last_error());
    for (uint32_t i = 0, o = 0; i < t.n_terms; o += t.df[i], ++i)
        CHECK(!memcmp(hd + o, t.lists[i], t.df[i] * 4) &&
              !memcmp(hw + o, t.wdfs[i], t.df[i] * 4),
              "twin decode differs from the input list %u", i);
    struct xg_dlist *dl = to_dev(l, t.n_terms * sizeof *l);
    uint32_t *dd, *dw;
    CUDA(cudaMalloc((void **)&dd, total * 4));
    CUDA(cudaMalloc((void **)&dw, total * 4));
    CUDA(cudaMemset(dd, 0xAB, total * 4)); /* poison */
    CUDA(cudaMemset(dw, 0xAB, total * 4));
    CUDA(xg_decode_lists_gpu(&t.d, dl, 0, t.n_terms, 0, blocks, NULL, dd, dw,
                             0));
    CUDA(cudaDeviceSynchronize());
    CUDA(cudaMemcpy(gd, dd, total * 4, cudaMemcpyDeviceToHost));
    CUDA(cudaMemcpy(gw, dw, total * 4, cudaMemcpyDeviceToHost));
    for (uint64_t i = 0; i < total; ++i)
        CHECK(gd[i] == hd[i] && gw[i] == hw[i],
              "decode: posting %llu: gpu (%u,%u) twin (%u,%u)",
              (unsigned long long)i, gd[i], gw[i], hd[i], hw[i]);
    printf("ok decode: %llu postings in %llu blocks, dense numbers up to %u\n",
           (unsigned long long)total, (unsigned long long)blocks,
           hd[total - 1]);
    cudaFree(dd); cudaFree(dw); cudaFree(dl);
    free(hd); free(hw); free(gd); free(gw); free(l);
    release(&t);
    ++passed;
    return 0;
}

int main(int argc, char **argv)
{
    int rc = kernel_start("test_kernel_decode", argc, argv);
    if (rc) return rc;
    return kernel_finish(test_decode());
}
