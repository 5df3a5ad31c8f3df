/** @file crc32c.c
 *  @brief CRC32C: slicing-by-8 tables, plus SSE4.2 where the CPU has it.
 *
 *  The software path (xg_crc32c_sw) consumes 8 bytes per step through eight
 *  256-entry tables built once, on first use, from the reflected polynomial
 *  0x82F63B78; bytes are assembled explicitly, so it is endian-neutral and
 *  needs no alignment.  On x86-64 with GCC or Clang, xg_crc32c() checks
 *  __builtin_cpu_supports("sse4.2") and then runs _mm_crc32_u64 over 8-byte
 *  words (compiled with __attribute__((target("sse4.2"))), so the rest of
 *  the build needs no -msse4.2).  Both paths give identical results; see
 *  tests/test_crc32c.c.
 */
#include "crc32c.h"

#include <stdatomic.h>
#include <string.h>

#define CRC32C_POLY 0x82F63B78u

#if (defined(__x86_64__) || defined(_M_X64)) && defined(__GNUC__)
#define HAVE_SSE42_PATH 1
#include <nmmintrin.h>
#else
#define HAVE_SSE42_PATH 0
#endif

/* tables[k][b]: CRC contribution of byte b followed by k zero bytes. */
static uint32_t tables[8][256];
/* 0: not built, 1: being built by some thread, 2: ready. */
static atomic_int tables_state;

static void build_tables(void)
{
    for (uint32_t b = 0; b < 256; ++b) {
        uint32_t c = b;
        for (int j = 0; j < 8; ++j)
            c = (c & 1u) ? (c >> 1) ^ CRC32C_POLY : c >> 1;
        tables[0][b] = c;
    }
    for (uint32_t b = 0; b < 256; ++b)
        for (int k = 1; k < 8; ++k) {
            uint32_t c = tables[k - 1][b];
            tables[k][b] = (c >> 8) ^ tables[0][c & 0xFFu];
        }
}

/* Build the tables exactly once; concurrent first callers wait (briefly)
 * for the winner, whose release store publishes the tables. */
static void ensure_tables(void)
{
    if (atomic_load_explicit(&tables_state, memory_order_acquire) == 2)
        return;
    int expected = 0;
    if (atomic_compare_exchange_strong_explicit(&tables_state, &expected, 1,
                                                memory_order_acq_rel,
                                                memory_order_acquire)) {
        build_tables();
        atomic_store_explicit(&tables_state, 2, memory_order_release);
        return;
    }
    while (atomic_load_explicit(&tables_state, memory_order_acquire) != 2) {
        /* spin: building takes a few microseconds */
    }
}

/* Table-driven CRC32C of buf[0..len) continued from crc; never fails. */
uint32_t xg_crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
    const unsigned char *p = (const unsigned char *)buf;
    uint32_t c = ~crc;
    if (len == 0)
        return crc;
    ensure_tables();
    while (len >= 8) {
        uint32_t lo = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 |
                           (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
        uint32_t hi = (uint32_t)p[4] | (uint32_t)p[5] << 8 |
                      (uint32_t)p[6] << 16 | (uint32_t)p[7] << 24;
        c = tables[7][lo & 0xFFu] ^ tables[6][(lo >> 8) & 0xFFu] ^
            tables[5][(lo >> 16) & 0xFFu] ^ tables[4][lo >> 24] ^
            tables[3][hi & 0xFFu] ^ tables[2][(hi >> 8) & 0xFFu] ^
            tables[1][(hi >> 16) & 0xFFu] ^ tables[0][hi >> 24];
        p += 8;
        len -= 8;
    }
    while (len--)
        c = (c >> 8) ^ tables[0][(c ^ *p++) & 0xFFu];
    return ~c;
}

#if HAVE_SSE42_PATH
__attribute__((target("sse4.2")))
static uint32_t crc32c_sse42(uint32_t crc, const void *buf, size_t len)
{
    const unsigned char *p = (const unsigned char *)buf;
    uint64_t c = ~crc;
    /* Bytes up to an 8-byte boundary, then whole words, then the tail. */
    while (len > 0 && ((uintptr_t)p & 7u) != 0) {
        c = _mm_crc32_u8((uint32_t)c, *p++);
        --len;
    }
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        c = _mm_crc32_u64(c, w);
        p += 8;
        len -= 8;
    }
    while (len--)
        c = _mm_crc32_u8((uint32_t)c, *p++);
    return ~(uint32_t)c;
}
#endif

/* 1 if the SSE4.2 path is used on this CPU, else 0. */
int xg_crc32c_hw_available(void)
{
#if HAVE_SSE42_PATH
    return __builtin_cpu_supports("sse4.2") ? 1 : 0;
#else
    return 0;
#endif
}

/* CRC32C continued from crc, hardware path if available; never fails. */
uint32_t xg_crc32c(uint32_t crc, const void *buf, size_t len)
{
    if (len == 0)
        return crc;
#if HAVE_SSE42_PATH
    if (__builtin_cpu_supports("sse4.2"))
        return crc32c_sse42(crc, buf, len);
#endif
    return xg_crc32c_sw(crc, buf, len);
}
