/** @file cost_model.h
 *  @brief The planner's cost model (seed 003 §9, seed 004 ch. 3 §4; Griffin,
 *         PPoPP 2018): predict a query's time on stock Xapian and on the
 *         GPU from what is known before running it, and route it to the
 *         faster one.
 *
 *  Features: the query's lists' document frequencies (shortest, sum), its
 *  number of lists, AND or OR, and the work already queued for the GPU.
 *  - stock Xapian, one thread: a power law scale * (1 + x)^exponent, with
 *    x the postings of all lists for OR and shortest * (lists - 1) for AND
 *    (its skip_to's).  Measured times span four decades and grow slower
 *    than linearly (max-weight pruning skips most of a long list): fitted
 *    in log space, the model's median error on the calibration queries is
 *    near 1x, where a straight line was off by 3-4x (docs/plugin.md).
 *    The planner keeps a query on stock only if it is faster even at the
 *    fit's 90th percentile of actual / predicted (the spread): a costly
 *    query wrongly kept on stock loses far more (stock's tail runs to
 *    hundreds of ms) than a cheap one wrongly sent to the GPU (a few ms);
 *  - the exact CPU matcher on an AND (where the front can use it: serve):
 *    the same law on the same probes, fitted to its own times;
 *  - GPU latency: the batch's wait (max_wait), the batches ahead of it at
 *    the dispatcher's measured batch time, and its own batch: a fixed cost
 *    and a cost per posting of its work (what the engine's batches decode:
 *    the shortest list for AND, every list for OR).
 *  `xapian-gpu calibrate` fits the coefficients on this machine and writes
 *  them to a file the plugin reads (docs/plugin.md); the built-in default
 *  is such a fit from an H100 host (docs/benchmarks.md).
 */
#ifndef XG_COST_MODEL_H
#define XG_COST_MODEL_H

#include <stdatomic.h>
#include <stdint.h>

#include "handle.h"

