/** @file dict_gpu_items.h
 *  @brief The GPU dictionary's kernel bodies (text/dict_gpu.h), each as a function
 *         of one item, shared by text/dict_gpu.cu's kernels and the host emulation
 *         that runs them in loops without a device (tests/qlm_emul.c).
 */
#ifndef XG_GDICT_ITEMS_H
#define XG_GDICT_ITEMS_H

#include <stdint.h>

#include "../runtime/host_device.h"
#include "hash.h"

/* A byte b after the byte `prev` starts a word: not a newline, after one
 * (the text's first byte: after a newline). */
XG_HOST_DEVICE static inline uint32_t xg_gdict_starts(unsigned char prev, unsigned char b)
{
    return b != '\n' && prev == '\n';
}

XG_HOST_DEVICE static inline uint8_t xg_gdict_i_start(const unsigned char *t, uint32_t p)
{
    return (uint8_t)xg_gdict_starts(p ? t[p - 1] : '\n', t[p]);
}

/* A word's sort key.  Up to 7 bytes: the word itself, its bytes and its
 * length, so no two words share one and the check skips them (most words
 * of a text; the check's random reads were its slowest step).  Longer: its
 * hash (masked: tests force collisions) with the top bit set, to be
 * checked byte by byte. */
#define XG_GDICT_HASHED ((uint64_t)1 << 63)

XG_HOST_DEVICE static inline uint64_t xg_gdict_key(const unsigned char *s, uint32_t len,
                                                   uint64_t mask)
{
    if (len > 7) return xg_text_hash(s, len, mask) | XG_GDICT_HASHED;
    uint64_t k = (uint64_t)len << 56;
    for (uint32_t i = 0; i < len; ++i) k |= (uint64_t)s[i] << (8 * i);
    return k;
}

/* Word i: its length, key and index, and whether it starts a document
 * (the first word, and each after an empty line). */
XG_HOST_DEVICE static inline void xg_gdict_i_word(const unsigned char *t, uint32_t n,
                                                  const uint32_t *start, uint64_t mask,
                                                  uint32_t *len, uint64_t *key, uint32_t *idx,
                                                  uint8_t *docflag, uint32_t i)
{
    const uint32_t s = start[i];
    uint32_t e = s;
    while (e < n && t[e] != '\n') ++e;
    len[i] = e - s;
    key[i] = xg_gdict_key(t + s, e - s, mask);
    idx[i] = i;
    docflag[i] = i == 0 || (s >= 2 && t[s - 1] == '\n' && t[s - 2] == '\n');
}

XG_HOST_DEVICE static inline void xg_gdict_i_doclen(const uint32_t *dstart, uint32_t nd,
                                                    uint32_t nw, uint32_t *doclen,
                                                    uint32_t d)
{
    doclen[d] = (d + 1 < nd ? dstart[d + 1] : nw) - dstart[d];
}

XG_HOST_DEVICE static inline uint32_t xg_gdict_i_head(const uint64_t *key, uint32_t i)
{
    return i == 0 || key[i] != key[i - 1];
}

/* 1 when sorted word i (key[i]) differs in bytes from its key run's
 * first word (rep of its 1-based group gid[i]); a key that is the word
 * itself needs no look. */
XG_HOST_DEVICE static inline int xg_gdict_i_collides(const unsigned char *t,
                                                     const uint32_t *start,
                                                     const uint32_t *len, const uint64_t *key,
                                                     const uint32_t *sidx,
                                                     const uint32_t *gid,
                                                     const uint32_t *rep, uint32_t i)
{
    if (!(key[i] & XG_GDICT_HASHED)) return 0;
    const uint32_t w = sidx[i], r = rep[gid[i] - 1];
    if (w == r) return 0;
    const uint32_t l = len[w];
    if (len[r] != l) return 1;
    for (uint32_t k = 0; k < l; ++k)
        if (t[start[w] + k] != t[start[r] + k]) return 1;
    return 0;
}

/* The term bytes that rounds 0 to r have compared: 8 in round 0, whose
 * key is the bytes alone (every term is in group 0 then), 4 more in each
 * later round (group in the key's upper half). */
XG_HOST_DEVICE static inline uint32_t xg_gdict_round_bytes(uint32_t r)
{
    return 4 * r + 8;
}

/* Round r's key of the term at position j: bytes [0, 8) of the term in
 * round 0, else its group, then bytes [4r + 4, 4r + 8); big-endian, zero
 * past its end (by_length: its group, then its length). */
