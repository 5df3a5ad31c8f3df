/** @file decode.h
 *  @brief Whole-list decoding into scratch: the kernel's launcher and its
 *         CPU twin.
 */
#ifndef XG_DECODE_H
#define XG_DECODE_H

#include <stdint.h>

#include "gpu_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct CUstream_st;

/* Decode the blocks [block_lo, block_hi) of lists [list_lo, list_hi) into
 * d_docs/d_wdfs at each list's `decoded` offset.  Returns a cudaError_t. */
int xg_decode_lists_gpu(const struct xg_dindex *ix,
                        const struct xg_dlist *d_lists, uint32_t list_lo,
                        uint32_t list_hi, uint64_t block_lo,
                        uint64_t block_hi, uint32_t *d_docs, uint32_t *d_wdfs,
                        struct CUstream_st *stream);

/* The CPU twin over host pointers; returns XG_OK or XG_ERR_FORMAT. */
int xg_decode_lists_ref(const struct xg_dindex *ix,
                        const struct xg_dlist *lists, uint32_t list_lo,
                        uint32_t list_hi, uint32_t *docs, uint32_t *wdfs);

#ifdef __cplusplus
}
#endif
#endif