#ifdef __cplusplus
extern "C" {
#endif

struct xg_query_features {
    uint32_t n_lists;       /* distinct indexed terms */
    int is_and;             /* an AND of several operands */
    uint64_t shortest, sum; /* their document frequencies */
};

struct xg_cost_model {
    double stock_or_scale;      /* OR: seconds = scale * (1 + sum)^exp */
    double stock_or_exponent;
    double stock_and_scale;     /* AND: x = shortest * (lists - 1) */
    double stock_and_exponent;
    double stock_or_spread;     /* 90th percentile of actual / predicted */
    double stock_and_spread;
    /* The exact CPU matcher on an AND (one thread, the calling one), on
     * the same probes as stock's AND: where serve can answer from it, it
     * is the cheap side an AND is weighed against.  A model file without
     * these keys (an older calibrate) prices it as stock. */
    double cpu_and_scale;
    double cpu_and_exponent;
    double cpu_and_spread;
    /* The CPU matcher's top k of a flat OR without the count (the
     * Enquire front, match_ref.h's xg_match_ref_top), on the same
     * postings as stock's OR.  A model file without these keys prices
     * it as stock's OR, so the planner keeps such queries where it did. */
    double cpu_or_scale;
    double cpu_or_exponent;
    double cpu_or_spread;
    /* The CPU matcher's flat OR, its top k with the exact count (serve,
     * the matcher front), on the same postings.  Absent from a model file:
     * priced as stock's OR. */
    double cpu_or_count_scale;
    double cpu_or_count_exponent;
    double cpu_or_count_spread;
    double gpu_batch;           /* seconds per batch */
    double gpu_per_posting;     /* per posting of batch work */
    char source[200];           /* where the coefficients came from */
};

void xg_cost_model_default(struct xg_cost_model *m);

/* The CPU matcher's AND and OR laws set to stock's (no fit of their
 * own). */
void xg_cost_model_cpu_as_stock(struct xg_cost_model *m);
void xg_cost_model_cpu_or_as_stock(struct xg_cost_model *m);
void xg_cost_model_cpu_or_count_as_stock(struct xg_cost_model *m);

/* Read a model written by xg_cost_model_save.  XG_ERR_IO if the file
 * cannot be opened, XG_ERR_FORMAT (naming the file and line) if it is
 * malformed; *m is untouched on error. */
int xg_cost_model_load(const char *path, struct xg_cost_model *m);

/* Where calibrate writes the model and the context looks for it:
 * xapian-gpu.model in the index's directory.  malloc'd; NULL (with the
 * error set) when out of memory. */
char *xg_cost_model_path(const char *index_path);

/* Write atomically (temporary file, then rename); `comment` goes into the
 * header (device, date, command). */
int xg_cost_model_save(const char *path, const struct xg_cost_model *m,
                       const char *comment);

void xg_query_features_of(const struct xg_prepared *pq,
                          const struct xg_index *ix,
                          struct xg_query_features *f);

/* Postings the GPU engine works on for the query (its batch work). */
uint64_t xg_cost_gpu_work(const struct xg_query_features *f);

/* The predicted (median) one-thread time on stock Xapian. */
double xg_cost_stock_seconds(const struct xg_cost_model *m,
                             const struct xg_query_features *f);

/* The same at the model's 90th percentile (times the spread). */
double xg_cost_stock_seconds_p90(const struct xg_cost_model *m,
                                 const struct xg_query_features *f);

/* The CPU matcher's one-thread time, the median and at the model's 90th
 * percentile, by its own laws on stock's x: an AND (f->is_and), or a flat
 * OR, its top k with the exact count (counted: serve, the matcher
 * front) or for its top k without the count (the Enquire front).  Through
 * Enquire the accelerated query adds Xapian's own work, priced as stock's
 * OR of no posting (its law's scale): xg_cost_cpu_or_enquire_p90. */
double xg_cost_cpu_seconds(const struct xg_cost_model *m,
                           const struct xg_query_features *f, int counted);
double xg_cost_cpu_seconds_p90(const struct xg_cost_model *m,
                               const struct xg_query_features *f,
                               int counted);
double xg_cost_cpu_or_enquire_p90(const struct xg_cost_model *m,
                                  const struct xg_query_features *f);

/* The probes an AND's skip_to's make: its shortest list times the other
 * lists (the x of stock's and the CPU matcher's AND laws). */
double xg_cost_and_probes(const struct xg_query_features *f);

/* Latency on the GPU: the batching wait, the batches ahead of it (the one
 * on the device, if any, and one per full threshold of queued work: work
 * below it joins the query's batch), each taking `batch_seconds`, the
 * dispatcher's measured recent batch time, then its own batch as the
 * model prices it.  An idle GPU: queued 0, running 0.  The planner adds
 * the dispatcher's measured excess (dispatch.h): how much longer than
 * this recent queries took from submit to their caller running again,
 * such as waits for a core when every core is busy, which no batch time
 * shows. */
double xg_cost_gpu_seconds(const struct xg_cost_model *m,
                           const struct xg_query_features *f,
                           uint64_t queued, uint64_t batch_work, int running,
                           double batch_seconds, double max_wait);

/* What the planner learns from the times it sees (a search's CPU time in
 * its thread, as calibrate's one thread measures it), so that a model
 * fitted elsewhere (the built-in default) or before the machine changed
 * is scaled to what this one measures: for stock and the CPU matcher and
 * each operator, a running
 * mean (exponential, weight 1/32) of log(actual / predicted), each
 * observation clamped to a factor of e^3 either way.  Its factor
 * exp(mean) multiplies that side's prediction.  Lock-free; zeroed memory
 * is "nothing learned" (factor 1). */
enum xg_cost_side {
    XG_COST_STOCK,          /* stock Xapian, where its time is seen (serve) */
    XG_COST_CPU,            /* the exact CPU matcher */
    XG_COST_SIDES           /* the GPU's price is corrected by the
                               dispatcher's measured excess instead */
};
struct xg_cost_learned {
    _Atomic uint64_t mean_bits[XG_COST_SIDES][2];  /* double, [is_and] */
    _Atomic uint64_t seen[XG_COST_SIDES][2];
};
void xg_cost_learn(struct xg_cost_learned *l, int side, int is_and,
                   double predicted, double actual);
double xg_cost_learned_factor(const struct xg_cost_learned *l, int side,
                              int is_and);
uint64_t xg_cost_learned_seen(const struct xg_cost_learned *l, int side,
                              int is_and);

/* Least squares y = a + b x over n points (a, b >= 0); for calibrate's
 * GPU batches. */
void xg_cost_fit(const double *x, const double *y, uint32_t n, double *a,
                 double *b);

/* y = scale * (1 + x)^exponent by least squares of log y on log(1 + x)
 * over the points with y > 0 (exponent >= 0); for calibrate's stock
 * times. */
void xg_cost_fit_power(const double *x, const double *y, uint32_t n,
                       double *scale, double *exponent);

/* The 90th percentile of y / (scale * (1 + x)^exponent) over the points
 * with y > 0, at least 1 (n >= 1); sorts nothing in place. */
double xg_cost_spread(const double *x, const double *y, uint32_t n,
                      double scale, double exponent);

#ifdef __cplusplus
}
#endif
#endif
