/** @file synth.h
 *  @brief The synthetic benchmark collection of seed paper 000 (section
 *         5.1) and a matching query generator.
 *
 *  Documents have log-normal lengths (mu 6.0, sigma 1.1 by default: about
 *  740 tokens on average) and each token is drawn from a Zipf distribution
 *  over a vocabulary of ranked words (10^6 words, exponent 1.0).  Words are
 *  "q" followed by the bijective base-26 spelling of the rank ("qa", "qb",
 *  ... "qz", "qaa", ...): lowercase letters only, distinct for distinct
 *  ranks, never a QueryParser operator in any case, and unchanged by
 *  QueryParser's lowercasing.
 *
 *  Everything is deterministic: a document's content depends only on
 *  (seed, doc_index) and a query's only on (seed, query_index), through a
 *  per-item xoshiro256** generator seeded by splitmix64, so any number of
 *  threads, in any order, produce the same collection.  The sampling code
 *  (synth.c) is plain C with no Xapian; xg_shim_synth_db() (shim/
 *  shim_synth.cc) writes a collection into a glass database, and
 *  `xapian-gpu synth` (plugin/cli/cli_synth.c) is the command line for both.
 */
#ifndef XG_SYNTH_H
#define XG_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Longest document in tokens; longer log-normal draws are cut to this. */
#define XG_SYNTH_MAX_LEN 200000u
/* Room xg_synth_word() needs: "q" + at most 7 letters + NUL fits in 9. */
#define XG_SYNTH_WORD_MAX 16
/* Query term counts are uniform in [MIN, MAX]. */
#define XG_SYNTH_QUERY_MIN_TERMS 2u
#define XG_SYNTH_QUERY_MAX_TERMS 5u

struct xg_synth_params {
    uint64_t n_docs;        /* documents in the collection (doc_index < n) */
    uint32_t vocab;         /* words, ranks 1..vocab (>= 1) */
    double zipf_s;          /* Zipf exponent: P(rank r) ~ r^-s (>= 0) */
    double mu, sigma;       /* log-normal length: ln(len) ~ N(mu, sigma^2) */
    uint64_t seed;          /* the collection; any value */
};
#define XG_SYNTH_DEFAULTS {0, 1000000u, 1.0, 6.0, 1.1, 1}

/* Check parameters: vocab >= 1, zipf_s and sigma finite and >= 0, mu
 * finite.  n_docs is not checked here (0 is a valid empty range).
 * Returns XG_OK, or XG_ERR_ARG with a one-line message. */
int xg_synth_params_check(const struct xg_synth_params *p);

/* ---- random numbers --------------------------------------------------- */

/* xoshiro256** state. */
struct xg_synth_rng {
    uint64_t s[4];
};

/* Seed from (seed, stream, index) through splitmix64: different streams
 * (documents, queries) and indexes give independent sequences.  Cannot
 * fail. */
void xg_synth_rng_init(struct xg_synth_rng *r, uint64_t seed, uint64_t stream,
                       uint64_t index);

/* The next 64 random bits. */
uint64_t xg_synth_rng_next(struct xg_synth_rng *r);

/* Uniform double in [0, 1) with 53 random bits. */
double xg_synth_rng_unit(struct xg_synth_rng *r);

/* Standard normal N(0, 1) by Box-Muller (one draw per call; the second
 * value is thrown away so every draw consumes exactly two uniforms). */
double xg_synth_rng_normal(struct xg_synth_rng *r);

/* ---- words ------------------------------------------------------------ */

/* Write the word for rank (>= 1) into buf (XG_SYNTH_WORD_MAX bytes),
 * NUL-terminated; returns its length (2..8).  Rank 0 writes "" and
 * returns 0. */
size_t xg_synth_word(uint32_t rank, char *buf);

/* ---- Zipf sampler ----------------------------------------------------- */

/* A Walker/Vose alias table over ranks 1..vocab: one 64-bit draw and one
 * table read per sample.  Built once, then shared read-only by any number
 * of threads. */
