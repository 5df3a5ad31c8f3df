/** @file ab_report.c
 *  @brief TREC qrels, AP / P@k / nDCG@k, top-k overlap, and the HTML
 *         report of `xapian-gpu ab` and `bench` (ab_report.h).
 *
 *  Called by cli_ab.c after every engine has run; nothing here is timed.
 *  The metrics follow trec_eval's definitions except that nDCG uses the
 *  judged rel itself as gain (the brief of the A/B report), not 2^rel - 1.
 *  The HTML is one file with inline CSS and SVG so that it can be mailed
 *  and opened offline.
 */
#include "ab_report.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../gpu/runtime/error.h"
#include "../../gpu/runtime/outfile.h"

/* ---- qrels -------------------------------------------------------------- */

/* A judgement while reading: its qid is an offset into the string buffer,
 * which may still move. */
struct raw_qrel {
    size_t qid;
    uint32_t docid, line;
    int32_t rel;
};

/* The same once the buffer is final, sortable by (qid, docid). */
struct sorted_qrel {
    const char *qid;
    uint32_t docid, line;
    int32_t rel;
};

static int cmp_sorted(const void *a, const void *b)
{
    const struct sorted_qrel *x = a, *y = b;
    int c = strcmp(x->qid, y->qid);
    if (c) return c;
    return (x->docid > y->docid) - (x->docid < y->docid);
}

/* Parse a decimal integer filling the whole token; 0 on success. */
static int parse_int(const char *tok, long long lo, long long hi,
                     long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(tok, &end, 10);
    if (errno || end == tok || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

/* Group the sorted judgements into queries. */
static int build_qrels(struct sorted_qrel *s, size_t n, char *qids,
                       const char *name, struct xg_qrels *out)
{
    struct xg_qrel *j = malloc((n ? n : 1) * sizeof *j);
    uint32_t n_q = 0;
    for (size_t i = 0; i < n; ++i)
        n_q += i == 0 || strcmp(s[i].qid, s[i - 1].qid);
    struct xg_qrels_query *q = calloc(n_q ? n_q : 1, sizeof *q);
    if (!j || !q) {
        free(j);
        free(q);
        return xg_set_error(XG_ERR_NOMEM, "out of memory");
    }
    uint32_t qi = 0;
    for (size_t i = 0; i < n; ++i) {
        int first = i == 0 || strcmp(s[i].qid, s[i - 1].qid);
        if (!first && s[i].docid == s[i - 1].docid) {
            /* Report the later line: the one an editor would remove. */
            uint32_t a = s[i - 1].line, b = s[i].line;
            int rc = xg_set_error(XG_ERR_FORMAT,
                                  "%s:%u: query %s judges docid %u twice "
                                  "(also line %u)", name, a > b ? a : b,
                                  s[i].qid, s[i].docid, a < b ? a : b);
            free(j);
            free(q);
            return rc;
        }
        if (first) q[qi++] = (struct xg_qrels_query){s[i].qid, j + i, 0, 0};
        q[qi - 1].n++;
        q[qi - 1].n_rel += s[i].rel > 0;
        j[i] = (struct xg_qrel){s[i].docid, s[i].rel};
    }
    *out = (struct xg_qrels){n_q, q, j, qids};
    return XG_OK;
}

int xg_qrels_read(FILE *f, const char *name, struct xg_qrels *out)
{
    struct raw_qrel *r = NULL;
    size_t n = 0, cap = 0, qlen = 0, qcap = 0, last_qid = SIZE_MAX;
    char *qids = NULL, *line = NULL;
    size_t line_cap = 0;
    uint32_t lineno = 0;
    int rc = XG_OK;
    while (getline(&line, &line_cap, f) > 0) {
        ++lineno;
        char *tok[5], *save;
        int nt = 0;
        for (char *t = strtok_r(line, " \t\r\n\v\f", &save); t && nt < 5;
             t = strtok_r(NULL, " \t\r\n\v\f", &save))
            tok[nt++] = t;
        if (nt == 0) continue;
        long long docid, rel;
        if (nt != 4) {
            rc = xg_set_error(XG_ERR_FORMAT, "%s:%u: expected 'qid iter docid "
                              "rel', found %s%d fields", name, lineno,
                              nt == 5 ? "more than " : "", nt == 5 ? 4 : nt);
            break;
        }
        if (parse_int(tok[2], 1, UINT32_MAX, &docid)) {
            rc = xg_set_error(XG_ERR_FORMAT, "%s:%u: docid '%s' is not an "
                              "integer in 1..4294967295", name, lineno,
                              tok[2]);
            break;
        }
        if (parse_int(tok[3], INT32_MIN, INT32_MAX, &rel)) {
            rc = xg_set_error(XG_ERR_FORMAT, "%s:%u: rel '%s' is not an "
                              "integer", name, lineno, tok[3]);
            break;
        }
        /* Qrels come grouped by query: keep one copy of each run's qid. */
        size_t ql = strlen(tok[0]) + 1;
        if (last_qid == SIZE_MAX || strcmp(qids + last_qid, tok[0])) {
            if (qlen + ql > qcap) {
                size_t nc = (qlen + ql) * 2;
                char *nq = realloc(qids, nc);
                if (!nq) goto nomem;
                qids = nq;
                qcap = nc;
            }
            memcpy(qids + qlen, tok[0], ql);
            last_qid = qlen;
            qlen += ql;
        }
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 1024;
            struct raw_qrel *nr = realloc(r, nc * sizeof *nr);
            if (!nr) goto nomem;
            r = nr;
            cap = nc;
        }
        r[n++] = (struct raw_qrel){last_qid, (uint32_t)docid, lineno,
                                   (int32_t)rel};
    }
    if (!rc && ferror(f))
        rc = xg_set_error(XG_ERR_IO, "%s: read error: %s", name,
                          strerror(errno));
    struct sorted_qrel *s = NULL;
    if (!rc && !(s = malloc((n ? n : 1) * sizeof *s))) goto nomem;
    if (!rc) {
        for (size_t i = 0; i < n; ++i)
            s[i] = (struct sorted_qrel){qids + r[i].qid, r[i].docid,
                                        r[i].line, r[i].rel};
        qsort(s, n, sizeof *s, cmp_sorted);
        rc = build_qrels(s, n, qids, name, out);
    }
    free(s);
    free(r);
    free(line);
    if (rc) free(qids);
    return rc;
nomem:
    free(r);
    free(line);
    free(qids);
    return xg_set_error(XG_ERR_NOMEM, "out of memory");
}

int xg_qrels_load(const char *path, struct xg_qrels *out)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return xg_set_error(XG_ERR_IO, "%s: cannot open: %s", path,
                            strerror(errno));
    int rc = xg_qrels_read(f, path, out);
    fclose(f);
    return rc;
}

