/** @file test_kernel_merge.c
 *  @brief The merge-path kernel (XG_MEMBER_MERGE: positions, then the
 *         intersection) against its twins on every pair shape.
 *         Exits 77 when there is no CUDA device.
 *  usage: test_kernel_merge [--seed N]
 */
#include "kernel_common.h"

int main(int argc, char **argv)
{
    int rc = kernel_start("test_kernel_merge", argc, argv);
    if (rc) return rc;
    return kernel_finish(test_intersect(XG_MEMBER_MERGE));
}
