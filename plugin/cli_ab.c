/** @file cli_ab.c
 *  @brief xapian-gpu ab / bench: answer a query file with several engines,
 *         check every MSet equals the first engine's, and time them.
 *
 *  `ab` is the operator's proof on their own data: one thread per engine,
 *  engines one after the other.  `bench` is the same run built for
 *  throughput: the stock matcher and the CPU matcher run one matcher per
 *  thread (default: every core), the GPU runs batches.  Equality is exact:
 *  same docids, same order, bit-equal weights.
 */
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../gpu/error.h"
#include "cli.h"
#include "cli_search_opts.h"
#include "searcher.h"
#include "xg_config.h"

static const char help_ab[] =
    "usage: xapian-gpu ab --db DB --queries FILE [OPTIONS]\n"
    "Answer every query with each engine, check the MSets are identical to\n"
    "the first engine's, and print throughput and latency per engine.\n"
    "  --engines LIST          comma-separated from xapian,cpu,gpu,auto\n"
    "                          (default xapian,cpu; xapian,cpu,gpu with a GPU)\n"
    "  --threads N             matchers in parallel for xapian and cpu (1)\n"
    "  --batch B               queries per GPU batch (256)\n"
    "  --json=OUT              write the figures as JSON to OUT\n"
    "  plus the options of 'xapian-gpu search' (--db, --index, -k, --op,\n"
    "  --stem, --stopper, --bm25).  Exit status 1 if any MSet differs.\n";

static const char help_bench[] =
    "usage: xapian-gpu bench --db DB --queries FILE [OPTIONS]\n"
    "Throughput run: the stock matcher and the CPU matcher with one matcher\n"
    "per thread (default: all cores), the GPU in batches; checks every MSet\n"
    "against the first engine's and prints queries/s, mean, p50 and p99\n"
    "latency and the ratios.  Options as for 'xapian-gpu ab'.\n";

#define MAX_ENGINES 4

struct engine_run {
    const char *name;
    int engine;
    struct xg_result *res;      /* per query */
    int *status;
    double *lat;                /* per query seconds */
    double wall;                /* whole run */
    uint32_t served;
};

struct job {
    struct xg_cli_search_args *a;
    struct xg_cli_queries *qs;
    struct engine_run *run;
    uint32_t next;              /* shared query counter */
    pthread_mutex_t lock;
    int rc;
    char err[512];
    xg_searcher **pool;         /* one opened searcher per thread */
    uint32_t pool_next;
};

/* The calling thread's searcher from the pool (opened before timing). */
static xg_searcher *pool_take(struct job *j)
{
    pthread_mutex_lock(&j->lock);
    xg_searcher *s = j->pool[j->pool_next++];
    pthread_mutex_unlock(&j->lock);
    return s;
}

static uint32_t take(struct job *j)
{
    pthread_mutex_lock(&j->lock);
    uint32_t i = j->next++;
    pthread_mutex_unlock(&j->lock);
    return i;
}

static void fail(struct job *j)
{
    pthread_mutex_lock(&j->lock);
    if (!j->rc) {
        j->rc = 1;
        snprintf(j->err, sizeof j->err, "%s", xg_last_error());
    }
    j->next = UINT32_MAX / 2;
    pthread_mutex_unlock(&j->lock);
}

/* One matcher thread (xapian or cpu): its own searcher, queries from the
 * shared counter. */
static void *matcher_thread(void *arg)
{
    struct job *j = arg;
    xg_searcher *s = pool_take(j);
    struct xg_search_opts o = j->a->opts;
    o.engine = j->run->engine;
    for (uint32_t i; (i = take(j)) < j->qs->n;) {
        double t = xg_cli_now();
        int rc = xg_searcher_search(s, j->qs->text[i], &o, &j->run->res[i]);
        j->run->lat[i] = xg_cli_now() - t;
        j->run->status[i] = rc;
        if (rc && rc != XG_ERR_UNSUPPORTED && rc != XG_ERR_ARG) {
            fail(j);
            break;
        }
    }
    return NULL;
}

