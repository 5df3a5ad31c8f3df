/** @file xapian-gpu.h
 *  @brief Public C API of xapian-gpu: answer Xapian queries from the GPU
 *         index with exactly the stock matcher's MSet.
 *
 *  Include only this header (it includes xapian-gpu-types.h, installed
 *  beside it).  It needs nothing but the C standard library and compiles
 *  as C11 and as C++ (tests/header_test.c proves it).
 *
 *  Typical use:
 *      xg_searcher *s;
 *      const char *db[] = {"/srv/omega/default"};
 *      if (xg_searcher_open(db, 1, NULL, &s) != XG_OK) { puts(xg_last_error()); ... }
 *      struct xg_search_opts o = XG_SEARCH_DEFAULTS;
 *      struct xg_result r;
 *      if (xg_searcher_search(s, "gpu matching", &o, &r) == XG_OK) { ... }
 *      xg_result_free(&r);
 *      xg_searcher_close(s);
 *  Every function returns an enum xg_status (0 = XG_OK); on error the
 *  one-line message is in xg_last_error() (thread-local).
 */
#ifndef XAPIAN_GPU_H
#define XAPIAN_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "xapian-gpu-types.h"

#ifdef __cplusplus
extern "C" {
#endif



/* Which matcher answers. */
enum xg_engine {
    XG_ENGINE_XAPIAN = 0,   /* the stock Xapian matcher */
    XG_ENGINE_CPU = 1,      /* the exact CPU matcher over the GPU index */
    XG_ENGINE_GPU = 2,      /* the GPU engine; queries it cannot serve
                               exactly go to the CPU matcher */
    XG_ENGINE_AUTO = 3      /* the router picks per query: with a usable
                               device the cost model's GPU or stock;
                               without, the CPU matcher for ANDs, else
                               stock (docs/plugin.md).  Answers every
                               query: stock when the engines cannot */
};

struct xg_search_opts {
    int engine;                 /* enum xg_engine */
    uint32_t k;                 /* results wanted */
    int default_and;            /* QueryParser default op: 0 OR, 1 AND,
                                   2 AND then OR for queries whose AND
                                   finds fewer than k (seed 003 §8.3) */
    int stem_english;           /* 1: Stem("english"), STEM_SOME; 0: none */
    const char *stopper;        /* NULL or "english" */
    unsigned parser_flags;      /* QueryParser flags (XG_PARSE_FLAG_*);
                                   0: FLAG_DEFAULT */
    struct xg_bm25_params bm25;
    int omega;                  /* 1: build queries as Omega does by
                                   default (prefixes, stopper; docs/cli.md) */
    const char *const *filters; /* Omega's B= boolean filters: OP_FILTER
                                   by these terms, one prefix's ORed, the
                                   prefixes ANDed (a term with no prefix
                                   is ignored, as Omega ignores it) */
    size_t n_filters;
    const char *const *excludes;/* Omega's N=: AND_NOT the OR of these */
    size_t n_excludes;
};
/* QueryParser::FLAG_DEFAULT, FLAG_WILDCARD and FLAG_PARTIAL, for
 * parser_flags. */
#define XG_PARSE_FLAG_DEFAULT 7u
#define XG_PARSE_FLAG_WILDCARD 16u
#define XG_PARSE_FLAG_PARTIAL 64u
#define XG_SEARCH_DEFAULTS {XG_ENGINE_CPU, 10, 0, 1, NULL, 0, XG_BM25_DEFAULTS, \
                            0, NULL, 0, NULL, 0}

typedef struct xg_searcher xg_searcher;

/* Open the database at db_paths (a glass directory, a stub file, or several
 * paths that combine as shards) and its GPU index (index_path, or the
 * default location: DB/xapian-gpu.idx for a directory, DB.xapian-gpu.idx
 * otherwise).  A missing, corrupt or stale index is not an error here: the
 * searcher then answers XG_ENGINE_CPU requests with that error, and
 * xg_searcher_index_error() returns it. */
int xg_searcher_open(const char *const *db_paths, size_t n_paths,
                     const char *index_path, xg_searcher **out);
void xg_searcher_close(xg_searcher *s);

/* NULL if the index is usable, else the reason it is not. */
const char *xg_searcher_index_error(const xg_searcher *s);

/* Parse `query` with Xapian's QueryParser and answer it.  Errors:
 * XG_ERR_UNSUPPORTED ("unsupported: OP_PHRASE", ...) when the CPU engine
 * cannot serve the query's shape; XG_ERR_STALE / XG_ERR_FORMAT /
 * XG_ERR_CHECKSUM when the index cannot be trusted; XG_ERR_ARG for a query
 * QueryParser rejects.  Not safe to call on one searcher from several
 * threads at once. */
int xg_searcher_search(xg_searcher *s, const char *query,
                       const struct xg_search_opts *o, struct xg_result *out);

