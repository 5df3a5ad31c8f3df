/** @file shard_out.cc
 *  @brief A new database of one or N glass shards (shard_out.h).
 */
#include "../shim_int.h"
#include "shard_out.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <sys/stat.h>

int xg_shard_stub_write(const std::string &dir, uint32_t n)
{
    const std::string stub = dir + "/XAPIANDB";
    FILE *f = fopen(stub.c_str(), "w");
    if (!f)
        return xg_set_error(XG_ERR_IO, "%s: %s", stub.c_str(), strerror(errno));
    for (uint32_t s = 0; s < n; ++s)
        fprintf(f, "glass shard%u\n", s);
    if (fclose(f) != 0)
        return xg_set_error(XG_ERR_IO, "%s: %s", stub.c_str(), strerror(errno));
    return XG_OK;
}

ShardOut::~ShardOut()
{
    /* Close first so no lock or file handle outlives the files. */
    try {
        shards.clear();
    } catch (...) {
    }
    if (!done && !tmp.empty()) {
        std::error_code ec;
        std::filesystem::remove_all(tmp, ec);
    }
}

int ShardOut::open(const char *path_, uint32_t n)
{
    struct stat sb;
    path = path_;
    if (lstat(path_, &sb) == 0)
        return xg_set_error(XG_ERR_IO, "%s: already exists", path_);
    std::string t;
    if (int rc = xg_shim_tmp_path(path_, t)) return rc;
    const int flags = Xapian::DB_CREATE | Xapian::DB_BACKEND_GLASS;
    if (n == 1) {
        tmp = t;
        shards.emplace_back(t, flags);
        return XG_OK;
    }
    if (mkdir(t.c_str(), 0777) != 0)
        return xg_set_error(XG_ERR_IO, "%s: %s", t.c_str(), strerror(errno));
    tmp = t;
    for (uint32_t s = 0; s < n; ++s)
        shards.emplace_back(t + "/shard" + std::to_string(s), flags);
    return XG_OK;
}

int ShardOut::finish()
{
    for (Xapian::WritableDatabase &w : shards) {
        w.commit();
        w.close();
    }
    if (shards.size() > 1)
        if (int rc = xg_shard_stub_write(tmp, (uint32_t)shards.size()))
            return rc;
    int rc = xg_shim_rename_into_place(tmp, path.c_str());
    if (rc == XG_OK) done = true;
    return rc;
}
