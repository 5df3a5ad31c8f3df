/** @file staging.c
 *  @brief Pinned double-buffered copies with multi-threaded host copies
 *         (staging.h).
 */
#include "staging.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_check.h"
#include "threads.h"

static void copy(const struct xg_staging *s, char *dst, const char *src, size_t n)
{
    xg_threads_memcpy(dst, src, n, s->threads);
}

void xg_staging_init(struct xg_staging *s, cudaStream_t stream, uint32_t threads)
{
    memset(s, 0, sizeof *s);
    s->stream = stream;
    s->threads = threads ? threads : 1;
}

/* One pair of pinned buffers outlives its engine, for the process's next
 * one: pinning 2 x 32 MB took about 40 ms and unpinning 11 ms on the H100
 * host (a host probe, docs/benchmarks-archive.md), more than a 500 MB weight
 * run's copies.  Like the CUDA context, it is set up once per process. */
static pthread_mutex_t kept_mu = PTHREAD_MUTEX_INITIALIZER;
static char *kept[2];

void xg_staging_free(struct xg_staging *s)
{
    xg_staging_unpin(s);
    xg_staging_unlock(s);
    if (s->stream) cudaStreamSynchronize(s->stream);
    pthread_mutex_lock(&kept_mu);
    if (s->h[0] && s->h[1] && !kept[0]) {
        kept[0] = s->h[0];
        kept[1] = s->h[1];
        s->h[0] = s->h[1] = NULL;
    }
    pthread_mutex_unlock(&kept_mu);
    for (int b = 0; b < 2; ++b) {
        if (s->h[b]) cudaFreeHost(s->h[b]);
        if (s->ev[b]) cudaEventDestroy(s->ev[b]);
    }
    if (s->ahead) {
        cudaEventDestroy(s->ahead_start);
        cudaEventDestroy(s->ahead_done);
        cudaStreamDestroy(s->ahead);
    }
    memset(s, 0, sizeof *s);
}

/* The kept pair, if no other engine holds it. */
static int take_kept(struct xg_staging *s)
{
    pthread_mutex_lock(&kept_mu);
    const int ok = kept[0] != NULL;
    if (ok) {
        s->h[0] = kept[0];
        s->h[1] = kept[1];
        kept[0] = kept[1] = NULL;
    }
    pthread_mutex_unlock(&kept_mu);
    return ok;
}

/* The pinned buffers, allocated once; 0 where the device refuses them
 * (then copies go direct, slower but right). */
static int ready(struct xg_staging *s)
{
    if (s->failed) return 0;
    if (s->h[1]) return 1;
    const int have = take_kept(s);
    for (int b = 0; b < 2; ++b)
        if ((!have && cudaHostAlloc((void **)&s->h[b], XG_STAGING_PIECE,
                                    cudaHostAllocDefault)) ||
            cudaEventCreateWithFlags(&s->ev[b], cudaEventDisableTiming)) {
            cudaGetLastError();
            s->failed = 1;
            return 0;
        }
    /* Recorded once, so the first wait on each buffer returns at once. */
    for (int b = 0; b < 2; ++b)
        if (cudaEventRecord(s->ev[b], s->stream)) {
            cudaGetLastError();
            s->failed = 1;
            return 0;
        }
    return 1;
}

/* Pieces of a quarter of the copy (whole MB, 1 to XG_STAGING_PIECE MB),
 * so that a copy of a few MB overlaps its host copies with its DMA too. */
static size_t piece_for(size_t n)
{
    size_t p = (n / 4 + ((size_t)1 << 20) - 1) >> 20 << 20;
    if (p < ((size_t)1 << 20)) p = (size_t)1 << 20;
    return p < XG_STAGING_PIECE ? p : XG_STAGING_PIECE;
}

/* Segments of the locked input: the first from the buffer's start, the
 * others on page boundaries (two registrations may not share a page). */
#ifdef XG_STAGING_SEG
#define SEG_BYTES ((size_t)XG_STAGING_SEG)   /* tests: many segments */
#else
#define SEG_BYTES ((size_t)16 << 20)
#endif

static const char *seg_start(const struct xg_staging *s, size_t i)
{
    if (i == 0) return s->src_lo;
    if (i >= s->n_segs) return s->src_lo + s->src_n;
    const uintptr_t base = (uintptr_t)s->src_lo & ~(uintptr_t)4095;
    return (const char *)(base + i * SEG_BYTES);
}

/* The segment holding c (within the buffer). */
static size_t seg_of(const struct xg_staging *s, const char *c)
{
    const uintptr_t base = (uintptr_t)s->src_lo & ~(uintptr_t)4095;
    return ((uintptr_t)c - base) / SEG_BYTES;
}

/* The end of the locked part so far. */
static const char *locked_end(struct xg_staging *s)
{
    return seg_start(s, atomic_load_explicit(&s->n_locked, memory_order_acquire));
}