static int run_threads(struct xg_cli_search_args *a, struct xg_cli_queries *qs,
                       struct engine_run *run, uint32_t threads,
                       xg_searcher **pool)
{
    struct job j = {a, qs, run, 0, PTHREAD_MUTEX_INITIALIZER, 0, "", pool, 0};
    pthread_t *t = calloc(threads, sizeof *t);
    if (!t) return xg_set_error(XG_ERR_NOMEM, "out of memory");
    double t0 = xg_cli_now();
    uint32_t started = 0;
    for (; started < threads; ++started)
        if (pthread_create(&t[started], NULL, matcher_thread, &j)) break;
    for (uint32_t i = 0; i < started; ++i) pthread_join(t[i], NULL);
    run->wall = xg_cli_now() - t0;
    free(t);
    if (j.rc) return xg_set_error(XG_ERR_IO, "%s", j.err);
    if (!started) return xg_set_error(XG_ERR_NOMEM, "cannot start threads");
    return XG_OK;
}

struct prep_job {
    struct job j;
    struct xg_prepared **pq;
    uint8_t *done;              /* per query: prepared (or failed) */
};

/* A preparing thread: QueryParser, conversion, term ids and plans, with
 * its own searcher (Xapian objects are not shared between threads), as the
 * application threads of a real deployment each prepare their own query. */
static void *prepare_thread(void *arg)
{
    struct prep_job *pj = arg;
    struct job *j = &pj->j;
    xg_searcher *s = pool_take(j);
    struct xg_search_opts o = j->a->opts;
    for (uint32_t i; (i = take(j)) < j->qs->n;) {
        double t = xg_cli_now();
        xg_xquery *xq = NULL;
        int rc = xg_searcher_parse(s, j->qs->text[i], &o, &xq);
        if (!rc) rc = xg_searcher_prepare(s, xq, &pj->pq[i]);
        if (xq) xg_shim_xquery_free(xq);
        j->run->status[i] = rc;
        j->run->lat[i] = xg_cli_now() - t; /* its own preparation */
        __atomic_store_n(&pj->done[i], 1, __ATOMIC_RELEASE);
        if (rc && rc != XG_ERR_UNSUPPORTED && rc != XG_ERR_ARG) {
            fail(j);
            break;
        }
    }
    return NULL;
}

/* The GPU engine.  Threads prepare the queries, as an application's
 * threads each prepare their own; the main thread meanwhile takes them in
 * order and runs batches of B as soon as they are ready, so preparing and
 * the device overlap as they would in a deployment. */
