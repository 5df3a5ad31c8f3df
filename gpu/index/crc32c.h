/** @file crc32c.h
 *  @brief CRC32C (Castagnoli) checksums of index sections and headers.
 *
 *  Implements the standard CRC-32C: reflected polynomial 0x82F63B78, initial
 *  value and final xor 0xFFFFFFFF, as in iSCSI (RFC 3720), ext4 and SSE4.2's
 *  crc32 instruction.  The pre- and post-inversion happen inside each call,
 *  so a checksum can be built in pieces:
 *
 *      xg_crc32c(xg_crc32c(0, a, n), b, m) == xg_crc32c(0, a||b, n + m)
 *
 *  and xg_crc32c(0, "123456789", 9) == 0xE3069283.  Called by the index
 *  writer (shim/) and reader (gpu/index/format_read.c) for every section's crc and
 *  the header_crc of gpu/index/format.h.  Thread-safe; no allocation.
 */
#ifndef XG_CRC32C_H
#define XG_CRC32C_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The CRC32C of buf[0..len) continued from `crc` (0 to start a new one).
 * Uses the SSE4.2 crc32 instruction when the CPU has it, else
 * xg_crc32c_sw().  Never fails; buf may be NULL when len == 0. */
uint32_t xg_crc32c(uint32_t crc, const void *buf, size_t len);

/* The same value as xg_crc32c(), always computed by the portable
 * table-driven (slicing-by-8) code; the reference the fast path is tested
 * against.  Never fails; buf may be NULL when len == 0. */
uint32_t xg_crc32c_sw(uint32_t crc, const void *buf, size_t len);

/* 1 if xg_crc32c() uses the hardware (SSE4.2) path on this machine, else 0. */
int xg_crc32c_hw_available(void);

#ifdef __cplusplus
}
#endif
#endif
