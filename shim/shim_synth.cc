/** @file shim_synth.cc
 *  @brief Write the synthetic collection of plugin/synth.h into a compacted
 *         glass database, with one builder thread per core.
 *
 *  The documents 0..n-1 are cut into T contiguous slices, one per thread;
 *  thread t writes its slice, in order, into a series of small fresh glass
 *  databases DB_PATH.tmp-PID/part<t>-<k> (PART_DOCS documents each, fewer
 *  for the last; more when that would make over MAX_PARTS parts),
 *  committing every COMMIT_DOCS documents.  Small parts and frequent
 *  commits keep Xapian's in-memory inverter (a std::map from term to a
 *  std::map of postings) small and cache-resident, which is where nearly
 *  all the time goes; larger parts make every later flush a B-tree
 *  read-modify-write of a bigger table.  The parts are temporary, so they
 *  are written with DB_NO_SYNC.  Each term is added with
 *  Document::add_term(word, wdf): no positions and no document data, so
 *  the document length is the token count.  The parts are then merged in
 *  document order with Database::compact() (renumbering, so docids are
 *  1..n in document order; Compactor::FULLER, as the result is
 *  read-only) into DB_PATH.tmp-PID/db, which is renamed into place.
 *
 *  Nothing is half-written: DB_PATH must not exist, and on any error or
 *  exception the temporary directory is removed.  Worker threads never
 *  let an exception escape; the first failure stops the others and is
 *  reported from the calling thread.
 */
#include "shim_int.h"

#include "../plugin/synth.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

/* Part size and commit interval, measured 2026-11-22 on the 2-core build
 * VM (shared, so +-15%) with `xapian-gpu synth docs --docs 20000
 * --threads 1` (build seconds; compaction 0.3-2 s more):
 *   one part, flush every 10^4 docs: 21.1   parts of 10^4, once each: 21.1
 *   parts of 500 / 100, once each: 14.0 / 10.7 (but 40 / 200 parts)
 *   parts of 2000, commit every 50 / 100 / 250 / 500: 13.5 / 12.5 / 11.7
 *   / 12.3; parts of 5000 or 10^4, commit every 100: 15.1 / 16.2.
 * 10^5 docs, 2 threads: parts of 2000, commit every 250: 40-53 s build
 * (74-81 CPU s), 4-5 s compaction; a single part per thread, flushed every
 * 10^4 docs: 67 s + 2 s.  Memory stays small: Xapian buffers about 60
 * bytes per posting, and 250 documents are about 1.2e5 postings. */
static unsigned PART_DOCS = getenv("XG_PD") ? atoi(getenv("XG_PD")) : 2000u; // TEMP
static unsigned COMMIT_DOCS = getenv("XG_FT") ? atoi(getenv("XG_FT")) : 250u; // TEMP
/* At most about this many parts (plus one per thread), so compaction opens
 * a bounded number of files: each part is a few open descriptors. */
#define MAX_PARTS 256u
/* Temporary parts: created fresh, never fsync()ed. */
#define PART_FLAGS (Xapian::DB_CREATE | Xapian::DB_BACKEND_GLASS |          \
                    Xapian::DB_NO_SYNC)
/* Progress line interval while building. */
#define PROGRESS_SECONDS 0.5

namespace {

/* The first failure of any worker, reported by the calling thread. */
struct first_error {
    std::mutex mu;
    int code = XG_OK;
    std::string msg;
    std::atomic<bool> failed{false};

