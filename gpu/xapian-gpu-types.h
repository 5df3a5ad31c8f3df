/** @file xapian-gpu-types.h
 *  @brief The types every layer of xapian-gpu shares with its public API:
 *         status codes, BM25 parameters and a result (an MSet's docids
 *         and weights).
 *
 *  Part of the installed API (xapian-gpu.h includes it); defined here, in
 *  gpu/, so that the engines below the plugin use the same definitions
 *  without depending on plugin/.  Needs only the C standard library.
 */
#ifndef XAPIAN_GPU_TYPES_H
#define XAPIAN_GPU_TYPES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes: 0 is success, negative values are errors. */
enum xg_status {
    XG_OK = 0, XG_ERR_IO = -1, XG_ERR_FORMAT = -2, XG_ERR_CHECKSUM = -3,
    XG_ERR_VERSION = -4, XG_ERR_STALE = -5, XG_ERR_XAPIAN = -6,
    XG_ERR_UNSUPPORTED = -7, XG_ERR_NOMEM = -8, XG_ERR_ARG = -9,
    XG_ERR_CUDA = -10, XG_ERR_NODEVICE = -11
};

/* The calling thread's last error message: one line naming the file or
 * object and the fault ("" if none). */
const char *xg_last_error(void);

/* BM25Weight parameters (Xapian's defaults: 1, 0, 1, 0.5, 0.5). */
struct xg_bm25_params {
    double k1, k2, k3, b, min_normlen;
};
#define XG_BM25_DEFAULTS {1.0, 0.0, 1.0, 0.5, 0.5}

/* One result: Xapian docid (combined for sharded databases) and weight,
 * and how many of the query's leaves (its term occurrences) the document
 * matches, Xapian's count_matching_subqs() behind its percentages (0: not
 * known; a match always has at least one). */
struct xg_hit {
    uint32_t docid;
    uint32_t matched_leaves;
    double weight;
};

/* An MSet: hits in Xapian's order (weight descending, then docid
 * ascending) and the match count estimate (docs/cli.md says when it
 * equals Xapian's get_matches_estimated()). */
struct xg_result {
    uint64_t matches_estimated;
    uint32_t n_hits;
    struct xg_hit *hits;        /* malloc'd; xg_result_free() */
};

void xg_result_free(struct xg_result *r);

#ifdef __cplusplus
}
#endif
#endif