struct xg_synth_zipf {
    uint32_t vocab;
    double s;
    uint32_t *thresh;       /* keep slot i if low 32 bits < thresh[i] */
    uint32_t *alias;        /* otherwise take alias[i] (0-based) */
};

/* Build the table for P(rank r) = r^-s / H(vocab, s).  Returns XG_OK, or
 * XG_ERR_ARG (vocab 0, s negative or not finite) or XG_ERR_NOMEM; on
 * error *z holds nothing to free.  Takes about 8 bytes per word. */
int xg_synth_zipf_init(struct xg_synth_zipf *z, uint32_t vocab, double s);

/* Free the table (a zeroed or freed struct is fine too). */
void xg_synth_zipf_free(struct xg_synth_zipf *z);

/* One rank in 1..vocab.  The slot is chosen from the high 32 bits of a
 * draw (relative bias at most vocab / 2^32), the coin from the low 32. */
uint32_t xg_synth_zipf_sample(const struct xg_synth_zipf *z,
                              struct xg_synth_rng *r);

/* ---- documents and queries -------------------------------------------- */

/* The length in tokens of document doc_index:
 * max(1, round(exp(mu + sigma * N(0,1)))), at most XG_SYNTH_MAX_LEN.
 * The same value xg_synth_doc() uses. */
uint32_t xg_synth_doc_length(const struct xg_synth_params *p,
                             uint64_t doc_index);

/* Generate document doc_index: its distinct ranks, ascending, into
 * ranks_out and their counts (wdf) into wdf_out; the counts sum to
 * xg_synth_doc_length().  Both arrays are also used as scratch for the
 * raw tokens, so they need room for the document's length: cap >=
 * XG_SYNTH_MAX_LEN always suffices.  Returns the number of distinct ranks
 * (>= 1), or 0 if cap is smaller than the document's length (the arrays
 * are then untouched).  `z` must have been built for p->vocab and
 * p->zipf_s.  Thread-safe. */
uint32_t xg_synth_doc(const struct xg_synth_params *p,
                      const struct xg_synth_zipf *z, uint64_t doc_index,
                      uint32_t *ranks_out, uint32_t *wdf_out, uint32_t cap);

/* Generate query qi: *n in [2, 5] (uniform; at most vocab) distinct ranks,
 * each floor(exp(U * ln(vocab))) for U uniform in [0, 1), clamped to
 * [1, vocab] (log-uniform over the vocabulary; a repeated rank is drawn
 * again).  `ranks` has room for XG_SYNTH_QUERY_MAX_TERMS.  Deterministic
 * in (seed, qi); cannot fail (vocab 0 gives *n = 0). */
void xg_synth_query(uint64_t seed, uint64_t qi, uint32_t vocab,
                    uint32_t *ranks, uint32_t *n);

/* ---- database (shim/tools/shim_synth.cc) ------------------------------------ */

/* Write the collection p (documents 0..n_docs-1 as docids 1..n_docs, each
 * word added with add_term(word, wdf), no positions, no data) into a new
 * compacted glass database at db_path.  `threads` builders run at once
 * (0: one per online CPU), each writing a slice of the documents into
 * temporary shards under DB_PATH.tmp-PID, which are then compacted in
 * order into DB_PATH.  Progress goes to stderr when !quiet and stderr is a
 * terminal.  Returns XG_OK, or XG_ERR_ARG (bad parameters, n_docs 0 or
 * over 2^32-1), XG_ERR_IO ("PATH: already exists", file system faults),
 * XG_ERR_NOMEM or XG_ERR_XAPIAN; on error nothing is left behind.
 * n_shards > 1: DB_PATH is a directory of glass shards shard0.. and a
 * XAPIANDB stub; document d (0-based) is in shard d % n_shards as local
 * docid d / n_shards + 1, so the stub numbers the documents 1..n as the
 * unsharded collection does (the index --shards rule). */
int xg_shim_synth_db(const char *db_path, const struct xg_synth_params *p,
                     uint32_t threads, uint32_t n_shards, int quiet);

#ifdef __cplusplus
}
#endif
#endif
