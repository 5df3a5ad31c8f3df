/** @file shim_int.h
 *  @brief Internals shared by the shim/ C++ files: struct xg_db and the one
 *         macro pair that keeps C++ exceptions out of the C API.
 *
 *  Only C++ files in shim/ include this (it pulls in <xapian.h>).  Every
 *  extern "C" body is written as
 *
 *      XG_SHIM_TRY
 *          ...
 *      XG_SHIM_CATCH(where)
 *
 *  where `where` is a `const char *` naming the path (or object) the work is
 *  about; it is evaluated only when something was thrown, so it may be a
 *  variable the body updates as it moves from shard to shard.  The catch
 *  turns the exception into xg_set_error(code, "WHERE: ...") and returns the
 *  code.  XG_SHIM_CATCH_VOID and XG_SHIM_CATCH_NULL are the same for
 *  functions that return nothing or a pointer.
 */
#ifndef XG_SHIM_INT_H
#define XG_SHIM_INT_H

#include <xapian.h>

#include <cstdint>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "xg_shim.h"
#include "../gpu/runtime/error.h"

/* An open database: its shards one by one, and all of them combined.
 * The per-shard Database objects and `combined` share the same backend
 * objects (add_database() copies the internal pointers), so they always
 * see the same revision and no file is opened twice. */
struct xg_db {
    std::vector<std::string> shard_paths;   /* glass directories, in order */
    std::vector<Xapian::Database> shards;   /* one per shard_paths entry */
    Xapian::Database combined;              /* for Enquire / QueryParser */
    std::string name;                       /* the paths given, for messages */
    uint64_t n_terms = UINT64_MAX;  /* cached by xg_shim_db_count_terms */
    /* xg_shim_parse's QueryParser, set up for the options parser_key
     * encodes (-1: none yet). */
    std::unique_ptr<Xapian::QueryParser> parser;
    int parser_key = -1;

    /* Buffers reused from term to term by xg_shim_db_each_term, so a pass
     * over 10^6 terms does not allocate 10^6 times. */
    std::vector<uint32_t> docids, wdfs;               /* merged output */
    std::vector<std::vector<uint32_t>> sh_docids;     /* per shard, combined */
    std::vector<std::vector<uint32_t>> sh_wdfs;
    /* Positions (XG_TERMS_POSITIONS): per posting counts, then the
     * positions back to back; merged and per shard as above. */
    std::vector<uint32_t> pos_counts, positions;
    std::vector<std::vector<uint32_t>> sh_pos_counts, sh_positions;
};

/* Set the last error from the exception being handled and return its code.
 * Must be called from inside a catch block (it rethrows to classify). */
inline int xg_shim_fail(const char *where) noexcept
{
    if (!where)
        where = "xapian";
    try {
        throw;
    } catch (const Xapian::DatabaseModifiedError &e) {
        /* A writer committed often enough that the revision we opened was
         * recycled; the caller should reopen and start again. */
        return xg_set_error(XG_ERR_XAPIAN,
                            "%s: database changed during the read (%s)",
                            where, e.get_msg().c_str());
    } catch (const Xapian::InvalidArgumentError &e) {
        return xg_set_error(XG_ERR_ARG, "%s: %s: %s", where, e.get_type(),
                            e.get_msg().c_str());
    } catch (const Xapian::Error &e) {
        const char *errno_text = e.get_error_string();
        if (errno_text && *errno_text)
            return xg_set_error(XG_ERR_XAPIAN, "%s: %s: %s (%s)", where,
                                e.get_type(), e.get_msg().c_str(),
                                errno_text);
        return xg_set_error(XG_ERR_XAPIAN, "%s: %s: %s", where, e.get_type(),
                            e.get_msg().c_str());
    } catch (const std::bad_alloc &) {
        return xg_set_error(XG_ERR_NOMEM, "%s: out of memory", where);
    } catch (const std::exception &e) {
        return xg_set_error(XG_ERR_XAPIAN, "%s: %s", where, e.what());
    } catch (...) {
        return xg_set_error(XG_ERR_XAPIAN, "%s: unknown C++ exception",
                            where);
    }
}

#define XG_SHIM_TRY try {
#define XG_SHIM_CATCH(where)                                                \
    }                                                                       \
    catch (...) { return xg_shim_fail(where); }
#define XG_SHIM_CATCH_VOID(where)                                           \
    }                                                                       \
    catch (...) { (void)xg_shim_fail(where); }
#define XG_SHIM_CATCH_NULL(where)                                           \
    }                                                                       \
    catch (...) {                                                           \
        (void)xg_shim_fail(where);                                          \
        return NULL;                                                        \
    }

/* Move a finished temporary database `tmp` to `path`, refusing to replace
 * anything that appeared there meanwhile (plain rename() would silently
 * replace an empty directory).  XG_OK or XG_ERR_IO naming path.  Shared by
 * the indexer and the synthetic generator (defined in tools/shim_index.cc). */
int xg_shim_rename_into_place(const std::string &tmp, const char *path);

/* The private build location beside path, "path.tmp-PID", into *tmp;
 * XG_ERR_IO if something is already there (left by a crashed run).  Shared
 * by the same two (defined in tools/shim_index.cc). */
int xg_shim_tmp_path(const char *path, std::string &tmp);

#endif