/* ---- The accelerator context: what an application keeps open ------- */

/* How a query was answered, and why (the planner's counted reasons). */
enum xg_route {
    XG_ROUTE_GPU = 0,             /* the GPU engine */
    XG_ROUTE_CPU,                 /* the exact CPU matcher over the index
                                     (engine CPU, or a query the GPU
                                     cannot serve exactly) */
    XG_ROUTE_STOCK_UNSUPPORTED,   /* stock Xapian: a query shape the
                                     engines do not serve */
    XG_ROUTE_STOCK_STALE,         /* ... the index is older than the DB */
    XG_ROUTE_STOCK_DAMAGED,       /* ... the index is corrupt, missing or
                                     of another version */
    XG_ROUTE_STOCK_NO_DEVICE,     /* ... no usable GPU (engine AUTO/GPU) */
    XG_ROUTE_STOCK_GPU_ERROR,     /* ... the GPU failed on this query */
    XG_ROUTE_STOCK_WEIGHTING,     /* ... the Enquire's weighting scheme is
                                     not the context's BM25 */
    XG_ROUTE_STOCK_CHEAPER,       /* ... the cost model predicted stock
                                     Xapian faster (engine AUTO) */
    XG_ROUTE_STOCK_DEADLINE,      /* ... still queued for the GPU at the
                                     deadline */
    XG_ROUTE_COUNT
};

/* "gpu", "cpu", "stock:unsupported", ... */
const char *xg_route_name(int route);

struct xg_context_opts {
    int engine;                 /* XG_ENGINE_AUTO (the cost model picks the
                                   GPU or stock Xapian per query), _GPU
                                   (always the GPU when usable), or _CPU
                                   (the exact CPU matcher) */
    struct xg_bm25_params bm25; /* must match the Enquire's BM25Weight */
    int device;                 /* CUDA device ordinal */
    uint64_t device_memory;     /* bytes; 0: 90% of free */
    double max_wait_ms;         /* a GPU batch closes when its oldest query
                                   has waited this long (0, the default:
                                   at once when a lane is free, so batches
                                   form only while the GPU is busy) */
    double deadline_ms;         /* a query still queued for the GPU after
                                   this long goes to stock (0: 50 ms) */
    const char *cost_model;     /* file from `xapian-gpu calibrate`; NULL:
                                   xapian-gpu.model next to the index if
                                   present, else the built-in default */
    double wait_spin_ms;        /* a lane's thread waiting for its GPU
                                   batch polls the device this long before
                                   it sleeps (0.5, the default; 0: it
                                   sleeps at once, leaving the cores to
                                   the application, and wakes later) */
    int gpu_lanes;              /* GPU batches in flight at once: 1, or
                                   0 (the default): one per engine slot
                                   (two; XG_SLOTS sets up to four), which
                                   share the one copy of the index on the
                                   device, each with its own batch
                                   buffers; one with a device_memory
                                   budget or a list cache */
};
#define XG_CONTEXT_DEFAULTS \
    {XG_ENGINE_AUTO, XG_BM25_DEFAULTS, 0, 0, 0, 0, NULL, 0.5, 0}

typedef struct xg_context xg_context;

/* Open the accelerator for the database at db_paths (as for
 * xg_searcher_open; index_path NULL: next to the first database), and
 * load the index onto the GPU (engines AUTO and GPU).  A
 * stale or damaged index is not an error: the context then routes every
 * query to stock Xapian and counts why.  Thread-safe after opening: many
 * threads may search one context at once. */
int xg_context_open(const char *const *db_paths, size_t n_paths,
                    const char *index_path, const struct xg_context_opts *o,
                    xg_context **out);
void xg_context_close(xg_context *ctx);

/* Parse `query` (QueryParser with o's settings; o->k and o->engine are
 * ignored) and return the MSet entries [first, first + maxitems) exactly
 * as stock Xapian's Enquire::get_mset(first, maxitems) with BM25Weight
 * would, with its matches_estimated.  *route (may be NULL) says who
 * answered. */
int xg_context_search(xg_context *ctx, const char *query,
                      const struct xg_search_opts *o, uint32_t first,
                      uint32_t maxitems, struct xg_result *out, int *route);

/* Queries routed each way since opening: counts[XG_ROUTE_COUNT]. */
void xg_context_routes(const xg_context *ctx, uint64_t *counts);

/* Why the "stock:unsupported" ones went to stock: "N reason; M reason"
 * (the operator the engines do not serve, or the front that leaves it to
 * stock), most first, into buf (always terminated). */
void xg_context_unserved(const xg_context *ctx, char *buf, size_t n);

/* NULL if the index is usable, else why every query goes to stock. */
const char *xg_context_index_error(const xg_context *ctx);


#ifdef __cplusplus
}
#endif
#endif
