/** @file test_ab_report.c
 *  @brief Tests of plugin/cli/ab_report.{h,c}: the TREC qrels reader and its
 *         errors, AP / P@k / nDCG@k and overlap@k against values worked
 *         out by hand below, and the HTML writer's atomic write.
 *
 *  Usage: test_ab_report [--seed N] (no randomness; the seed is accepted
 *  like every unit test's).  Prints one "ok" line per check group and
 *  "N passed, 0 failed"; exits 1 at the first failure.
 */
#include "../plugin/cli/ab_report.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

/* ---- helpers ---------------------------------------------------------- */

static int near(double a, double b) { return fabs(a - b) < 1e-12; }

/* An MSet of these docids (weights play no part in the metrics). */
static uint32_t make_hits(struct xg_hit *h, const uint32_t *docids, uint32_t n)
{
    for (uint32_t i = 0; i < n; ++i)
        h[i] = (struct xg_hit){docids[i], 0, 10.0 - i};
    return n;
}

static int parse(const char *text, struct xg_qrels *q)
{
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    CHECK(f != NULL, "fmemopen");
    int rc = xg_qrels_read(f, "t.qrels", q);
    fclose(f);
    return rc;
}

/* A malformed file fails with XG_ERR_FORMAT and a message naming the file
 * and line and containing `what`. */
static void expect_error(const char *text, const char *where, const char *what)
{
    struct xg_qrels q;
    int rc = parse(text, &q);
    CHECK(rc == XG_ERR_FORMAT, "%s: rc %d", where, rc);
    CHECK(strncmp(xg_last_error(), where, strlen(where)) == 0 &&
              strstr(xg_last_error(), what),
          "message '%s' lacks '%s' ... '%s'", xg_last_error(), where, what);
}

/* ---- the tests -------------------------------------------------------- */

/* Queries out of order, a blank line, tabs, negative and graded rels. */
static const char qrels_text[] =
    "q1 0 3 2\n"
    "q1\t0\t1\t1\n"
    "\n"
    "q2 0 4 0\n"
    "q1 0 7 1\n"
    "q1 0 9 0\r\n"
    "q10 0 2 -1\n";

static void test_qrels_read(void)
{
    struct xg_qrels q;
    CHECK(parse(qrels_text, &q) == XG_OK, "%s", xg_last_error());
    /* Sorted by strcmp: q1 < q10 < q2. */
    CHECK(q.n_queries == 3, "%u queries", q.n_queries);
    CHECK(!strcmp(q.q[0].qid, "q1") && !strcmp(q.q[1].qid, "q10") &&
              !strcmp(q.q[2].qid, "q2"), "order");
    const struct xg_qrels_query *q1 = xg_qrels_find(&q, "q1");
    CHECK(q1 && q1->n == 4 && q1->n_rel == 3, "q1: %u judged, %u relevant",
          q1 ? q1->n : 0, q1 ? q1->n_rel : 0);
    CHECK(q1->j[0].docid == 1 && q1->j[1].docid == 3 && q1->j[2].docid == 7 &&
              q1->j[3].docid == 9, "q1 sorted by docid");
    CHECK(xg_qrels_rel(q1, 3) == 2 && xg_qrels_rel(q1, 9) == 0 &&
              xg_qrels_rel(q1, 5) == 0 && xg_qrels_rel(q1, 100) == 0, "rel");
    const struct xg_qrels_query *q10 = xg_qrels_find(&q, "q10");
    CHECK(q10 && q10->n == 1 && q10->n_rel == 0 &&
              xg_qrels_rel(q10, 2) == -1, "q10");
    CHECK(xg_qrels_find(&q, "q3") == NULL && xg_qrels_find(&q, "q") == NULL,
          "unknown qid");
    xg_qrels_free(&q);
    CHECK(parse("", &q) == XG_OK && q.n_queries == 0, "empty file");
    xg_qrels_free(&q);
    group_ok("qrels: grouping, order, rel lookup");
}

static void test_qrels_errors(void)
{
    expect_error("q1 0 3\n", "t.qrels:1:", "found 3 fields");
    expect_error("q1 0 3 1 extra\n", "t.qrels:1:", "more than 4 fields");
    expect_error("q1 0 3 2\nq1 0 x 1\n", "t.qrels:2:", "docid 'x'");
    expect_error("q1 0 0 1\n", "t.qrels:1:", "docid '0'");
    expect_error("q1 0 4294967296 1\n", "t.qrels:1:", "docid");
    expect_error("q1 0 3 2\n\nq1 0 4 1.5\n", "t.qrels:3:", "rel '1.5'");
    /* Line 3 repeats line 1's judgement. */
    expect_error("q1 0 3 2\nq2 0 3 1\nq1 0 3 1\n", "t.qrels:3:",
                 "judges docid 3 twice (also line 1)");
    struct xg_qrels q;
    CHECK(xg_qrels_load("/nonexistent/qrels", &q) == XG_ERR_IO &&
              strstr(xg_last_error(), "/nonexistent/qrels"), "missing file");
    group_ok("qrels: malformed lines name file and line");
}

