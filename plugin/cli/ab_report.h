/** @file ab_report.h
 *  @brief The operator's A/B report of `xapian-gpu ab` and `bench`: TREC
 *         qrels, effectiveness metrics (AP, P@k, nDCG@k), top-k overlap,
 *         and the self-contained HTML report.
 *
 *  cli_ab.c runs the engines and fills struct xg_ab_report; everything
 *  here is computation on ranked lists (struct xg_hit, in MSet order) or
 *  writing, so tests/test_ab_report.c checks it without a database.
 *  Fallible functions return enum xg_status and set xg_last_error().
 */
#ifndef XG_AB_REPORT_H
#define XG_AB_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "../xapian-gpu.h"

/* ---- TREC qrels ------------------------------------------------------ */

/* One judgement: a Xapian docid and its graded relevance (> 0: relevant). */
struct xg_qrel {
    uint32_t docid;
    int32_t rel;
};

/* The judgements of one query, sorted by docid. */
struct xg_qrels_query {
    const char *qid;
    const struct xg_qrel *j;
    uint32_t n;                 /* judgements */
    uint32_t n_rel;             /* judgements with rel > 0 */
};

/* A whole qrels file; queries sorted by qid (strcmp). */
struct xg_qrels {
    uint32_t n_queries;
    struct xg_qrels_query *q;
    struct xg_qrel *j;          /* every judgement, grouped by query */
    char *qids;                 /* the qid strings q[i].qid point into */
};

/* Read "qid iter docid rel" lines (whitespace separated; iter ignored,
 * blank lines skipped) from f; `name` is the file name for messages.
 * Returns XG_OK, XG_ERR_FORMAT with "NAME:LINE: ..." for a line without
 * exactly four fields, a docid outside 1..2^32-1, a rel that is not an
 * integer, or a (qid, docid) judged twice; XG_ERR_IO on a read error;
 * XG_ERR_NOMEM.  *out is only set on success. */
int xg_qrels_read(FILE *f, const char *name, struct xg_qrels *out);

/* xg_qrels_read() on the file at path; XG_ERR_IO if it cannot be opened. */
int xg_qrels_load(const char *path, struct xg_qrels *out);

void xg_qrels_free(struct xg_qrels *q);

/* The judgements of qid, or NULL if it has none. */
const struct xg_qrels_query *xg_qrels_find(const struct xg_qrels *q,
                                           const char *qid);

/* The rel of docid (0 if unjudged). */
int32_t xg_qrels_rel(const struct xg_qrels_query *jq, uint32_t docid);

/* ---- Metrics on one ranked list (hits[0..n), best first) -------------- */

/* Average precision: the precision at the rank of each relevant hit,
 * summed and divided by jq->n_rel (relevant documents judged, returned or
 * not).  0 when jq->n_rel is 0. */
double xg_ab_ap(const struct xg_qrels_query *jq, const struct xg_hit *hits,
                uint32_t n);

/* Precision at depth d: relevant hits among the first d, over d (a list
 * shorter than d counts its missing ranks as not relevant). */
double xg_ab_precision(const struct xg_qrels_query *jq,
                       const struct xg_hit *hits, uint32_t n, uint32_t d);

/* nDCG at depth d: sum of rel_i / log2(i + 1) over ranks i = 1..d (gain
 * rel, unjudged and negative rels 0), divided by the same sum over the
 * judged rels in descending order.  0 when no judged rel is positive. */
double xg_ab_ndcg(const struct xg_qrels_query *jq, const struct xg_hit *hits,
                  uint32_t n, uint32_t d);

/* |top-k(ref) ∩ top-k(e)| / max(1, min(k, n_ref)), by docid; 1 when both
 * lists are empty (they agree).  scratch holds min(k, n_ref) + min(k, n_e)
 * docids. */
double xg_ab_overlap(const struct xg_hit *ref, uint32_t n_ref,
                     const struct xg_hit *e, uint32_t n_e, uint32_t k,
                     uint32_t *scratch);

/* ---- The report --------------------------------------------------------- */

#define XG_AB_MAX_ENGINES 6
/* ab --repeat: timed passes of each engine, at most. */
#define XG_AB_MAX_PASSES 9
#define XG_AB_MAX_DIFF_QUERIES 3   /* first differing queries shown */

/* Which matcher answered a query. */
enum xg_ab_route {
    XG_AB_ROUTE_XAPIAN, XG_AB_ROUTE_CPU, XG_AB_ROUTE_GPU, XG_AB_N_ROUTES
};

/* The names of enum xg_ab_route: "xapian", "cpu", "gpu". */
extern const char *const xg_ab_route_names[XG_AB_N_ROUTES];

struct xg_ab_engine {
    const char *name;
    double qps, mean_ms, p50_ms, p99_ms, ratio;  /* ratio: qps / ref qps */
    uint32_t n_passes;          /* ab --repeat: qps is the median pass's */
    double pass_qps[XG_AB_MAX_PASSES];
    double cpu_us, cores;       /* the median pass: host CPU a query, and
                                   CPU seconds over wall seconds */
    double overlap;             /* overlap@k with engine 0 (not for 0) */
    uint32_t routing[XG_AB_N_ROUTES];  /* queries each matcher answered */
    int has_reasons;            /* the plugin engine: its planner's routes */
    uint64_t reasons[XG_ROUTE_COUNT];
    double map, p10, ndcg10;    /* means over the judged queries */
    const double *lat;          /* per query seconds; read where answered[i] */
};

/* A query whose MSet from engine `engine` differs from engine 0's. */
struct xg_ab_diff {
    const char *qid, *text;
    uint32_t engine;
    const struct xg_result *ref, *got;
};

struct xg_ab_report {
    const char *cmd;            /* "ab" or "bench" */
    const char *queries_path;
    const char *qrels_path;     /* NULL: no qrels, no metrics */
    uint32_t stock_self;    /* MSets where stock's top k is not its own
                               full ranking's and the engine's is */
    uint32_t k, n_queries, compared, identical, different, unsupported,
             rejected;
    uint32_t n_judged;          /* queries scored against the qrels */
    uint32_t n_eng;             /* engine 0 is the reference */
    struct xg_ab_engine eng[XG_AB_MAX_ENGINES];
    const uint8_t *answered;    /* per query: every engine answered it */
    const double *cost;         /* per query: sum of its terms' df */
    const char *cost_note;      /* why cost is all 0, or NULL */
    /* The planner's choices, judged by running both sides on every query
     * (engines xapian, plugin-gpu and plugin all run): of the queries the
     * plugin's cost model priced (sent to the GPU, or kept on stock as
     * cheaper) that plugin-gpu served on the GPU, how many went to the
     * side with the lower latency, and for how many that was the GPU. */
    int has_planner;
    uint32_t planner_priced, planner_right, planner_gpu_faster;
    uint32_t n_diffs;
    struct xg_ab_diff diffs[XG_AB_MAX_DIFF_QUERIES * (XG_AB_MAX_ENGINES - 1)];
};

/* Write the report as one HTML file with inline CSS and SVG (no scripts,
 * nothing fetched): summary, latency CDF per engine, speedup against query
 * cost per non-reference engine, routing bars, qrels metrics and the
 * first differences.  Written to PATH.tmp and renamed over path.  Returns
 * XG_OK, or XG_ERR_IO ("PATH: ...") with path untouched. */
int xg_ab_report_html(const struct xg_ab_report *r, const char *path);

#endif
