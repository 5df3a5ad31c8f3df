/** @file test_kernel_intersect.c
 *  @brief The AND sequence (block selection, intersection) against its twins
 *         with each probing membership test (binary, lr, hashseg, block,
 *         with and without Bloom, auto): empty, single, identical,
 *         disjoint and very unequal lists.
 *         Exits 77 when there is no CUDA device.
 *  usage: test_kernel_intersect [--seed N]
 */
#include "kernel_common.h"

int main(int argc, char **argv)
{
    int rc = kernel_start("test_kernel_intersect", argc, argv);
    if (rc) return rc;
    static const uint32_t methods[] = {
        XG_MEMBER_BINARY, XG_MEMBER_LR, XG_MEMBER_HASHSEG,
        XG_MEMBER_BINARY | XG_MEMBER_BLOOM, XG_MEMBER_LR | XG_MEMBER_BLOOM,
        XG_MEMBER_HASHSEG | XG_MEMBER_BLOOM, XG_MEMBER_BLOCK,
        XG_MEMBER_BLOCK | XG_MEMBER_BLOOM, XG_MEMBER_AUTO};
    int bad = 0;
    for (size_t m = 0; m < sizeof methods / sizeof methods[0] && !bad; ++m)
        bad = test_intersect(methods[m]);
    return kernel_finish(bad);
}
