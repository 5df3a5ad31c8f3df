/** @file engine.h
 *  @brief The batched GPU query engine, and its CPU twin pipeline.
 *
 *  A batch of parsed queries (with their term ids and per-shard plans) is
 *  turned into one work description (batch.c), run by the kernels, or by
 *  their CPU twins when use_device is 0 (CI has no GPU: the twins prove the
 *  pipeline's logic there), and finished on the host: each query's
 *  candidates, rescored exactly on the device, are sorted into Xapian's
 *  MSet order.  A query the engine cannot serve exactly (too many leaves or
 *  operands, k2 != 0, too many near-ties) gets status XG_ERR_UNSUPPORTED
 *  and the caller runs the CPU matcher for it: never a wrong result.
 */
#ifndef XG_ENGINE_H
#define XG_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "../bm25.h"
#include "../index/format_read.h"
#include "engine_types.h"
#include "../query_shape.h"
#include "../runtime/tuning.h"

#ifdef __cplusplus
extern "C" {
#endif

struct xg_engine_query {
    const struct xg_query *q;
    const int64_t *leaf_term;       /* term id per leaf, -1 if absent */
    const struct xg_plan *plans;    /* one per shard */
    uint32_t k;
    const struct xg_weigh_stats *stats; /* NULL: the index's own */
};

struct xg_engine_opts {
    int use_device;                 /* 1: CUDA kernels; 0: CPU twins */
    int device;                     /* CUDA device ordinal */
    uint64_t memory_budget;         /* bytes of device memory (0: 90% of
                                       free) */
    uint32_t member_method;         /* enum xg_member_method; AUTO default */
    int bloom;                      /* -1 auto, 0 never, 1 always */
    uint32_t max_batch;             /* queries per device batch (256) */
    uint64_t batch_work;            /* a batch also closes once its work
                                       reaches this many postings (seed
                                       004 ch. 3's computation threshold:
                                       shortest lists for AND, all lists
                                       for OR); 0: no limit */
    uint64_t list_cache;            /* bytes: keep the lists in an LRU
                                       cache of this size even if all
                                       would fit; 0: only when they do not
                                       fit the budget (xg_engine_open) */
    int blocking_sync;              /* 1: the calling thread sleeps while
                                       a batch runs on the device instead
                                       of spinning on a core (the plugin:
                                       the host's cores run stock queries
                                       meanwhile, and a spinning thread
                                       that loses its core notices the end
                                       of the batch only when it is
                                       scheduled again) */
    int impacts;                    /* 0: an index's impacts (export
                                       --impacts) choose OR candidates when
                                       the lists are resident and the
                                       query's BM25 parameters are the
                                       index's (docs/gpu.md); -1: never
                                       (A/B runs) */
    uint32_t cand_min;              /* least candidates kept per query for
                                       the exact rescore (0: 4096); fewer
                                       means less rescoring and more
                                       overflows */
    uint32_t wait_spin_us;          /* with blocking_sync: how long a wait
                                       for the device polls before the
                                       thread sleeps (0: it sleeps at once) */
};

#define XG_ENGINE_DEFAULTS \
    {1, 0, 0, XG_MEMBER_AUTO, -1, 256, XG_BATCH_WORK_DEFAULT, 0, 0, 0, 0, 0}

struct xg_engine_stats {
    uint64_t queries, served, to_cpu, batches;
    uint64_t postings_decoded, candidates;
    double device_seconds;          /* sum of per-batch event times (two
                                       small batches side by side count
                                       their overlap twice) */
    double build_seconds;           /* host wall: batch descriptors, list
                                       placement */
    double run_seconds;             /* host wall from the first copy up to
                                       the results in host memory */
    double finish_seconds;          /* host wall: the candidates into each
                                       query's top k */
    uint64_t cache_pool;            /* list cache bytes (0: all resident) */
    uint64_t cache_hits, cache_misses, cache_evictions, cache_bytes_loaded;
    uint64_t batch_splits;          /* batches halved to fit the cache */
    uint64_t row_queries;           /* served on the DENSE path (a row) */
    uint64_t intersect_queries;     /* served on the INTERSECT path */
    uint64_t impact_queries;        /* DENSE queries run on impact bounds */
    uint64_t sparse_queries;        /* of which selected from touched lists */
    uint64_t impact_retries;        /* of which overflowed and ran again
                                       on exact sums */
    int impacts_resident;           /* the index's impacts are in use */
    uint64_t member_lists[XG_MEMBER_KINDS]; /* AND lists probed, by membership
                                       method (enum xg_member_method,
                                       BINARY .. BLOCK) */
    uint64_t bloom_lists;           /* of which behind a Bloom filter */
};

typedef struct xg_gpu xg_gpu;

/* Load the index (verified when it was opened: list_check.h).  Everything
 * but the posting lists is always resident.  The lists are too when they
 * fit the memory budget with a quarter of it left for batch buffers;
 * otherwise (or with opts.list_cache) they live in an LRU cache
 * (list_cache.h) filled per batch from host memory through a pinned
 * staging buffer, and a batch whose lists do not fit together is split.
 * Errors: XG_ERR_NODEVICE (no CUDA device, or built without CUDA),
 * XG_ERR_CUDA, XG_ERR_NOMEM (the metadata or the longest list does not
 * fit the budget), XG_ERR_FORMAT (a corrupt block).  Frees everything on
 * error. */
int xg_engine_open(const struct xg_index *ix, const struct xg_engine_opts *o,
                   xg_gpu **out);
void xg_engine_close(xg_gpu *e);

/* Answer n queries (any n; batched internally).  Thread-safe: up to
 * xg_engine_slots() calls run at once.   out[i] and status[i] per
 * query: XG_OK with the exact MSet, or XG_ERR_UNSUPPORTED (use the CPU
 * matcher).  With `later` (not NULL), a query the device answered gets
 * its candidates in later[i] instead, for xg_later_finish on the thread
 * that waits for it (batch.h): the finish's last step leaves the
 * batch's thread.  Returns XG_OK, or an error (XG_ERR_CUDA, XG_ERR_NOMEM)
 * after which no out[] or later[] is valid and all are freed. */
struct xg_later;
int xg_engine_search(xg_gpu *e, const struct xg_engine_query *qs,
                     uint32_t n, const struct xg_bm25_params *p,
                     struct xg_result *out, struct xg_later *later,
                     int *status);

const struct xg_engine_stats *xg_engine_stats(const xg_gpu *e);
/* s's counters less base's (an earlier reading of the same engine); the
 * fields that are not counters (cache_pool, impacts_resident) stay. */
void xg_engine_stats_since(struct xg_engine_stats *s,
                           const struct xg_engine_stats *base);

/* How many threads' searches the engine runs at once (1 or 2): each has
 * its own batch buffers and stream, so one batch is built and finished
 * on the host while another runs on the device.  One with a list cache
 * or a memory budget the caller set.  More callers wait for a slot. */
uint32_t xg_engine_slots(const xg_gpu *e);

/* "NVIDIA H100 80GB HBM3 (132 SMs, 79 GiB)" or why there is no device. */
int xg_engine_device_info(int device, char *buf, size_t n);

/* Test hook: make the n-th next allocation of either pipeline fail
 * (runtime/fault.h's hook, shared by every engine). */
void xg_engine_fail_next_alloc(int n);

#ifdef __cplusplus
}
#endif

#endif
