/** @file synth.c
 *  @brief Synthetic collection and query sampling (see synth.h): the RNG,
 *         the word spelling, the Zipf alias table, documents and queries.
 *
 *  Plain C, no Xapian.  Callers: shim/tools/shim_synth.cc (one thread per slice
 *  of documents, sharing one read-only Zipf table), plugin/cli/cli_synth.c
 *  (queries) and tests/test_synth.c.  Invariants: a document's RNG is a
 *  pure function of (seed, doc_index), so the collection does not depend
 *  on the thread count; its ranks come back ascending and distinct, with
 *  wdfs summing to its length.  A document costs one normal draw plus one
 *  64-bit draw and one table read per token, then a radix sort of the
 *  tokens (lengths average about 740 at the default mu and sigma).
 */
#include "synth.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../gpu/runtime/error.h"

/* Stream tags that keep document and query sequences apart. */
#define STREAM_DOC 0x646f63756d656e74ull    /* "document" */
#define STREAM_QUERY 0x7175657279ull        /* "query" */
/* A query redraws a repeated rank at most this often, then takes the
 * smallest unused rank (only tiny vocabularies get there). */
#define QUERY_REDRAWS 64
/* Radix sort digit width; below INSERTION_MAX tokens insertion sort. */
#define RADIX_BITS 11
#define INSERTION_MAX 48

static const double two_pi = 6.283185307179586476925286766559;

int xg_synth_params_check(const struct xg_synth_params *p)
{
    if (!p)
        return xg_set_error(XG_ERR_ARG, "synth: NULL parameters");
    if (p->vocab == 0)
        return xg_set_error(XG_ERR_ARG, "synth: vocabulary must be >= 1");
    if (!isfinite(p->zipf_s) || p->zipf_s < 0)
        return xg_set_error(XG_ERR_ARG, "synth: Zipf exponent must be a "
                            "finite number >= 0, got %g", p->zipf_s);
    if (!isfinite(p->mu))
        return xg_set_error(XG_ERR_ARG, "synth: mu must be finite");
    if (!isfinite(p->sigma) || p->sigma < 0)
        return xg_set_error(XG_ERR_ARG, "synth: sigma must be a finite "
                            "number >= 0, got %g", p->sigma);
    return XG_OK;
}

/* ---- random numbers --------------------------------------------------- */

