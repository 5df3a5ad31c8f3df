/** @file decode_dev.cuh
 *  @brief Device-side PForDelta decoding (seed 003 §6): a warp decodes a
 *         128-posting block cooperatively.  Layout: gpu/index/pfor.h;
 *         twin: pfor.c.
 *
 *  Every block was verified on the CPU when the index was loaded
 *  (xg_gpu_open), so these functions trust the headers; they still mask
 *  positions and widths so a bad block cannot write outside its buffers.
 */
#ifndef XG_DECODE_DEV_CUH
#define XG_DECODE_DEV_CUH

#include <stdint.h>

#include "engine_types.h"

/* A stream's header (word 0) and the layout it implies (pfor.h). */
struct xg_stream_hdr {
    uint32_t b, ne, n, n_slots, mask;
    const uint32_t *slots;
};

__device__ __forceinline__ struct xg_stream_hdr xg_stream_open(const uint32_t *w)
{
    struct xg_stream_hdr s;
    const uint32_t h = w[0];
    s.b = h & 0xFFu;
    if (s.b > 32u) s.b = 32u;
    s.ne = (h >> 8) & 0xFFu;
    s.n = ((h >> 16) & 0x7Fu) + 1u;
    s.slots = w + 1;
    s.n_slots = (s.n * s.b + 31u) >> 5;
    s.mask = s.b == 32u ? 0xFFFFFFFFu : (1u << s.b) - 1u;
    return s;
}

/* Slot i of a stream (its low b bits). */
__device__ __forceinline__ uint32_t xg_stream_slot(const struct xg_stream_hdr &s,
                                                   uint32_t i)
{
    if (!s.b || i >= s.n) return 0;
    const uint32_t bit = i * s.b, wi = bit >> 5, sh = bit & 31u;
    uint64_t two = s.slots[wi];
    if (wi + 1 < s.n_slots) two |= (uint64_t)s.slots[wi + 1] << 32;
    return (uint32_t)(two >> sh) & s.mask;
}

/* Decode one stream at `w` into out[0..n) (shared memory, 128 entries) with
 * the whole warp; returns the number of words the stream occupies. */
__device__ __forceinline__ uint32_t
xg_warp_decode_stream(const uint32_t *w, uint32_t *out, uint32_t *n_out)
{
    const uint32_t lane = threadIdx.x & 31u;
    const struct xg_stream_hdr hs = xg_stream_open(w);
    const uint32_t b = hs.b, ne = hs.ne, n = hs.n, n_slots = hs.n_slots;
    const uint32_t *slots = hs.slots;
    for (uint32_t i = lane; i < 128u; i += 32u) out[i] = xg_stream_slot(hs, i);
    __syncwarp();
    const uint8_t *pos = (const uint8_t *)(slots + n_slots);
    const uint32_t *high = slots + n_slots + ((ne + 3u) >> 2);
    if (b < 32u)
        for (uint32_t j = lane; j < ne; j += 32u)
            out[pos[j] & 127u] |= high[j] << b;
    __syncwarp();
    *n_out = n;
    return 1u + n_slots + ((ne + 3u) >> 2) + ne;
}

/* Inclusive prefix sum over out[0..128) by the warp (4 values a lane), plus
 * `base`: turns docid gaps into docids. */
__device__ __forceinline__ void
xg_warp_prefix_sum(uint32_t *v, uint32_t base)
{
    const uint32_t lane = threadIdx.x & 31u;
    uint32_t a = v[lane * 4], b = v[lane * 4 + 1], c = v[lane * 4 + 2],
             d = v[lane * 4 + 3];
    b += a;
    c += b;
    d += c;
    uint32_t run = d;
    for (uint32_t o = 1; o < 32u; o <<= 1) {
        uint32_t t = __shfl_up_sync(0xFFFFFFFFu, run, o);
        if (lane >= o) run += t;
    }
    const uint32_t excl = run - d + base;
    __syncwarp();
    v[lane * 4] = a + excl;
    v[lane * 4 + 1] = b + excl;
    v[lane * 4 + 2] = c + excl;
    v[lane * 4 + 3] = d + excl;
    __syncwarp();
}

/* The list of [lo, hi) that global block g belongs to: the last whose
 * block_start <= g (lists are in block_start order). */
__device__ __forceinline__ uint32_t
xg_list_of_block(const struct xg_dlist *lists, uint32_t lo, uint32_t hi,
                 uint64_t g)
{
    while (hi - lo > 1) {
        const uint32_t mid = (lo + hi) >> 1;
        if (lists[mid].block_start <= g) lo = mid; else hi = mid;
    }
    return lo;
}

/* Decode block `blk` of term `t` (docs, and wdfs unless NULL) with the
 * warp. */
__device__ __forceinline__ uint32_t
xg_warp_decode_block(const struct xg_dindex &ix, uint32_t t, uint32_t blk,
                     uint32_t *docs, uint32_t *wdfs)
{
    const struct xg_fmt_term &e = ix.terms[t];
    const struct xg_fmt_skip &sk = ix.skip[e.skip_first + blk];
    const uint32_t *w =
        (const uint32_t *)(ix.postings + ix.list_off[t] + sk.offset);
    uint32_t n, n2;
    const uint32_t used = xg_warp_decode_stream(w, docs, &n);
    if (wdfs) xg_warp_decode_stream(w + used, wdfs, &n2);
    xg_warp_prefix_sum(docs, sk.first);
    return n;
}

#endif
