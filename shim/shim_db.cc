/** @file shim_db.cc
 *  @brief Open a (possibly sharded) glass database and read it out fast:
 *         statistics, document lengths and every term's postings.
 *
 *  Paths are expanded the way Xapian 1.4.22 does it
 *  (xapian-core/backends/dbfactory.cc, databasehelpers.h): a directory with
 *  "iamglass" is a shard, a directory with a "XAPIANDB" file or a regular
 *  file is a stub whose lines ("auto PATH", "glass PATH", "#..." comments,
 *  blank lines; relative paths resolved against the stub's directory) are
 *  expanded recursively into a flat list of shard directories.  Each shard
 *  is opened as its own Xapian::Database (uuid, revision, fast per-shard
 *  iteration) and all of them are added, in order, to one combined
 *  Database (Enquire, QueryParser).
 *
 *  Docids: shard s (0-based) of n, local docid l -> combined (l-1)*n + s + 1,
 *  the interleaving Xapian's multi-database uses.  xg_shim_db_open refuses
 *  databases whose combined docids would not fit in 32 bits, so the mapping
 *  never overflows afterwards.
 *
 *  Speed (xapian-notes.md section 5): postings are read with docid and wdf
 *  only; a per-posting get_doclength() is ~35x slower, so lengths come from
 *  the all-documents list ("" postlist), which carries them.
 */
#include "shim_int.h"

#include <cerrno>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>

#include <sys/stat.h>

/* Xapian's stubs may nest; more than this many levels is taken as a loop. */
#define STUB_MAX_DEPTH 16

