/** @file shim_positions.cc
 *  @brief Rebuild every document's word sequence from a glass database's
 *         positional postings (the input of `xapian-gpu qlm --db`).
 *
 *  Glass keys its position table by term, then docid (glass_positionlist.h,
 *  GlassPositionListTable::make_key), so the read walks each shard's terms
 *  in byte order and each term's postings in docid order: the position
 *  table is read front to back instead of once per (document, term) at
 *  random.  Prefixed terms (first byte 'A'..'Z', a contiguous range in byte
 *  order) are skipped with one skip_to().  Each position is kept as
 *  (document index, position << 32 | term index) in fixed blocks, so growth
 *  never copies; the positions are then put in document order by a
 *  counting sort on the document index and each document's by a sort on
 *  (position, term index).  Term indexes ascend with the term's bytes
 *  within a shard, and a document lives in one shard, so at a position
 *  held by several terms the first kept is the first in byte order.
 *
 *  Called by plugin/cli_qlm.c; rules and limits in xg_positions.h and
 *  docs/qlm.md.
 */
#include "shim_int.h"
#include "xg_positions.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace {

/* Positions per storage block (12 MiB a block). */
constexpr size_t BLOCK = size_t(1) << 20;
/* Bytes of a bad term shown in a message. */
constexpr size_t SHOW_MAX = 40;

struct block {
    std::unique_ptr<uint32_t[]> doc;    /* dense document index */
    std::unique_ptr<uint64_t[]> key;    /* position << 32 | term index */
};

struct free_deleter {
    void operator()(void *p) const { free(p); }
};

/* Everything read so far. */
struct store {
    std::vector<block> blocks;
    size_t used = BLOCK;                /* entries in the last block */
    uint64_t n = 0;                     /* positions */
    uint64_t bytes = 0;                 /* sum of (word length + 1) */
    std::vector<uint64_t> per_doc;      /* positions per document */
    std::string words;                  /* term bytes, by term index */
    std::vector<uint64_t> word_off{0};  /* [terms + 1] */

    void push(uint32_t doc, uint64_t key)
    {
        if (used == BLOCK) {
            blocks.emplace_back();
            blocks.back().doc.reset(new uint32_t[BLOCK]);
            blocks.back().key.reset(new uint64_t[BLOCK]);
            used = 0;
        }
        blocks.back().doc[used] = doc;
        blocks.back().key[used++] = key;
        ++per_doc[doc];
        ++n;
    }
};

/* The index of docid d among the ascending ids[0, n), searching forward
 * from `at` (a term's postings ascend, so its documents are found in
 * order); n if it is not there. */
uint64_t seek(const uint32_t *ids, uint64_t n, uint64_t at, uint32_t d)
{
    if (at >= n || ids[at] >= d)
        return at < n && ids[at] == d ? at : n;
    uint64_t lo = at, step = 1;         /* ids[lo] < d */
    while (lo + step < n && ids[lo + step] < d) {
        lo += step;
        step *= 2;
    }
    /* ids[lo + step] >= d, or lo + step >= n: the answer is in (lo, hi). */
    const uint64_t hi = lo + step < n ? lo + step + 1 : n;
    const uint32_t *p = std::lower_bound(ids + lo + 1, ids + hi, d);
    return p != ids + hi && *p == d ? (uint64_t)(p - ids) : n;
}

/* Why `t` cannot be a word of the text form (wt_tokenize.h: one word per
 * line, UTF-8 without control characters), or NULL. */
const char *word_fault(const std::string &t, char *detail, size_t cap)
{
    for (unsigned char c : t)
        if (c < 0x20 || c == 0x7F) {
            snprintf(detail, cap, "control character 0x%02x", c);
            return detail;
        }
    if (xg_wt_utf8_valid(t.data(), t.size()) != t.size())
        return "invalid UTF-8";
    return NULL;
}

/* `t` for a message: printable ASCII as is, other bytes as \xNN, cut. */
std::string shown(const std::string &t)
{
    std::string s;
    char hex[8];
    for (size_t i = 0; i < t.size() && i < SHOW_MAX; ++i) {
        unsigned char c = (unsigned char)t[i];
        if (c >= 0x20 && c < 0x7F && c != '\\') {
            s += (char)c;
        } else {
            snprintf(hex, sizeof hex, "\\x%02x", c);
            s += hex;
        }
    }
    if (t.size() > SHOW_MAX)
        s += "...";
    return s;
}

