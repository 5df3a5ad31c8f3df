/** @file engines.c
 *  @brief The engines `serve` answers with, and --reexport (engines.h).
 */
#include "engines.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../gpu/index/format_read.h"
#include "../../gpu/runtime/error.h"
#include "../../shim/xg_export.h"
#include "../cost_model.h"
#include "../router.h"
#include "relay.h"
#include "search.h"

/* A context and the connections holding it. */
struct held {
    xg_context *ctx;
    unsigned refs;
    struct held *next;          /* retired ones, waiting for their last */
};

struct xg_serve_engines {
    const struct xg_serve_opts *o;
    pthread_mutex_t mu;
    pthread_cond_t cv;          /* the re-export thread's sleep */
    struct held *cur;
    struct held *retired;
    uint64_t counts[XG_ROUTE_COUNT];    /* of closed contexts */
    struct xg_router_batches batches;   /* of closed contexts */
    int stopping;
    int thread_on;
    pthread_t thread;
};

static int open_context(const struct xg_serve_opts *o, xg_context **ctx)
{
    struct xg_context_opts co = XG_CONTEXT_DEFAULTS;
    co.engine = o->engine;
    co.device_memory = o->device_memory;
    co.max_wait_ms = o->batch_wait_ms;
    co.wait_spin_ms = o->gpu_spin_ms;
    co.gpu_lanes = o->gpu_lanes;
    int rc = xg_context_open_remote((const char *const *)o->dbs,
                                    (size_t)o->ndb, NULL, &co, ctx);
    if (!rc) xg_router_limit_cpu(xg_context_router(*ctx), (unsigned)o->threads);
    return rc;
}

/* What c's planner learned from the times it saw (cost_model.h): the
 * factor on each side's prediction and how many times taught it. */
static void log_learned(xg_context *c)
{
    const struct xg_cost_learned *l = xg_router_learned(xg_context_router(c));
    xg_serve_log("planner learned (times measured / predicted): stock "
                 "x%.2f OR (%llu searches), x%.2f AND (%llu); CPU matcher "
                 "x%.2f AND (%llu)",
                 xg_cost_learned_factor(l, XG_COST_STOCK, 0),
                 (unsigned long long)xg_cost_learned_seen(l, XG_COST_STOCK, 0),
                 xg_cost_learned_factor(l, XG_COST_STOCK, 1),
                 (unsigned long long)xg_cost_learned_seen(l, XG_COST_STOCK, 1),
                 xg_cost_learned_factor(l, XG_COST_CPU, 1),
                 (unsigned long long)xg_cost_learned_seen(l, XG_COST_CPU, 1));
}

/* How many searches ran on the host's CPU at once, under --threads. */
static void log_cpu_peak(const struct xg_serve_opts *o, xg_context *c)
{
    xg_serve_log("searches on the host's CPU at once: at most %u "
                 "(--threads %d)", xg_router_cpu_peak(xg_context_router(c)),
                 o->threads);
}

/* Add c's routes to the closed total and close it (not under mu). */
static void retire_close(struct xg_serve_engines *e, xg_context *c)
{
    if (e->o->engine == XG_ENGINE_AUTO) log_learned(c);
    if (e->o->threads) log_cpu_peak(e->o, c);
    char why[1024];
    xg_context_unserved(c, why, sizeof why);
    if (*why) xg_serve_log("stock:unsupported by reason: %s", why);
    uint64_t counts[XG_ROUTE_COUNT];
    xg_context_routes(c, counts);
    struct xg_router_batches b;
    xg_router_batches(xg_context_router(c), &b);
    pthread_mutex_lock(&e->mu);
    for (int i = 0; i < XG_ROUTE_COUNT; ++i) e->counts[i] += counts[i];
    struct xg_router_batches *t = &e->batches;
    if (b.lanes > t->lanes) t->lanes = b.lanes;
    t->batches += b.batches;
    t->queries += b.queries;
    t->inline_batches += b.inline_batches;
    t->busy_seconds += b.busy_seconds;
    t->build_seconds += b.build_seconds;
    t->run_seconds += b.run_seconds;
    t->device_seconds += b.device_seconds;
    t->finish_seconds += b.finish_seconds;
    pthread_mutex_unlock(&e->mu);
    xg_context_close(c);
}

/* Whether the database has moved past the index of ctx (or it has none). */
static int stale(xg_context *ctx)
{
    if (!xg_context_index(ctx)) return 1;
    xg_handle *h;
    if (xg_context_open_handle(ctx, &h)) return 0;  /* try again later */
    int moved = xg_handle_index(h) == NULL;
    xg_handle_close(h);
    return moved;
}

