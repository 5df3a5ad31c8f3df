/** @file shim_index.cc
 *  @brief Build sample and test databases from docid<TAB>text files with
 *         Xapian's TermGenerator, the way omindex indexes body text.
 *
 *  Each line is "docid<TAB>text"; docid is a positive decimal integer and
 *  is written as docid * docid_scale (scaling lets several collections
 *  share one database without clashing).  Terms come from
 *  TermGenerator::index_text() with Stem("english") and the default
 *  STEM_SOME (unstemmed terms with positions plus Z-prefixed stems), as
 *  omindex does for a document body, or without a stemmer (stem_none: the
 *  unstemmed terms alone, each document's length its number of words);
 *  the document data is the first 200 bytes of the text.
 *
 *  Nothing is ever half-written: the database is built in DB_PATH.tmp-PID,
 *  committed, then renamed into place; on any error the temporary is
 *  removed.  With n_shards > 1, DB_PATH is a directory holding glass
 *  databases shard0 .. shard{n-1} and a XAPIANDB stub listing them in
 *  order; combined docid d is stored in shard (d-1) % n as local docid
 *  (d-1) / n + 1, so Xapian's interleaving maps it back to d.
 */
#include "../shim_int.h"
#include "indexer.h"
#include "shard_out.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <unordered_map>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

/* Document data keeps this many leading bytes of the text. */
#define DOC_DATA_BYTES 200
/* Progress line interval (documents), shown only on a terminal. */
#define PROGRESS_EVERY 10000u

namespace {

/* Longest prefix of at most `max` bytes that does not split a UTF-8
 * sequence, so the stored data is always valid text. */
size_t utf8_prefix(const std::string &s, size_t max)
{
    if (s.size() <= max)
        return s.size();
    size_t n = max;
    while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xc0) == 0x80)
        --n;
    return n;
}

/* Parse the docid field; false if it is not a decimal in [1, 2^32-1]. */
bool parse_docid(const std::string &line, size_t tab, uint64_t &out)
{
    if (tab == 0 || tab > 10)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < tab; ++i) {
        char c = line[i];
        if (c < '0' || c > '9')
            return false;
        v = v * 10 + uint64_t(c - '0');
    }
    if (v == 0 || v > UINT32_MAX)
        return false;
    out = v;
    return true;
}

} // namespace

/* See shim_int.h.  Move tmp to path, refusing to replace anything that appeared meanwhile
 * (plain rename() would silently replace an empty directory). */
int xg_shim_tmp_path(const char *path, std::string &tmp)
{
    struct stat sb;
    tmp = std::string(path) + ".tmp-" + std::to_string((long)getpid());
    if (lstat(tmp.c_str(), &sb) == 0)
        return xg_set_error(XG_ERR_IO,
                            "%s: already exists (left by a crashed run?)",
                            tmp.c_str());
    return XG_OK;
}

int xg_shim_rename_into_place(const std::string &tmp, const char *path)
{
    if (renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, path, RENAME_NOREPLACE)
        == 0)
        return XG_OK;
    if (errno == EEXIST || errno == ENOTEMPTY)
        return xg_set_error(XG_ERR_IO, "%s: already exists", path);
    if (errno != EINVAL && errno != ENOSYS)
        return xg_set_error(XG_ERR_IO, "%s: cannot rename %s into place: %s",
                            path, tmp.c_str(), strerror(errno));
    /* The filesystem has no RENAME_NOREPLACE: check, then rename. */
    struct stat sb;
    if (lstat(path, &sb) == 0)
        return xg_set_error(XG_ERR_IO, "%s: already exists", path);
    if (rename(tmp.c_str(), path) != 0)
        return xg_set_error(XG_ERR_IO, "%s: cannot rename %s into place: %s",
                            path, tmp.c_str(), strerror(errno));
    return XG_OK;
}

