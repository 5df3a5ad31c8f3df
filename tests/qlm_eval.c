/** @file qlm_eval.c
 *  @brief MAP and nDCG@10 of ranked runs against TREC qrels, for
 *         docs/qlm.md's quality table; the metrics are ab_report.c's
 *         (xg_qrels_load, xg_ab_ap, xg_ab_ndcg), not re-implemented.
 *
 *  usage: qlm_eval QRELS RUN.jsonl...
 *  A run is the JSON lines of `xapian-gpu search --json` or `qlm-search
 *  --json`: per line a "qid" string and "docid" numbers in rank order.
 *  As `xapian-gpu ab` does, the means are over the run's queries that
 *  have a relevant judgement.  Prints one line per run:
 *  RUN<TAB>queries<TAB>MAP<TAB>nDCG@10 (4 decimals).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../plugin/cli/ab_report.h"
#include "../gpu/runtime/error.h"

/* Score one run; 0 on success. */
static int eval(const struct xg_qrels *qr, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "qlm_eval: %s: cannot open\n", path);
        return 1;
    }
    static char line[1 << 22];
    struct xg_hit *hits = malloc((sizeof line / 8) * sizeof *hits);
    uint32_t n_q = 0;
    double map = 0, ndcg = 0;
    while (hits && fgets(line, sizeof line, f)) {
        char *q = strstr(line, "\"qid\":\"");
        if (!q) continue;
        q += 7;
        char *e = strchr(q, '"');
        if (!e) continue;
        *e = 0;
        uint32_t n = 0;
        for (char *p = e + 1; (p = strstr(p, "\"docid\":")); ++n) {
            p += 8;
            hits[n].docid = (uint32_t)strtoul(p, &p, 10);
            hits[n].matched_leaves = 0;
            hits[n].weight = 0;
        }
        const struct xg_qrels_query *jq = xg_qrels_find(qr, q);
        if (!jq || !jq->n_rel) continue;
        ++n_q;
        map += xg_ab_ap(jq, hits, n);
        ndcg += xg_ab_ndcg(jq, hits, n, 10);
    }
    fclose(f);
    free(hits);
    printf("%s\t%u\t%.4f\t%.4f\n", path, n_q, n_q ? map / n_q : 0,
           n_q ? ndcg / n_q : 0);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: qlm_eval QRELS RUN.jsonl...\n");
        return 2;
    }
    struct xg_qrels qr;
    if (xg_qrels_load(argv[1], &qr)) {
        fprintf(stderr, "qlm_eval: %s\n", xg_last_error());
        return 1;
    }
    int rc = 0;
    for (int i = 2; i < argc; ++i) rc |= eval(&qr, argv[i]);
    xg_qrels_free(&qr);
    return rc;
}