/* The export options of the index ctx serves (its Bloom filters, hash
 * segments, block-bound parameters and impacts), so a re-export keeps what
 * the operator chose; the defaults when it has none. */
static void export_opts_of(xg_context *ctx, struct xg_export_opts *eo)
{
    xg_export_opts_init(eo);
    const struct xg_index *ix = xg_context_index(ctx);
    if (!ix) return;
    const struct xg_fmt_header *h = ix->hdr;
    eo->bloom_bits_per_posting = h->bloom_bits_per_posting;
    eo->bloom_hashes = h->bloom_hashes;
    eo->hashseg_target = h->hashseg_target;
    eo->bm25.k1 = h->bm25_k1;
    eo->bm25.b = h->bm25_b;
    eo->bm25.min_normlen = h->bm25_min_normlen;
    eo->impacts = (h->flags & XG_FMT_FLAG_IMPACTS) != 0;
}

/* Write a new index of the databases where the context reads it. */
static int reexport(const struct xg_serve_opts *o,
                    const struct xg_export_opts *eo, double *seconds)
{
    xg_db *db;
    if (xg_shim_db_open((const char *const *)o->dbs, (size_t)o->ndb, &db))
        return -1;
    char *path = xg_fmt_default_path(o->dbs[0]);
    struct xg_export_report rep;
    int rc = path ? xg_export(db, path, eo, &rep)
                  : xg_set_error(XG_ERR_NOMEM, "out of memory");
    if (!rc) *seconds = rep.seconds;
    free(path);
    xg_shim_db_close(db);
    return rc ? -1 : 0;
}

static void *reexport_thread(void *arg)
{
    struct xg_serve_engines *e = arg;
    const double every = e->o->reexport_every > 0 ? e->o->reexport_every : 2;
    /* After a failed re-export (an unwritable directory, say) the checks
     * back off, to 64 periods at most, instead of exporting and logging
     * every period. */
    unsigned failures = 0;
    pthread_mutex_lock(&e->mu);
    while (!e->stopping) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        const double wait = every * (double)(1u << failures);
        const double when = (double)ts.tv_nsec * 1e-9 + wait;
        ts.tv_sec += (time_t)when;
        ts.tv_nsec = (long)((when - (double)(time_t)when) * 1e9);
        pthread_cond_timedwait(&e->cv, &e->mu, &ts);
        if (e->stopping) break;
        struct held *cur = e->cur;
        ++cur->refs;
        pthread_mutex_unlock(&e->mu);
        const int moved = stale(cur->ctx);
        struct xg_export_opts eo;
        export_opts_of(cur->ctx, &eo);
        xg_serve_engines_release(e, cur->ctx);
        xg_context *fresh = NULL;
        double secs = 0;
        if (moved) {
            xg_serve_log("reexport: the database has moved past the index; "
                         "exporting");
            if (reexport(e->o, &eo, &secs)) {
                xg_serve_log("reexport: %s", xg_last_error());
            } else if (open_context(e->o, &fresh)) {
                xg_serve_log("reexport: %s", xg_last_error());
                fresh = NULL;
            } else if (!xg_context_index(fresh)) {
                /* Written again meanwhile: the next round exports anew. */
                xg_serve_log("reexport: %s", xg_context_index_error(fresh));
                retire_close(e, fresh);
                fresh = NULL;
            }
        }
        if (!moved || fresh) failures = 0;
        else if (failures < 6) ++failures;
        pthread_mutex_lock(&e->mu);
        if (!fresh) continue;
        struct held *h = calloc(1, sizeof *h);
        if (!h) {
            pthread_mutex_unlock(&e->mu);
            xg_serve_log("reexport: out of memory");
            retire_close(e, fresh);
            pthread_mutex_lock(&e->mu);
            continue;
        }
        h->ctx = fresh;
        struct held *old = e->cur;
        e->cur = h;
        const struct xg_index *ix = xg_context_index(fresh);
        xg_serve_log("reexport: %llu documents in %.1f s; new connections "
                     "search the new index", (unsigned long long)ix->hdr->n_docs,
                     secs);
        if (old->refs == 0) {
            pthread_mutex_unlock(&e->mu);
            retire_close(e, old->ctx);
            free(old);
            pthread_mutex_lock(&e->mu);
        } else {
            old->next = e->retired;
            e->retired = old;
        }
    }
    pthread_mutex_unlock(&e->mu);
    return NULL;
}