static void *locker_main(void *arg)
{
    struct xg_staging *s = arg;
    for (size_t i = 0; i < s->n_segs && !atomic_load(&s->stop); ++i) {
        /* Read-only where the device allows it (the buffer may be a
         * read-only mapping), else plain; failing both, the rest stages. */
        void *at = (void *)seg_start(s, i);
        const size_t m = (size_t)(seg_start(s, i + 1) - (const char *)at);
        if (cudaHostRegister(at, m, cudaHostRegisterReadOnly) &&
            cudaHostRegister(at, m, cudaHostRegisterDefault)) {
            cudaGetLastError();
            break;
        }
        atomic_store_explicit(&s->n_locked, i + 1, memory_order_release);
    }
    return NULL;
}

void xg_staging_pin(struct xg_staging *s, const void *p, size_t n)
{
    xg_staging_unpin(s);
    if (!n) return;
    s->src_lo = p;
    s->src_n = n;
    const uintptr_t base = (uintptr_t)p & ~(uintptr_t)4095;
    s->n_segs = ((uintptr_t)p + n - base + SEG_BYTES - 1) / SEG_BYTES;
    atomic_store(&s->n_locked, 0);
    atomic_store(&s->stop, 0);
    s->locker_on = pthread_create(&s->locker, NULL, locker_main, s) == 0;
    if (!s->locker_on) s->src_lo = NULL;
}

void xg_staging_unpin(struct xg_staging *s)
{
    /* A copy ahead reads the locked input. */
    xg_staging_drop(s);
    if (s->locker_on) {
        atomic_store(&s->stop, 1);
        pthread_join(s->locker, NULL);
        s->locker_on = 0;
    }
    const size_t locked = atomic_load(&s->n_locked);
    if (locked && s->stream) cudaStreamSynchronize(s->stream);
    for (size_t i = 0; i < locked; ++i) cudaHostUnregister((void *)seg_start(s, i));
    cudaGetLastError();
    s->src_lo = NULL;
    s->src_n = s->n_segs = 0;
    atomic_store(&s->n_locked, 0);
}

/* [c, c + n) within the locked part: one DMA per segment it spans (a
 * copy may not cross a registration's end), on stream st. */
static int htod_locked(struct xg_staging *s, cudaStream_t st, void *d_dst, const char *c,
                       size_t n)
{
    for (size_t i = seg_of(s, c), done = 0; done < n; ++i) {
        const size_t room = (size_t)(seg_start(s, i + 1) - (c + done));
        const size_t m = room < n - done ? room : n - done;
        XG_CUDA_CHECK(cudaMemcpyAsync((char *)d_dst + done, c + done, m,
                                      cudaMemcpyHostToDevice, st), "copy to device");
        done += m;
    }
    return XG_OK;
}

void xg_staging_prefetch(struct xg_staging *s, void *d_dst, const void *src, size_t n)
{
    const char *c = src;
    if (s->ahead_dst || !n || !s->src_lo || c < s->src_lo || c + n > locked_end(s)) return;
    if (!s->ahead) {
        cudaStream_t st = NULL;
        cudaEvent_t e0 = NULL, e1 = NULL;
        if (cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking) ||
            cudaEventCreateWithFlags(&e0, cudaEventDisableTiming) ||
            cudaEventCreateWithFlags(&e1, cudaEventDisableTiming)) {
            cudaGetLastError();
            if (e0) cudaEventDestroy(e0);
            if (st) cudaStreamDestroy(st);
            return;
        }
        s->ahead = st;
        s->ahead_start = e0;
        s->ahead_done = e1;
    }
    /* After the owner's work so far: it may still read d_dst. */
    if (cudaEventRecord(s->ahead_start, s->stream) ||
        cudaStreamWaitEvent(s->ahead, s->ahead_start, 0) ||
        htod_locked(s, s->ahead, d_dst, c, n) ||
        cudaEventRecord(s->ahead_done, s->ahead)) {
        cudaGetLastError();
        xg_staging_drop(s);
        return;
    }
    s->ahead_dst = d_dst;
    s->ahead_src = c;
    s->ahead_n = n;
}

void *xg_staging_claim(struct xg_staging *s, const void *src, size_t n)
{
    void *d = s->ahead_dst;
    if (!d || s->ahead_src != (const char *)src || s->ahead_n != n ||
        cudaStreamWaitEvent(s->stream, s->ahead_done, 0)) {
        cudaGetLastError();
        xg_staging_drop(s);
        return NULL;
    }
    s->ahead_dst = NULL;
    return d;
}

void xg_staging_drop(struct xg_staging *s)
{
    if (s->ahead) cudaStreamSynchronize(s->ahead);
    s->ahead_dst = NULL;
}

