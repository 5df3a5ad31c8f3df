/** @file qlm_items.h
 *  @brief The body of every qlm kernel as one function per item
 *         (XG_HOST_DEVICE): qlm.cu's kernels call them for their thread's
 *         item, and the host emulation of the launchers
 *         (tests/qlm_emul.c) calls them in a loop, so the GPU engine's
 *         arithmetic and indexing are tested without a device.  i is the
 *         item (position, sa index, active slot, group or row), always
 *         below the kernel's item count.
 */
#ifndef XG_QLM_ITEMS_H
#define XG_QLM_ITEMS_H

#include <stdint.h>

#include "../runtime/host_device.h"
#include "qlm_formula.h"
#include "qlm_kern.h"

/* +1, atomically on the device (the host emulation is sequential). */
#ifdef __CUDA_ARCH__
#define XG_QLM_ADD1(p) atomicAdd((p), 1u)
#else
#define XG_QLM_ADD1(p) (++*(p))
#endif

XG_HOST_DEVICE static inline uint32_t xg_qlm_len_at(const uint32_t *doc,
                                                    const uint32_t *doc_end, uint32_t p)
{
    return doc_end[doc[p]] - p;
}

/* Document d's end marks the next one's first word; an empty document
 * ends where the one before it does, so marks add up. */
XG_HOST_DEVICE static inline void xg_qlm_i_doc_mark(const uint32_t *doc_end, uint32_t n,
                                                    uint32_t *mark, uint32_t d)
{
    if (doc_end[d] < n) XG_QLM_ADD1(&mark[doc_end[d]]);
}

/* Doubling, round 0: key = term id + 1, value = position. */
XG_HOST_DEVICE static inline void xg_qlm_i_first_keys(const uint32_t *ids, uint64_t *k,
                                                      uint32_t *v, uint32_t i)
{
    k[i] = (uint64_t)ids[i] + 1;
    v[i] = i;
}

/* Sorted item j goes to the j-th active slot (act NULL: slot j); heads of
 * runs of equal keys carry their slot. */
XG_HOST_DEVICE static inline void xg_qlm_i_place(const uint32_t *act, const uint64_t *sk,
                                                 const uint32_t *sv, uint32_t *sa,
                                                 uint32_t *hv, uint32_t j)
{
    const uint32_t a = act ? act[j] : j;
    sa[a] = sv[j];
    hv[j] = j == 0 || sk[j] != sk[j - 1] ? a : 0;
}

/* New rank (head slot + 1, head from a max-scan of hv) and whether the
 * item stays in a run of more than one (the next round's segments). */
XG_HOST_DEVICE static inline void xg_qlm_i_rerank(uint32_t na, const uint64_t *sk,
                                                  const uint32_t *sv, const uint32_t *head,
                                                  uint32_t *rank, uint32_t *keep, uint32_t j)
{
    rank[sv[j]] = head[j] + 1;
    keep[j] = (j > 0 && sk[j] == sk[j - 1]) || (j + 1 < na && sk[j] == sk[j + 1]);
}

/* A doubling round's key: (rank, rank of the suffix k words on or 0). */
XG_HOST_DEVICE static inline void xg_qlm_i_round_keys(const uint32_t *doc,
                                                      const uint32_t *doc_end, uint32_t k,
                                                      int pos_bits, const uint32_t *sa,
                                                      const uint32_t *rank, const uint32_t *act,
                                                      uint64_t *key, uint32_t *val, uint32_t j)
{
    const uint32_t p = sa[act[j]];
    const uint64_t k2 = xg_qlm_len_at(doc, doc_end, p) > k ? rank[p + k] : 0;
    key[j] = (uint64_t)rank[p] << pos_bits | k2;
    val[j] = p;
}

/* The plain key sort's pass for word w: term id + 1, or 0 past the end. */
XG_HOST_DEVICE static inline void xg_qlm_i_word_keys(const uint32_t *ids, const uint32_t *doc,
                                                     const uint32_t *doc_end, const uint32_t *sa,
                                                     uint32_t w, uint32_t *key, uint32_t *val,
                                                     uint32_t i)
{
    const uint32_t p = sa[i];
    key[i] = xg_qlm_len_at(doc, doc_end, p) > w ? ids[p + w] + 1 : 0;
    val[i] = p;
}

/* lenv[i] = min(len(sa[i]), sigma); lcp[i]: words shared with sa[i-1]. */
XG_HOST_DEVICE static inline void xg_qlm_i_lcp(const uint32_t *ids, const uint32_t *doc,
                                               const uint32_t *doc_end, const uint32_t *sa,
                                               uint32_t sigma, uint8_t *lenv, uint8_t *lcp,
                                               uint32_t i)
{
    const uint32_t y = sa[i], ly = xg_qlm_len_at(doc, doc_end, y);
    lenv[i] = (uint8_t)(ly < sigma ? ly : sigma);
    if (i == 0) {
        lcp[0] = 0;
        return;
    }
    const uint32_t x = sa[i - 1], lx = xg_qlm_len_at(doc, doc_end, x);
    uint32_t m = sigma;
    if (lx < m) m = lx;
    if (ly < m) m = ly;
    uint32_t l = 0;
    while (l < m && ids[x + l] == ids[y + l]) ++l;
    lcp[i] = (uint8_t)l;
}

/* Item j of level n heads a group when it shares fewer than n words with
 * the sa item before it (an item missing from the level shares fewer). */
XG_HOST_DEVICE static inline void xg_qlm_i_head(const uint32_t *L, uint32_t n,
                                                const uint8_t *lcp, uint32_t *head, uint32_t j)
{
    head[j] = j == 0 || lcp[L[j]] < n;
}