static void test_metrics(void)
{
    struct xg_qrels q;
    CHECK(parse(qrels_text, &q) == XG_OK, "%s", xg_last_error());
    const struct xg_qrels_query *q1 = xg_qrels_find(&q, "q1");
    /* q1 judges 3 (rel 2), 1 (rel 1), 7 (rel 1) relevant, 9 not. */
    struct xg_hit h[16];
    uint32_t n = make_hits(h, (const uint32_t[]){3, 5, 9, 1, 8}, 5);
    /* Relevant at ranks 1 (doc 3) and 4 (doc 1); doc 7 is not returned.
     * AP = (1/1 + 2/4) / 3 = 0.5. */
    CHECK(near(xg_ab_ap(q1, h, n), (1.0 / 1 + 2.0 / 4) / 3), "AP %.17g",
          xg_ab_ap(q1, h, n));
    CHECK(near(xg_ab_ap(q1, h, n), 0.5), "AP");
    /* P@10 = 2/10 (missing ranks count as not relevant); P@3 = 1/3. */
    CHECK(near(xg_ab_precision(q1, h, n, 10), 0.2), "P@10");
    CHECK(near(xg_ab_precision(q1, h, n, 3), 1.0 / 3), "P@3");
    /* DCG@10 = 2/log2(2) + 1/log2(5) = 2.4306765580733931;
     * ideal = 2/log2(2) + 1/log2(3) + 1/log2(4) = 3.1309297535714575;
     * nDCG@10 = 0.77634337... */
    double ndcg = (2 + 1 / log2(5)) / (2 + 1 / log2(3) + 0.5);
    CHECK(near(xg_ab_ndcg(q1, h, n, 10), ndcg), "nDCG@10 %.17g",
          xg_ab_ndcg(q1, h, n, 10));
    CHECK(fabs(ndcg - 0.7763434) < 1e-7, "hand value %.17g", ndcg);
    /* At depth 2 only doc 3 counts: 2 / (2 + 1/log2(3)) = 0.7602... */
    CHECK(near(xg_ab_ndcg(q1, h, n, 2), 2 / (2 + 1 / log2(3))), "nDCG@2");

    /* The ideal order: AP = (1/1 + 2/2 + 3/3) / 3 = 1, nDCG = 1,
     * P@10 = 3/10. */
    n = make_hits(h, (const uint32_t[]){3, 1, 7}, 3);
    CHECK(near(xg_ab_ap(q1, h, n), 1) && near(xg_ab_ndcg(q1, h, n, 10), 1) &&
              near(xg_ab_precision(q1, h, n, 10), 0.3), "ideal list");
    /* Same documents, the rel-2 one last: AP is still 1, but
     * DCG = 1 + 1/log2(3) + 2/log2(4) = 2.6309..., over 3.1309... */
    n = make_hits(h, (const uint32_t[]){1, 7, 3}, 3);
    CHECK(near(xg_ab_ap(q1, h, n), 1), "AP ignores grades");
    CHECK(near(xg_ab_ndcg(q1, h, n, 10),
               (1 + 1 / log2(3) + 1.0) / (2 + 1 / log2(3) + 0.5)), "graded");
    /* Depth 2 with three relevant: ideal = 2 + 1/log2(3);
     * list 1, 7: DCG = 1 + 1/log2(3); nDCG@2 = 1.6309/2.6309 = 0.6199. */
    n = make_hits(h, (const uint32_t[]){1, 7}, 2);
    CHECK(near(xg_ab_ndcg(q1, h, n, 2),
               (1 + 1 / log2(3)) / (2 + 1 / log2(3))), "ideal cut at d");

    /* Nothing returned: all 0. */
    CHECK(xg_ab_ap(q1, h, 0) == 0 && xg_ab_precision(q1, h, 0, 10) == 0 &&
              xg_ab_ndcg(q1, h, 0, 10) == 0, "empty list");
    /* q10 has only a rel -1 judgement: no relevant document, all 0, and
     * the negative grade is no gain. */
    const struct xg_qrels_query *q10 = xg_qrels_find(&q, "q10");
    n = make_hits(h, (const uint32_t[]){2, 3}, 2);
    CHECK(xg_ab_ap(q10, h, n) == 0 && xg_ab_precision(q10, h, n, 10) == 0 &&
              xg_ab_ndcg(q10, h, n, 10) == 0, "no relevant judgement");
    xg_qrels_free(&q);
    group_ok("AP, P@k, nDCG@k by hand");
}