void xg_qrels_free(struct xg_qrels *q)
{
    free(q->q);
    free(q->j);
    free(q->qids);
    memset(q, 0, sizeof *q);
}

const struct xg_qrels_query *xg_qrels_find(const struct xg_qrels *q,
                                           const char *qid)
{
    uint32_t lo = 0, hi = q->n_queries;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int c = strcmp(q->q[mid].qid, qid);
        if (!c) return &q->q[mid];
        if (c < 0) lo = mid + 1; else hi = mid;
    }
    return NULL;
}

int32_t xg_qrels_rel(const struct xg_qrels_query *jq, uint32_t docid)
{
    uint32_t lo = 0, hi = jq->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (jq->j[mid].docid < docid) lo = mid + 1; else hi = mid;
    }
    return lo < jq->n && jq->j[lo].docid == docid ? jq->j[lo].rel : 0;
}

/* ---- metrics ------------------------------------------------------------ */

double xg_ab_ap(const struct xg_qrels_query *jq, const struct xg_hit *hits,
                uint32_t n)
{
    if (!jq->n_rel) return 0;
    double sum = 0;
    uint32_t found = 0;
    for (uint32_t i = 0; i < n; ++i)
        if (xg_qrels_rel(jq, hits[i].docid) > 0)
            sum += (double)++found / (i + 1);
    return sum / jq->n_rel;
}

double xg_ab_precision(const struct xg_qrels_query *jq,
                       const struct xg_hit *hits, uint32_t n, uint32_t d)
{
    if (!d) return 0;
    uint32_t found = 0;
    for (uint32_t i = 0; i < n && i < d; ++i)
        found += xg_qrels_rel(jq, hits[i].docid) > 0;
    return (double)found / d;
}

/* The DCG of the best ordering of the judged rels, to depth d.  Takes the
 * distinct positive rels from the largest down, so it needs no buffer. */
