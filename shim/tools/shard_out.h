/** @file shard_out.h
 *  @brief A new database of one or N glass shards, written whole or not at
 *         all: the output of `index` and `split`.
 *
 *  It is built in PATH.tmp-PID and renamed into place only by finish();
 *  destroyed before that (an error, an exception) it removes the
 *  temporary.  With N > 1, PATH is a directory of glass databases shard0
 *  .. shard{N-1} and a XAPIANDB stub listing them in order; combined docid
 *  d lives in shard (d-1) % N as local docid (d-1) / N + 1, so Xapian's
 *  interleaving of the stub's shards maps it back to d.
 */
#ifndef XG_SHARD_OUT_H
#define XG_SHARD_OUT_H

#include <stdint.h>

#include <string>
#include <vector>

#include <xapian.h>

/* Write dir/XAPIANDB listing glass shards shard0 .. shard{n-1}: how every
 * sharded database the tools make is opened as one.  XG_OK or XG_ERR_IO. */
int xg_shard_stub_write(const std::string &dir, uint32_t n);

class ShardOut {
  public:
    ShardOut() = default;
    ShardOut(const ShardOut &) = delete;
    ShardOut &operator=(const ShardOut &) = delete;
    ~ShardOut();

    /* XG_OK, or XG_ERR_IO (PATH exists, a temporary cannot be made). */
    int open(const char *path, uint32_t n_shards);

    uint32_t size() const { return (uint32_t)shards.size(); }
    Xapian::WritableDatabase &shard(uint32_t s) { return shards[s]; }
    Xapian::WritableDatabase &shard_of(Xapian::docid d)
    {
        return shards[(d - 1) % shards.size()];
    }
    Xapian::docid local(Xapian::docid d) const
    {
        return (d - 1) / (Xapian::docid)shards.size() + 1;
    }

    /* Commit every shard, write the stub, rename into place. */
    int finish();

  private:
    std::string path, tmp;
    std::vector<Xapian::WritableDatabase> shards;
    bool done = false;
};

#endif