int xg_serve_engines_open(const struct xg_serve_opts *o,
                          struct xg_serve_engines **out)
{
    struct xg_serve_engines *e = calloc(1, sizeof *e);
    struct held *h = calloc(1, sizeof *h);
    *out = NULL;
    if (!e || !h) {
        free(e);
        free(h);
        xg_serve_log("out of memory");
        return 1;
    }
    e->o = o;
    pthread_mutex_init(&e->mu, NULL);
    pthread_cond_init(&e->cv, NULL);
    if (open_context(o, &h->ctx)) {
        xg_serve_log("%s", xg_last_error());
        free(h);
        free(e);
        return 1;
    }
    e->cur = h;
    if (o->reexport) {
        int rc = pthread_create(&e->thread, NULL, reexport_thread, e);
        if (rc) {
            xg_serve_log("reexport: cannot start a thread: %s", strerror(rc));
            xg_serve_engines_close(e);
            return 1;
        }
        e->thread_on = 1;
    }
    *out = e;
    return 0;
}

static struct held *find(struct xg_serve_engines *e, xg_context *ctx,
                         struct held ***link)
{
    if (e->cur->ctx == ctx) {
        *link = NULL;
        return e->cur;
    }
    for (struct held **p = &e->retired; *p; p = &(*p)->next)
        if ((*p)->ctx == ctx) {
            *link = p;
            return *p;
        }
    return NULL;
}

xg_context *xg_serve_engines_acquire(struct xg_serve_engines *e)
{
    if (!e) return NULL;
    pthread_mutex_lock(&e->mu);
    ++e->cur->refs;
    xg_context *c = e->cur->ctx;
    pthread_mutex_unlock(&e->mu);
    return c;
}

void xg_serve_engines_release(struct xg_serve_engines *e, xg_context *ctx)
{
    if (!e || !ctx) return;
    struct held **link, *gone = NULL;
    pthread_mutex_lock(&e->mu);
    struct held *h = find(e, ctx, &link);
    if (h && --h->refs == 0 && link) {
        *link = h->next;        /* retired and unheld: close it */
        gone = h;
    }
    pthread_mutex_unlock(&e->mu);
    if (gone) {
        retire_close(e, gone->ctx);
        free(gone);
    }
}

xg_context *xg_serve_engines_current(struct xg_serve_engines *e)
{
    return e ? e->cur->ctx : NULL;
}

void xg_serve_engines_close(struct xg_serve_engines *e)
{
    if (!e) return;
    if (e->thread_on) {
        pthread_mutex_lock(&e->mu);
        e->stopping = 1;
        pthread_cond_broadcast(&e->cv);
        pthread_mutex_unlock(&e->mu);
        pthread_join(e->thread, NULL);
    }
    while (e->retired) {
        struct held *h = e->retired;
        e->retired = h->next;
        retire_close(e, h->ctx);
        free(h);
    }
    retire_close(e, e->cur->ctx);
    free(e->cur);
    /* "routes: gpu N cpu N stock:REASON N ...", every context's. */
    char line[600];
    size_t n = (size_t)snprintf(line, sizeof line, "routes:");
    for (int i = 0; i < XG_ROUTE_COUNT && n < sizeof line; ++i)
        if (e->counts[i] || i <= XG_ROUTE_CPU)
            n += (size_t)snprintf(line + n, sizeof line - n, " %s %llu",
                                  xg_route_name(i),
                                  (unsigned long long)e->counts[i]);
    xg_serve_log("%s", line);
    uint64_t sent, dropped;
    xg_serve_search_ahead_counts(&sent, &dropped);
    if (sent || dropped)
        xg_serve_log("searches answered ahead of their MSG_GETMSET: %llu "
                     "sent, %llu answered again (another top k asked)",
                     (unsigned long long)sent, (unsigned long long)dropped);
    const struct xg_router_batches *b = &e->batches;
    if (b->batches)
        xg_serve_log("gpu batches: %llu of %.1f searches on average; the "
                     "batch threads (%u lanes) busy %.3f s: build %.3f, run "
                     "%.3f (device %.3f), finish %.3f; %llu alone on "
                     "their caller's thread",
                     (unsigned long long)b->batches,
                     (double)b->queries / (double)b->batches, b->lanes,
                     b->busy_seconds,
                     b->build_seconds, b->run_seconds, b->device_seconds,
                     b->finish_seconds,
                     (unsigned long long)b->inline_batches);
    pthread_cond_destroy(&e->cv);
    pthread_mutex_destroy(&e->mu);
    free(e);
}