    void set(int c, const char *m)
    {
        std::lock_guard<std::mutex> lock(mu);
        if (code == XG_OK) {
            code = c;
            msg = m;
        }
        failed = true;
    }
};

/* Removes the temporary directory on every way out. */
struct tmp_guard {
    std::string path;
    ~tmp_guard()
    {
        if (!path.empty()) {
            std::error_code ec;
            std::filesystem::remove_all(path, ec);
        }
    }
};

/* Stops and joins the workers on every way out (a joinable std::thread
 * must never be destroyed).  Declared after everything the workers use,
 * so it runs before any of that is destroyed. */
struct joiner {
    std::vector<std::thread> workers;
    std::atomic<bool> *stop;
    explicit joiner(std::atomic<bool> *s) : stop(s) {}
    void join_all()
    {
        for (std::thread &t : workers)
            if (t.joinable())
                t.join();
    }
    ~joiner()
    {
        *stop = true;
        join_all();
    }
};

struct zipf_guard {
    struct xg_synth_zipf z;
    zipf_guard() { memset(&z, 0, sizeof z); }
    ~zipf_guard() { xg_synth_zipf_free(&z); }
};

/* One thread's slice: documents [begin, end), written part by part. */
struct slice {
    uint64_t begin, end;
    uint64_t part_docs;              /* documents per part (the last fewer) */
    std::vector<std::string> parts;  /* filled in order before starting */
};

/* Write one slice.  Runs on a worker thread; records failures in `err`,
 * never throws, and counts itself in `finished` on the way out. */
void build_slice(const struct xg_synth_params *p,
                 const struct xg_synth_zipf *z, const slice *sl,
                 std::atomic<uint64_t> *done, std::atomic<uint32_t> *finished,
                 std::atomic<bool> *stop, first_error *err)
{
    struct count_exit {
        std::atomic<uint32_t> *f;
        ~count_exit() { ++*f; }
    } on_exit{finished};
    const char *where = "synth";
    try {
        std::vector<uint32_t> ranks(XG_SYNTH_MAX_LEN), wdfs(XG_SYNTH_MAX_LEN);
        char word[XG_SYNTH_WORD_MAX];
        std::string term;
        uint64_t d = sl->begin;
        for (const std::string &part : sl->parts) {
            where = part.c_str();
            Xapian::WritableDatabase db(part, PART_FLAGS);
            uint64_t part_end = std::min<uint64_t>(d + sl->part_docs, sl->end);
            uint32_t since_commit = 0;
            for (; d < part_end; ++d) {
                if (*stop)
                    return;
                uint32_t n = xg_synth_doc(p, z, d, ranks.data(),
                                          wdfs.data(), XG_SYNTH_MAX_LEN);
                Xapian::Document doc;
                for (uint32_t k = 0; k < n; ++k) {
                    size_t len = xg_synth_word(ranks[k], word);
                    term.assign(word, len);
                    doc.add_term(term, wdfs[k]);
                }
                db.add_document(doc);
                done->fetch_add(1, std::memory_order_relaxed);
                if (++since_commit == COMMIT_DOCS) {
                    db.commit();
                    since_commit = 0;
                }
            }
            db.commit();
            db.close();
        }
    } catch (...) {
        int code = xg_shim_fail(where);
        err->set(code, xg_last_error());
        *stop = true;
    }
}

/* Shows which table the compactor is on, when progress is wanted. */
class status_compactor : public Xapian::Compactor {
  public:
    explicit status_compactor(const char *path, bool show)
        : path_(path), show_(show) {}
    void set_status(const std::string &table,
                    const std::string &status) override
    {
        if (show_ && status.empty())
            fprintf(stderr, "\r\033[K%s: compacting %s", path_,
                    table.c_str());
    }

  private:
    const char *path_;
    bool show_;
};

/* Move tmp to path, refusing to replace anything that appeared meanwhile
 * (plain rename() would silently replace an empty directory). */
int rename_into_place(const std::string &tmp, const char *path)
{
    if (renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, path, RENAME_NOREPLACE)
        == 0)
        return XG_OK;
    if (errno == EEXIST || errno == ENOTEMPTY)
        return xg_set_error(XG_ERR_IO, "%s: already exists", path);
    if (errno != EINVAL && errno != ENOSYS)
        return xg_set_error(XG_ERR_IO, "%s: cannot rename %s into place: %s",
                            path, tmp.c_str(), strerror(errno));
    struct stat sb;
    if (lstat(path, &sb) == 0)
        return xg_set_error(XG_ERR_IO, "%s: already exists", path);
    if (rename(tmp.c_str(), path) != 0)
        return xg_set_error(XG_ERR_IO, "%s: cannot rename %s into place: %s",
                            path, tmp.c_str(), strerror(errno));
    return XG_OK;
}

double now_seconds()
{
    using clock = std::chrono::steady_clock;
    return std::chrono::duration<double>(clock::now().time_since_epoch())
        .count();
}

} // namespace