/* Read shard s's unprefixed positional postings into st. */
int read_shard(xg_db *db, size_t s, const std::vector<uint32_t> &docids,
               store &st, xg_pos_progress_fn progress, void *ctx)
{
    const char *where = db->shard_paths[s].c_str();
    const Xapian::Database &sh = db->shards[s];
    if (sh.get_doccount() && !sh.has_positions())
        return xg_set_error(XG_ERR_FORMAT, "%s: no positional information "
                            "(indexed without positions; qlm --db rebuilds "
                            "n-grams from positions)", where);
    const uint32_t n_shards = (uint32_t)db->shards.size();
    const uint32_t add = (uint32_t)s + 1;
    const uint64_t n_docs = docids.size();
    Xapian::TermIterator t = sh.allterms_begin();
    const Xapian::TermIterator t_end = sh.allterms_end();
    while (t != t_end) {
        const std::string term = *t;
        if (!term.empty() && term[0] >= 'A' && term[0] <= 'Z') {
            /* Every prefixed term sorts before '[' (0x5B). */
            t.skip_to("[");
            continue;
        }
        const uint64_t tid = st.word_off.size() - 1;
        bool has = false;
        uint64_t at = 0;
        Xapian::PostingIterator p = sh.postlist_begin(term);
        const Xapian::PostingIterator p_end = sh.postlist_end(term);
        for (; p != p_end; ++p) {
            Xapian::PositionIterator q = p.positionlist_begin();
            const Xapian::PositionIterator q_end = p.positionlist_end();
            if (q == q_end)
                continue;
            const uint32_t did = (*p - 1) * n_shards + add;
            if (!has) {
                char detail[40];
                const char *why = word_fault(term, detail, sizeof detail);
                if (why)
                    return xg_set_error(XG_ERR_FORMAT, "%s: term '%s' "
                                        "(docid %u) has positions but "
                                        "cannot be a word: %s", where,
                                        shown(term).c_str(), did, why);
                if (tid >= UINT32_MAX)
                    return xg_set_error(XG_ERR_FORMAT, "%s: more than "
                                        "2^32-1 positional terms", where);
                has = true;
            }
            at = seek(docids.data(), n_docs, at, did);
            if (at == n_docs)
                return xg_set_error(XG_ERR_XAPIAN, "%s: database changed "
                                    "during the read (docid %u of term "
                                    "'%s' is not a live document)", where,
                                    did, shown(term).c_str());
            const uint64_t before = st.n;
            for (; q != q_end; ++q)
                st.push((uint32_t)at, (uint64_t)*q << 32 | tid);
            st.bytes += (st.n - before) * (term.size() + 1);
        }
        if (has) {
            st.words += term;
            st.word_off.push_back(st.words.size());
        }
        if (progress)
            progress(ctx, st.word_off.size() - 1, st.n, 0);
        ++t;
    }
    return XG_OK;
}

} // namespace

extern "C" {

/* See xg_positions.h. */
int xg_shim_pos_read(xg_db *db, xg_pos_progress_fn progress, void *ctx,
                     struct xg_wt_text *out, struct xg_pos_stats *stats)
{
    if (!db || !out)
        return xg_set_error(XG_ERR_ARG, "xg_shim_pos_read: NULL argument");
    memset(out, 0, sizeof *out);
    const char *where = db->name.c_str();
    XG_SHIM_TRY
        /* Live documents, combined docids ascending. */
        const uint64_t n_docs = db->combined.get_doccount();
        std::vector<uint32_t> docids(n_docs), lens(n_docs);
        int rc = n_docs ? xg_shim_db_doclens(db, docids.data(), lens.data())
                        : XG_OK;
        if (rc)
            return rc;
        lens = std::vector<uint32_t>();
        store st;
        st.per_doc.assign(n_docs, 0);
        for (size_t s = 0; s < db->shards.size(); ++s) {
            where = db->shard_paths[s].c_str();
            rc = read_shard(db, s, docids, st, progress, ctx);
            if (rc)
                return rc;
        }
        where = db->name.c_str();
        if (progress)
            progress(ctx, st.word_off.size() - 1, st.n, 1);

        /* Counting sort by document: per_doc becomes each document's end. */
        uint64_t sum = 0;
        for (uint64_t &c : st.per_doc) {
            const uint64_t k = c;
            c = sum;
            sum += k;
        }
        std::unique_ptr<uint64_t[]> key(new uint64_t[st.n ? st.n : 1]);
        for (size_t b = 0; b < st.blocks.size(); ++b) {
            const size_t n = b + 1 == st.blocks.size() ? st.used : BLOCK;
            const uint32_t *doc = st.blocks[b].doc.get();
            const uint64_t *k = st.blocks[b].key.get();
            for (size_t i = 0; i < n; ++i)
                key[st.per_doc[doc[i]]++] = k[i];
            st.blocks[b] = block();
        }

        /* The text: each document's words in position order. */
        std::unique_ptr<char, free_deleter> buf(
            (char *)malloc(st.bytes + n_docs + 1));
        std::unique_ptr<uint32_t, free_deleter> ids(
            (uint32_t *)malloc((n_docs ? n_docs : 1) * sizeof(uint32_t)));
        if (!buf || !ids)
            return xg_set_error(XG_ERR_NOMEM, "%s: out of memory", where);
        char *b = buf.get();
        size_t len = 0;
        uint64_t begin = 0, kept_docs = 0, shared = 0, words = 0;
        for (uint64_t j = 0; j < n_docs; ++j) {
            const uint64_t end = st.per_doc[j];
            if (begin == end)
                continue;
            std::sort(key.get() + begin, key.get() + end);
            if (len)
                b[len++] = '\n';
            for (uint64_t i = begin; i < end; ++i) {
                if (i > begin && key[i] >> 32 == key[i - 1] >> 32) {
                    ++shared;
                    continue;
                }
                const uint64_t tid = key[i] & 0xFFFFFFFFu;
                const uint64_t wlen = st.word_off[tid + 1] - st.word_off[tid];
                memcpy(b + len, st.words.data() + st.word_off[tid], wlen);
                len += wlen;
                b[len++] = '\n';
                ++words;
            }
            ids.get()[kept_docs++] = docids[j];
            begin = end;
        }
        out->buf = buf.release();
        out->len = len;
        out->docids = ids.release();
        out->n_docs = kept_docs;
        out->n_empty = n_docs - kept_docs;
        if (stats) {
            stats->n_docs = n_docs;
            stats->n_terms = st.word_off.size() - 1;
            stats->n_positions = st.n;
            stats->n_words = words;
            stats->n_shared = shared;
            stats->n_empty = n_docs - kept_docs;
        }
        return XG_OK;
    XG_SHIM_CATCH(where)
}

} // extern "C"