static double ideal_dcg(const struct xg_qrels_query *jq, uint32_t d)
{
    double sum = 0;
    uint32_t rank = 0;
    int64_t below = INT64_MAX;
    while (rank < d) {
        int32_t v = 0;
        for (uint32_t i = 0; i < jq->n; ++i)
            if (jq->j[i].rel > v && jq->j[i].rel < below) v = jq->j[i].rel;
        if (!v) break;
        for (uint32_t i = 0; i < jq->n && rank < d; ++i)
            if (jq->j[i].rel == v) sum += v / log2(++rank + 1.0);
        below = v;
    }
    return sum;
}

double xg_ab_ndcg(const struct xg_qrels_query *jq, const struct xg_hit *hits,
                  uint32_t n, uint32_t d)
{
    double ideal = ideal_dcg(jq, d);
    if (ideal <= 0) return 0;
    double dcg = 0;
    for (uint32_t i = 0; i < n && i < d; ++i) {
        int32_t rel = xg_qrels_rel(jq, hits[i].docid);
        if (rel > 0) dcg += rel / log2(i + 2.0);
    }
    return dcg / ideal;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

double xg_ab_overlap(const struct xg_hit *ref, uint32_t n_ref,
                     const struct xg_hit *e, uint32_t n_e, uint32_t k,
                     uint32_t *scratch)
{
    uint32_t a = n_ref < k ? n_ref : k, b = n_e < k ? n_e : k;
    if (!a && !b) return 1;
    /* Sort both top-k docid sets and merge: k may be in the thousands. */
    uint32_t *x = scratch, *y = scratch + a;
    for (uint32_t i = 0; i < a; ++i) x[i] = ref[i].docid;
    for (uint32_t i = 0; i < b; ++i) y[i] = e[i].docid;
    qsort(x, a, sizeof *x, cmp_u32);
    qsort(y, b, sizeof *y, cmp_u32);
    uint32_t common = 0;
    for (uint32_t i = 0, j = 0; i < a && j < b;) {
        if (x[i] < y[j]) ++i;
        else if (x[i] > y[j]) ++j;
        else ++common, ++i, ++j;
    }
    return (double)common / (a ? a : 1);
}

/* ---- HTML --------------------------------------------------------------- */

const char *const xg_ab_route_names[XG_AB_N_ROUTES] = {"xapian", "cpu",
                                                       "gpu"};

static const char *const engine_colour[XG_AB_MAX_ENGINES] = {
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf"};
static const char *const route_colour[XG_AB_N_ROUTES] = {"#8c6d31", "#3182bd",
                                                         "#31a354"};

/* Scatter plots stop at this many points to keep the file small. */
#define MAX_SCATTER 20000
/* A CDF is drawn through at most this many of its steps. */
#define MAX_CDF_STEPS 2000

static void esc(FILE *f, const char *s)
{
    for (; s && *s; ++s)
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
}

/* A plot area in SVG pixels over a data range (log10 of the data on a log
 * axis). */
struct plot {
    FILE *f;
    double x0, y0, w, h;
    double xlo, xhi, ylo, yhi;
    int xlog, ylog;
};

static double px(const struct plot *p, double x)
{
    if (p->xlog) x = log10(x);
    return p->x0 + (x - p->xlo) / (p->xhi - p->xlo) * p->w;
}

static double py(const struct plot *p, double y)
{
    if (p->ylog) y = log10(y);
    return p->y0 + p->h - (y - p->ylo) / (p->yhi - p->ylo) * p->h;
}

/* Whole decades around [lo, hi] (both > 0), at least one wide. */
static void decades(double lo, double hi, double *dlo, double *dhi)
{
    *dlo = floor(log10(lo));
    *dhi = ceil(log10(hi));
    if (*dhi <= *dlo) *dhi = *dlo + 1;
}

/* Decades past the readable range as 1eN; linear ticks as they are. */
static void tick_label(FILE *f, double v, int log_axis)
{
    if (log_axis && (v >= 1e5 || v < 1e-3))
        fprintf(f, "1e%d", (int)lround(log10(v)));
    else
        fprintf(f, "%g", v);
}

/* Frame, grid, ticks and axis titles; each axis is log (decades) or
 * linear in fifths. */
static void axes(const struct plot *p, const char *xtitle, const char *ytitle)
{
    FILE *f = p->f;
    fprintf(f, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' "
            "class='frame'/>\n", p->x0, p->y0, p->w, p->h);
    int nx = p->xlog ? (int)lround(p->xhi - p->xlo) : 5;
    for (int i = 0; i <= nx; ++i) {
        double v = p->xlog ? pow(10, p->xlo + i)
                           : p->xlo + (p->xhi - p->xlo) * i / nx;
        double x = px(p, v);
        fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' "
                "class='grid'/><text x='%.1f' y='%.1f' class='tx'>", x, p->y0,
                x, p->y0 + p->h, x, p->y0 + p->h + 14);
        tick_label(f, v, p->xlog);
        fputs("</text>\n", f);
    }
    int ny = p->ylog ? (int)lround(p->yhi - p->ylo) : 5;
    for (int i = 0; i <= ny; ++i) {
        double v = p->ylog ? pow(10, p->ylo + i)
                           : p->ylo + (p->yhi - p->ylo) * i / ny;
        double y = py(p, v);
        fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' "
                "class='grid'/><text x='%.1f' y='%.1f' class='ty'>", p->x0, y,
                p->x0 + p->w, y, p->x0 - 4, y + 4);
        tick_label(f, v, p->ylog);
        fputs("</text>\n", f);
    }
    fprintf(f, "<text x='%.1f' y='%.1f' class='tx'>", p->x0 + p->w / 2,
            p->y0 + p->h + 32);
    esc(f, xtitle);
    fprintf(f, "</text>\n<text transform='translate(%.1f,%.1f) rotate(-90)' "
            "class='tx'>", p->x0 - 44, p->y0 + p->h / 2);
    esc(f, ytitle);
    fputs("</text>\n", f);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Latencies are drawn on a log axis: keep them positive. */
static double pos_ms(double ms) { return ms > 1e-4 ? ms : 1e-4; }

/* Reference latency over engine latency (both in seconds). */
static double speedup(double ref, double lat)
{
    return pos_ms(ref * 1e3) / pos_ms(lat * 1e3);
}

static void legend(FILE *f, double x, double y, const char *colour,
                   const char *label)
{
    fprintf(f, "<rect x='%.1f' y='%.1f' width='12' height='12' fill='%s'/>"
            "<text x='%.1f' y='%.1f'>", x, y - 10, colour, x + 16, y);
    esc(f, label);
    fputs("</text>\n", f);
}

/* Each plot is a self-contained SVG (its own style and white ground), so
 * it reads the same inside the page and saved on its own as an image. */
static const char svg_css[] =
    "text{font:11px sans-serif}.tx{text-anchor:middle}"
    ".ty{text-anchor:end}.bar{text-anchor:middle;fill:#fff}"
    ".frame{fill:none;stroke:#444}.grid{stroke:#e4e4e4}"
    ".parity{stroke:#444;stroke-dasharray:4 3}";

static void svg_open(FILE *f, double height)
{
    fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='800' "
            "height='%.0f' role='img'>\n<style>%s</style>\n"
            "<rect width='100%%' height='100%%' fill='#fff'/>\n", height,
            svg_css);
}