/* Group of item j (gid1: inclusive sum of heads), its first item, the
 * group count, G, and the key (group << dbits | document). */
XG_HOST_DEVICE static inline void xg_qlm_i_group(const uint32_t *L, uint32_t nL,
                                                 const uint32_t *head, const uint32_t *gid1,
                                                 const uint32_t *sa, const uint32_t *doc,
                                                 int dbits, uint32_t *gstart, uint32_t *G,
                                                 uint32_t *count, uint64_t *key, uint32_t j)
{
    const uint32_t g = gid1[j] - 1;
    if (head[j]) gstart[g] = j;
    if (j == nL - 1) {
        gstart[g + 1] = nL;
        count[1] = g + 1;
    }
    G[L[j]] = g;
    key[j] = (uint64_t)g << dbits | doc[sa[L[j]]];
}

/* Row r (below R = count[2]) starts its group's rows when its group
 * differs from the row before. */
XG_HOST_DEVICE static inline void xg_qlm_i_row_start(const uint32_t *count, uint32_t ng,
                                                     const uint64_t *ukey, int dbits,
                                                     uint32_t *rowstart, uint32_t r)
{
    const uint32_t R = count[2];
    if (r >= R) return;
    const uint64_t g = ukey[r] >> dbits;
    if (r == 0 || g != ukey[r - 1] >> dbits) rowstart[g] = r;
    if (r == R - 1) rowstart[ng] = R;
}

/* Group g's n-gram entry: an occurrence, f(x, C) in the chunk, documents,
 * global row offset (each output optional but pos). */
XG_HOST_DEVICE static inline void xg_qlm_i_gram(const uint32_t *gstart, const uint32_t *rowstart,
                                                const uint32_t *L, const uint32_t *sa,
                                                uint64_t word_base, uint64_t row_base,
                                                uint64_t *pos, uint64_t *z, uint64_t *df,
                                                uint64_t *off, uint32_t g)
{
    pos[g] = word_base + sa[L[gstart[g]]];
    if (z) z[g] = gstart[g + 1] - gstart[g];
    if (df) df[g] = rowstart[g + 1] - rowstart[g];
    if (off) off[g] = row_base + rowstart[g];
}

/* Row r of level n: its docid, eq. 2 and the four counts (qlm_kern.h's
 * xg_qlm_probs_gpu).  A missing history sets count[3]. */
XG_HOST_DEVICE static inline void xg_qlm_i_prob(struct xg_qlm_level cur,
                                                struct xg_qlm_level prev,
                                                struct xg_qlm_rowargs a, uint32_t *odoc,
                                                double *oprob, uint64_t *ocounts,
                                                uint32_t *count, uint32_t r)
{
    const uint64_t key = cur.ukey[r];
    const uint32_t g = (uint32_t)(key >> a.dbits);
    const uint32_t d = (uint32_t)(key & ((1ull << a.dbits) - 1));
    const uint64_t x = cur.ucnt[r];
    uint64_t y, w;
    if (a.n == 1) {
        y = a.doc_end[d] - (d ? a.doc_end[d - 1] : 0);
        w = a.n_words;
    } else {
        /* The group's history is the (n-1)-group of its first item. */
        const uint32_t p = prev.G[cur.L[cur.gstart[g]]];
        const uint64_t target = (uint64_t)p << a.dbits | d;
        uint32_t lo = 0, hi = prev.R;
        while (lo < hi) {
            const uint32_t mid = lo + (hi - lo) / 2;
            if (prev.ukey[mid] < target) lo = mid + 1; else hi = mid;
        }
        if (lo == prev.R || prev.ukey[lo] != target) {
            count[3] = 1;
            y = 1;
        } else {
            y = prev.ucnt[lo];
        }
        w = prev.gstart[p + 1] - prev.gstart[p];
    }
    const uint64_t z = a.z ? a.z[g] : cur.gstart[g + 1] - cur.gstart[g];
    if (a.w) w = a.w[g];
    odoc[r] = a.docids ? a.docids[d] : (uint32_t)(a.doc_base + d + 1);
    oprob[r] = xg_qlm_prob(a.lambda, x, y, z, w);
    if (ocounts) {
        ocounts[4 * (uint64_t)r] = x;
        ocounts[4 * (uint64_t)r + 1] = y;
        ocounts[4 * (uint64_t)r + 2] = z;
        ocounts[4 * (uint64_t)r + 3] = w;
    }
}

/* Query time: candidate t of the gathered unigram rows. */
XG_HOST_DEVICE static inline void xg_qlm_i_gather(const uint32_t *docid, const uint64_t *start,
                                                  const uint64_t *prefix, uint32_t n_ranges,
                                                  uint32_t *out, uint32_t t)
{
    const uint32_t r = xg_prefix_owner(prefix, n_ranges, t);
    out[t] = docid[start[r] + (t - prefix[r])];
}

/* Query time: candidate j's score, its words' log factors summed in
 * query order from 0.0. */
XG_HOST_DEVICE static inline void xg_qlm_i_score(const uint32_t *cand,
                                                 const struct xg_qlm_qword *words, uint32_t m,
                                                 const uint32_t *docid, const double *logp,
                                                 double *out, uint32_t j)
{
    const uint32_t d = cand[j];
    double s = 0.0;
    for (uint32_t i = 0; i < m; ++i) {
        const struct xg_qlm_qword w = words[i];
        double v = w.lb;
        uint64_t lo = w.row, hi = w.row + w.n_rows;
        while (lo < hi) {
            const uint64_t mid = lo + (hi - lo) / 2;
            if (docid[mid] < d) lo = mid + 1; else hi = mid;
        }
        if (lo < w.row + w.n_rows && docid[lo] == d) v = logp[lo];
        s += v;
    }
    out[j] = s;
}

#endif
