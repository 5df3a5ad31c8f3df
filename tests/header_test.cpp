/** @file header_test.cpp
 *  @brief The public header compiles alone as C++.
 */
#include "../plugin/xapian-gpu.h"

int main()
{
    xg_search_opts o = XG_SEARCH_DEFAULTS;
    return (o.k == 10 && XG_OK == 0) ? 0 : 1;
}
