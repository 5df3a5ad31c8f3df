/** @file test_kernel_topk.c
 *  @brief The selection (top-k candidates) kernel against its twin on the
 *         twin's accumulated rows: same matched counts and candidate sets,
 *         many ties at the cut.
 *         Exits 77 when there is no CUDA device.
 *  usage: test_kernel_topk [--seed N]
 */
#include "kernel_common.h"

int main(int argc, char **argv)
{
    int rc = kernel_start("test_kernel_topk", argc, argv);
    if (rc) return rc;
    return kernel_finish(test_or_pipeline(OR_SELECT));
}
