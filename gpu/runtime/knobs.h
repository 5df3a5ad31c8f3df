/** @file knobs.h
 *  @brief Every environment switch of the production code, read in one
 *         place (knobs.c): one function per knob, read from the
 *         environment at each call (every call site is once per run,
 *         engine open or large copy, never per posting).  They turn off an optimisation so that a
 *         run on the same machine measures what it buys
 *         (docs/benchmarks.md), or let tests reach a path that real data
 *         rarely takes.  Unset, every knob gives the default behaviour.
 */
#ifndef XG_KNOBS_H
#define XG_KNOBS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* XG_WT_NO_PLACE=1: weight in chunks with pass 2 through the arena and
 * the host's gather instead of placing by the device (weight/wt.c). */
int xg_knob_wt_no_place(void);
/* XG_WT_NO_AHEAD=1: weight in chunks on one stream, no copy of the next
 * chunk's text ahead (weight/wt_cuda_open.c). */
int xg_knob_wt_no_ahead(void);
/* XG_WT_NO_PREFAULT=1: weight in core without faulting the output in
 * while the device works (weight/wt_cuda_whole.c). */
int xg_knob_wt_no_prefault(void);
/* XG_WT_NO_STREAM=1: the staging's host copies by memcpy instead of
 * non-temporal stores (runtime/threads.c). */
int xg_knob_wt_no_stream(void);
/* XG_GPU_TWINS=1: the query engine's pipeline on the kernels' CPU twins,
 * no device needed (tests, CI; plugin/handle.c). */
int xg_knob_gpu_twins(void);
/* XG_NO_PRESSURE=1: the planner prices the cheap side (stock, the CPU
 * matcher) at its one-thread time, not stretched by the cores'
 * contention (plugin/router.c, read when a router opens). */
int xg_knob_no_pressure(void);
/* XG_NO_CPU_OR=1: the planner never sends a flat OR to the CPU
 * matcher's top k without the count (plugin/router.c, read when a router
 * opens). */
int xg_knob_no_cpu_or(void);
/* XG_SERVE_NO_AHEAD=1: serve answers a search only when its MSG_GETMSET
 * arrives, never ahead of it (plugin/serve/search.c). */
int xg_knob_serve_no_ahead(void);
/* XG_FINISH_WDFS=gather or lookup: the finish finds every query's wdfs
 * that way instead of choosing by cost (query/finish.h; tests, A/B);
 * XG_FINISH_BY_COST when unset. */
#define XG_FINISH_BY_COST 0u
#define XG_FINISH_GATHER 1u
#define XG_FINISH_LOOKUP 2u
unsigned xg_knob_finish_wdfs(void);
/* XG_ONE_SLOT=1: the query engine runs one batch at a time, not two
 * (query/engine.c). */
int xg_knob_one_slot(void);
/* The most batches a query engine runs at once (its slots; the plugin's
 * dispatcher has a lane per slot). */
#define XG_SLOTS_MAX 4
/* XG_SLOTS=N (1 to XG_SLOTS_MAX): the query engine runs up to N batches
 * at once instead of two (query/engine.c); 0 when unset. */
unsigned xg_knob_slots(void);
/* XG_SLOTS_OVERLAP=1: the engine's two batches in flight run their
 * kernels side by side instead of in turn (query/engine_cuda.c). */
int xg_knob_slots_overlap(void);
/* XG_DISPATCH_INLINE=0: every plugin query waits for a lane thread;
 * 2: a query runs on its own thread whenever a lane is free and nothing
 * is queued; unset or 1: only when no lane has a batch (the GPU is idle;
 * plugin/dispatch.c). */
#define XG_DISPATCH_INLINE_OFF 0
#define XG_DISPATCH_INLINE_IDLE 1
#define XG_DISPATCH_INLINE_FREE_LANE 2
unsigned xg_knob_dispatch_inline(void);
/* XG_EXPORT_TIMING set (any value): the export prints its phases' times
 * (shim/export.c). */
int xg_knob_export_timing(void);
/* XG_TEST_IMPACT_SLACK=X (X >= 1; else 1): tests multiply the impact
 * margins, so that every impact query overflows and runs again on exact
 * sums (query/engine.c). */
double xg_knob_test_impact_slack(void);
/* XG_TEST_SPARSE=1: every OR from impacts lists its touched documents,
 * however many postings it has (query/batch.c). */
int xg_knob_test_sparse(void);
/* XG_TEST_GDICT_MASK=HEX (else every bit): tests mask the GPU
 * dictionary's hash of long words to force collisions
 * (text/dict_gpu_cuda.c). */
uint64_t xg_knob_test_gdict_mask(void);

#ifdef __cplusplus
}
#endif
#endif
