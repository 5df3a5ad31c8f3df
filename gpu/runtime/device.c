/** @file device.c
 *  @brief The device runtime (device.h): facts, open and close, the
 *         budgeted pool, waits and step timing.  Built only with CUDA.
 */
#include "device.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "fault.h"
#include "tuning.h"

/* ---- Facts ------------------------------------------------------------ */

int xg_device_present(const char *who)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e == cudaSuccess && count >= 1) return XG_OK;
    cudaGetLastError();
    return xg_set_error(XG_ERR_NODEVICE, "%s: no CUDA device (%s)", who,
                        e != cudaSuccess ? cudaGetErrorString(e) : "none found");
}

int xg_device_facts(int ordinal, struct xg_device_facts *f, char *why, size_t n)
{
    memset(f, 0, sizeof *f);
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
        snprintf(why, n, "no CUDA device (%s)",
                 err != cudaSuccess ? cudaGetErrorString(err) : "none found");
        return XG_ERR_NODEVICE;
    }
    struct cudaDeviceProp pr;
    if (ordinal < 0 || ordinal >= count ||
        cudaGetDeviceProperties(&pr, ordinal) != cudaSuccess) {
        snprintf(why, n, "CUDA device %d not usable", ordinal);
        return XG_ERR_NODEVICE;
    }
    f->ordinal = ordinal;
    snprintf(f->name, sizeof f->name, "%s", pr.name);
    f->sm_count = pr.multiProcessorCount;
    f->total_bytes = pr.totalGlobalMem;
    f->l2_bytes = (uint64_t)pr.l2CacheSize;
    int cur = -1;
    size_t fr = 0, total = 0;
    if (cudaGetDevice(&cur) == cudaSuccess && cur == ordinal &&
        cudaMemGetInfo(&fr, &total) == cudaSuccess)
        f->free_bytes = fr;
    cudaGetLastError();
    return XG_OK;
}

/* ---- The pool --------------------------------------------------------- */

/* The budget and the fault hook, before any allocation. */
static int admit(struct xg_pool *p, void **out, size_t n, const char *what)
{
    *out = NULL;
    if (xg_fault_take())
        return xg_set_error(XG_ERR_NOMEM, "%s: allocating %s (%zu bytes): injected failure",
                            p->who, what, n);
    if (!xg_pool_fits(p, n))
        return xg_set_error(XG_ERR_NOMEM, "%s: %s needs %zu bytes, over the device memory "
                            "budget (%llu of %llu used)", p->who, what, n,
                            (unsigned long long)p->used, (unsigned long long)p->budget);
    return XG_OK;
}

int xg_pool_alloc(struct xg_pool *p, void **out, size_t n, const char *what)
{
    int rc = admit(p, out, n, what);
    if (rc) return rc;
    XG_CUDA_CHECK(cudaMalloc(out, n ? n : 1), what);
    p->used += n;
    return XG_OK;
}

int xg_pool_alloc_async(struct xg_pool *p, void **out, size_t n, const char *what)
{
    return xg_pool_alloc_on(p, p->stream, out, n, what);
}

int xg_pool_alloc_on(struct xg_pool *p, cudaStream_t s, void **out, size_t n,
                     const char *what)
{
    int rc = admit(p, out, n, what);
    if (rc) return rc;
    XG_CUDA_CHECK(cudaMallocAsync(out, n ? n : 1, s), what);
    p->used += n;
    return XG_OK;
}

void xg_pool_free(struct xg_pool *p, void **ptr, size_t n)
{
    if (!*ptr) return;
    cudaFree(*ptr);
    *ptr = NULL;
    p->used -= n;
}

void xg_pool_free_async(struct xg_pool *p, void **ptr, size_t n)
{
    xg_pool_free_on(p, p->stream, ptr, n);
}

void xg_pool_free_on(struct xg_pool *p, cudaStream_t s, void **ptr, size_t n)
{
    if (!*ptr) return;
    cudaFreeAsync(*ptr, s);
    *ptr = NULL;
    p->used -= n;
}

/* ---- Open and close --------------------------------------------------- */

/* One parked stream with its events and pinned counters (opts.park). */
static pthread_mutex_t kept_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    cudaStream_t stream;
    cudaEvent_t ev[XG_DEVICE_MAX_MARKS];
    int marks;
    void *h_small;
    size_t small_bytes;
} kept;

