/** @file dispatch.c
 *  @brief The GPU dispatcher (see dispatch.h): a queue of waiting queries,
 *         one batch thread, and the three ways a batch closes.
 *
 *  Callers enqueue an item on their own stack and sleep on its own
 *  semaphore; the batch thread marks its batch's items done and posts each
 *  one's.  (One shared condition variable, broadcast after every batch,
 *  woke every waiting thread to take the mutex in turn: with 64 threads
 *  that was 64 wake-ups and lock hand-offs per batch.)
 *  A batch takes queries in arrival order up to max_batch and the work
 *  threshold (always at least one).  With two lanes, the thread that is
 *  free takes the next batch: what arrives while one batch runs goes out
 *  on the other lane at once.
 *
 *  A query that finds the GPU idle (no lane with a batch, nothing
 *  queued) runs as a batch of one on its caller's thread, on a lane it
 *  claims meanwhile: no lane thread to wake, no caller to wake back.
 *  What arrives meanwhile goes to the other lanes as before.
 */
#include "dispatch.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../gpu/query/batch.h"
#include "../gpu/runtime/error.h"
#include "excess.h"

enum { QUEUED, RUNNING, DONE };

struct item {
    struct xg_prepared *pq;
    uint32_t k;
    uint64_t work;
    double t_enq;
    int state, status, outcome;
    struct xg_result res;
    struct xg_later later;          /* res's last step, on the caller's
                                       thread (xg_engine_search) */
    struct item *next;
    sem_t done;                     /* posted once, when state is DONE */
};

struct lane {
    struct xg_dispatch *d;
    xg_handle *h;
    pthread_t thread;
    int started;
    int active;                     /* under mu: running a batch, or
                                       claimed by a caller running its
                                       own query on this lane */
    int claimed;                    /* under mu: by such a caller */
    struct item **items;            /* its running batch */
};

