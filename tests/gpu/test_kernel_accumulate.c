/** @file test_kernel_accumulate.c
 *  @brief The OR accumulation kernel against its twin (masks equal, sums
 *         within atomics' reordering), and from impacts (integer rows
 *         equal, each within [exact, exact + margin]).
 *         Exits 77 when there is no CUDA device.
 *  usage: test_kernel_accumulate [--seed N]
 */
#include "kernel_common.h"

int main(int argc, char **argv)
{
    int rc = kernel_start("test_kernel_accumulate", argc, argv);
    if (rc) return rc;
    return kernel_finish(test_or_pipeline(OR_ACCUMULATE | OR_IMPACTS));
}
