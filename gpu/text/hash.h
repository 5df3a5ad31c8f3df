/** @file hash.h
 *  @brief The weight pipeline's 64-bit word hash (FNV-1a with a final
 *         mix), one definition for the host and the kernels.  A hash only
 *         proposes identity: equal hashes are always checked byte by byte.
 */
#ifndef XG_TEXT_HASH_H
#define XG_TEXT_HASH_H

#include <stdint.h>

#include "../runtime/host_device.h"

/* Hash of the bytes s[0, len), masked (tests force collisions). */
XG_HOST_DEVICE static inline uint64_t
xg_text_hash(const unsigned char *s, uint32_t len, uint64_t mask)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint32_t i = 0; i < len; ++i) h = (h ^ s[i]) * 0x100000001b3ull;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h & mask;
}

#endif