XG_HOST_DEVICE static inline uint64_t xg_gdict_i_round_key(const unsigned char *t,
                                                           const uint32_t *start,
                                                           const uint32_t *len,
                                                           const uint32_t *rep,
                                                           const uint32_t *perm,
                                                           const uint32_t *group, uint32_t r,
                                                           int by_length, uint32_t j)
{
    const uint32_t w = rep[perm[j]], l = len[w];
    if (by_length) return (uint64_t)group[j] << 32 | l;
    const uint32_t from = r == 0 ? 0 : xg_gdict_round_bytes(r) - 4, n = r == 0 ? 8 : 4;
    uint64_t c = 0;
    for (uint32_t k = 0; k < n; ++k) {
        const uint32_t at = from + k;
        c = (c << 8) | (at < l ? t[start[w] + at] : 0u);
    }
    return r == 0 ? c : (uint64_t)group[j] << 32 | c;
}

/* For the term at sorted position j: bit 0, still tied with a neighbour
 * and longer than the bytes compared (another round of bytes); bit 1,
 * tied at all (none: the terms are ranked). */
XG_HOST_DEVICE static inline int xg_gdict_i_unresolved(const uint64_t *key,
                                                       const uint32_t *len,
                                                       const uint32_t *rep,
                                                       const uint32_t *perm, uint32_t nt,
                                                       uint32_t compared, uint32_t j)
{
    const int tied = (j > 0 && key[j] == key[j - 1]) || (j + 1 < nt && key[j] == key[j + 1]);
    return tied ? 2 | (len[rep[perm[j]]] > compared) : 0;
}

/* rank[term] = its position j; the ranked term's offset and length. */
XG_HOST_DEVICE static inline void xg_gdict_i_rank(const uint32_t *perm, const uint32_t *rep,
                                                  const uint32_t *start, const uint32_t *len,
                                                  uint32_t *rank, uint32_t *term_off,
                                                  uint32_t *term_len, uint32_t j)
{
    const uint32_t tm = perm[j], w = rep[tm];
    rank[tm] = j;
    term_off[j] = start[w];
    term_len[j] = len[w];
}

/* Sorted word i's term id: its group's rank. */
XG_HOST_DEVICE static inline uint32_t xg_gdict_term_of(const uint32_t *gid,
                                                       const uint32_t *rank, uint32_t i)
{
    return rank[gid[i] - 1];
}

XG_HOST_DEVICE static inline void xg_gdict_i_id(const uint32_t *sidx, const uint32_t *gid,
                                                const uint32_t *rank, uint32_t *ids,
                                                uint32_t i)
{
    ids[sidx[i]] = xg_gdict_term_of(gid, rank, i);
}

/* rank[term] for the term at sorted position j. */
XG_HOST_DEVICE static inline void xg_gdict_i_invert(const uint32_t *perm, uint32_t *rank,
                                                    uint32_t j)
{
    rank[perm[j]] = j;
}

/* Word w's 1-based document: the last document whose first word (dstart,
 * ascending, dstart[0] = 0) is at or before it. */
XG_HOST_DEVICE static inline uint32_t xg_gdict_doc_of(const uint32_t *dstart, uint32_t nd,
                                                      uint32_t w)
{
    uint32_t lo = 0, hi = nd;       /* dstart[lo] <= w < dstart[hi] */
    while (hi - lo > 1) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if (dstart[mid] <= w) lo = mid;
        else hi = mid;
    }
    return lo + 1;
}

/* For a caller that needs only the (term, document) pairs, sorted (the
 * weight engine): each key run is one term's words in word order (the
 * sort is stable), so their documents ascend; moving each run to its
 * term's place in rank order sorts the pairs without a sort of their own.
 * run_start[g]: the sorted position of group g's (0-based) first word. */
XG_HOST_DEVICE static inline void xg_gdict_i_run_start(const uint32_t *gid,
                                                       uint32_t *run_start, uint32_t i)
{
    if (i == 0 || gid[i] != gid[i - 1]) run_start[gid[i] - 1] = i;
}

/* count[rank[g]] = the words of group g (nt groups of nw words). */
XG_HOST_DEVICE static inline void xg_gdict_i_rank_count(const uint32_t *run_start,
                                                        const uint32_t *rank, uint32_t nt,
                                                        uint32_t nw, uint32_t *count,
                                                        uint32_t g)
{
    count[rank[g]] = (g + 1 < nt ? run_start[g + 1] : nw) - run_start[g];
}

/* Sorted word i's pair, term << dbits | its document - 1, at its term's
 * first place (out_start, by term id) plus its place in its run. */
XG_HOST_DEVICE static inline void xg_gdict_i_sorted_pair(const uint32_t *sidx,
                                                         const uint32_t *gid,
                                                         const uint32_t *rank,
                                                         const uint32_t *run_start,
                                                         const uint32_t *out_start,
                                                         const uint32_t *dstart, uint32_t nd,
                                                         int dbits, uint64_t *key, uint32_t i)
{
    const uint32_t g = gid[i] - 1, t = rank[g];
    key[out_start[t] + (i - run_start[g])] =
        (uint64_t)t << dbits | (xg_gdict_doc_of(dstart, nd, sidx[i]) - 1);
}

#endif