namespace {

/* How a path failed stat(), as "PATH: reason" with the status to return. */
int stat_error(const std::string &path, int err)
{
    if (err == ENOENT)
        return xg_set_error(XG_ERR_IO, "%s: no such file or directory",
                            path.c_str());
    return xg_set_error(XG_ERR_IO, "%s: %s", path.c_str(), strerror(err));
}

bool file_exists(const std::string &path)
{
    struct stat sb;
    return stat(path.c_str(), &sb) == 0 && S_ISREG(sb.st_mode);
}

/* Xapian resolves a relative stub entry against the stub file's directory
 * (common/fileutils.cc resolve_relative_path). */
std::string resolve_relative(const std::string &entry, const std::string &stub)
{
    if (!entry.empty() && entry[0] == '/')
        return entry;
    std::string::size_type slash = stub.rfind('/');
    if (slash == std::string::npos)
        return entry;
    return stub.substr(0, slash + 1) + entry;
}

int expand_path(const std::string &path, int depth,
                std::vector<std::string> &out);

/* A "glass PATH" stub line: PATH must be a glass directory itself. */
int expand_glass(const std::string &path, std::vector<std::string> &out)
{
    struct stat sb;
    if (stat(path.c_str(), &sb) != 0)
        return stat_error(path, errno);
    if (!S_ISDIR(sb.st_mode) || !file_exists(path + "/iamglass"))
        return xg_set_error(XG_ERR_FORMAT,
                            "%s: not a Xapian database (no iamglass)",
                            path.c_str());
    out.push_back(path);
    return XG_OK;
}

/* Read one stub file, line by line, as read_stub_file() in Xapian 1.4.22's
 * backends/databasehelpers.h does.  Unlike Xapian we refuse the backends we
 * cannot export (chert, remote, inmemory); like Xapian we refuse any other
 * line, a bare path included ("Bad line"). */
int expand_stub(const std::string &file, int depth,
                std::vector<std::string> &out)
{
    if (depth > STUB_MAX_DEPTH)
        return xg_set_error(XG_ERR_FORMAT,
                            "%s: stub databases nested more than %d deep "
                            "(a loop?)", file.c_str(), STUB_MAX_DEPTH);
    std::ifstream in(file.c_str());
    if (!in)
        return xg_set_error(XG_ERR_IO, "%s: cannot open stub: %s",
                            file.c_str(), strerror(errno));
    std::string line;
    unsigned line_no = 0;
    while (std::getline(in, line)) {
        ++line_no;
        if (line.empty() || line[0] == '#')
            continue;
        std::string::size_type space = line.find(' ');
        std::string type(line, 0, space);
        std::string rest =
            space == std::string::npos ? std::string() : line.substr(space + 1);
        int rc;
        if (type == "auto") {
            rc = expand_path(resolve_relative(rest, file), depth, out);
        } else if (type == "glass") {
            rc = expand_glass(resolve_relative(rest, file), out);
        } else if (type == "chert" || type == "remote" ||
                   type == "inmemory" || type == "flint") {
            rc = xg_set_error(XG_ERR_UNSUPPORTED,
                              "%s:%u: unsupported: %s database (glass only)",
                              file.c_str(), line_no, type.c_str());
        } else {
            /* Xapian does not echo the line (it might be a secret file
             * read as a stub by mistake); the line number is enough. */
            rc = xg_set_error(XG_ERR_FORMAT,
                              "%s:%u: not a Xapian database (bad stub line)",
                              file.c_str(), line_no);
        }
        if (rc != XG_OK)
            return rc;
    }
    if (in.bad())
        return xg_set_error(XG_ERR_IO, "%s: read error: %s", file.c_str(),
                            strerror(errno));
    return XG_OK;
}

/* Any path as Database(path) would take it (backends/dbfactory.cc). */
int expand_path(const std::string &path, int depth,
                std::vector<std::string> &out)
{
    struct stat sb;
    if (stat(path.c_str(), &sb) != 0)
        return stat_error(path, errno);
    if (S_ISDIR(sb.st_mode)) {
        if (file_exists(path + "/iamglass")) {
            out.push_back(path);
            return XG_OK;
        }
        if (file_exists(path + "/iamchert"))
            return xg_set_error(XG_ERR_UNSUPPORTED,
                                "%s: unsupported: chert database (glass only)",
                                path.c_str());
        if (file_exists(path + "/XAPIANDB"))
            return expand_stub(path + "/XAPIANDB", depth + 1, out);
        return xg_set_error(XG_ERR_FORMAT,
                            "%s: not a Xapian database "
                            "(no iamglass or XAPIANDB)", path.c_str());
    }
    if (S_ISREG(sb.st_mode)) {
        /* A single-file glass database starts with this magic (Xapian's
         * test_if_single_file_db); it has no postlist.glass to measure and
         * is not what the exporter was written for. */
        char magic[14];
        FILE *f = fopen(path.c_str(), "rb");
        if (!f)
            return xg_set_error(XG_ERR_IO, "%s: %s", path.c_str(),
                                strerror(errno));
        size_t got = fread(magic, 1, sizeof magic, f);
        fclose(f);
        if (got == sizeof magic &&
            memcmp(magic, "\x0f\x0dXapian Glass", sizeof magic) == 0)
            return xg_set_error(XG_ERR_UNSUPPORTED,
                                "%s: unsupported: single-file glass database",
                                path.c_str());
        return expand_stub(path, depth + 1, out);
    }
    return xg_set_error(XG_ERR_FORMAT,
                        "%s: not a Xapian database "
                        "(not a regular file or directory)", path.c_str());
}

/* Merge per-shard lists, each ascending in combined docids, into one
 * ascending list.  Combined docids of different shards never collide, so
 * this is a plain k-way merge; n is small (shards), so the head is found by
 * a linear scan rather than a heap. */
uint32_t merge_shards(size_t n, const std::vector<uint32_t> *const *ids,
                      const std::vector<uint32_t> *const *vals,
                      const uint32_t *counts, uint32_t *out_ids,
                      uint32_t *out_vals)
{
    uint32_t k = 0;
    if (n == 2) {
        /* The common sharded case gets a two-pointer merge. */
        const uint32_t *a = ids[0]->data(), *b = ids[1]->data();
        const uint32_t *av = vals[0]->data(), *bv = vals[1]->data();
        uint32_t na = counts[0], nb = counts[1], i = 0, j = 0;
        /* Selects rather than an if/else: shards interleave almost at
         * random, so a branch here would be mispredicted often. */
        while (i < na && j < nb) {
            uint32_t x = a[i], y = b[j];
            bool take_a = x < y;
            out_ids[k] = take_a ? x : y;
            out_vals[k++] = take_a ? av[i] : bv[j];
            i += take_a;
            j += !take_a;
        }
        /* At most one tail is left.  The guards matter: a shard that has
         * never held the term may have an unallocated (NULL) buffer. */
        if (i < na) {
            memcpy(out_ids + k, a + i, (na - i) * sizeof *a);
            memcpy(out_vals + k, av + i, (na - i) * sizeof *av);
            k += na - i;
        }
        if (j < nb) {
            memcpy(out_ids + k, b + j, (nb - j) * sizeof *b);
            memcpy(out_vals + k, bv + j, (nb - j) * sizeof *bv);
            k += nb - j;
        }
        return k;
    }
    uint32_t pos[64];
    std::vector<uint32_t> pos_big;
    uint32_t *p = pos;
    if (n > 64) {
        pos_big.assign(n, 0);
        p = pos_big.data();
    } else {
        memset(pos, 0, sizeof pos);
    }
    for (;;) {
        size_t best = n;
        uint32_t best_id = 0;
        for (size_t s = 0; s < n; ++s) {
            if (p[s] < counts[s] &&
                (best == n || (*ids[s])[p[s]] < best_id)) {
                best = s;
                best_id = (*ids[s])[p[s]];
            }
        }
        if (best == n)
            return k;
        out_ids[k] = best_id;
        out_vals[k++] = (*vals[best])[p[best]++];
    }
}

/* Make sure `v` has room for `need` entries; keeps its contents. */
inline uint32_t *room(std::vector<uint32_t> &v, size_t need)
{
    if (v.size() < need)
        v.resize(need < 2 * v.size() ? 2 * v.size() : need);
    return v.data();
}

/* Where read_postings puts positions: NULL `counts` when they are not
 * asked for.  `n` is the number of positions written. */
struct pos_sink {
    std::vector<uint32_t> *counts, *pos;
    size_t n;
};

/* Read one shard's postings for `term` (docid and wdf, and with a sink
 * each posting's positions through the same iterator: the position table
 * is keyed by term then docid, so this reads it in order), mapping to
 * combined docids.  Returns the number read. */
uint32_t read_postings(const Xapian::Database &shard, const std::string &term,
                       uint32_t hint, uint32_t n_shards, uint32_t shard_ix,
                       std::vector<uint32_t> &ids, std::vector<uint32_t> &wdfs,
                       pos_sink &ps)
{
    uint32_t *d = room(ids, hint);
    uint32_t *w = room(wdfs, hint);
    uint32_t *c = ps.counts ? room(*ps.counts, hint) : NULL;
    size_t cap = ids.size();
    uint32_t k = 0;
    const uint32_t add = shard_ix + 1;
    ps.n = 0;
    Xapian::PostingIterator it = shard.postlist_begin(term);
    const Xapian::PostingIterator end = shard.postlist_end(term);
    for (; it != end; ++it) {
        if (k == cap) {
            /* termfreq was only a hint; grow and go on. */
            d = room(ids, cap + 1);
            w = room(wdfs, cap + 1);
            if (c) c = room(*ps.counts, cap + 1);
            cap = ids.size();
        }
        d[k] = (*it - 1) * n_shards + add;
        w[k] = it.get_wdf();
        if (c) {
            uint32_t m = 0;
            const Xapian::PositionIterator pe = it.positionlist_end();
            for (Xapian::PositionIterator p = it.positionlist_begin();
                 p != pe; ++p, ++m) {
                uint32_t *out = room(*ps.pos, ps.n + 1);
                out[ps.n++] = *p;
            }
            c[k] = m;
        }
        ++k;
    }
    return k;
}

/* The merged list's positions: posting i of the merge came from shard
 * (ids[i] - 1) % n (the interleaving), in that shard's order, so each
 * shard's counts and positions are taken in turn.  Returns the number of
 * positions. */
size_t merge_positions(size_t n,
                       const std::vector<std::vector<uint32_t>> &sh_counts,
                       const std::vector<std::vector<uint32_t>> &sh_pos,
                       const uint32_t *ids, uint32_t k,
                       std::vector<uint32_t> &counts,
                       std::vector<uint32_t> &positions)
{
    size_t total = 0;
    std::vector<size_t> at(n, 0), pat(n, 0);
    uint32_t *oc = room(counts, k);
    for (uint32_t i = 0; i < k; ++i) {
        const size_t s = (ids[i] - 1) % n;
        const uint32_t m = sh_counts[s][at[s]++];
        oc[i] = m;
        total += m;
    }
    uint32_t *op = room(positions, total);
    for (uint32_t i = 0; i < k; ++i) {
        const size_t s = (ids[i] - 1) % n;
        if (!oc[i]) continue;   /* op may be NULL when there are none */
        memcpy(op, sh_pos[s].data() + pat[s], oc[i] * sizeof *op);
        op += oc[i];
        pat[s] += oc[i];
    }
    return total;
}

/* Bytes of one table file summed over the shards; a missing file counts
 * 0 when missing_ok. */
int table_bytes(xg_db *db, const char *table, bool missing_ok,
                uint64_t *bytes)
{
    uint64_t total = 0;
    for (const std::string &dir : db->shard_paths) {
        std::string file = dir + "/" + table;
        struct stat sb;
        if (stat(file.c_str(), &sb) != 0) {
            if (missing_ok && errno == ENOENT)
                continue;
            return stat_error(file, errno);
        }
        total += (uint64_t)sb.st_size;
    }
    *bytes = total;
    return XG_OK;
}

/* ---- Reading positions on several threads ---------------------------
 * Xapian opens a position list per posting (about 1.5 us each on the
 * build VM), so with positions the walk is bound by those reads.  Runs of
 * consecutive terms (windows) are read by threads of their own, each
 * with its own Database handles (a Database must not be shared between
 * threads), and handed to the callback in term order by the calling
 * thread, so its output is the one-thread walk's. */

/* A run of consecutive terms and, once read, their merged postings and
 * positions back to back. */
struct term_window {
    std::vector<std::string> terms;
    std::vector<uint32_t> hints;        /* [t * n + s]: termfreq, 0 absent */
    std::vector<uint32_t> docids, wdfs, counts, positions;
    std::vector<uint32_t> shard_df;     /* [t * n + s] */
    std::vector<uint32_t> n_post;       /* per term */
    std::vector<uint64_t> n_pos;        /* per term */
    int taken = 0, done = 0, rc = XG_OK;
    std::string err;
};

/* One reading thread's handles and buffers. */
struct window_reader {
    std::vector<Xapian::Database> shards;
    std::vector<std::vector<uint32_t>> ids, wdfs, counts, pos;
    std::vector<uint32_t> mids, mwdfs, mcounts, mpos;

