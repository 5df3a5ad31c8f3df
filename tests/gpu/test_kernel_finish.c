/** @file test_kernel_finish.c
 *  @brief The exact finish (rescoring) kernel against its twin on the twin's
 *         candidates: bit-equal weights.
 *         Exits 77 when there is no CUDA device.
 *  usage: test_kernel_finish [--seed N]
 */
#include "kernel_common.h"

int main(int argc, char **argv)
{
    int rc = kernel_start("test_kernel_finish", argc, argv);
    if (rc) return rc;
    return kernel_finish(test_or_pipeline(OR_FINISH));
}
