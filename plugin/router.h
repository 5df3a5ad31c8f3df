/** @file router.h
 *  @brief The router: for each query, which engine answers it (stock
 *         Xapian, the exact CPU matcher, the GPU engine), what happens when
 *         the engine cannot, and why, counted (enum xg_route).
 *
 *  Every front door goes through here: the context (xg_context_search,
 *  xg_accelerate), the searcher (xg_searcher_*), and the commands
 *  (search, ab, bench, calibrate).  It uses the handle (handle.h) to
 *  prepare and run, the dispatcher (dispatch.h) to batch the context's
 *  threads for the GPU, and the cost model (cost_model.h).
 *
 *  Engine settings (enum xg_engine) and their routes, docs/plugin.md:
 *  - XAPIAN: stock Xapian.
 *  - CPU: the CPU matcher.
 *  - GPU: the GPU engine when a device is usable.
 *  - AUTO: with a usable device, the cost model picks the GPU or stock per
 *    query; without one, the CPU matcher where it is measured faster than
 *    stock (an AND, answered as the matcher's own top k), else stock.
 *  A query the GPU engine cannot serve exactly goes to the CPU matcher; a
 *  query neither engine serves, or any query with an unusable index, goes
 *  to stock (or, at the matcher front with an explicit engine, is
 *  refused with the reason, as xg_searcher_search documents).  A GPU
 *  fault: stock at the Enquire front, the CPU matcher at the matcher
 *  front, and the fault is counted either way.
 */
#ifndef XG_ROUTER_H
#define XG_ROUTER_H

#include <stdint.h>

#include "handle.h"
#include "xapian-gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The route of a query given to engine XAPIAN (not counted: stock was
 * asked for, there is no reason to count). */
#define XG_ROUTE_STOCK_ASKED XG_ROUTE_COUNT

/* How the answer reaches the caller. */
enum xg_router_front {
    /* The engine's own top k is the answer (searcher, search, ab, bench,
     * calibrate).  Explicit engines report what they cannot serve. */
    XG_FRONT_MATCHER = 0,
    /* The answer goes through Enquire (context, xg_accelerate): every
     * query is answered, stock when needed, and GPU queries of all threads
     * are batched by the dispatcher. */
    XG_FRONT_ENQUIRE,
    /* As XG_FRONT_ENQUIRE, but the engine's answer is sent as it is, not
     * through Enquire (xapian-gpu serve): there the exact CPU matcher
     * answers an AND faster than stock does, so under AUTO it takes the
     * ANDs the cost model leaves to stock. */
    XG_FRONT_REMOTE
};

struct xg_router_opts {
    int front;                  /* enum xg_router_front */
    int engine;                 /* not XG_FRONT_MATCHER: enum xg_engine */
    struct xg_bm25_params bm25; /* not XG_FRONT_MATCHER */
    double max_wait;            /* seconds a GPU batch waits for company */
    double deadline;            /* seconds a query may stay queued */
    const char *cost_model;     /* NULL: xapian-gpu.model beside the index
                                   if present, else the built-in model */
    int one_lane;               /* not XG_FRONT_MATCHER: one GPU batch
                                   at a time, even where the engine runs
                                   two (xg_engine_slots) */
};

typedef struct xg_router xg_router;

/* A router over `base` (not owned; it must outlive the router), whose
 * index and GPU engine it uses.  Other fronts than XG_FRONT_MATCHER, with
 * engine GPU or AUTO, load the index onto the device now (no device is not an error).
 * Errors: a malformed cost model file, out of memory. */
int xg_router_open(xg_handle *base, const struct xg_router_opts *o,
                   xg_router **out);
void xg_router_close(xg_router *r);

const struct xg_router_opts *xg_router_options(const xg_router *r);

/* XG_FRONT_ENQUIRE and _REMOTE: answer xq's top k (k = first + maxitems).  XG_OK with
 * *route: for XG_ROUTE_GPU and XG_ROUTE_CPU `out` holds the exact top k;
 * for XG_ROUTE_STOCK_* `out` is empty and stock Xapian answers.
 * pq: xq already prepared by the caller on a handle of the router's index
 * (xg_handle_prepare_terms; it stays the caller's, its stats and plans
 * set here), or NULL: the router prepares xq.
 * weighting_ok 0: the Enquire's weighting is not the router's BM25.
 * ws: the statistics to weigh with (NULL: the index's own; must live
 * until the answer).  The route is counted.  Other returns are errors
 * (out of memory). */
int xg_router_answer(xg_router *r, const xg_xquery *xq,
                     struct xg_prepared *pq, uint64_t k, int weighting_ok,
                     const struct xg_weigh_stats *ws, struct xg_result *out,
                     int *route);

/* The same for a search answered ahead of the request that asks for it
 * (serve, before the client's MSG_GETMSET): the route is not counted and
 * no reason is noted; the caller counts it (xg_router_count) when it
 * sends the answer, and drops an answer of a stock route. */
int xg_router_answer_ahead(xg_router *r, const xg_xquery *xq,
                           struct xg_prepared *pq, uint64_t k,
                           const struct xg_weigh_stats *ws,
                           struct xg_result *out, int *route);

/* XG_FRONT_MATCHER: answer xq with engine (enum xg_engine) on handle h
 * (the router's base, or a clone of it: each thread its own).  XG_OK with
 * `out` and *route (may be NULL), or the reason an explicit engine cannot
 * answer (XG_ERR_UNSUPPORTED, the index's error, no device ...). */
int xg_router_search(xg_router *r, xg_handle *h, const xg_xquery *xq,
                     int engine, const struct xg_bm25_params *p, uint32_t k,
                     struct xg_result *out, int *route);