/* The latency CDF of every engine over the queries all of them answered. */
static int cdf_svg(FILE *f, const struct xg_ab_report *r)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < r->n_queries; ++i) n += r->answered[i];
    if (!n) {
        fputs("<p>No query was answered by every engine.</p>\n", f);
        return XG_OK;
    }
    double *lat = malloc((size_t)n * r->n_eng * sizeof *lat);
    if (!lat) return xg_set_error(XG_ERR_NOMEM, "out of memory");
    double lo = INFINITY, hi = 0;
    for (uint32_t e = 0; e < r->n_eng; ++e) {
        double *l = lat + (size_t)e * n;
        uint32_t m = 0;
        for (uint32_t i = 0; i < r->n_queries; ++i)
            if (r->answered[i]) l[m++] = pos_ms(r->eng[e].lat[i] * 1e3);
        qsort(l, n, sizeof *l, cmp_double);
        lo = fmin(lo, l[0]);
        hi = fmax(hi, l[n - 1]);
    }
    struct plot p = {f, 70, 20, 560, 300, 0, 0, 0, 1, 1, 0};
    decades(lo, hi, &p.xlo, &p.xhi);
    svg_open(f, 380);
    axes(&p, "latency (ms, log scale)", "fraction of queries");
    for (uint32_t e = 0; e < r->n_eng; ++e) {
        const double *l = lat + (size_t)e * n;
        /* A step per query, or per quantile on long runs. */
        uint32_t steps = n < MAX_CDF_STEPS ? n : MAX_CDF_STEPS;
        fprintf(f, "<polyline fill='none' stroke='%s' stroke-width='1.5' "
                "points='%.1f,%.1f", engine_colour[e], px(&p, l[0]),
                py(&p, 0));
        for (uint32_t s = 1; s <= steps; ++s) {
            uint32_t i = (uint32_t)(((uint64_t)s * n + steps - 1) / steps) - 1;
            double prev = (double)i / n, frac = (double)(i + 1) / n;
            fprintf(f, " %.1f,%.1f %.1f,%.1f", px(&p, l[i]), py(&p, prev),
                    px(&p, l[i]), py(&p, frac));
        }
        fputs("'/>\n", f);
        legend(f, 650, 40 + 20.0 * e, engine_colour[e], r->eng[e].name);
    }
    fputs("</svg>\n", f);
    free(lat);
    return XG_OK;
}