static int take_kept(struct xg_device *d)
{
    pthread_mutex_lock(&kept_mu);
    const int ok = kept.stream != NULL && kept.marks == d->timer.cap &&
                   kept.small_bytes == d->o.small_bytes;
    if (ok) {
        d->stream = kept.stream;
        memcpy(d->timer.ev, kept.ev, sizeof d->timer.ev);
        d->h_small = kept.h_small;
        memset(&kept, 0, sizeof kept);
    }
    pthread_mutex_unlock(&kept_mu);
    return ok;
}

static int park(struct xg_device *d)
{
    if (!d->o.park || !d->stream || (d->o.small_bytes && !d->h_small)) return 0;
    for (int i = 0; i < d->timer.cap; ++i)
        if (!d->timer.ev[i]) return 0;
    pthread_mutex_lock(&kept_mu);
    const int ok = kept.stream == NULL;
    if (ok) {
        kept.stream = d->stream;
        memcpy(kept.ev, d->timer.ev, sizeof kept.ev);
        kept.marks = d->timer.cap;
        kept.h_small = d->h_small;
        kept.small_bytes = d->o.small_bytes;
    }
    pthread_mutex_unlock(&kept_mu);
    return ok;
}

int xg_device_open(struct xg_device *d, const struct xg_device_opts *o)
{
    memset(d, 0, sizeof *d);
    d->o = *o;
    d->ordinal = o->ordinal;
    d->timer.cap = o->marks < XG_DEVICE_MAX_MARKS ? o->marks : XG_DEVICE_MAX_MARKS;
    d->pool.who = o->who;
    int rc = xg_device_present(o->who);
    if (rc) return rc;
    if (o->ordinal >= 0) XG_CUDA_CHECK(cudaSetDevice(o->ordinal), "cudaSetDevice");
    else XG_CUDA_CHECK(cudaGetDevice(&d->ordinal), "device");
    d->pool.budget = o->budget;
    if (o->budget != UINT64_MAX) {
        size_t fr = 0, total = 0;
        XG_CUDA_CHECK(cudaMemGetInfo(&fr, &total), "device memory");
        d->free_at_open = fr;
        if (!o->budget) d->pool.budget = fr / XG_DEVICE_BUDGET_DEN * XG_DEVICE_BUDGET_NUM;
    }
    if (d->pool.budget < o->min_budget) d->pool.budget = o->min_budget;
    if (!o->park || !take_kept(d)) {
        XG_CUDA_CHECK(cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking), "stream");
        if (o->keep_pool) {
            cudaMemPool_t mp;
            uint64_t keep = UINT64_MAX;
            XG_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&mp, d->ordinal), "memory pool");
            XG_CUDA_CHECK(cudaMemPoolSetAttribute(mp, cudaMemPoolAttrReleaseThreshold, &keep),
                          "memory pool");
        }
        for (int i = 0; i < d->timer.cap; ++i)
            XG_CUDA_CHECK(cudaEventCreate(&d->timer.ev[i]), "event");
        if (o->small_bytes)
            XG_CUDA_CHECK(cudaHostAlloc(&d->h_small, o->small_bytes, cudaHostAllocDefault),
                          "pinned counters");
    }
    if (o->blocking_sync)
        XG_CUDA_CHECK(cudaEventCreateWithFlags(&d->ev_wait, cudaEventBlockingSync |
                                                                cudaEventDisableTiming),
                      "event");
    d->pool.stream = d->stream;
    xg_staging_init(&d->stage, d->stream, o->staging_threads);
    return XG_OK;
}

void xg_device_close(struct xg_device *d)
{
    if (d->stream) cudaStreamSynchronize(d->stream);
    xg_staging_free(&d->stage);
    if (d->stream && d->o.trim_at_close) {
        cudaMemPool_t mp;
        if (cudaDeviceGetDefaultMemPool(&mp, d->ordinal) == cudaSuccess)
            cudaMemPoolTrimTo(mp, 0);
    }
    if (d->ev_wait) cudaEventDestroy(d->ev_wait);
    if (!park(d)) {
        if (d->h_small) cudaFreeHost(d->h_small);
        for (int i = 0; i < d->timer.cap; ++i)
            if (d->timer.ev[i]) cudaEventDestroy(d->timer.ev[i]);
        if (d->stream) cudaStreamDestroy(d->stream);
    }
    memset(d, 0, sizeof *d);
}

/* ---- Waits and timing ------------------------------------------------- */