/* The same from text (QueryParser with o; o->default_and 2: AND, then OR
 * when the AND finds fewer than o->k). */
int xg_router_search_text(xg_router *r, xg_handle *h, const char *text,
                          const struct xg_search_opts *o,
                          struct xg_result *out, int *route);

/* XG_FRONT_MATCHER, many prepared queries at once, in the calling thread:
 * engine GPU runs them as one engine batch on h (no dispatcher, no
 * waiting); CPU on the CPU matcher; AUTO routes each query (stock only
 * where xqs, which may be NULL, holds its parsed query; else it gets
 * XG_ERR_UNSUPPORTED).  ks NULL: k for every query.  XG_OK with
 * status[i] (XG_OK, or why query i cannot be answered: XG_ERR_UNSUPPORTED)
 * and, if route is not NULL, route[i]; else an error (and no out[i] is
 * valid), such as engine GPU without a usable device. */
int xg_router_run_batch(xg_router *r, xg_handle *h,
                        struct xg_prepared *const *pqs,
                        const xg_xquery *const *xqs, const uint32_t *ks,
                        uint32_t k, uint32_t n, int engine,
                        const struct xg_bm25_params *p,
                        struct xg_result *out, int *status, int *route);

/* XG_FRONT_MATCHER: the route xg_router_run_batch with engine would give
 * prepared query pq (prepared on any handle of the router's index) on the
 * router's base now (XG_ROUTE_GPU: into the engine batch).  A caller that
 * gathers batches answers the others in the query's own thread, as an
 * application thread of the plugin does, so that no batch waits for the
 * CPU matcher or stock. */
int xg_router_route(xg_router *r, const struct xg_prepared *pq, int engine);

/* AND+OR (o->default_and == 2), after a batch answered the AND forms:
 * rerun as OR, with o->engine, the queries (texts[i], status XG_OK) with
 * fewer than k results, replacing res[i]/status[i].  No-op otherwise. */
int xg_router_andor_finish(xg_router *r, xg_handle *h,
                           const char *const *texts, uint32_t n,
                           const struct xg_search_opts *o,
                           struct xg_result *res, int *status);

/* The Enquire front, engine auto (shapes.h): a query's shape before it
 * is planned (a term at its root; or an AND or OR of n subqueries, all
 * terms or not); -1 for a root that always plans.  1 if the next query
 * of `shape` goes to stock unplanned, counted as stock:cheaper; else 0,
 * and the caller plans it and notes the route it got.  How many went
 * unplanned so far. */
int xg_router_shape_of(int is_term, int is_and, int is_or, uint32_t n,
                       int flat);
/* 1 where the router learns shapes at all (else the caller need not read
 * a query's shape). */
int xg_router_shapes_on(const xg_router *r);
int xg_router_shape_skip(xg_router *r, int shape);
void xg_router_shape_note(xg_router *r, int shape, int route);
uint64_t xg_router_shape_skipped(xg_router *r);

/* Count a route (XG_ROUTE_*; others are ignored). */
void xg_router_count(xg_router *r, int route);
/* A query answered on `route` that its front then left to stock after
 * all (XG_ROUTE_STOCK_UNSUPPORTED, for `why`): counted there instead. */
void xg_router_recount_unsupported(xg_router *r, int route, const char *why);
/* Queries routed each way: counts[XG_ROUTE_COUNT]. */
void xg_router_routes(const xg_router *r, uint64_t *counts);
/* One query to stock:unsupported for `why` (the shim's message, or the
 * front's reason), and all of them so far: "N why; M why" (unserved.h). */
void xg_router_note_unserved(xg_router *r, const char *why);
void xg_router_unserved(xg_router *r, char *buf, size_t n);
/* GPU engine faults taken (batches, at the matcher front; queries, at the
 * Enquire front). */
uint64_t xg_router_gpu_faults(const xg_router *r);

/* What the planner learned from the times it saw (cost_model.h): the CPU
 * matcher's ANDs it times itself; stock's time is told by the caller
 * that ran stock (serve), with the query it ran.  (The GPU's side is
 * corrected by the dispatcher's measured excess instead.) */
void xg_router_learn_stock(xg_router *r, const struct xg_prepared *pq,
                           double seconds);
/* 1 for one search in 16 of the calling thread: the ones timed to learn
 * from (a thread CPU clock read costs a system call on every search). */
int xg_router_learn_due(void);
struct xg_cost_learned;
const struct xg_cost_learned *xg_router_learned(const xg_router *r);

/* Searches answered on the host's CPU (the CPU matcher here, stock's
 * in-process answers in serve) bracket their work with enter/leave; after
 * xg_router_limit_cpu(r, n) (n > 0, before the first search) at most n
 * run at once, the others wait their turn, and the peak seen at once is
 * counted (0 without a limit). */
void xg_router_limit_cpu(xg_router *r, unsigned n);
void xg_router_cpu_enter(xg_router *r);
void xg_router_cpu_leave(xg_router *r);
uint32_t xg_router_cpu_peak(const xg_router *r);

/* Where the dispatcher's time went (the Enquire front; zeros without a
 * dispatcher): its batches and their host steps (engine.h's stats).
 * Read when no batch runs. */
struct xg_router_batches {
    uint32_t lanes;
    uint64_t batches, queries;
    uint64_t inline_batches;    /* of batches: one query on its caller's
                                   thread, the GPU idle (dispatch.h) */
    double busy_seconds, build_seconds, run_seconds, device_seconds,
        finish_seconds;
};
void xg_router_batches(xg_router *r, struct xg_router_batches *out);

#ifdef __cplusplus
}
#endif
#endif
