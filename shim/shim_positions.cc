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
 *  Called by plugin/cli/cli_qlm.c; rules and limits in xg_positions.h and
 *  docs/qlm.md.
 */
#include "shim_int.h"
#include "xg_positions.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>

namespace {

/* Positions per storage block (768 KiB a block; each task has its own). */
constexpr size_t BLOCK = size_t(1) << 16;
/* Reading threads at most: each holds a Database open (a handful of file
 * descriptors), and the reads are bound by Xapian's preads long before. */
constexpr uint32_t MAX_THREADS = 32;
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

/* Why `t` cannot be a word of the text form (text/tokenize.h: one word per
 * line, UTF-8 without control characters), or NULL. */
const char *word_fault(const std::string &t, char *detail, size_t cap)
{
    for (unsigned char c : t)
        if (c < 0x20 || c == 0x7F) {
            snprintf(detail, cap, "control character 0x%02x", c);
            return detail;
        }
    if (xg_text_utf8_valid(t.data(), t.size()) != t.size())
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

/* One shard's unprefixed terms (prefixed ones, first byte 'A'..'Z', sort
 * before '[' and are passed over with one skip_to), with their
 * frequencies for splitting the walk into tasks. */
struct shard_terms {
    std::vector<std::string> terms;
    std::vector<uint64_t> freq;
};

void list_terms(const Xapian::Database &sh, shard_terms &out)
{
    Xapian::TermIterator t = sh.allterms_begin();
    const Xapian::TermIterator t_end = sh.allterms_end();
    while (t != t_end) {
        std::string term = *t;
        if (!term.empty() && term[0] >= 'A' && term[0] <= 'Z') {
            t.skip_to("[");
            continue;
        }
        out.freq.push_back(t.get_termfreq());
        out.terms.push_back(std::move(term));
        ++t;
    }
}

/* A contiguous range of one shard's terms, read by one thread. */
struct task {
    size_t shard = 0, lo = 0, hi = 0;
    store st;
    int rc = XG_OK;
    std::string msg;            /* the worker's error message */
};

/* What the workers share. */
struct walk {
    xg_db *db;
    const std::vector<uint32_t> *docids;
    const std::vector<shard_terms> *terms;
    std::vector<task> *tasks;
    std::vector<Xapian::rev> revision;  /* per shard, read before the threads */
    std::atomic<size_t> next{0};
    std::atomic<bool> failed{false};
    std::atomic<uint64_t> n_walked{0}, n_positions{0};
    uint64_t n_listed = 0;          /* unprefixed terms of all shards */
    std::atomic<uint32_t> running{0};
};

/* Read task k's postings: its own Database object (Xapian objects are not
 * shared between threads), at the revision the caller opened. */
int read_task(walk &w, task &k)
{
    const char *where = w.db->shard_paths[k.shard].c_str();
    XG_SHIM_TRY
        Xapian::Database sh(w.db->shard_paths[k.shard], Xapian::DB_BACKEND_GLASS);
        if (sh.get_revision() != w.revision[k.shard])
            return xg_set_error(XG_ERR_XAPIAN, "%s: database changed during "
                                "the read (revision %llu, then %llu)", where,
                                (unsigned long long)w.revision[k.shard],
                                (unsigned long long)sh.get_revision());
        const uint32_t n_shards = (uint32_t)w.db->shards.size();
        const uint32_t add = (uint32_t)k.shard + 1;
        const std::vector<uint32_t> &docids = *w.docids;
        const uint64_t n_docs = docids.size();
        const shard_terms &terms = (*w.terms)[k.shard];
        store &st = k.st;
        for (size_t i = k.lo; i < k.hi && !w.failed.load(); ++i) {
            const std::string &term = terms.terms[i];
            const uint64_t tid = st.word_off.size() - 1;
            const uint64_t before_term = st.n;
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
            w.n_walked.fetch_add(1, std::memory_order_relaxed);
            w.n_positions.fetch_add(st.n - before_term, std::memory_order_relaxed);
        }
        return XG_OK;
    XG_SHIM_CATCH(where)
}

/* A worker: tasks in order until none is left or one has failed.  The
 * error message is thread-local, so a failure's text is kept in its task. */
void worker(walk *w)
{
    for (;;) {
        const size_t k = w->next.fetch_add(1);
        if (k >= w->tasks->size() || w->failed.load())
            break;
        task &t = (*w->tasks)[k];
        t.rc = read_task(*w, t);
        if (t.rc) {
            t.msg = xg_last_error();
            w->failed.store(true);
        }
    }
    w->running.fetch_sub(1);
}

/* Cut each shard's terms into about `per_shard` ranges of similar total
 * frequency (postings); a term is never split. */
void plan_tasks(const std::vector<shard_terms> &terms, size_t per_shard,
                std::vector<task> &tasks)
{
    for (size_t s = 0; s < terms.size(); ++s) {
        const std::vector<uint64_t> &f = terms[s].freq;
        uint64_t total = 0;
        for (uint64_t x : f)
            total += x;
        const uint64_t share = total / per_shard + 1;
        size_t lo = 0;
        uint64_t acc = 0;
        for (size_t i = 0; i < f.size(); ++i) {
            acc += f[i];
            if (acc >= share || i + 1 == f.size()) {
                tasks.emplace_back();
                tasks.back().shard = s;
                tasks.back().lo = lo;
                tasks.back().hi = i + 1;
                lo = i + 1;
                acc = 0;
            }
        }
    }
}

} // namespace

extern "C" {

/* See xg_positions.h. */
int xg_shim_pos_read(xg_db *db, uint32_t threads, xg_pos_progress_fn progress,
                     void *ctx, struct xg_text *out,
                     struct xg_pos_stats *stats)
{
    if (!db || !out)
        return xg_set_error(XG_ERR_ARG, "xg_shim_pos_read: NULL argument");
    memset(out, 0, sizeof *out);
    if (threads == 0)
        threads = 1;
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
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

        /* Every shard's unprefixed terms, then tasks for the threads. */
        std::vector<shard_terms> terms(db->shards.size());
        for (size_t s = 0; s < db->shards.size(); ++s) {
            where = db->shard_paths[s].c_str();
            const Xapian::Database &sh = db->shards[s];
            if (sh.get_doccount() && !sh.has_positions())
                return xg_set_error(XG_ERR_FORMAT, "%s: no positional "
                                    "information (indexed without positions; "
                                    "qlm --db rebuilds n-grams from "
                                    "positions)", where);
            list_terms(sh, terms[s]);
        }
        where = db->name.c_str();
        std::vector<task> tasks;
        plan_tasks(terms, threads == 1 ? 1 : 4 * (size_t)threads, tasks);

        walk w;
        w.db = db;
        w.docids = &docids;
        w.terms = &terms;
        w.tasks = &tasks;
        for (const shard_terms &t : terms)
            w.n_listed += t.terms.size();
        for (const Xapian::Database &sh : db->shards)
            w.revision.push_back(sh.get_revision());
        const uint32_t n_threads =
            tasks.size() < threads ? (uint32_t)std::max<size_t>(tasks.size(), 1) : threads;
        w.running.store(n_threads);
        {
            /* Joins on every way out; a thread that cannot start throws,
             * and the others stop after their current task. */
            struct joiner {
                walk &w;
                std::vector<std::thread> pool;
                ~joiner()
                {
                    w.failed.store(true);
                    for (std::thread &t : pool)
                        if (t.joinable())
                            t.join();
                }
            } j{w, {}};
            for (uint32_t i = 0; i < n_threads; ++i)
                j.pool.emplace_back(worker, &w);
            while (w.running.load() > 0) {
                if (progress)
                    progress(ctx, w.n_walked.load(), w.n_listed,
                             w.n_positions.load(), 0);
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
            }
        }
        for (const task &t : tasks)
            if (t.rc)
                return xg_set_error(t.rc, "%s", t.msg.c_str());
        if (progress)
            progress(ctx, w.n_walked.load(), w.n_listed, w.n_positions.load(), 1);

        /* Term indexes: task k's local ids follow those of tasks before it,
         * so they ascend with the terms' bytes within a shard. */
        std::vector<uint64_t> base(tasks.size() + 1, 0);
        uint64_t n_pos = 0, bytes = 0;
        for (size_t k = 0; k < tasks.size(); ++k) {
            base[k + 1] = base[k] + tasks[k].st.word_off.size() - 1;
            n_pos += tasks[k].st.n;
            bytes += tasks[k].st.bytes;
        }
        if (base.back() > UINT32_MAX)
            return xg_set_error(XG_ERR_FORMAT, "%s: more than 2^32-1 "
                                "positional terms", where);

        /* Counting sort by document: per_doc becomes each document's end. */
        std::vector<uint64_t> per_doc(n_docs, 0);
        for (const task &t : tasks)
            for (size_t b = 0; b < t.st.blocks.size(); ++b) {
                const size_t n = b + 1 == t.st.blocks.size() ? t.st.used : BLOCK;
                const uint32_t *doc = t.st.blocks[b].doc.get();
                for (size_t i = 0; i < n; ++i)
                    ++per_doc[doc[i]];
            }
        uint64_t sum = 0;
        for (uint64_t &c : per_doc) {
            const uint64_t k = c;
            c = sum;
            sum += k;
        }
        std::unique_ptr<uint64_t[]> key(new uint64_t[n_pos ? n_pos : 1]);
        for (size_t k = 0; k < tasks.size(); ++k) {
            store &st = tasks[k].st;
            for (size_t b = 0; b < st.blocks.size(); ++b) {
                const size_t n = b + 1 == st.blocks.size() ? st.used : BLOCK;
                const uint32_t *doc = st.blocks[b].doc.get();
                const uint64_t *kk = st.blocks[b].key.get();
                for (size_t i = 0; i < n; ++i)
                    key[per_doc[doc[i]]++] = kk[i] + base[k];
                st.blocks[b] = block();
            }
        }

        /* The text: each document's words in position order. */
        std::unique_ptr<char, free_deleter> buf(
            (char *)malloc(bytes + n_docs + 1));
        std::unique_ptr<uint32_t, free_deleter> ids(
            (uint32_t *)malloc((n_docs ? n_docs : 1) * sizeof(uint32_t)));
        if (!buf || !ids)
            return xg_set_error(XG_ERR_NOMEM, "%s: out of memory", where);
        std::vector<const char *> word(base.back() + 1);
        std::vector<uint32_t> word_len(base.back() + 1);
        for (size_t k = 0; k < tasks.size(); ++k) {
            const store &st = tasks[k].st;
            for (uint64_t i = 0; i + 1 < st.word_off.size(); ++i) {
                word[base[k] + i] = st.words.data() + st.word_off[i];
                word_len[base[k] + i] = (uint32_t)(st.word_off[i + 1] - st.word_off[i]);
            }
        }
        char *b = buf.get();
        size_t len = 0;
        uint64_t begin = 0, kept_docs = 0, shared = 0, words = 0;
        for (uint64_t j = 0; j < n_docs; ++j) {
            const uint64_t end = per_doc[j];
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
                memcpy(b + len, word[tid], word_len[tid]);
                len += word_len[tid];
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
            stats->n_terms = base.back();
            stats->n_positions = n_pos;
            stats->n_words = words;
            stats->n_shared = shared;
            stats->n_empty = n_docs - kept_docs;
        }
        return XG_OK;
    XG_SHIM_CATCH(where)
}

} // extern "C"