static int run_gpu(xg_searcher *s, struct xg_cli_search_args *a,
                   struct xg_cli_queries *qs, struct engine_run *run,
                   uint32_t batch, uint32_t threads, xg_searcher **pool)
{
    struct xg_search_opts o = a->opts;
    o.engine = run->engine;
    struct prep_job pj = {{a, qs, run, 0, PTHREAD_MUTEX_INITIALIZER, 0, "",
                           pool, 0},
                          calloc(qs->n + 1, sizeof(struct xg_prepared *)),
                          calloc(qs->n + 1, 1)};
    struct xg_prepared **ready = calloc(batch, sizeof *ready);
    uint32_t *idx = calloc(batch, sizeof *idx);
    struct xg_result *res = calloc(batch, sizeof *res);
    int *st = calloc(batch, sizeof *st);
    pthread_t *t = calloc(threads, sizeof *t);
    int rc = XG_OK;
    uint32_t started = 0;
    if (!pj.pq || !pj.done || !ready || !idx || !res || !st || !t) {
        rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
        goto done;
    }
    double t0 = xg_cli_now();
    for (; started < threads; ++started)
        if (pthread_create(&t[started], NULL, prepare_thread, &pj)) break;
    if (!started) {
        rc = xg_set_error(XG_ERR_NOMEM, "cannot start threads");
        goto done;
    }
    for (uint32_t next = 0; next < qs->n && !rc;) {
        /* Gather the next prepared queries, in order, up to a batch. */
        uint32_t cnt = 0;
        while (next < qs->n && cnt < batch) {
            while (!__atomic_load_n(&pj.done[next], __ATOMIC_ACQUIRE)) {
                pthread_mutex_lock(&pj.j.lock);
                int failed = pj.j.rc;
                pthread_mutex_unlock(&pj.j.lock);
                if (failed) break;
                sched_yield();
            }
            if (!__atomic_load_n(&pj.done[next], __ATOMIC_ACQUIRE)) break;
            if (pj.pq[next]) {
                ready[cnt] = pj.pq[next];
                idx[cnt++] = next;
            }
            ++next;
        }
        if (pj.j.rc) break;
        if (!cnt) continue;
        double tb = xg_cli_now();
        rc = xg_searcher_run_prepared(s, ready, cnt, &o, res, st);
        if (!rc && o.default_and == 2) {
            const char *texts[1024];
            for (uint32_t i = 0; i < cnt; ++i) texts[i] = qs->text[idx[i]];
            rc = xg_searcher_andor_finish(s, texts, cnt, &o, res, st);
        }
        tb = xg_cli_now() - tb;
        for (uint32_t i = 0; i < cnt && !rc; ++i) {
            uint32_t q = idx[i];
            run->res[q] = res[i];
            run->status[q] = st[i];
            /* A query waits for its own preparation, then its batch. */
            run->lat[q] += tb;
        }
    }
    run->wall = xg_cli_now() - t0;
done:
    for (uint32_t i = 0; i < started; ++i) pthread_join(t[i], NULL);
    if (!rc && pj.j.rc) rc = xg_set_error(XG_ERR_IO, "%s", pj.j.err);
    if (pj.pq)
        for (uint32_t i = 0; i < qs->n; ++i) xg_prepared_free(pj.pq[i]);
    free(pj.pq);
    free(pj.done);
    free(ready);
    free(idx);
    free(res);
    free(st);
    free(t);
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int same_mset(const struct xg_result *a, const struct xg_result *b)
{
    if (a->n_hits != b->n_hits) return 0;
    for (uint32_t i = 0; i < a->n_hits; ++i)
        if (a->hits[i].docid != b->hits[i].docid ||
            memcmp(&a->hits[i].weight, &b->hits[i].weight, sizeof(double)))
            return 0;
    return 1;
}

static int parse_engine(const char *tok, int *engine)
{
    static const char *names[] = {"xapian", "cpu", "gpu", "auto"};
    for (int i = 0; i < 4; ++i)
        if (!strcmp(tok, names[i])) {
            *engine = i;
            return 0;
        }
    return -1;
}

static int ab_main(const char *cmd, int argc, char **argv, int bench)
{
    struct xg_cli_search_args a;
    int rc = xg_cli_search_args_parse(cmd, argc, argv,
                                      bench ? help_bench : help_ab, &a);
    if (rc >= 0) return rc;
    if (!a.queries) return xg_cli_usage(cmd, "--queries FILE is required");
    uint32_t threads = a.threads ? a.threads
                                 : bench ? (uint32_t)sysconf(_SC_NPROCESSORS_ONLN)
                                         : 1;
    uint32_t batch = a.batch ? a.batch : 256;
    struct engine_run runs[MAX_ENGINES];
    int n_eng = 0;
    char list[256];
    memset(runs, 0, sizeof runs);

    struct xg_cli_queries qs;
    if (xg_cli_queries_load(a.queries, &qs)) return xg_cli_fail();
    xg_searcher *s;
    if (xg_searcher_open((const char *const *)a.dbs, a.n_dbs, a.index, &s)) {
        xg_cli_queries_free(&qs);
        return xg_cli_fail();
    }
    xg_searcher_set_engine_opts(s, &a.engine_opts);
    const char *why = NULL;
    int have_gpu = xg_searcher_index_error(s) == NULL &&
                   xg_searcher_gpu_status(s, &why) == XG_OK;
    snprintf(list, sizeof list, "%s",
             a.engines ? a.engines : have_gpu ? "xapian,cpu,gpu" : "xapian,cpu");
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        if (n_eng == MAX_ENGINES) {
            rc = xg_cli_usage(cmd, "too many engines");
            goto out;
        }
        if (parse_engine(tok, &runs[n_eng].engine)) {
            rc = xg_cli_usage(cmd, "unknown engine '%s' (xapian, cpu, gpu, "
                              "auto)", tok);
            goto out;
        }
        static const char *names[] = {"xapian", "cpu", "gpu", "auto"};
        runs[n_eng].name = names[runs[n_eng].engine];
        ++n_eng;
    }
    for (int e = 0; e < n_eng; ++e) {
        int eng = runs[e].engine;
        if (eng != XG_ENGINE_XAPIAN && xg_searcher_index_error(s)) {
            fprintf(stderr, "xapian-gpu: %s\n", xg_searcher_index_error(s));
            rc = 1;
            goto out;
        }
        if (eng == XG_ENGINE_GPU && !have_gpu) {
            fprintf(stderr, "xapian-gpu: %s\n", why ? why : "no GPU");
            rc = 1;
            goto out;
        }
    }
    /* One searcher per thread, opened before any clock starts: Xapian
     * handles of their own, the verified index shared. */
    xg_searcher **pool = calloc(threads, sizeof *pool);
    if (!pool) {
        rc = (xg_set_error(XG_ERR_NOMEM, "out of memory"), xg_cli_fail());
        goto out;
    }
    rc = 0;
    for (uint32_t i = 0; i < threads && !rc; ++i)
        if (xg_searcher_clone(s, (const char *const *)a.dbs, a.n_dbs,
                              &pool[i]))
            rc = xg_cli_fail();
    for (int e = 0; e < n_eng && !rc; ++e) {
        struct engine_run *r = &runs[e];
        r->res = calloc(qs.n + 1, sizeof *r->res);
        r->status = calloc(qs.n + 1, sizeof *r->status);
        r->lat = calloc(qs.n + 1, sizeof *r->lat);
        if (!r->res || !r->status || !r->lat) {
            rc = (xg_set_error(XG_ERR_NOMEM, "out of memory"), xg_cli_fail());
            break;
        }
        int err = r->engine == XG_ENGINE_GPU || r->engine == XG_ENGINE_AUTO
                      ? run_gpu(s, &a, &qs, r, batch, threads, pool)
                      : run_threads(&a, &qs, r, threads, pool);
        if (err) rc = xg_cli_fail();
    }
    for (uint32_t i = 0; i < threads; ++i) xg_searcher_close(pool[i]);
    free(pool);
    if (rc) goto out;

    uint32_t identical = 0, different = 0, unsupported = 0, rejected = 0,
             est_cmp = 0, est_equal = 0;
    double *lat = calloc(qs.n + 1, sizeof *lat);
    uint8_t *all = calloc(qs.n + 1, 1);
    for (uint32_t i = 0; i < qs.n; ++i) {
        int ok = 1;
        for (int e = 0; e < n_eng; ++e) {
            if (runs[e].status[i] == XG_ERR_ARG) { ++rejected; ok = 0; break; }
            if (runs[e].status[i]) { ++unsupported; ok = 0; break; }
        }
        if (!ok) continue;
        all[i] = 1;
        for (int e = 1; e < n_eng; ++e) {
            if (same_mset(&runs[0].res[i], &runs[e].res[i])) {
                ++identical;
            } else {
                ++different;
                fprintf(stderr, "xapian-gpu %s: query %s: %s differs from %s\n",
                        cmd, qs.qid[i], runs[e].name, runs[0].name);
            }
            if (runs[0].res[i].n_hits < a.opts.k) {
                ++est_cmp;
                est_equal += runs[0].res[i].matches_estimated ==
                             runs[e].res[i].matches_estimated;
            }
        }
    }
    printf("queries %u: compared %u MSets, identical %u, different %u; "
           "unsupported %u, rejected by QueryParser %u\n", qs.n,
           identical + different, identical, different, unsupported,
           rejected);
    printf("match counts compared where the reference is exact: %u of %u "
           "equal\n", est_equal, est_cmp);
    if (bench)
        printf("threads %u (xapian, cpu), GPU batch %u, k %u, op %s\n",
               threads, batch, a.opts.k,
               a.opts.default_and == 2 ? "andor"
                                       : a.opts.default_and ? "and" : "or");
    printf("%-8s %9s %11s %10s %10s %10s %8s\n", "engine", "queries",
           "queries/s", "mean ms", "p50 ms", "p99 ms", "ratio");
    FILE *jf = a.json_out ? fopen(a.json_out, "w") : NULL;
    if (a.json_out && !jf) {
        fprintf(stderr, "xapian-gpu: %s: cannot write\n", a.json_out);
        rc = 1;
    }
    if (jf)
        fprintf(jf, "{\"queries\":%u,\"identical\":%u,\"different\":%u,"
                "\"unsupported\":%u,\"threads\":%u,\"batch\":%u,\"k\":%u,"
                "\"engines\":[", qs.n, identical, different, unsupported,
                threads, batch, a.opts.k);
    double qps0 = 0;
    for (int e = 0; e < n_eng; ++e) {
        uint32_t n = 0;
        double sum = 0;
        for (uint32_t i = 0; i < qs.n; ++i)
            if (all[i]) {
                lat[n++] = runs[e].lat[i];
                sum += runs[e].lat[i];
            }
        qsort(lat, n, sizeof *lat, cmp_double);
        double qps = runs[e].wall > 0 ? qs.n / runs[e].wall : 0;
        if (e == 0) qps0 = qps;
        double mean = n ? sum / n : 0, p50 = n ? lat[n / 2] : 0,
               p99 = n ? lat[(uint32_t)(0.99 * (n - 1))] : 0;
        printf("%-8s %9u %11.0f %10.3f %10.3f %10.3f %7.1fx\n", runs[e].name,
               qs.n, qps, mean * 1e3, p50 * 1e3, p99 * 1e3,
               qps0 > 0 ? qps / qps0 : 0);
        if (jf)
            fprintf(jf, "%s{\"engine\":\"%s\",\"qps\":%.1f,\"mean_ms\":%.4f,"
                    "\"p50_ms\":%.4f,\"p99_ms\":%.4f}", e ? "," : "",
                    runs[e].name, qps, mean * 1e3, p50 * 1e3, p99 * 1e3);
    }
    if (jf) {
        fprintf(jf, "]}\n");
        fclose(jf);
    }
    const struct xg_engine_stats *gs = xg_searcher_gpu_stats(s);
    if (gs && gs->queries) {
        printf("gpu engine: %llu queries, %llu served on the device, %llu by "
               "the CPU matcher; %llu batches, %.3f s device time\n",
               (unsigned long long)gs->queries, (unsigned long long)gs->served,
               (unsigned long long)gs->to_cpu,
               (unsigned long long)gs->batches, gs->device_seconds);
        if (gs->cache_pool)
            printf("list cache: %llu bytes; %llu hits, %llu misses, %llu "
                   "evictions, %llu bytes loaded; %llu batch splits\n",
                   (unsigned long long)gs->cache_pool,
                   (unsigned long long)gs->cache_hits,
                   (unsigned long long)gs->cache_misses,
                   (unsigned long long)gs->cache_evictions,
                   (unsigned long long)gs->cache_bytes_loaded,
                   (unsigned long long)gs->batch_splits);
    } else {
        printf("gpu engine: %s\n", have_gpu ? "not used" : why ? why : "none");
    }
    free(lat);
    free(all);
    if (different) rc = 1;
out:
    for (int e = 0; e < n_eng; ++e) {
        if (runs[e].res)
            for (uint32_t i = 0; i < qs.n; ++i) xg_result_free(&runs[e].res[i]);
        free(runs[e].res);
        free(runs[e].status);
        free(runs[e].lat);
    }
    xg_searcher_close(s);
    xg_cli_queries_free(&qs);
    return rc;
}

int xg_cli_ab(int argc, char **argv) { return ab_main("ab", argc, argv, 0); }

int xg_cli_bench(int argc, char **argv)
{
    return ab_main("bench", argc, argv, 1);
}