struct xg_dispatch {
    struct lane lanes[XG_DISPATCH_MAX_LANES];
    uint32_t n_lanes;
    struct xg_dispatch_opts o;
    pthread_mutex_t mu;
    pthread_cond_t work_cv;
    struct item *head;
    uint32_t n_queued;
    _Atomic uint64_t queued_work;   /* written under mu, read without it:
                                       every query's cost check reads it */
    _Atomic int running;            /* lanes in run_batch */
    _Atomic uint64_t batch_ns;      /* smoothed wall time of a batch */
    struct xg_excess excess;        /* wait beyond the prediction */
    unsigned run_inline;            /* XG_DISPATCH_INLINE_* */
    uint32_t n_active;              /* under mu: lanes active */
    int stop;
    struct xg_dispatch_stats st;
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void wait_until(pthread_cond_t *cv, pthread_mutex_t *mu, double t)
{
    struct timespec ts;
    ts.tv_sec = (time_t)t;
    ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
        ++ts.tv_sec;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(cv, mu, &ts);
}

static void unlink_item(struct xg_dispatch *d, struct item *it)
{
    for (struct item **p = &d->head; *p; p = &(*p)->next)
        if (*p == it) {
            *p = it->next;
            --d->n_queued;
            d->queued_work -= it->work;
            return;
        }
}

/* Run one batch: items[] are RUNNING and out of the queue; called
 * without the lock.  Each item gets the engine's status for it. */
static void run_batch(struct xg_dispatch *d, xg_handle *h, struct item **items,
                      uint32_t n)
{
    struct xg_prepared **pqs = malloc(n * sizeof *pqs);
    uint32_t *ks = malloc(n * sizeof *ks);
    struct xg_result *res = calloc(n, sizeof *res);
    struct xg_later *later = calloc(n, sizeof *later);
    int *status = calloc(n, sizeof *status);
    int rc = XG_ERR_NOMEM;
    if (pqs && ks && res && later && status) {
        for (uint32_t i = 0; i < n; ++i) {
            pqs[i] = items[i]->pq;
            ks[i] = items[i]->k;
        }
        /* Each query's candidates go into MSet order on its caller's
         * thread: on one batch thread that took 30% of its time at 64
         * application threads (top 10), 65% at top 1000. */
        rc = xg_handle_run_gpu(h, pqs, ks, 0, n, &d->o.bm25, res, later,
                               status);
    } else {
        xg_set_error(XG_ERR_NOMEM, "GPU dispatcher: out of memory");
    }
    for (uint32_t i = 0; i < n; ++i) {
        struct item *it = items[i];
        it->status = status && later ? status[i] : rc;
        if (!status || !later) continue;
        if (status[i] == XG_OK) {
            it->res = res[i];
            it->later = later[i];
        } else {
            memset(&it->res, 0, sizeof it->res);
        }
    }
    free(pqs);
    free(ks);
    free(res);
    free(later);
    free(status);
}

/* run_batch on lane ln, its wall time counted in the load the cost
 * model reads; returns that time. */
static double timed_batch(struct xg_dispatch *d, struct lane *ln,
                          struct item **items, uint32_t n)
{
    atomic_fetch_add(&d->running, 1);
    const double t0 = now();
    run_batch(d, ln->h, items, n);
    const double busy = now() - t0;
    const uint64_t ns = (uint64_t)(busy * 1e9);
    const uint64_t old = atomic_load(&d->batch_ns);
    atomic_store(&d->batch_ns, old ? (3 * old + ns) / 4 : ns);
    atomic_fetch_sub(&d->running, 1);
    return busy;
}

static int any_claimed(const struct xg_dispatch *d)
{
    for (uint32_t i = 0; i < d->n_lanes; ++i)
        if (d->lanes[i].claimed) return 1;
    return 0;
}

/* Under mu: the lane a query submitted now runs on by itself, or NULL
 * when it must queue (run_inline's rule). */
static struct lane *lane_for_caller(struct xg_dispatch *d)
{
    if (d->stop || d->head || d->run_inline == XG_DISPATCH_INLINE_OFF)
        return NULL;
    if (d->run_inline == XG_DISPATCH_INLINE_IDLE && d->n_active) return NULL;
    for (uint32_t i = 0; i < d->n_lanes; ++i)
        if (!d->lanes[i].active) return &d->lanes[i];
    return NULL;
}

static void *batch_thread(void *arg)
{
    struct lane *ln = arg;
    struct xg_dispatch *d = ln->d;
    struct item **items = ln->items;
    pthread_mutex_lock(&d->mu);
    for (;;) {
        /* A claimed lane waits for its caller, stopping or not. */
        while (ln->claimed || (!d->stop && !d->head))
            pthread_cond_wait(&d->work_cv, &d->mu);
        if (!d->head) break; /* stopping, nothing left */
        /* Close the batch: full, enough work, or the oldest waited. */
        while (!d->stop && d->head && d->n_queued < d->o.max_batch &&
               d->queued_work < d->o.batch_work &&
               now() < d->head->t_enq + d->o.max_wait)
            wait_until(&d->work_cv, &d->mu, d->head->t_enq + d->o.max_wait);
        /* Withdrawn at their deadlines, or taken by the other lane while
         * a caller claimed this one. */
        if (!d->head || ln->claimed) continue;
        uint32_t n = 0;
        uint64_t work = 0;
        while (d->head && n < d->o.max_batch &&
               (!n || !d->o.batch_work ||
                work + d->head->work <= d->o.batch_work)) {
            struct item *it = d->head;
            unlink_item(d, it);
            it->state = RUNNING;
            items[n++] = it;
            work += it->work;
        }
        ln->active = 1;
        ++d->n_active;
        pthread_mutex_unlock(&d->mu);
        const double busy = timed_batch(d, ln, items, n);
        pthread_mutex_lock(&d->mu);
        for (uint32_t i = 0; i < n; ++i) items[i]->state = DONE;
        ln->active = 0;
        --d->n_active;
        ++d->st.batches;
        d->st.queries += n;
        d->st.busy_seconds += busy;
        pthread_mutex_unlock(&d->mu);
        /* The last touch of each item: its caller may return at once. */
        for (uint32_t i = 0; i < n; ++i) sem_post(&items[i]->done);
        pthread_mutex_lock(&d->mu);
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

int xg_dispatch_start(xg_handle *const *lanes, uint32_t n_lanes,
                      const struct xg_dispatch_opts *o,
                      struct xg_dispatch **out)
{
    *out = NULL;
    if (!n_lanes || n_lanes > XG_DISPATCH_MAX_LANES)
        return xg_set_error(XG_ERR_ARG, "GPU dispatcher: %u lanes", n_lanes);
    struct xg_dispatch *d = calloc(1, sizeof *d);
    if (!d) return xg_set_error(XG_ERR_NOMEM, "out of memory");
    d->o = *o;
    if (!d->o.max_batch) d->o.max_batch = 256;
    d->run_inline = xg_knob_dispatch_inline();
    d->n_lanes = n_lanes;
    pthread_mutex_init(&d->mu, NULL);
    pthread_cond_init(&d->work_cv, NULL);
    int rc = XG_OK;
    for (uint32_t i = 0; i < n_lanes && !rc; ++i) {
        struct lane *ln = &d->lanes[i];
        ln->d = d;
        ln->h = lanes[i];
        if (!(ln->items = malloc(d->o.max_batch * sizeof *ln->items)))
            rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
        else if (pthread_create(&ln->thread, NULL, batch_thread, ln))
            rc = xg_set_error(XG_ERR_NOMEM, "cannot start the GPU dispatcher");
        else
            ln->started = 1;
    }
    if (rc) {
        xg_dispatch_stop(d);
        return rc;
    }
    *out = d;
    return XG_OK;
}

void xg_dispatch_stop(struct xg_dispatch *d)
{
    if (!d) return;
    pthread_mutex_lock(&d->mu);
    d->stop = 1;
    pthread_cond_broadcast(&d->work_cv);
    pthread_mutex_unlock(&d->mu);
    for (uint32_t i = 0; i < d->n_lanes; ++i) {
        if (d->lanes[i].started) pthread_join(d->lanes[i].thread, NULL);
        free(d->lanes[i].items);
    }
    pthread_mutex_destroy(&d->mu);
    pthread_cond_destroy(&d->work_cv);
    free(d);
}

/* A ran item's last step, on its caller's thread. */
static int finish_item(struct xg_dispatch *d, struct item *it,
                       double predicted, struct xg_result *out, int *status,
                       int *outcome)
{
    if (it->status == XG_OK) it->status = xg_later_finish(&it->later, &it->res);
    const double t = now();
    xg_excess_note(&d->excess, t, t - it->t_enq, predicted);
    *out = it->res;
    *status = it->status;
    *outcome = XG_DISPATCH_RAN;
    return XG_OK;
}

int xg_dispatch_submit(struct xg_dispatch *d, struct xg_prepared *pq,
                       uint32_t k, uint64_t work, double predicted,
                       struct xg_result *out, int *status, int *outcome)
{
    struct item it;
    memset(&it, 0, sizeof it);
    memset(out, 0, sizeof *out);
    *status = XG_OK;
    it.pq = pq;
    it.k = k;
    it.work = work;
    pthread_mutex_lock(&d->mu);
    if (d->stop) {
        pthread_mutex_unlock(&d->mu);
        *outcome = XG_DISPATCH_STOPPED;
        return XG_OK;
    }
    if (sem_init(&it.done, 0, 0)) {
        pthread_mutex_unlock(&d->mu);
        return xg_set_error(XG_ERR_NOMEM, "GPU dispatcher: sem_init failed");
    }
    it.t_enq = now();
    struct lane *own = lane_for_caller(d);
    if (own) {
        own->active = own->claimed = 1;
        ++d->n_active;
        it.state = RUNNING;
        pthread_mutex_unlock(&d->mu);
        struct item *one = &it;
        const double busy = timed_batch(d, own, &one, 1);
        pthread_mutex_lock(&d->mu);
        own->active = own->claimed = 0;
        --d->n_active;
        ++d->st.batches;
        ++d->st.inline_batches;
        ++d->st.queries;
        d->st.busy_seconds += busy;
        /* Its thread may have woken to a query it could not take. */
        if (d->head || d->stop) pthread_cond_broadcast(&d->work_cv);
        pthread_mutex_unlock(&d->mu);
        sem_destroy(&it.done);
        return finish_item(d, &it, predicted, out, status, outcome);
    }
    struct item **p = &d->head;
    while (*p) p = &(*p)->next;
    *p = &it;
    ++d->n_queued;
    d->queued_work += work;
    /* A claimed lane's thread would take the signal and wait on. */
    if (any_claimed(d))
        pthread_cond_broadcast(&d->work_cv);
    else
        pthread_cond_signal(&d->work_cv);
    pthread_mutex_unlock(&d->mu);
    if (d->o.deadline > 0) {
        /* Still queued at the deadline: withdraw and let stock answer.
         * Already taken into a batch: wait for it, however long. */
        const double until = it.t_enq + d->o.deadline;
        struct timespec ts = {(time_t)until,
                              (long)((until - (time_t)until) * 1e9)};
        int r;
        while ((r = sem_timedwait(&it.done, &ts)) && errno == EINTR) {}
        if (r) {
            pthread_mutex_lock(&d->mu);
            if (it.state == QUEUED) {
                unlink_item(d, &it);
                ++d->st.deadline_misses;
                pthread_cond_signal(&d->work_cv);
                pthread_mutex_unlock(&d->mu);
                sem_destroy(&it.done);
                *outcome = XG_DISPATCH_WITHDRAWN;
                return XG_OK;
            }
            pthread_mutex_unlock(&d->mu);
            while (sem_wait(&it.done) && errno == EINTR) {}
        }
    } else {
        while (sem_wait(&it.done) && errno == EINTR) {}
    }
    sem_destroy(&it.done);
    return finish_item(d, &it, predicted, out, status, outcome);
}

void xg_dispatch_load(struct xg_dispatch *d, struct xg_dispatch_load *l)
{
    l->queued_work = atomic_load_explicit(&d->queued_work,
                                          memory_order_relaxed);
    l->batch_work = d->o.batch_work;
    l->running = (uint32_t)atomic_load_explicit(&d->running,
                                                memory_order_relaxed) >=
                 d->n_lanes;
    l->batch_seconds =
        atomic_load_explicit(&d->batch_ns, memory_order_relaxed) * 1e-9;
    l->excess = xg_excess_at(&d->excess, now());
}

void xg_dispatch_stats(struct xg_dispatch *d, struct xg_dispatch_stats *st)
{
    pthread_mutex_lock(&d->mu);
    *st = d->st;
    pthread_mutex_unlock(&d->mu);
}
