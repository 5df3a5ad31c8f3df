/** @file fault.c
 *  @brief The fault-injection countdown (fault.h).
 */
#include "fault.h"

static _Atomic int fail_countdown;

void xg_fault_fail_next_alloc(int n) { fail_countdown = n; }

int xg_fault_armed(void) { return fail_countdown > 0 ? fail_countdown : 0; }

int xg_fault_take(void)
{
    int n = fail_countdown;
    if (n <= 0) return 0;
    fail_countdown = n - 1;
    return n == 1;
}