extern "C" {

/* See plugin/synth.h. */
int xg_shim_synth_db(const char *db_path, const struct xg_synth_params *p,
                     uint32_t threads, int quiet)
{
    if (!db_path || !*db_path || !p)
        return xg_set_error(XG_ERR_ARG, "xg_shim_synth_db: NULL argument");
    int rc = xg_synth_params_check(p);
    if (rc != XG_OK)
        return rc;
    if (p->n_docs == 0 || p->n_docs > UINT32_MAX)
        return xg_set_error(XG_ERR_ARG, "%s: number of documents must be in "
                            "1..4294967295", db_path);
    struct stat sb;
    if (lstat(db_path, &sb) == 0)
        return xg_set_error(XG_ERR_IO, "%s: already exists", db_path);
    std::string where = db_path;  /* what a Xapian exception is about */
    XG_SHIM_TRY
        const uint64_t n = p->n_docs;
        if (threads == 0) {
            long c = sysconf(_SC_NPROCESSORS_ONLN);
            threads = c > 0 ? (uint32_t)c : 1;
        }
        if (threads > n)
            threads = (uint32_t)n;
        const bool progress = !quiet && isatty(2);

        std::string tmp = std::string(db_path) + ".tmp-" +
                          std::to_string((long)getpid());
        if (lstat(tmp.c_str(), &sb) == 0)
            return xg_set_error(XG_ERR_IO,
                                "%s: already exists (left by a crashed run?)",
                                tmp.c_str());
        if (mkdir(tmp.c_str(), 0777) != 0)
            return xg_set_error(XG_ERR_IO, "%s: cannot create: %s",
                                tmp.c_str(), strerror(errno));
        tmp_guard guard;
        guard.path = tmp;

        zipf_guard zg;
        rc = xg_synth_zipf_init(&zg.z, p->vocab, p->zipf_s);
        if (rc != XG_OK)
            return rc;

        /* Slices and their part names, all in document order. */
        const uint64_t part_docs =
            std::max<uint64_t>(PART_DOCS, (n + MAX_PARTS - 1) / MAX_PARTS);
        std::vector<slice> slices(threads);
        std::vector<std::string> all_parts;
        for (uint32_t t = 0; t < threads; ++t) {
            slice &sl = slices[t];
            sl.begin = t * n / threads;
            sl.end = (t + 1) * n / threads;
            sl.part_docs = part_docs;
            uint64_t k = 0;
            for (uint64_t d = sl.begin; d < sl.end; d += part_docs, ++k)
                sl.parts.push_back(tmp + "/part" + std::to_string(t) + "-" +
                                   std::to_string(k));
            all_parts.insert(all_parts.end(), sl.parts.begin(),
                             sl.parts.end());
        }

        const double t0 = now_seconds();
        std::atomic<uint64_t> done{0};
        std::atomic<uint32_t> finished{0};
        std::atomic<bool> stop{false};
        first_error err;
        {
            joiner workers(&stop);
            for (uint32_t t = 0; t < threads; ++t)
                workers.workers.emplace_back(build_slice, p, &zg.z,
                                             &slices[t], &done, &finished,
                                             &stop, &err);
            double last = t0;
            while (finished < threads && !err.failed) {
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
                uint64_t k = done.load(std::memory_order_relaxed);
                double t = now_seconds();
                if (progress && t - last >= PROGRESS_SECONDS) {
                    last = t;
                    fprintf(stderr, "\r\033[K%s: %llu / %llu documents, "
                            "%.0f docs/s", db_path, (unsigned long long)k,
                            (unsigned long long)n, k / (t - t0));
                }
            }
            workers.join_all();
        }
        if (err.code != XG_OK)
            return xg_set_error(err.code, "%s", err.msg.c_str());
        const double t1 = now_seconds();
        if (progress)
            fprintf(stderr, "\r\033[K%s: %llu documents in %.1f s, %.0f "
                    "docs/s\n", db_path, (unsigned long long)n, t1 - t0,
                    n / (t1 - t0));

        /* Merge in document order; renumbering makes docids 1..n. */
        Xapian::Database all;
        for (const std::string &part : all_parts) {
            where = part;
            all.add_database(Xapian::Database(part));
        }
        where = db_path;
        const std::string out = tmp + "/db";
        status_compactor compactor(db_path, progress);
        all.compact(out, Xapian::Compactor::FULLER, 0, compactor);
        all.close();
        if (progress)
            fprintf(stderr, "\r\033[K%s: compacted %zu parts in %.1f s\n",
                    db_path, all_parts.size(), now_seconds() - t1);
        rc = rename_into_place(out, db_path);
        if (rc != XG_OK)
            return rc;
        return XG_OK;  /* the guard removes the emptied temporary */
    XG_SHIM_CATCH(where.c_str())
}

} // extern "C"
