/** @file fault.h
 *  @brief The one fault-injection hook of every engine (tests): the n-th
 *         next allocation of device memory (device.h's pool, and every
 *         request for a query batch's buffer, kept or grown) or of the
 *         query engine's twin pipeline fails as if memory ran out, so that
 *         the fallbacks run.  Built with and without CUDA.
 */
#ifndef XG_FAULT_H
#define XG_FAULT_H

#ifdef __cplusplus
extern "C" {
#endif

/* Make the n-th next allocation fail (n <= 0: none). */
void xg_fault_fail_next_alloc(int n);
/* Allocations still to go before the armed failure (0: none armed). */
int xg_fault_armed(void);
/* 1 if this allocation must fail, else 0 (counts one allocation down). */
int xg_fault_take(void);

#ifdef __cplusplus
}
#endif
#endif