static cudaError_t wait_on(const struct xg_device *d, cudaStream_t s,
                           cudaEvent_t ev)
{
    if (!ev) return cudaStreamSynchronize(s);
    cudaError_t rc = cudaEventRecord(ev, s);
    if (rc != cudaSuccess) return rc;
    if (d->o.spin_us) {
        const double end = xg_now() + d->o.spin_us * 1e-6;
        do {
            rc = cudaEventQuery(ev);
            if (rc != cudaErrorNotReady) return rc;
        } while (xg_now() < end);
    }
    return cudaEventSynchronize(ev);
}

cudaError_t xg_device_wait(struct xg_device *d)
{
    return wait_on(d, d->stream, d->ev_wait);
}

int xg_device_lane_open(struct xg_device *d, int own_stream,
                        struct xg_device_lane *l)
{
    memset(l, 0, sizeof *l);
    l->stream = d->stream;
    if (own_stream) {
        XG_CUDA_CHECK(cudaStreamCreateWithFlags(&l->stream,
                                                cudaStreamNonBlocking),
                      "stream");
        l->own_stream = 1;
    }
    if (d->o.blocking_sync)
        XG_CUDA_CHECK(cudaEventCreateWithFlags(&l->ev_wait,
                                               cudaEventBlockingSync |
                                                   cudaEventDisableTiming),
                      "event");
    XG_CUDA_CHECK(cudaEventCreate(&l->ev_start), "event");
    XG_CUDA_CHECK(cudaEventCreate(&l->ev_end), "event");
    return XG_OK;
}

void xg_device_lane_close(struct xg_device_lane *l)
{
    if (l->stream) cudaStreamSynchronize(l->stream);
    if (l->ev_wait) cudaEventDestroy(l->ev_wait);
    if (l->ev_start) cudaEventDestroy(l->ev_start);
    if (l->ev_end) cudaEventDestroy(l->ev_end);
    if (l->own_stream && l->stream) cudaStreamDestroy(l->stream);
    memset(l, 0, sizeof *l);
}

cudaError_t xg_device_lane_wait(const struct xg_device *d,
                                const struct xg_device_lane *l)
{
    return wait_on(d, l->stream, l->ev_wait);
}

double xg_device_lane_seconds(const struct xg_device_lane *l)
{
    float ms = 0;
    if (cudaEventElapsedTime(&ms, l->ev_start, l->ev_end) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return ms / 1e3;
}

int xg_device_sync(struct xg_device *d, const char *what)
{
    XG_CUDA_CHECK(cudaStreamSynchronize(d->stream), what);
    return XG_OK;
}

int xg_device_timer_start(struct xg_device *d)
{
    d->timer.n = 0;
    return xg_device_mark(d, -1, NULL);
}

int xg_device_marks_done(struct xg_device *d, double *seconds)
{
    struct xg_device_timer *t = &d->timer;
    XG_CUDA_CHECK(cudaStreamSynchronize(d->stream), "stream");
    for (int i = 1; i < t->n; ++i) {
        float ms = 0;
        XG_CUDA_CHECK(cudaEventElapsedTime(&ms, t->ev[i - 1], t->ev[i]), "timing");
        if (t->step[i] >= 0) seconds[t->step[i]] += ms * 1e-3;
    }
    t->n = 0;
    return XG_OK;
}

void xg_device_marks_collect(struct xg_device *d, double *seconds)
{
    struct xg_device_timer *t = &d->timer;
    for (int i = 1; i < t->n; ++i) {
        float ms = 0;
        if (cudaEventElapsedTime(&ms, t->ev[i - 1], t->ev[i]) == cudaSuccess &&
            t->step[i] >= 0)
            seconds[t->step[i]] += ms / 1e3;
    }
    t->n = 0;
}

int xg_device_mark(struct xg_device *d, int step, double *seconds)
{
    struct xg_device_timer *t = &d->timer;
    if (t->n >= t->cap) {
        if (!seconds || t->cap < 2) return XG_OK;
        /* Full: add up what is there and go on from the last mark. */
        cudaEvent_t last = t->ev[t->cap - 1];
        int rc = xg_device_marks_done(d, seconds);
        if (rc) return rc;
        t->ev[t->cap - 1] = t->ev[0];
        t->ev[0] = last;
        t->step[0] = -1;
        t->n = 1;
    }
    t->step[t->n] = step;
    XG_CUDA_CHECK(cudaEventRecord(t->ev[t->n], d->stream), "timing event");
    ++t->n;
    return XG_OK;
}