    void append(term_window &w, const uint32_t *d, const uint32_t *f,
                const uint32_t *c, uint32_t k, const uint32_t *p,
                uint64_t np)
    {
        w.docids.insert(w.docids.end(), d, d + k);
        w.wdfs.insert(w.wdfs.end(), f, f + k);
        w.counts.insert(w.counts.end(), c, c + k);
        w.positions.insert(w.positions.end(), p, p + np);
        w.n_post.push_back(k);
        w.n_pos.push_back(np);
    }

    void read(term_window &w)
    {
        const size_t n = shards.size();
        std::vector<pos_sink> ps(n);
        for (size_t t = 0; t < w.terms.size(); ++t) {
            size_t holders = 0, holder = 0;
            uint64_t total = 0;
            for (size_t s = 0; s < n; ++s) {
                uint32_t &df = w.shard_df[t * n + s];
                df = 0;
                if (!w.hints[t * n + s]) continue;
                ps[s] = {&counts[s], &pos[s], 0};
                df = read_postings(shards[s], w.terms[t], w.hints[t * n + s],
                                   (uint32_t)n, (uint32_t)s, ids[s], wdfs[s],
                                   ps[s]);
                total += df;
                ++holders;
                holder = s;
            }
            if (holders == 1) {
                append(w, ids[holder].data(), wdfs[holder].data(),
                       counts[holder].data(), w.shard_df[t * n + holder],
                       pos[holder].data(), ps[holder].n);
                continue;
            }
            uint32_t *d = room(mids, total), *f = room(mwdfs, total);
            std::vector<const std::vector<uint32_t> *> pi(n), pv(n);
            for (size_t s = 0; s < n; ++s) {
                pi[s] = &ids[s];
                pv[s] = &wdfs[s];
            }
            const uint32_t k = merge_shards(n, pi.data(), pv.data(),
                                            &w.shard_df[t * n], d, f);
            const size_t np = merge_positions(n, counts, pos, d, k, mcounts,
                                              mpos);
            append(w, d, f, mcounts.data(), k, mpos.data(), np);
        }
    }
};

int deliver_windows(xg_db *db, unsigned n_threads, std::mutex &m,
                    std::condition_variable &work,
                    std::condition_variable &ready,
                    std::deque<std::shared_ptr<term_window>> &pending,
                    xg_term_fn fn, void *ctx);

int each_term_threads(xg_db *db, unsigned n_threads, xg_term_fn fn,
                      void *ctx)
{
    const size_t n = db->shards.size();
    std::vector<window_reader> readers(n_threads);
    for (window_reader &r : readers) {
        r.ids.resize(n);
        r.wdfs.resize(n);
        r.counts.resize(n);
        r.pos.resize(n);
        for (size_t s = 0; s < n; ++s) {
            r.shards.emplace_back(db->shard_paths[s]);
            if (r.shards[s].get_revision() != db->shards[s].get_revision())
                return xg_set_error(XG_ERR_STALE, "%s: the database changed "
                                    "while it was being read",
                                    db->shard_paths[s].c_str());
        }
    }
    std::mutex m;
    std::condition_variable work, ready;
    std::deque<std::shared_ptr<term_window>> pending;  /* in term order */
    bool stop = false;
    auto worker = [&](window_reader &r) {
        std::unique_lock<std::mutex> lk(m);
        for (;;) {
            std::shared_ptr<term_window> w;
            work.wait(lk, [&] {
                if (stop) return true;
                for (auto &p : pending)
                    if (!p->taken) return true;
                return false;
            });
            if (stop) return;
            for (auto &p : pending)
                if (!p->taken) {
                    w = p;
                    break;
                }
            w->taken = 1;
            lk.unlock();
            try {
                r.read(*w);
            } catch (...) {
                w->rc = xg_shim_fail(db->name.c_str());
                w->err = xg_last_error();
            }
            lk.lock();
            w->done = 1;
            ready.notify_all();
        }
    };
    std::vector<std::thread> threads;
    for (window_reader &r : readers) threads.emplace_back(worker, std::ref(r));
    auto finish = [&](int rc) {
        {
            std::lock_guard<std::mutex> g(m);
            stop = true;
        }
        work.notify_all();
        for (std::thread &t : threads) t.join();
        return rc;
    };

    try {
        return finish(deliver_windows(db, n_threads, m, work, ready, pending,
                                      fn, ctx));
    } catch (...) {
        finish(XG_OK);  /* no thread may outlive its windows */
        throw;
    }
}

/* each_term_threads' calling thread: lists the terms into windows and
 * hands the read windows to fn in order.  XG_OK, fn's nonzero, or a
 * reading thread's error. */
int deliver_windows(xg_db *db, unsigned n_threads, std::mutex &m,
                    std::condition_variable &work,
                    std::condition_variable &ready,
                    std::deque<std::shared_ptr<term_window>> &pending,
                    xg_term_fn fn, void *ctx)
{
    const size_t n = db->shards.size();
    std::vector<Xapian::TermIterator> its(n);
    std::vector<std::string> cur(n);
    std::vector<char> live(n);
    for (size_t s = 0; s < n; ++s) {
        its[s] = db->shards[s].allterms_begin();
        live[s] = its[s] != db->shards[s].allterms_end();
        if (live[s]) cur[s] = *its[s];
    }
    struct xg_term_postings tp = {};
    bool more = true;
    for (;;) {
        /* Fill windows while fewer than two per thread wait. */
        while (more && pending.size() < 2 * (size_t)n_threads) {
            auto w = std::make_shared<term_window>();
            uint64_t hinted = 0;
            while (hinted < (1u << 16) && w->terms.size() < 4096) {
                size_t first = n;
                for (size_t s = 0; s < n; ++s)
                    if (live[s] && (first == n || cur[s] < cur[first]))
                        first = s;
                if (first == n) {
                    more = false;
                    break;
                }
                const std::string term = cur[first];
                w->terms.push_back(term);
                for (size_t s = 0; s < n; ++s) {
                    uint32_t h = 0;
                    if (live[s] && cur[s] == term) {
                        /* A term listed with no postings is hinted 1: its
                         * read finds none, as the one-thread walk does. */
                        h = its[s].get_termfreq() ? its[s].get_termfreq() : 1;
                        ++its[s];
                        live[s] = its[s] != db->shards[s].allterms_end();
                        if (live[s]) cur[s] = *its[s];
                    }
                    w->hints.push_back(h);
                    hinted += h;
                }
            }
            w->shard_df.resize(w->hints.size());
            if (w->terms.empty()) break;
            std::lock_guard<std::mutex> g(m);
            pending.push_back(w);
            work.notify_one();
        }
        std::shared_ptr<term_window> w;
        {
            std::unique_lock<std::mutex> lk(m);
            if (pending.empty()) break;
            ready.wait(lk, [&] { return pending.front()->done != 0; });
            w = pending.front();
            pending.pop_front();
        }
        if (w->rc)
            return xg_set_error(w->rc, "%s", w->err.c_str());
        size_t at = 0, pat = 0;
        for (size_t t = 0; t < w->terms.size(); ++t) {
            tp.term = w->terms[t].data();
            tp.term_len = w->terms[t].size();
            tp.docids = w->docids.data() + at;
            tp.wdfs = w->wdfs.data() + at;
            tp.pos_counts = w->counts.data() + at;
            tp.n = w->n_post[t];
            tp.shard_df = &w->shard_df[t * n];
            tp.positions = w->positions.data() + pat;
            tp.n_positions = w->n_pos[t];
            at += w->n_post[t];
            pat += w->n_pos[t];
            const int r = fn(ctx, &tp);
            if (r) return r;
        }
    }
    return XG_OK;
}

} // namespace

