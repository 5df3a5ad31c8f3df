/** @file accumulate.h
 *  @brief Term-at-a-time accumulation into dense rows: launcher and twin.
 */
#ifndef XG_ACCUMULATE_H
#define XG_ACCUMULATE_H

#include <stdint.h>

#include "engine_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct CUstream_st;

/* For every posting of lists [list_lo, list_hi) (global blocks
 * [block_lo, block_hi)): acc[row + doc] += sumpart(list.weight, kd[doc],
 * wdf) and mask[row + doc] |= list.group_mask, row = query.slot * n_docs;
 * for a query with impact_row, mask[row + doc] += xg_impact_add(
 * list.imp_mult, code) instead, from ix.impacts (no wdfs, no K_d, no
 * double).  A sparse query's documents also go into its touched list,
 * each once, as its row cell leaves 0: touched[query.touch_first +
 * tcount[q]++] (in any order; tcount zeroed first).  The rows must be
 * zeroed first.  Returns a cudaError_t. */
int xg_accumulate_gpu(const struct xg_dindex *ix,
                      const struct xg_dlist *d_lists,
                      const struct xg_dquery *d_queries, uint32_t list_lo,
                      uint32_t list_hi, uint64_t block_lo, uint64_t block_hi,
                      double *d_acc, uint32_t *d_mask, uint32_t *d_touched,
                      uint32_t *d_tcount, struct CUstream_st *stream);

/* The CPU twin (lists in order, postings in order: touched lists in
 * that order too). */
int xg_accumulate_ref(const struct xg_dindex *ix,
                      const struct xg_dlist *lists,
                      const struct xg_dquery *queries, uint32_t list_lo,
                      uint32_t list_hi, double *acc, uint32_t *mask,
                      uint32_t *touched, uint32_t *tcount);

#ifdef __cplusplus
}
#endif
#endif