/* Reference latency / engine latency against query cost, one point per
 * query every engine answered. */
static void scatter_svg(FILE *f, const struct xg_ab_report *r, uint32_t e)
{
    const double *ref = r->eng[0].lat, *lat = r->eng[e].lat;
    double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0;
    uint32_t n = 0;
    for (uint32_t i = 0; i < r->n_queries; ++i) {
        if (!r->answered[i]) continue;
        double x = fmax(r->cost[i], 1), y = speedup(ref[i], lat[i]);
        xlo = fmin(xlo, x), xhi = fmax(xhi, x);
        ylo = fmin(ylo, y), yhi = fmax(yhi, y);
        ++n;
    }
    fprintf(f, "<h3>Speedup of %s against query cost</h3>\n", r->eng[e].name);
    if (!n) {
        fputs("<p>No query was answered by every engine.</p>\n", f);
        return;
    }
    struct plot p = {f, 70, 20, 560, 300, 0, 0, 0, 0, 1, 1};
    decades(xlo, xhi, &p.xlo, &p.xhi);
    decades(fmin(ylo, 1), fmax(yhi, 1), &p.ylo, &p.yhi);
    svg_open(f, 380);
    axes(&p, "query cost: sum of the df of its terms (log scale)",
         "speedup (log scale)");
    fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' "
            "class='parity'/>\n", p.x0, py(&p, 1), p.x0 + p.w, py(&p, 1));
    /* Every query up to MAX_SCATTER, then an even stride through them. */
    uint32_t stride = (n + MAX_SCATTER - 1) / MAX_SCATTER, seen = 0;
    fprintf(f, "<g fill='%s' fill-opacity='0.45'>\n", engine_colour[e]);
    for (uint32_t i = 0; i < r->n_queries; ++i) {
        if (!r->answered[i] || seen++ % stride) continue;
        fprintf(f, "<circle cx='%.1f' cy='%.1f' r='2.2'/>\n",
                px(&p, fmax(r->cost[i], 1)),
                py(&p, speedup(ref[i], lat[i])));
    }
    fputs("</g>\n", f);
    legend(f, 650, 40, engine_colour[e], r->eng[e].name);
    fprintf(f, "<text x='650' y='66'>y = %s ms / ", r->eng[0].name);
    esc(f, r->eng[e].name);
    fputs(" ms</text>\n</svg>\n", f);
    fprintf(f, "<p class='note'>%u queries%s; above the line %s is faster. "
            "Queries of cost 0 (no term in the index) sit on the left "
            "edge.</p>\n", n, stride > 1 ? " (every one of a regular sample)"
                                         : "", r->eng[e].name);
}