extern "C" {

/* See xg_shim.h.  On failure *out is NULL and the message names the path. */
int xg_shim_db_open(const char *const *paths, size_t n_paths, xg_db **out)
{
    if (out)
        *out = NULL;
    if (!paths || n_paths == 0 || !out)
        return xg_set_error(XG_ERR_ARG, "xg_shim_db_open: no paths given");
    for (size_t i = 0; i < n_paths; ++i)
        if (!paths[i])
            return xg_set_error(XG_ERR_ARG,
                                "xg_shim_db_open: path %zu is NULL", i);
    /* Outside the try, so `where` may point into it while the catch runs
     * (the xg_db is already gone by then). */
    std::vector<std::string> shard_paths;
    const char *where = paths[0];
    XG_SHIM_TRY
        std::unique_ptr<xg_db> db(new xg_db);
        for (size_t i = 0; i < n_paths; ++i) {
            where = paths[i];
            if (i)
                db->name += " + ";
            db->name += paths[i];
            int rc = expand_path(paths[i], 0, shard_paths);
            if (rc != XG_OK)
                return rc;
        }
        if (shard_paths.empty())
            /* Xapian reads an empty stub as an empty database; an export of
             * nothing is never what the caller meant. */
            return xg_set_error(XG_ERR_FORMAT,
                                "%s: not a Xapian database "
                                "(stub lists no databases)",
                                db->name.c_str());
        const uint64_t n = shard_paths.size();
        for (size_t s = 0; s < n; ++s) {
            where = shard_paths[s].c_str();
            db->shards.emplace_back(shard_paths[s], Xapian::DB_BACKEND_GLASS);
            db->combined.add_database(db->shards.back());
            uint64_t last = db->shards.back().get_lastdocid();
            if (last && (last - 1) * n + s + 1 > UINT32_MAX)
                return xg_set_error(XG_ERR_UNSUPPORTED,
                                    "%s: unsupported: combined docids of "
                                    "%u shards exceed 32 bits (last docid "
                                    "%llu)", where, (unsigned)n,
                                    (unsigned long long)last);
        }
        db->sh_docids.resize(n);
        db->sh_wdfs.resize(n);
        db->shard_paths.swap(shard_paths);
        *out = db.release();
        return XG_OK;
    XG_SHIM_CATCH(where)
}

int xg_shim_db_open_client(const char *stub, xg_db **out)
{
    *out = NULL;
    if (!stub) return xg_set_error(XG_ERR_ARG, "xg_shim_db_open_client: NULL");
    XG_SHIM_TRY
        std::unique_ptr<xg_db> db(new xg_db);
        db->name = stub;
        db->combined = Xapian::Database(stub);
        *out = db.release();
        return XG_OK;
    XG_SHIM_CATCH(stub)
}

/* Close; NULL is fine. */
void xg_shim_db_close(xg_db *db)
{
    XG_SHIM_TRY
        delete db;
    XG_SHIM_CATCH_VOID("xg_shim_db_close")
}

/* See xg_shim.h. */
int xg_shim_db_stats(xg_db *db, struct xg_db_stats *out)
{
    if (!db || !out)
        return xg_set_error(XG_ERR_ARG, "xg_shim_db_stats: NULL argument");
    XG_SHIM_TRY
        const Xapian::Database &c = db->combined;
        out->n_docs = c.get_doccount();
        out->total_length = c.get_total_length();
        out->last_docid = c.get_lastdocid();
        out->n_shards = (uint32_t)db->shards.size();
        out->doclen_min = c.get_doclength_lower_bound();
        out->doclen_max = c.get_doclength_upper_bound();
        return XG_OK;
    XG_SHIM_CATCH(db->name.c_str())
}

/* See xg_shim.h. */
int xg_shim_db_count_terms(xg_db *db, uint64_t *out)
{
    if (!db || !out)
        return xg_set_error(XG_ERR_ARG, "xg_shim_db_count_terms: NULL "
                            "argument");
    const char *where = db->name.c_str();
    XG_SHIM_TRY
        if (db->n_terms == UINT64_MAX) {
            uint64_t terms = 0;
            for (size_t s = 0; s < db->shards.size(); ++s) {
                where = db->shard_paths[s].c_str();
                const Xapian::Database &sh = db->shards[s];
                for (Xapian::TermIterator t = sh.allterms_begin();
                     t != sh.allterms_end(); ++t)
                    ++terms;
            }
            db->n_terms = terms;
        }
        *out = db->n_terms;
        return XG_OK;
    XG_SHIM_CATCH(where)
}

/* See xg_shim.h.  out->path points into db and lives as long as db. */
int xg_shim_db_shard(xg_db *db, uint32_t shard, struct xg_shard_info *out)
{
    if (!db || !out)
        return xg_set_error(XG_ERR_ARG, "xg_shim_db_shard: NULL argument");
    if (shard >= db->shards.size())
        return xg_set_error(XG_ERR_ARG, "%s: no shard %u (%zu shards)",
                            db->name.c_str(), shard, db->shards.size());
    const char *where = db->shard_paths[shard].c_str();
    XG_SHIM_TRY
        const Xapian::Database &sh = db->shards[shard];
        std::string uuid = sh.get_uuid();
        size_t len = uuid.size() < sizeof out->uuid - 1
                         ? uuid.size() : sizeof out->uuid - 1;
        memcpy(out->uuid, uuid.data(), len);
        out->uuid[len] = '\0';
        out->revision = sh.get_revision();
        out->doccount = sh.get_doccount();
        out->last_docid = sh.get_lastdocid();
        out->path = where;
        return XG_OK;
    XG_SHIM_CATCH(where)
}

/* See xg_shim.h.  Fails (rather than overrun) if the shards list more
 * documents than the combined get_doccount() the caller sized for. */
int xg_shim_db_doclens(xg_db *db, uint32_t *docids, uint32_t *lens)
{
    if (!db || !docids || !lens)
        return xg_set_error(XG_ERR_ARG, "xg_shim_db_doclens: NULL argument");
    const char *where = db->name.c_str();
    XG_SHIM_TRY
        const size_t n = db->shards.size();
        const uint64_t n_docs = db->combined.get_doccount();
        uint64_t total = 0;
        std::vector<uint32_t> counts(n);
        for (size_t s = 0; s < n; ++s) {
            where = db->shard_paths[s].c_str();
            const Xapian::Database &sh = db->shards[s];
            uint32_t hint = sh.get_doccount();
            if (total + hint > n_docs)
                return xg_set_error(XG_ERR_XAPIAN,
                                    "%s: database changed during the read "
                                    "(shard doccounts exceed %llu)", where,
                                    (unsigned long long)n_docs);
            /* One shard: straight into the caller's arrays. */
            uint32_t *d = docids, *w = lens;
            if (n > 1) {
                d = room(db->sh_docids[s], hint);
                w = room(db->sh_wdfs[s], hint);
            }
            uint32_t k = 0;
            const uint32_t add = (uint32_t)s + 1;
            Xapian::PostingIterator it = sh.postlist_begin("");
            const Xapian::PostingIterator end = sh.postlist_end("");
            for (; it != end; ++it) {
                if (k == hint)
                    return xg_set_error(XG_ERR_XAPIAN,
                                        "%s: database changed during the "
                                        "read (more than %u documents)",
                                        where, hint);
                d[k] = (*it - 1) * (uint32_t)n + add;
                w[k] = it.get_doclength();
                ++k;
            }
            counts[s] = k;
            total += k;
        }
        if (n > 1) {
            std::vector<const std::vector<uint32_t> *> ids(n), vals(n);
            for (size_t s = 0; s < n; ++s) {
                ids[s] = &db->sh_docids[s];
                vals[s] = &db->sh_wdfs[s];
            }
            merge_shards(n, ids.data(), vals.data(), counts.data(), docids,
                         lens);
        }
        return XG_OK;
    XG_SHIM_CATCH(where)
}

/* See xg_shim.h.  Shards' allterms lists are merged by term bytes; for each
 * term every shard holding it is read (docid, wdf, positions if asked)
 * into a reused buffer and the shards merged into ascending combined
 * docids. */
int xg_shim_db_each_term(xg_db *db, unsigned flags, xg_term_fn fn, void *ctx)
{
    if (!db || !fn)
        return xg_set_error(XG_ERR_ARG, "xg_shim_db_each_term: NULL argument");
    const char *where = db->name.c_str();
    XG_SHIM_TRY
        const size_t n = db->shards.size();
        const bool want_pos = (flags & XG_TERMS_POSITIONS) != 0;
        const unsigned hw = std::thread::hardware_concurrency();
        if (want_pos && hw > 1)
            return each_term_threads(db, hw < 16 ? hw : 16, fn, ctx);
        std::vector<uint32_t> shard_df(n, 0);
        struct xg_term_postings tp = {};
        tp.shard_df = shard_df.data();

        if (n == 1) {
            /* No merging at all: read straight into the output buffers. */
            where = db->shard_paths[0].c_str();
            const Xapian::Database &sh = db->shards[0];
            pos_sink ps = {want_pos ? &db->pos_counts : NULL,
                           &db->positions, 0};
            for (Xapian::TermIterator t = sh.allterms_begin();
                 t != sh.allterms_end(); ++t) {
                const std::string term = *t;
                uint32_t k = read_postings(sh, term, t.get_termfreq(), 1, 0,
                                           db->docids, db->wdfs, ps);
                shard_df[0] = k;
                tp.term = term.data();
                tp.term_len = term.size();
                tp.docids = db->docids.data();
                tp.wdfs = db->wdfs.data();
                tp.n = k;
                tp.pos_counts = want_pos ? db->pos_counts.data() : NULL;
                tp.positions = want_pos ? db->positions.data() : NULL;
                tp.n_positions = ps.n;
                int r = fn(ctx, &tp);
                if (r)
                    return r;
            }
            return XG_OK;
        }

        std::vector<Xapian::TermIterator> its(n);
        std::vector<std::string> cur(n);
        std::vector<char> live(n);
        std::vector<pos_sink> ps(n);
        if (want_pos) {
            db->sh_pos_counts.resize(n);
            db->sh_positions.resize(n);
        }
        for (size_t s = 0; s < n; ++s) {
            where = db->shard_paths[s].c_str();
            its[s] = db->shards[s].allterms_begin();
            live[s] = its[s] != db->shards[s].allterms_end();
            if (live[s])
                cur[s] = *its[s];
            if (want_pos)
                ps[s] = {&db->sh_pos_counts[s], &db->sh_positions[s], 0};
        }
        std::vector<const std::vector<uint32_t> *> ids(n), vals(n);
        for (size_t s = 0; s < n; ++s) {
            ids[s] = &db->sh_docids[s];
            vals[s] = &db->sh_wdfs[s];
        }
        std::string term;
        for (;;) {
            size_t first = n;
            for (size_t s = 0; s < n; ++s)
                if (live[s] && (first == n || cur[s] < cur[first]))
                    first = s;
            if (first == n)
                return XG_OK;
            term = cur[first];
            uint64_t total = 0;
            size_t holders = 0, holder = 0;
            for (size_t s = 0; s < n; ++s) {
                shard_df[s] = 0;
                if (!live[s] || cur[s] != term)
                    continue;
                where = db->shard_paths[s].c_str();
                shard_df[s] = read_postings(db->shards[s], term,
                                            its[s].get_termfreq(),
                                            (uint32_t)n, (uint32_t)s,
                                            db->sh_docids[s], db->sh_wdfs[s],
                                            ps[s]);
                total += shard_df[s];
                ++holders;
                holder = s;
                ++its[s];
                live[s] = its[s] != db->shards[s].allterms_end();
                if (live[s])
                    cur[s] = *its[s];
            }
            tp.term = term.data();
            tp.term_len = term.size();
            if (holders == 1) {
                /* Most terms are rare and live in one shard: its list is
                 * already in combined docids, so hand it over unmerged. */
                tp.docids = db->sh_docids[holder].data();
                tp.wdfs = db->sh_wdfs[holder].data();
                tp.n = shard_df[holder];
                if (want_pos) {
                    tp.pos_counts = db->sh_pos_counts[holder].data();
                    tp.positions = db->sh_positions[holder].data();
                    tp.n_positions = ps[holder].n;
                }
                int r = fn(ctx, &tp);
                if (r)
                    return r;
                continue;
            }
            /* Combined docids are 32-bit and distinct, so a term's df fits
             * in 32 bits too. */
            uint32_t *d = room(db->docids, total);
            uint32_t *w = room(db->wdfs, total);
            tp.n = merge_shards(n, ids.data(), vals.data(), shard_df.data(),
                                d, w);
            tp.docids = d;
            tp.wdfs = w;
            if (want_pos) {
                tp.n_positions = merge_positions(
                    n, db->sh_pos_counts, db->sh_positions, d, tp.n,
                    db->pos_counts, db->positions);
                tp.pos_counts = db->pos_counts.data();
                tp.positions = db->positions.data();
            }
            int r = fn(ctx, &tp);
            if (r)
                return r;
        }
    XG_SHIM_CATCH(where)
}

/* See xg_shim.h. */
int xg_shim_db_has_positions(xg_db *db, int *out)
{
    if (!db || !out)
        return xg_set_error(XG_ERR_ARG,
                            "xg_shim_db_has_positions: NULL argument");
    const char *where = db->name.c_str();
    XG_SHIM_TRY
        /* An empty shard builds no postlist tree (LocalSubMatch), so it
         * does not count; one without positions would match no phrase
         * (QueryWindowed::postlist_windowed shrinks its AND to nothing),
         * which the matchers do not replicate: no positions then. */
        int any = 0, all = 1;
        for (size_t s = 0; s < db->shards.size(); ++s) {
            where = db->shard_paths[s].c_str();
            if (db->shards[s].get_doccount() == 0) continue;
            any = 1;
            all &= db->shards[s].has_positions() ? 1 : 0;
        }
        *out = any && all;
        return XG_OK;
    XG_SHIM_CATCH(where)
}

/* See xg_shim.h.  The checksum sums combined docid + wdf over all postings,
 * so it can be compared with a sum taken inside xg_shim_db_each_term. */
int xg_shim_db_scan_postings(xg_db *db, uint64_t *n_postings, uint64_t *sum)
{
    if (!db || !n_postings || !sum)
        return xg_set_error(XG_ERR_ARG,
                            "xg_shim_db_scan_postings: NULL argument");
    const char *where = db->name.c_str();
    XG_SHIM_TRY
        const uint32_t n = (uint32_t)db->shards.size();
        uint64_t count = 0, acc = 0;
        for (uint32_t s = 0; s < n; ++s) {
            where = db->shard_paths[s].c_str();
            const Xapian::Database &sh = db->shards[s];
            for (Xapian::TermIterator t = sh.allterms_begin();
                 t != sh.allterms_end(); ++t) {
                const std::string term = *t;
                Xapian::PostingIterator it = sh.postlist_begin(term);
                const Xapian::PostingIterator end = sh.postlist_end(term);
                for (; it != end; ++it) {
                    acc += (uint64_t)((*it - 1) * n + s + 1) + it.get_wdf();
                    ++count;
                }
            }
        }
        *n_postings = count;
        *sum = acc;
        return XG_OK;
    XG_SHIM_CATCH(where)
}

/* See xg_shim.h. */
int xg_shim_db_postlist_bytes(xg_db *db, uint64_t *bytes)
{
    if (!db || !bytes)
        return xg_set_error(XG_ERR_ARG,
                            "xg_shim_db_postlist_bytes: NULL argument");
    XG_SHIM_TRY
        return table_bytes(db, "postlist.glass", false, bytes);
    XG_SHIM_CATCH(db->name.c_str())
}

/* See xg_shim.h. */
int xg_shim_db_position_bytes(xg_db *db, uint64_t *bytes)
{
    if (!db || !bytes)
        return xg_set_error(XG_ERR_ARG,
                            "xg_shim_db_position_bytes: NULL argument");
    XG_SHIM_TRY
        return table_bytes(db, "position.glass", true, bytes);
    XG_SHIM_CATCH(db->name.c_str())
}

} // extern "C"