int xg_staging_htod(struct xg_staging *s, void *d_dst, const void *src, size_t n)
{
    if (!n) return XG_OK;
    const char *c = src;
    const char *hi = s->src_lo ? locked_end(s) : NULL;
    if (s->src_lo && c >= s->src_lo && c < hi) {
        /* The locked part by DMA, the rest as any other copy. */
        const size_t in = (size_t)(hi - c) < n ? (size_t)(hi - c) : n;
        const int rc = htod_locked(s, s->stream, d_dst, c, in);
        if (rc || in == n) return rc;
        return xg_staging_htod(s, (char *)d_dst + in, c + in, n - in);
    }
    if (n < XG_STAGING_MIN || !ready(s)) {
        /* From pageable memory the call returns once src is staged.  In
         * the input, one segment at a time: the locker may register the
         * segment meanwhile, and a copy may not cross a registration. */
        size_t m = n;
        if (s->src_lo && c >= s->src_lo && c < s->src_lo + s->src_n) {
            const size_t room = (size_t)(seg_start(s, seg_of(s, c) + 1) - c);
            if (room < m) m = room;
        }
        XG_CUDA_CHECK(cudaMemcpyAsync(d_dst, src, m, cudaMemcpyHostToDevice, s->stream),
                      "copy to device");
        return m == n ? XG_OK : xg_staging_htod(s, (char *)d_dst + m, c + m, n - m);
    }
    const size_t piece = piece_for(n);
    for (size_t off = 0, k = 0; off < n; off += piece, ++k) {
        const size_t m = n - off < piece ? n - off : piece;
        const int b = (int)(k & 1);
        XG_CUDA_CHECK(cudaEventSynchronize(s->ev[b]), "staging wait");
        copy(s, s->h[b], (const char *)src + off, m);
        XG_CUDA_CHECK(cudaMemcpyAsync((char *)d_dst + off, s->h[b], m,
                                      cudaMemcpyHostToDevice, s->stream), "copy to device");
        XG_CUDA_CHECK(cudaEventRecord(s->ev[b], s->stream), "staging event");
    }
    return XG_OK;
}

int xg_staging_lock(struct xg_staging *s, void *p, size_t n)
{
    for (int i = 0; i < XG_STAGING_LOCKS; ++i)
        if (!s->dst[i]) {
            if (cudaHostRegister(p, n, cudaHostRegisterDefault)) {
                cudaGetLastError();
                return 1;
            }
            s->dst[i] = p;
            s->dst_n[i] = n;
            return 0;
        }
    return 1;
}

void xg_staging_unlock(struct xg_staging *s)
{
    if (s->stream) cudaStreamSynchronize(s->stream);
    for (int i = 0; i < XG_STAGING_LOCKS; ++i)
        if (s->dst[i]) {
            cudaHostUnregister(s->dst[i]);
            s->dst[i] = NULL;
        }
    cudaGetLastError();
}

static int locked_dst(const struct xg_staging *s, const char *d, size_t n)
{
    for (int i = 0; i < XG_STAGING_LOCKS; ++i)
        if (s->dst[i] && d >= s->dst[i] && d + n <= s->dst[i] + s->dst_n[i]) return 1;
    return 0;
}

int xg_staging_dtoh(struct xg_staging *s, void *dst, const void *d_src, size_t n)
{
    if (!n) return XG_OK;
    if (n < XG_STAGING_MIN || locked_dst(s, dst, n) || !ready(s)) {
        XG_CUDA_CHECK(cudaMemcpyAsync(dst, d_src, n, cudaMemcpyDeviceToHost, s->stream),
                      "copy to host");
        XG_CUDA_CHECK(cudaStreamSynchronize(s->stream), "copy to host");
        return XG_OK;
    }
    /* Piece k comes over into buffer k & 1 while piece k - 1 is copied
     * out of the other; a buffer is free again before piece k + 2. */
    size_t prev_off = 0, prev_m = 0;
    const size_t piece = piece_for(n);
    for (size_t off = 0, k = 0;; off += piece, ++k) {
        const int b = (int)(k & 1);
        const size_t m = off < n ? (n - off < piece ? n - off : piece) : 0;
        if (m) {
            XG_CUDA_CHECK(cudaMemcpyAsync(s->h[b], (const char *)d_src + off, m,
                                          cudaMemcpyDeviceToHost, s->stream),
                          "copy to host");
            XG_CUDA_CHECK(cudaEventRecord(s->ev[b], s->stream), "staging event");
        }
        if (prev_m) {
            XG_CUDA_CHECK(cudaEventSynchronize(s->ev[!b]), "staging wait");
            copy(s, (char *)dst + prev_off, s->h[!b], prev_m);
        }
        if (!m) break;
        prev_off = off;
        prev_m = m;
    }
    return XG_OK;
}