static void test_overlap(void)
{
    struct xg_hit ref[8], e[8];
    uint32_t scratch[32];
    uint32_t nr = make_hits(ref, (const uint32_t[]){1, 2, 3, 4}, 4);
    uint32_t ne = make_hits(e, (const uint32_t[]){2, 1, 9, 8}, 4);
    /* k 3: {1,2,3} and {2,1,9} share 2, over min(3, 4) = 3. */
    CHECK(near(xg_ab_overlap(ref, nr, e, ne, 3, scratch), 2.0 / 3), "k 3");
    /* k 10: {1,2,3,4} and {2,1,9,8} share 2, over min(10, 4) = 4. */
    CHECK(near(xg_ab_overlap(ref, nr, e, ne, 10, scratch), 0.5), "k 10");
    /* Order does not matter; the same set is 1. */
    uint32_t ns = make_hits(e, (const uint32_t[]){4, 3, 2, 1}, 4);
    CHECK(xg_ab_overlap(ref, nr, e, ns, 10, scratch) == 1, "same set");
    /* An engine with fewer results: {1,2} against 4 is 2/4. */
    ns = make_hits(e, (const uint32_t[]){1, 2}, 2);
    CHECK(near(xg_ab_overlap(ref, nr, e, ns, 10, scratch), 0.5), "short");
    /* Empty reference, results from the engine: 0 / max(1, 0) = 0; both
     * empty agree: 1. */
    CHECK(xg_ab_overlap(ref, 0, e, ns, 10, scratch) == 0, "empty ref");
    CHECK(xg_ab_overlap(ref, 0, e, 0, 10, scratch) == 1, "both empty");
    CHECK(xg_ab_overlap(ref, nr, e, 0, 10, scratch) == 0, "empty engine");
    group_ok("overlap@k by hand");
}

static void test_html(void)
{
    char dir[] = "/tmp/test_ab_report.XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char path[64], bad[80];
    snprintf(path, sizeof path, "%s/r.html", dir);
    snprintf(bad, sizeof bad, "%s/missing/r.html", dir);
    static const double lat0[3] = {2e-3, 1e-3, 4e-3}, lat1[3] = {1e-3, 1e-3,
                                                                 1e-3};
    static const double cost[3] = {0, 120, 4000};
    static const uint8_t answered[3] = {1, 1, 0};
    struct xg_hit h1[2] = {{7, 0, 2.5}, {3, 0, 1.25}}, h2[2] = {{3, 0, 2.5},
                                                               {7, 0, 1.25}};
    struct xg_result r1 = {2, 2, h1}, r2 = {2, 2, h2};
    struct xg_ab_report r = {0};
    r.cmd = "ab";
    r.queries_path = "q<&>.tsv";
    r.qrels_path = "qrels.txt";
    r.k = 10;
    r.n_queries = 3;
    r.n_eng = 2;
    r.eng[0] = (struct xg_ab_engine){
        .name = "xapian", .qps = 100, .mean_ms = 2, .p50_ms = 2, .p99_ms = 4,
        .ratio = 1, .overlap = 0, .routing = {2, 0, 0}, .map = 0.5,
        .p10 = 0.2, .ndcg10 = 0.4, .lat = lat0};
    r.eng[1] = (struct xg_ab_engine){
        .name = "gpu", .qps = 300, .mean_ms = 1, .p50_ms = 1, .p99_ms = 1,
        .ratio = 3, .overlap = 0.75, .routing = {0, 1, 1}, .map = 0.5,
        .p10 = 0.2, .ndcg10 = 0.4, .lat = lat1};
    r.answered = answered;
    r.cost = cost;
    r.n_diffs = 1;
    r.diffs[0] = (struct xg_ab_diff){"7", "a <b> query", 1, &r1, &r2};
    CHECK(xg_ab_report_html(&r, path) == XG_OK, "%s", xg_last_error());
    /* r.html alone: no temporary file left beside it. */
    DIR *dd = opendir(dir);
    int entries = 0;
    for (struct dirent *e; dd && (e = readdir(dd));)
        entries += e->d_name[0] != '.';
    if (dd) closedir(dd);
    CHECK(entries == 1, "%s holds %d files: a temporary left behind", dir,
          entries);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL, "%s not written", path);
    static char buf[1 << 16];
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    buf[len] = 0;
    fclose(f);
    CHECK(strstr(buf, "<svg") && strstr(buf, "</html>") &&
              strstr(buf, "q&lt;&amp;&gt;.tsv") &&
              strstr(buf, "a &lt;b&gt; query") && !strstr(buf, "<script") &&
              !strstr(buf, "src=") && !strstr(buf, "href=") &&
              strstr(buf, "nDCG@10"), "content");
    /* A directory that is not there: an error naming the file, nothing
     * written. */
    CHECK(xg_ab_report_html(&r, bad) == XG_ERR_IO &&
              strstr(xg_last_error(), bad), "bad path: %s", xg_last_error());
    CHECK(remove(path) == 0 && rmdir(dir) == 0, "cleanup");
    group_ok("HTML: self-contained, escaped, atomic");
}

int main(int argc, char **argv)
{
    seed_used = parse_seed(argc, argv);
    printf("seed %" PRIu64 "\n", seed_used);
    test_qrels_read();
    test_qrels_errors();
    test_metrics();
    test_overlap();
    test_html();
    printf("%d passed, 0 failed\n", n_passed);
    return 0;
}