/* One stacked bar per engine: the queries each matcher answered. */
static void routing_svg(FILE *f, const struct xg_ab_report *r)
{
    double x0 = 90, w = 560, bar = 22;
    double ly = 20 + (bar + 12) * r->n_eng + 14;  /* the legend's baseline */
    svg_open(f, ly + 10);
    for (uint32_t e = 0; e < r->n_eng; ++e) {
        double y = 20 + (bar + 12) * e, x = x0;
        fprintf(f, "<text x='%.1f' y='%.1f' class='ty'>", x0 - 6,
                y + bar / 2 + 4);
        esc(f, r->eng[e].name);
        fputs("</text>\n", f);
        uint32_t total = 0;
        for (int t = 0; t < XG_AB_N_ROUTES; ++t) {
            uint32_t c = r->eng[e].routing[t];
            double bw = r->n_queries ? w * c / r->n_queries : 0;
            total += c;
            if (!c) continue;
            fprintf(f, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' "
                    "fill='%s'><title>%s: %u</title></rect>\n", x, y, bw, bar,
                    route_colour[t], xg_ab_route_names[t], c);
            if (bw > 40)
                fprintf(f, "<text x='%.1f' y='%.1f' class='bar'>%u</text>\n",
                        x + bw / 2, y + bar / 2 + 4, c);
            x += bw;
        }
        if (total < r->n_queries)
            fprintf(f, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' "
                    "fill='#ddd'><title>not answered: %u</title></rect>\n", x,
                    y, x0 + w - x, bar, r->n_queries - total);
    }
    for (int t = 0; t < XG_AB_N_ROUTES; ++t)
        legend(f, x0 + 110.0 * t, ly, route_colour[t], xg_ab_route_names[t]);
    legend(f, x0 + 330, ly, "#ddd", "not answered");
    fputs("</svg>\n", f);
}

static void summary_html(FILE *f, const struct xg_ab_report *r)
{
    fprintf(f, "<p>%u queries from <code>", r->n_queries);
    esc(f, r->queries_path);
    fprintf(f, "</code>, top %u. Compared %u MSets with %s's: "
            "<b class='%s'>%u identical, %u different</b>; unsupported %u, "
            "rejected by QueryParser %u.</p>\n", r->k, r->compared,
            r->eng[0].name, r->different ? "bad" : "good", r->identical,
            r->different, r->unsupported, r->rejected);
    if (r->stock_self)
        fprintf(f, "<p>Apart: %u MSets where stock's top %u is not its own "
                "full ranking's (its AND_MAYBE skip) and the engine returns "
                "the full ranking's.</p>\n", r->stock_self, r->k);
    fprintf(f, "<table><tr><th>engine</th><th>queries/s</th><th>mean ms</th>"
            "<th>p50 ms</th><th>p99 ms</th><th>ratio</th><th>overlap@%u</th>",
            r->k);
    for (int t = 0; t < XG_AB_N_ROUTES; ++t)
        fprintf(f, "<th>by %s</th>", xg_ab_route_names[t]);
    fputs("</tr>\n", f);
    for (uint32_t e = 0; e < r->n_eng; ++e) {
        const struct xg_ab_engine *g = &r->eng[e];
        fputs("<tr><td>", f);
        esc(f, g->name);
        fprintf(f, "%s</td><td>%.0f</td><td>%.3f</td><td>%.3f</td>"
                "<td>%.3f</td><td>%.2fx</td>", e ? "" : " (reference)",
                g->qps, g->mean_ms, g->p50_ms, g->p99_ms, g->ratio);
        if (e) fprintf(f, "<td>%.4f</td>", g->overlap);
        else fputs("<td>-</td>", f);
        for (int t = 0; t < XG_AB_N_ROUTES; ++t)
            fprintf(f, "<td>%u</td>", g->routing[t]);
        fputs("</tr>\n", f);
    }
    fputs("</table>\n<p class='note'>Latency over the queries every engine "
          "answered; queries/s over all of them.</p>\n", f);
}

static void qrels_html(FILE *f, const struct xg_ab_report *r)
{
    fputs("<h2>Effectiveness</h2>\n<p>Judgements from <code>", f);
    esc(f, r->qrels_path);
    fprintf(f, "</code>: %u queries with a relevant document, answered by "
            "every engine. MAP over each engine's top %u; nDCG gain = rel.</p>\n"
            "<table><tr><th>engine</th><th>MAP</th><th>P@10</th>"
            "<th>nDCG@10</th></tr>\n", r->n_judged, r->k);
    for (uint32_t e = 0; e < r->n_eng; ++e) {
        fputs("<tr><td>", f);
        esc(f, r->eng[e].name);
        fprintf(f, "</td><td>%.4f</td><td>%.4f</td><td>%.4f</td></tr>\n",
                r->eng[e].map, r->eng[e].p10, r->eng[e].ndcg10);
    }
    fputs("</table>\n", f);
}

