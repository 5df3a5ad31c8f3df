/** @file decode.h
 *  @brief Decoding the AND path's lists into scratch: the kernel's
 *         launcher and its CPU twin.
 */
#ifndef XG_DECODE_H
#define XG_DECODE_H

#include <stdint.h>

#include "engine_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct CUstream_st;

/* Decode blocks [block_lo, block_hi) of lists [list_lo, list_hi) into
 * d_docs/d_wdfs at each list's `decoded` offset.  Two passes: bsel NULL
 * decodes every block of the lists whose method is not XG_MEMBER_BLOCK;
 * then, once merge.h's selection has marked bsel, bsel decodes just the
 * marked blocks.  Returns a cudaError_t. */
int xg_decode_lists_gpu(const struct xg_dindex *ix,
                        const struct xg_dlist *d_lists, uint32_t list_lo,
                        uint32_t list_hi, uint64_t block_lo,
                        uint64_t block_hi, const uint8_t *bsel,
                        uint32_t *d_docs, uint32_t *d_wdfs,
                        struct CUstream_st *stream);

/* Set d_list_off[pairs[2i]] = pairs[2i + 1] for i < n: where the list
 * cache (list_cache.h) placed the lists it loaded.  Returns a
 * cudaError_t. */
int xg_patch_list_offsets_gpu(uint64_t *d_list_off, const uint64_t *d_pairs,
                              uint32_t n, struct CUstream_st *stream);

/* The CPU twin over host pointers, same passes; returns XG_OK or
 * XG_ERR_FORMAT. */
int xg_decode_lists_ref(const struct xg_dindex *ix,
                        const struct xg_dlist *lists, uint32_t list_lo,
                        uint32_t list_hi, const uint8_t *bsel, uint32_t *docs,
                        uint32_t *wdfs);

#ifdef __cplusplus
}
#endif
#endif