/* The splitmix64 output function: a bijection with good avalanche. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t splitmix64(uint64_t *x)
{
    return mix64(*x += 0x9E3779B97F4A7C15ull);
}

void xg_synth_rng_init(struct xg_synth_rng *r, uint64_t seed, uint64_t stream,
                       uint64_t index)
{
    uint64_t h = mix64(seed + 0x9E3779B97F4A7C15ull);
    h = mix64(h ^ (stream * 0xD1B54A32D192ED03ull));
    h = mix64(h + index * 0x9E3779B97F4A7C15ull);
    /* Four consecutive splitmix64 outputs are never all zero. */
    for (int i = 0; i < 4; ++i)
        r->s[i] = splitmix64(&h);
}

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static inline uint64_t rng_next(struct xg_synth_rng *r)  /* xoshiro256** */
{
    uint64_t *s = r->s;
    const uint64_t result = rotl(s[1] * 5, 7) * 9;
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

uint64_t xg_synth_rng_next(struct xg_synth_rng *r) { return rng_next(r); }

double xg_synth_rng_unit(struct xg_synth_rng *r)
{
    return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

double xg_synth_rng_normal(struct xg_synth_rng *r)
{
    double u1 = 1.0 - xg_synth_rng_unit(r);  /* (0, 1]: log is finite */
    double u2 = xg_synth_rng_unit(r);
    return sqrt(-2.0 * log(u1)) * cos(two_pi * u2);
}

/* Uniform in [0, n) from the high 32 bits of one draw (n <= 2^32). */
static inline uint32_t rng_below(struct xg_synth_rng *r, uint32_t n)
{
    return (uint32_t)(((rng_next(r) >> 32) * n) >> 32);
}

/* ---- words ------------------------------------------------------------ */

size_t xg_synth_word(uint32_t rank, char *buf)
{
    char tmp[8];
    size_t n = 0;
    if (rank == 0) {
        buf[0] = '\0';
        return 0;
    }
    /* Bijective base 26: digits 1..26 spelt a..z, so every string of
     * letters is the spelling of exactly one rank. */
    while (rank > 0) {
        --rank;
        tmp[n++] = (char)('a' + rank % 26);
        rank /= 26;
    }
    buf[0] = 'q';
    for (size_t i = 0; i < n; ++i)
        buf[1 + i] = tmp[n - 1 - i];
    buf[n + 1] = '\0';
    return n + 1;
}

/* ---- Zipf sampler ----------------------------------------------------- */

int xg_synth_zipf_init(struct xg_synth_zipf *z, uint32_t vocab, double s)
{
    memset(z, 0, sizeof *z);
    if (vocab == 0)
        return xg_set_error(XG_ERR_ARG, "synth: vocabulary must be >= 1");
    if (!isfinite(s) || s < 0)
        return xg_set_error(XG_ERR_ARG, "synth: Zipf exponent must be a "
                            "finite number >= 0, got %g", s);
    double *prob = malloc((size_t)vocab * sizeof *prob);
    uint32_t *work = malloc((size_t)vocab * sizeof *work);
    z->thresh = malloc((size_t)vocab * sizeof *z->thresh);
    z->alias = malloc((size_t)vocab * sizeof *z->alias);
    if (!prob || !work || !z->thresh || !z->alias) {
        free(prob);
        free(work);
        xg_synth_zipf_free(z);
        return xg_set_error(XG_ERR_NOMEM, "synth: out of memory for a Zipf "
                            "table of %u words", vocab);
    }
    z->vocab = vocab;
    z->s = s;

    /* Sum smallest first for accuracy. */
    double total = 0;
    for (uint32_t i = vocab; i-- > 0;) {
        prob[i] = s == 1.0 ? 1.0 / ((double)i + 1) : pow((double)i + 1, -s);
        total += prob[i];
    }
    const double scale = (double)vocab / total;
    /* Vose: small slots (scaled probability < 1) from the front of
     * `work`, large ones from the back. */
    uint32_t n_small = 0, n_large = 0;
    for (uint32_t i = 0; i < vocab; ++i) {
        prob[i] *= scale;
        if (prob[i] < 1.0)
            work[n_small++] = i;
        else
            work[vocab - 1 - n_large++] = i;
    }
    while (n_small > 0 && n_large > 0) {
        uint32_t l = work[--n_small];
        uint32_t g = work[vocab - n_large];  /* the last large pushed */
        z->thresh[l] = (uint32_t)(prob[l] * 4294967296.0);
        z->alias[l] = g;
        prob[g] = (prob[g] + prob[l]) - 1.0;
        if (prob[g] < 1.0) {
            --n_large;
            work[n_small++] = g;
        }
    }
    /* What is left has probability 1 up to rounding: keep it always. */
    while (n_large > 0) {
        uint32_t g = work[vocab - n_large--];
        z->thresh[g] = UINT32_MAX;
        z->alias[g] = g;
    }
    while (n_small > 0) {
        uint32_t l = work[--n_small];
        z->thresh[l] = UINT32_MAX;
        z->alias[l] = l;
    }
    free(prob);
    free(work);
    return XG_OK;
}

void xg_synth_zipf_free(struct xg_synth_zipf *z)
{
    free(z->thresh);
    free(z->alias);
    memset(z, 0, sizeof *z);
}

uint32_t xg_synth_zipf_sample(const struct xg_synth_zipf *z,
                              struct xg_synth_rng *r)
{
    uint64_t x = rng_next(r);
    uint32_t i = (uint32_t)(((x >> 32) * z->vocab) >> 32);
    return ((uint32_t)x < z->thresh[i] ? i : z->alias[i]) + 1;
}

/* ---- documents -------------------------------------------------------- */

/* The length draw: the first two uniforms of the document's stream. */
static uint32_t draw_length(const struct xg_synth_params *p,
                            struct xg_synth_rng *r)
{
    double l = exp(p->mu + p->sigma * xg_synth_rng_normal(r));
    if (!(l < (double)XG_SYNTH_MAX_LEN))  /* also catches inf and NaN */
        return XG_SYNTH_MAX_LEN;
    uint32_t n = (uint32_t)lround(l);
    return n ? n : 1;
}

uint32_t xg_synth_doc_length(const struct xg_synth_params *p,
                             uint64_t doc_index)
{
    struct xg_synth_rng r;
    xg_synth_rng_init(&r, p->seed, STREAM_DOC, doc_index);
    return draw_length(p, &r);
}

/* Sort a[0..n) ascending; b is scratch of n.  Returns whichever of a and b
 * holds the result.  Values are < 2^bits. */
static uint32_t *sort_u32(uint32_t *a, uint32_t *b, uint32_t n, int bits)
{
    if (n <= INSERTION_MAX) {
        for (uint32_t i = 1; i < n; ++i) {
            uint32_t v = a[i], j = i;
            for (; j > 0 && a[j - 1] > v; --j)
                a[j] = a[j - 1];
            a[j] = v;
        }
        return a;
    }
    /* LSD radix sort in equal digits of at most RADIX_BITS bits. */
    int passes = (bits + RADIX_BITS - 1) / RADIX_BITS;
    if (passes < 1)
        passes = 1;
    const int w = (bits + passes - 1) / passes;
    const uint32_t mask = (1u << w) - 1;
    uint32_t count[1u << RADIX_BITS];
    for (int pass = 0; pass < passes; ++pass) {
        const int shift = pass * w;
        memset(count, 0, ((size_t)mask + 1) * sizeof count[0]);
        for (uint32_t i = 0; i < n; ++i)
            ++count[(a[i] >> shift) & mask];
        uint32_t sum = 0;
        for (uint32_t d = 0; d <= mask; ++d) {
            uint32_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (uint32_t i = 0; i < n; ++i)
            b[count[(a[i] >> shift) & mask]++] = a[i];
        uint32_t *t = a;
        a = b;
        b = t;
    }
    return a;
}

uint32_t xg_synth_doc(const struct xg_synth_params *p,
                      const struct xg_synth_zipf *z, uint64_t doc_index,
                      uint32_t *ranks_out, uint32_t *wdf_out, uint32_t cap)
{
    struct xg_synth_rng r;
    xg_synth_rng_init(&r, p->seed, STREAM_DOC, doc_index);
    const uint32_t len = draw_length(p, &r);
    if (len > cap)
        return 0;
    for (uint32_t i = 0; i < len; ++i)
        ranks_out[i] = xg_synth_zipf_sample(z, &r);

    int bits = 0;
    while (bits < 32 && (z->vocab >> bits) != 0)
        ++bits;
    const uint32_t *sorted = sort_u32(ranks_out, wdf_out, len, bits);

    /* Run-length encode in place: run k is written at index k <= the
     * run's start, so nothing unread is overwritten. */
    uint32_t k = 0;
    for (uint32_t i = 0; i < len;) {
        uint32_t v = sorted[i], j = i + 1;
        while (j < len && sorted[j] == v)
            ++j;
        ranks_out[k] = v;
        wdf_out[k] = j - i;
        ++k;
        i = j;
    }
    return k;
}

/* ---- queries ---------------------------------------------------------- */

void xg_synth_query(uint64_t seed, uint64_t qi, uint32_t vocab,
                    uint32_t *ranks, uint32_t *n)
{
    struct xg_synth_rng r;
    xg_synth_rng_init(&r, seed, STREAM_QUERY, qi);
    uint32_t want = XG_SYNTH_QUERY_MIN_TERMS +
                    rng_below(&r, XG_SYNTH_QUERY_MAX_TERMS -
                                      XG_SYNTH_QUERY_MIN_TERMS + 1);
    if (want > vocab)
        want = vocab;
    const double ln_vocab = vocab ? log((double)vocab) : 0.0;
    for (uint32_t t = 0; t < want; ++t) {
        uint32_t rank = 0;
        for (int tries = 0; tries < QUERY_REDRAWS && rank == 0; ++tries) {
            double x = floor(exp(xg_synth_rng_unit(&r) * ln_vocab));
            rank = x < 1.0 ? 1 : x > (double)vocab ? vocab : (uint32_t)x;
            for (uint32_t u = 0; u < t; ++u)
                if (ranks[u] == rank)
                    rank = 0;
        }
        /* Still a repeat: the smallest rank not used yet (want <= vocab,
         * so one exists among 1..t+1). */
        for (uint32_t c = 1; rank == 0; ++c) {
            rank = c;
            for (uint32_t u = 0; u < t; ++u)
                if (ranks[u] == c)
                    rank = 0;
        }
        ranks[t] = rank;
    }
    *n = want;
}
