/** @file staging.h
 *  @brief Large copies between pageable host memory and the device through
 *         two pinned buffers: each piece's DMA overlaps the host's copy of
 *         the piece before (or after) it, and the host copies run on
 *         several threads, since one core's memcpy into freshly allocated
 *         pages (their first touch) is slower than the bus.  Shared by the
 *         weight and qlm GPU engines and the GPU dictionary.  Built only
 *         with CUDA.
 */
#ifndef XG_STAGING_H
#define XG_STAGING_H

#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define XG_STAGING_PIECE ((size_t)32 << 20)  /* bytes per pinned buffer */
#define XG_STAGING_MIN ((size_t)1 << 20)     /* smaller copies go direct */
#define XG_STAGING_LOCKS 4

struct xg_staging {
    cudaStream_t stream;    /* the owner's; the copies are ordered on it */
    uint32_t threads;       /* host copy threads */
    char *h[2];             /* pinned, allocated at the first large copy */
    cudaEvent_t ev[2];      /* the last DMA from or into h[b] */
    int failed;             /* no pinned memory: every copy goes direct */
    /* The caller's buffer that a thread page-locks (xg_staging_pin),
     * [src_lo, src_lo + src_n), segment by segment (16 MB, on page
     * boundaries but for the first: staging.c's seg_start); the first
     * n_locked are locked, and copies from there go straight to the
     * DMA, one per segment. */
    const char *src_lo;
    size_t src_n, n_segs;
    _Atomic size_t n_locked;
    _Atomic int stop;
    pthread_t locker;
    int locker_on;
    /* Host memory the caller locked as a destination (xg_staging_lock). */
    char *dst[XG_STAGING_LOCKS];
    size_t dst_n[XG_STAGING_LOCKS];
    /* One copy ahead (xg_staging_prefetch), on a stream of its own. */
    cudaStream_t ahead;
    cudaEvent_t ahead_start, ahead_done;
    void *ahead_dst;
    const char *ahead_src;
    size_t ahead_n;
};

/* Nothing is allocated until the first large copy. */
void xg_staging_init(struct xg_staging *s, cudaStream_t stream, uint32_t threads);
/* Waits for the stream, then frees the buffers; one pair is kept for the
 * process's next staging (pinning them costs more than a large copy). */
void xg_staging_free(struct xg_staging *s);

/* Page-lock the caller's buffer [p, p + n) for the copies from it (the
 * weight engine's input, which crosses twice when it runs in chunks):
 * they then go by DMA alone, asynchronously; the buffer must stay as it
 * is until xg_staging_unpin.  Locking costs about 42 ms per GB on the
 * host (H100 host), so only for data that crosses more than once, and on
 * a thread of its own, front to back, while the caller works: a copy from
 * a part not yet locked (or if locking fails) stages as before. */
void xg_staging_pin(struct xg_staging *s, const void *p, size_t n);
void xg_staging_unpin(struct xg_staging *s);

/* Page-lock [p, p + n) (already touched: locking faults pages in on one
 * thread) as a destination: copies into it then go by DMA alone instead
 * of through the pinned buffers and the host's copies.  0: locked; else
 * copies stage as before.  Unlocked by xg_staging_unlock or at free. */
int xg_staging_lock(struct xg_staging *s, void *p, size_t n);
void xg_staging_unlock(struct xg_staging *s);

/* Seed 001's overlap: start copying [src, src + n) into d_dst on a second
 * stream, after the owner's stream's work so far (which may still read
 * d_dst), so that it runs while the owner's stream computes.  Only from
 * the locked part of the input (DMA alone, no host thread); otherwise, or
 * when a copy ahead is still unclaimed, nothing happens. */
void xg_staging_prefetch(struct xg_staging *s, void *d_dst, const void *src, size_t n);
/* The device buffer that the copy ahead of exactly [src, src + n) went
 * to, the owner's stream made to wait for it; or NULL (no such copy: the
 * caller copies as usual).  Any other copy ahead is dropped. */
void *xg_staging_claim(struct xg_staging *s, const void *src, size_t n);
/* Wait for and forget a copy ahead (before its buffer is freed). */
void xg_staging_drop(struct xg_staging *s);

/* Host to device: returns once src may be reused (the DMA may still be
 * running; work queued on the stream after it sees the bytes). */
int xg_staging_htod(struct xg_staging *s, void *d_dst, const void *src, size_t n);
/* Device to host, after the stream's work so far: returns once dst holds
 * the bytes. */
int xg_staging_dtoh(struct xg_staging *s, void *dst, const void *d_src, size_t n);

#endif
