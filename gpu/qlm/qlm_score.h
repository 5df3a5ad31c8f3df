/** @file qlm_score.h
 *  @brief Query-time n-gram query likelihood (issue 6, "Query time"):
 *         rank documents for a query from a loaded qlm table
 *         (qlm_table.h).  xg_qlm_score_ref is the CPU twin,
 *         xg_qlm_score_gpu the GPU version; they give the same bits.
 *
 *  The score, exactly (docs/qlm.md, "Query time"): the query is tokenized
 *  by xg_text_tokenize (the --tsv tokenizer, no stemming) into words
 *  q_1..q_m; the score of document d is the seed 002 chain rule
 *      log P(q | d) = sum_{i=1..m} log P(q_i | q_{i-n_i+1} .. q_{i-1}, d),
 *      n_i = min(i, sigma),
 *  summed in double from 0.0 in the order i = 1..m, log() of the C
 *  library.  Each factor is found by xg_qlm_word_prob: the longest n-gram
 *  ending at q_i (n = n_i, n_i - 1, ..., 1) that occurs in the collection
 *  gives the factor: its row for d (eq. 2 as the table holds it), or, when
 *  it does not occur in d, the collection part of eq. 2,
 *  xg_qlm_backoff_prob; an n-gram absent from the collection backs off to
 *  the (n-1)-gram ending at q_i; a word absent from the collection gives
 *  XG_QLM_EPSILON.  Every factor is floored at XG_QLM_EPSILON (lambda = 1
 *  makes the collection part 0).  Only documents containing at least one
 *  query word are ranked; ties go to the smaller docid.
 */
#ifndef XG_QLM_SCORE_H
#define XG_QLM_SCORE_H

#include <stdint.h>

#include "qlm_table.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The factor of a word the collection lacks, and the floor of every factor. */
#define XG_QLM_EPSILON 1e-12

/* Eq. 2 of seed 002 with f(x, d) = 0: the collection part
 * (1 - lambda) * f(x,C) / f(h,C), in qlm_formula.h's operation order (its
 * b term; a = lambda * 0 / y adds +0.0, so a table row with f(x,d) = 0
 * would hold these same bits). */
static inline double xg_qlm_backoff_prob(double lambda, uint64_t fxc,
                                         uint64_t fhc)
{
    double col = (double)fxc / (double)fhc;
    return (1.0 - lambda) * col;
}

/* One ranked document. */
struct xg_qlm_hit {
    uint32_t docid;
    double score;           /* log P(q | d) */
};

/* P(q_i | history, d) for the word whose n-grams (n = 1..n_max, ending at
 * it) are chain[0..n_max): chain[n-1] is the entry of the n-gram, NULL
 * when the collection lacks it.  As described above; never below
 * XG_QLM_EPSILON. */
double xg_qlm_word_prob(const struct xg_qlm_table *t,
                        const struct xg_qlm_gram *const *chain, uint32_t n_max,
                        uint32_t docid);

/* A query ready to score: its words' n-gram chains (chain[i * sigma +
 * n - 1] is the entry of the n-gram q_{i-n+1} .. q_i, NULL when the
 * collection lacks it or n > i + 1) and the number of unigram rows (the
 * candidates, with repeats).  Returns XG_OK, XG_ERR_ARG (invalid UTF-8)
 * or XG_ERR_NOMEM. */
struct xg_qlm_query {
    uint32_t m;                             /* words */
    const struct xg_qlm_gram **chain;       /* [m * sigma] */
    uint64_t n_cand;
};
int xg_qlm_query_prepare(const struct xg_qlm_table *t, const char *text,
                         struct xg_qlm_query *q);
void xg_qlm_query_free(struct xg_qlm_query *q);

/* Rank the documents for the query text (UTF-8): the best k in *hits
 * (malloc'd, free() it; *n_hits <= k), by score descending, then docid
 * ascending.  Returns XG_OK, XG_ERR_ARG (the text is not valid UTF-8) or
 * XG_ERR_NOMEM. */
int xg_qlm_score_ref(const struct xg_qlm_table *t, const char *text,
                     uint32_t k, struct xg_qlm_hit **hits, uint32_t *n_hits);

/* The GPU scorer (qlm_score_cuda.c + qlm_score.cu; without CUDA every
 * call answers XG_ERR_NODEVICE).  open uploads the table's docids and the
 * log of every row's floored probability, taken here with the C
 * library's log(), so the device only adds the very doubles the twin adds,
 * in the same order: the same bits, the same ranking. */
typedef struct xg_qlm_scorer_gpu xg_qlm_scorer_gpu;
int xg_qlm_score_gpu_open(const struct xg_qlm_table *t, xg_qlm_scorer_gpu **s);
void xg_qlm_score_gpu_close(xg_qlm_scorer_gpu *s);
/* As xg_qlm_score_ref, for a table opened in s; also XG_ERR_CUDA. */
int xg_qlm_score_gpu(xg_qlm_scorer_gpu *s, const struct xg_qlm_table *t,
                     const char *text, uint32_t k, struct xg_qlm_hit **hits,
                     uint32_t *n_hits);

#ifdef __cplusplus
}
#endif
#endif
