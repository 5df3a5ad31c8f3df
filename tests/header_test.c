/** @file header_test.c
 *  @brief The public header compiles alone as C11 (and, via
 *         header_test.cpp, as C++).
 */
#include "../plugin/xapian-gpu.h"

int main(void)
{
    struct xg_search_opts o = XG_SEARCH_DEFAULTS;
    struct xg_result r = {0, 0, 0};
    return (o.k == 10 && r.n_hits == 0 && XG_OK == 0) ? 0 : 1;
}
