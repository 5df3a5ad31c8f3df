/** @file device.h
 *  @brief The one device runtime of every product: the query engine
 *         (query/engine_cuda.c), weighting (weight/wt_cuda*.c), n-gram
 *         tables and their scorer (qlm/qlm_cuda*.c, qlm_score_cuda.c) and
 *         the GPU dictionary (text/dict_gpu_cuda.c).  It gives the
 *         device's facts, one open device with its stream, the device
 *         memory pool under a budget (with the fault-injection hook,
 *         fault.h), the pinned staging of large copies (staging.h), small
 *         pinned counters, and step timing with events.  CUDA errors map
 *         to xg_status through cuda_check.h.  Built only with CUDA.
 */
#ifndef XG_DEVICE_H
#define XG_DEVICE_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#include "cuda_check.h"
#include "staging.h"

/* ---- Facts ------------------------------------------------------------ */

struct xg_device_facts {
    int ordinal;
    char name[256];
    int sm_count;
    uint64_t total_bytes, free_bytes, l2_bytes;
};

/* XG_OK if there is a CUDA device; else XG_ERR_NODEVICE, its message
 * "<who>: no CUDA device (<why>)", and the runtime's error cleared. */
int xg_device_present(const char *who);
/* The facts of device `ordinal` (free_bytes: of the current device, 0
 * when that is another).  XG_ERR_NODEVICE with why[] (n bytes) telling
 * why there is none; nothing of xg_last_error is set. */
int xg_device_facts(int ordinal, struct xg_device_facts *f, char *why, size_t n);

/* ---- The device memory pool --------------------------------------------
 * Device memory counted against a budget (--device-memory): an
 * allocation over it is XG_ERR_NOMEM ("<who>: <what> needs N bytes, over
 * the device memory budget"), as is one that the fault-injection hook
 * fails.  _alloc: cudaMalloc (long-lived data); _alloc_async: the
 * stream-ordered allocator on the pool's stream, whose pool keeps freed
 * memory (xg_device_opts.keep_pool) so that growing a buffer neither
 * waits for the device nor maps new memory.  The frees take the size
 * allocated and NULL the pointer; NULL is a no-op. */
struct xg_pool {
    cudaStream_t stream;
    const char *who;            /* messages' prefix: "GPU", "weight GPU" */
    uint64_t budget, used;      /* UINT64_MAX: no budget */
};

/* Room for n more bytes under the budget. */
static inline int xg_pool_fits(const struct xg_pool *p, uint64_t n)
{
    return p->used <= p->budget && n <= p->budget - p->used;
}
int xg_pool_alloc(struct xg_pool *p, void **out, size_t n, const char *what);
int xg_pool_alloc_async(struct xg_pool *p, void **out, size_t n, const char *what);
void xg_pool_free(struct xg_pool *p, void **ptr, size_t n);
void xg_pool_free_async(struct xg_pool *p, void **ptr, size_t n);
/* The same ordered on stream s (a lane's, below). */
int xg_pool_alloc_on(struct xg_pool *p, cudaStream_t s, void **out, size_t n,
                     const char *what);
void xg_pool_free_on(struct xg_pool *p, cudaStream_t s, void **ptr, size_t n);

/* ---- Step timing ------------------------------------------------------
 * Events recorded on the stream at the end of each step; the intervals
 * between them are added to seconds[step] (a mark's step < 0: an interval
 * counted nowhere, as the first mark of a pass). */
#define XG_DEVICE_MAX_MARKS 64

struct xg_device_timer {
    cudaEvent_t ev[XG_DEVICE_MAX_MARKS];
    int step[XG_DEVICE_MAX_MARKS];
    int n, cap;
};

/* ---- An open device ---------------------------------------------------- */

