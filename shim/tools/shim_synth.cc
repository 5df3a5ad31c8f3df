/** @file shim_synth.cc
 *  @brief Write the synthetic collection of shim/tools/synth.h into a compacted
 *         glass database, with one builder thread per core.
 *
 *  The documents 0..n-1 are cut into T contiguous slices; thread t writes
 *  slice [t*n/T, (t+1)*n/T), in order, into its own glass database
 *  DB_PATH.tmp-PID/part<t>, committing every COMMIT_DOCS documents (small
 *  batches keep Xapian's in-memory inverter, a std::map from term to a
 *  std::map of postings, small and cache-resident: that is where nearly all
 *  the time goes).  The parts are temporary, so they are written with
 *  DB_NO_SYNC.  Each term is added with Document::add_term(word, wdf): no
 *  positions and no document data, so the document length is the token
 *  count.  The parts are then merged in order with Database::compact()
 *  (renumbering, so docids are 1..n in document order; Compactor::FULLER,
 *  as the result is read-only) into DB_PATH.tmp-PID/db, which is renamed
 *  into place.
 *
 *  One part per thread, not many small ones: compaction copies postlist
 *  chunks without joining them, so every part boundary leaves each of its
 *  terms with an extra short chunk.  With 50 parts of 2000 documents the
 *  10^5-document postlist table was 327 MB instead of 154 MB, and stock
 *  Xapian, the baseline we measure against, would read twice the chunks.
 *
 *  Nothing is half-written: DB_PATH must not exist, and on any error or
 *  exception the temporary directory is removed.  Worker threads never
 *  let an exception escape; the first failure stops the others and is
 *  reported from the calling thread.
 */
#include "../shim_int.h"

#include "shard_out.h"
#include "synth.h"

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

/* Documents per commit.  Measured on the 2-core build VM
 * (shared with other jobs, so wall times vary by 20%), `xapian-gpu synth
 * docs --docs 100000` (2 threads, one part each): commit every 100 / 250 /
 * 500 / 1000 / 5000 documents took 78 / 74-78 / 78 / 106 / 125 CPU
 * seconds and 51 / 42-60 / 45 / 74 / 69 s of wall time (+0.7 s
 * compaction).  Flushing once per 10^4 documents (parts of 10^4) was
 * slower still: 67 s.  Memory stays small: Xapian buffers about 60 bytes
 * per posting, and 250 documents are about 1.2e5 postings. */
#define COMMIT_DOCS 250u
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

/* One thread's slice: a shard's local documents [begin, end), document
 * i being the collection's i * stride + offset, into the database `part`. */
struct slice {
    uint64_t begin, end;
    uint32_t stride, offset;
    std::string part;
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
        where = sl->part.c_str();
        Xapian::WritableDatabase db(sl->part, PART_FLAGS);
        uint32_t since_commit = 0;
        for (uint64_t i = sl->begin; i < sl->end; ++i) {
            if (*stop)
                return;
            const uint64_t d = i * sl->stride + sl->offset;
            uint32_t n = xg_synth_doc(p, z, d, ranks.data(), wdfs.data(),
                                      XG_SYNTH_MAX_LEN);
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

double now_seconds()
{
    using clock = std::chrono::steady_clock;
    return std::chrono::duration<double>(clock::now().time_since_epoch())
        .count();
}

} // namespace

extern "C" {

/* See shim/tools/synth.h. */
int xg_shim_synth_db(const char *db_path, const struct xg_synth_params *p,
                     uint32_t threads, uint32_t n_shards, int quiet)
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
        if (n_shards == 0 || n_shards > n)
            return xg_set_error(XG_ERR_ARG, "%s: shards must be in 1..the "
                                "number of documents", db_path);
        /* At least one builder per shard, and whole shards per builder
         * share: threads round up to a multiple of the shards. */
        if (threads < n_shards)
            threads = n_shards;
        threads -= threads % n_shards;
        if (threads / n_shards > n / n_shards)
            threads = n_shards * (uint32_t)(n / n_shards);
        const bool progress = !quiet && isatty(2);

        std::string tmp;
        if ((rc = xg_shim_tmp_path(db_path, tmp)) != XG_OK)
            return rc;
        if (mkdir(tmp.c_str(), 0777) != 0)
            return xg_set_error(XG_ERR_IO, "%s: cannot create: %s",
                                tmp.c_str(), strerror(errno));
        tmp_guard guard;
        guard.path = tmp;

        zipf_guard zg;
        rc = xg_synth_zipf_init(&zg.z, p->vocab, p->zipf_s);
        if (rc != XG_OK)
            return rc;

        /* Slices in document order within each shard: shard s holds the
         * documents d with d % n_shards == s, local docid d / n_shards + 1,
         * so a stub over the shards numbers them as the whole collection.
         * A shard has at least as many documents as builders: none is
         * empty. */
        const uint32_t per = threads / n_shards;
        std::vector<slice> slices(threads);
        for (uint32_t t = 0; t < threads; ++t) {
            slice &sl = slices[t];
            const uint32_t sh = t / per, k = t % per;
            const uint64_t local = (n - sh + n_shards - 1) / n_shards;
            sl.begin = k * local / per;
            sl.end = (k + 1) * local / per;
            sl.stride = n_shards;
            sl.offset = sh;
            sl.part = tmp + "/part" + std::to_string(t);
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

        /* Merge each shard's parts in document order; renumbering makes
         * its docids 1..its size. */
        const std::string out = tmp + "/db";
        if (n_shards > 1 && mkdir(out.c_str(), 0777) != 0)
            return xg_set_error(XG_ERR_IO, "%s: cannot create: %s",
                                out.c_str(), strerror(errno));
        for (uint32_t sh = 0; sh < n_shards; ++sh) {
            Xapian::Database all;
            for (uint32_t k = 0; k < per; ++k) {
                where = slices[sh * per + k].part;
                all.add_database(Xapian::Database(where));
            }
            where = db_path;
            const std::string dst = n_shards > 1
                                        ? out + "/shard" + std::to_string(sh)
                                        : out;
            status_compactor compactor(db_path, progress);
            all.compact(dst, Xapian::Compactor::FULLER, 0, compactor);
            all.close();
        }
        if (n_shards > 1 && (rc = xg_shard_stub_write(out, n_shards)))
            return rc;
        if (progress)
            fprintf(stderr, "\r\033[K%s: compacted %zu parts in %.1f s\n",
                    db_path, slices.size(), now_seconds() - t1);
        rc = xg_shim_rename_into_place(out, db_path);
        if (rc != XG_OK)
            return rc;
        return XG_OK;  /* the guard removes the emptied temporary */
    XG_SHIM_CATCH(where.c_str())
}

} // extern "C"
