/** @file shapes.h
 *  @brief What the planner learned per query shape (the Enquire front,
 *         engine auto): a query's shape, read before it is planned, is
 *         its operator, how many subqueries it has and whether they are
 *         all terms.  Where the planner sent almost every recent query of
 *         a shape to stock, the next ones of that shape go there
 *         unplanned, but for one in XG_SHAPE_SAMPLE, which keeps the
 *         counts current.
 *
 *  Planning a query (its terms looked up, its features priced) costs
 *  about 2 us, 4-8% of a real-text AND that stock answers in 27 us
 *  (docs/benchmarks.md, "The planner's cost on queries it leaves to
 *  stock").  A query sent unplanned is answered by stock, so exactly;
 *  the shape only decides where the time goes.  Lock-free: racing
 *  updates may lose a count, which a share can afford.
 */
#ifndef XG_SHAPES_H
#define XG_SHAPES_H

#include <stdatomic.h>
#include <stdint.h>

/* One term; AND or OR of 1..8 or more subqueries, all terms or not. */
#define XG_SHAPES 33
/* Planned queries a shape needs before its queries may skip planning;
 * its counts halve when they reach XG_SHAPE_WINDOW, so the share is that
 * of its last few hundred planned queries. */
#define XG_SHAPE_MIN 64
#define XG_SHAPE_WINDOW 512
/* A shape skips planning while fewer than one planned query in
 * XG_SHAPE_RATIO went to an engine (the GPU or the CPU matcher). */
#define XG_SHAPE_RATIO 64
/* Of a thread's queries of skipping shapes, one in this many is planned
 * all the same. */
#define XG_SHAPE_SAMPLE 16

struct xg_shapes {
    struct {                        /* a line each: notes come from every */
        _Alignas(64) _Atomic uint32_t planned, engine; /* thread */
    } s[XG_SHAPES];
    _Atomic uint64_t skipped;       /* queries sent to stock unplanned */
};

/* The shape of a query whose root is a term (is_term), or an AND (is_and)
 * or OR of n subqueries, all terms or not (flat); -1 for any other root,
 * which always plans. */
int xg_shape_of(int is_term, int is_and, int is_or, uint32_t n, int flat);

/* 1 if the next query of `shape` goes to stock unplanned (then counted as
 * skipped); 0 if it is planned. */
int xg_shapes_skip(struct xg_shapes *sh, int shape);

/* A planned query of `shape` went to an engine (engine 1) or to stock
 * because the cost model found stock cheaper (engine 0).  Routes the cost
 * model did not choose (unsupported, no device, ...) are not noted. */
void xg_shapes_note(struct xg_shapes *sh, int shape, int engine);

#endif