struct xg_device_opts {
    const char *who;            /* messages' prefix */
    int ordinal;                /* cudaSetDevice; -1: the current device */
    /* 0: XG_DEVICE_BUDGET_NUM / _DEN of the free memory (tuning.h), at
     * least min_budget; UINT64_MAX: none (and the free memory is not
     * asked for). */
    uint64_t budget, min_budget;
    int marks;                  /* timing events, up to XG_DEVICE_MAX_MARKS */
    size_t small_bytes;         /* pinned counters (h_small) */
    uint32_t staging_threads;   /* the staging's host copy threads */
    int keep_pool;              /* the stream-ordered pool keeps what is freed */
    int trim_at_close;          /* ... until the device closes */
    int blocking_sync;          /* xg_device_wait sleeps on a blocking event */
    uint32_t spin_us;           /* ... after polling it this long (a waking
                                   thread costs tens of microseconds) */
    /* The stream, events and pinned counters outlive the device, for the
     * process's next open with `park` (creating and destroying them took
     * about 1.5 ms of a 20 ms weight run at 100 MB on the H100). */
    int park;
};

struct xg_device {
    struct xg_device_opts o;
    int ordinal;                /* the device in use */
    cudaStream_t stream;        /* non-blocking; every step is ordered on it */
    uint64_t free_at_open;      /* the device's free bytes (0: not asked) */
    struct xg_pool pool;        /* on the stream */
    struct xg_staging stage;    /* on the stream */
    void *h_small;              /* pinned, o.small_bytes */
    cudaEvent_t ev_wait;        /* blocking_sync */
    struct xg_device_timer timer;
};

/* Open: the device present, selected, its stream, pool, staging, events
 * and pinned counters.  On error xg_device_close(d) still frees what was
 * made (d zeroed first, so close is always safe). */
int xg_device_open(struct xg_device *d, const struct xg_device_opts *o);
/* Waits for the stream; frees the staging, the events, the counters and
 * the stream (or parks them); trims the pool with trim_at_close.  The
 * pool's memory is the caller's to free before. */
void xg_device_close(struct xg_device *d);

/* Wait for everything queued on the stream: asleep on a blocking event
 * with blocking_sync, else as CUDA's default does (spinning while it has
 * a core to itself). */
cudaError_t xg_device_wait(struct xg_device *d);
/* cudaStreamSynchronize, checked: "GPU: <what>: <error>". */
int xg_device_sync(struct xg_device *d, const char *what);

/* ---- Lanes -------------------------------------------------------------
 * Work that may run beside other work on the device (the query engine's
 * batches in flight at once) goes on a lane: a stream (the device's own,
 * or one of the lane's), a wait event made as xg_device_wait's, and a
 * start and an end event that time one pass.  Its memory comes from the
 * device's pool (xg_pool_alloc_on with the lane's stream). */
struct xg_device_lane {
    cudaStream_t stream;
    int own_stream;
    cudaEvent_t ev_wait;        /* blocking_sync: as the device's */
    cudaEvent_t ev_start, ev_end;
};

/* own_stream 0: the lane uses d's stream.  On error xg_device_lane_close
 * still frees what was made. */
int xg_device_lane_open(struct xg_device *d, int own_stream,
                        struct xg_device_lane *l);
void xg_device_lane_close(struct xg_device_lane *l);
/* Wait for everything queued on the lane, as xg_device_wait does. */
cudaError_t xg_device_lane_wait(const struct xg_device *d,
                                const struct xg_device_lane *l);
/* The seconds between the lane's start and end events, once both have
 * passed (0 if timing fails). */
double xg_device_lane_seconds(const struct xg_device_lane *l);

/* Start a pass's timing: forget the marks, then mark a start (step -1). */
int xg_device_timer_start(struct xg_device *d);
/* Mark the end of `step`.  All marks used: with seconds, the intervals so
 * far are added there (after a stream sync) and timing goes on from the
 * last mark; without, the mark is dropped. */
int xg_device_mark(struct xg_device *d, int step, double *seconds);
/* After a stream sync, add each interval to seconds[]; forget the marks. */
int xg_device_marks_done(struct xg_device *d, double *seconds);
/* The same once the caller has waited for the stream itself; a timing
 * that fails adds nothing. */
void xg_device_marks_collect(struct xg_device *d, double *seconds);

#endif