static void diffs_html(FILE *f, const struct xg_ab_report *r)
{
    fputs("<h2>First differences</h2>\n", f);
    for (uint32_t d = 0; d < r->n_diffs; ++d) {
        const struct xg_ab_diff *x = &r->diffs[d];
        fputs("<h3>Query ", f);
        esc(f, x->qid);
        fputs(": ", f);
        esc(f, r->eng[x->engine].name);
        fputs(" against ", f);
        esc(f, r->eng[0].name);
        fputs("</h3>\n<p><code>", f);
        esc(f, x->text);
        fputs("</code></p>\n<table><tr><th>rank</th><th>", f);
        esc(f, r->eng[0].name);
        fputs(" docid</th><th>weight</th><th>", f);
        esc(f, r->eng[x->engine].name);
        fputs(" docid</th><th>weight</th></tr>\n", f);
        uint32_t n = x->ref->n_hits > x->got->n_hits ? x->ref->n_hits
                                                     : x->got->n_hits;
        for (uint32_t i = 0; i < n; ++i) {
            const struct xg_hit *a = i < x->ref->n_hits ? &x->ref->hits[i] : 0,
                                *b = i < x->got->n_hits ? &x->got->hits[i] : 0;
            int same = a && b && a->docid == b->docid &&
                       !memcmp(&a->weight, &b->weight, sizeof a->weight);
            fprintf(f, "<tr%s><td>%u</td>", same ? "" : " class='bad'", i + 1);
            if (a) fprintf(f, "<td>%u</td><td>%.17g</td>", a->docid, a->weight);
            else fputs("<td></td><td></td>", f);
            if (b) fprintf(f, "<td>%u</td><td>%.17g</td>", b->docid, b->weight);
            else fputs("<td></td><td></td>", f);
            fputs("</tr>\n", f);
        }
        fputs("</table>\n", f);
    }
}

static const char css[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}"
    "table{border-collapse:collapse;margin:.5em 0}"
    "td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}"
    "td:first-child,th:first-child{text-align:left}"
    "th{background:#f3f3f3}tr.bad td{background:#fde0e0}"
    "b.good{color:#1a7f37}b.bad{color:#c62828}.note{color:#666;font-size:12px}";

static int write_html(FILE *f, const struct xg_ab_report *r)
{
    fprintf(f, "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            "<title>xapian-gpu %s</title>\n<style>%s</style></head><body>\n"
            "<h1>xapian-gpu %s: ", r->cmd, css, r->cmd);
    for (uint32_t e = 0; e < r->n_eng; ++e) {
        fputs(e ? " vs " : "", f);
        esc(f, r->eng[e].name);
    }
    fputs("</h1>\n<h2>Summary</h2>\n", f);
    summary_html(f, r);
    if (r->qrels_path) qrels_html(f, r);
    fputs("<h2>Latency</h2>\n", f);
    int rc = cdf_svg(f, r);
    if (rc) return rc;
    if (r->n_eng > 1) {
        fputs("<h2>Speedup against query cost</h2>\n", f);
        if (r->cost_note) {
            fputs("<p class='note'>Query cost unknown (0): ", f);
            esc(f, r->cost_note);
            fputs("</p>\n", f);
        }
        for (uint32_t e = 1; e < r->n_eng; ++e) scatter_svg(f, r, e);
    }
    fputs("<h2>Routing</h2>\n<p class='note'>The matcher that answered each "
          "query.</p>\n", f);
    routing_svg(f, r);
    if (r->has_planner)
        fprintf(f, "<p>The planner sent each query to the faster side for "
                "%u of the %u queries its cost model priced (both sides were "
                "run on every query; the GPU was faster for %u).</p>\n",
                r->planner_right, r->planner_priced, r->planner_gpu_faster);
    if (r->n_diffs) diffs_html(f, r);
    fputs("</body></html>\n", f);
    return XG_OK;
}

int xg_ab_report_html(const struct xg_ab_report *r, const char *path)
{
    struct xg_outfile o;
    int rc = xg_outfile_open(&o, path);
    if (rc) return rc;
    rc = write_html(o.f, r);
    int crc = xg_outfile_close(&o, !rc);
    return rc ? rc : crc;
}