extern "C" {

/* See xg_shim.h.  Errors: XG_ERR_ARG (bad options), XG_ERR_IO ("PATH:
 * already exists", unreadable TSV, rename), XG_ERR_FORMAT ("FILE:LINE:
 * fault" for a malformed line, an out-of-range or duplicate docid),
 * XG_ERR_XAPIAN.  On error no database and no temporary is left behind. */
int xg_shim_index_tsv(const char *tsv, const char *db_path,
                      const struct xg_index_opts *o)
{
    if (!tsv || !db_path || !o || !*db_path)
        return xg_set_error(XG_ERR_ARG, "xg_shim_index_tsv: NULL argument");
    if (o->n_shards == 0)
        return xg_set_error(XG_ERR_ARG, "%s: n_shards must be >= 1", db_path);
    if (o->docid_scale == 0)
        return xg_set_error(XG_ERR_ARG, "%s: docid_scale must be >= 1",
                            db_path);
    struct stat sb;
    if (lstat(db_path, &sb) == 0)
        return xg_set_error(XG_ERR_IO, "%s: already exists", db_path);
    XG_SHIM_TRY
        std::ifstream in(tsv);
        if (!in)
            return xg_set_error(XG_ERR_IO, "%s: %s", tsv, strerror(errno));

        ShardOut out;
        if (int rc = out.open(db_path, o->n_shards))
            return rc;

        Xapian::TermGenerator tg;
        if (!o->stem_none)
            tg.set_stemmer(Xapian::Stem("english"));
        const bool progress = !o->quiet && isatty(2);
        std::unordered_map<uint32_t, unsigned> seen;  /* docid -> line */
        std::vector<uint32_t> order;  /* input order, for delete_every */
        std::string line;
        unsigned line_no = 0;
        uint32_t n_docs = 0;
        while (std::getline(in, line)) {
            ++line_no;
            if (!line.empty() && line.back() == '\r')
                line.pop_back();  /* tolerate CRLF files */
            size_t tab = line.find('\t');
            if (tab == std::string::npos)
                return xg_set_error(XG_ERR_FORMAT,
                                    "%s:%u: no TAB (want docid<TAB>text)",
                                    tsv, line_no);
            uint64_t id;
            if (!parse_docid(line, tab, id))
                return xg_set_error(XG_ERR_FORMAT,
                                    "%s:%u: docid is not a decimal integer "
                                    "in 1..4294967295", tsv, line_no);
            uint64_t d = id * o->docid_scale;
            if (d > UINT32_MAX)
                return xg_set_error(XG_ERR_FORMAT,
                                    "%s:%u: docid %llu * scale %u exceeds "
                                    "32 bits", tsv, line_no,
                                    (unsigned long long)id, o->docid_scale);
            auto ins = seen.emplace((uint32_t)d, line_no);
            if (!ins.second)
                return xg_set_error(XG_ERR_FORMAT,
                                    "%s:%u: duplicate docid %llu (first on "
                                    "line %u)", tsv, line_no,
                                    (unsigned long long)id,
                                    ins.first->second);
            const std::string text(line, tab + 1);
            Xapian::Document doc;
            tg.set_document(doc);
            tg.index_text(text);
            doc.set_data(text.substr(0, utf8_prefix(text, DOC_DATA_BYTES)));
            out.shard_of((Xapian::docid)d).replace_document(
                out.local((Xapian::docid)d), doc);
            if (o->delete_every)
                order.push_back((uint32_t)d);
            if (++n_docs % PROGRESS_EVERY == 0 && progress)
                fprintf(stderr, "\r%s: %u documents", db_path, n_docs);
        }
        if (in.bad())
            return xg_set_error(XG_ERR_IO, "%s: read error: %s", tsv,
                                strerror(errno));
        if (progress && n_docs >= PROGRESS_EVERY)
            fprintf(stderr, "\r%s: %u documents\n", db_path, n_docs);

        if (o->delete_every) {
            for (size_t i = o->delete_every; i <= order.size();
                 i += o->delete_every) {
                uint32_t d = order[i - 1];
                out.shard_of(d).delete_document(out.local(d));
            }
        }
        return out.finish();
    XG_SHIM_CATCH(db_path)
}

} // extern "C"
