/** @file shim_values.cc
 *  @brief Document values for the index's VALUES section (format.h): which
 *         slots hold values, each shard's statistics for a slot, and each
 *         document's value.
 */
#include <cstring>

#include "shim_int.h"
#include "../gpu/index/format.h"

/* See xg_shim.h.  Database::get_value_freq is a statistic the backend
 * keeps per slot, so probing a few hundred slots costs little. */
extern "C" int xg_shim_db_value_slots(xg_db *db, uint32_t probe,
                                      uint32_t *slots, uint32_t *n)
{
    if (!db || !n || (probe && !slots))
        return xg_set_error(XG_ERR_ARG, "xg_shim_db_value_slots: NULL "
                            "argument");
    XG_SHIM_TRY
        *n = 0;
        for (uint32_t s = 0; s < probe; ++s)
            if (db->combined.get_value_freq(s)) slots[(*n)++] = s;
        return XG_OK;
    XG_SHIM_CATCH(db->name.c_str())
}

/* See xg_shim.h. */
extern "C" int xg_shim_db_value_bounds(xg_db *db, uint32_t shard,
                                       uint32_t slot,
                                       struct xg_fmt_value_bounds *out,
                                       int *fits)
{
    if (!db || !out || !fits || shard >= db->shards.size())
        return xg_set_error(XG_ERR_ARG, "xg_shim_db_value_bounds: bad "
                            "argument");
    const char *where = db->shard_paths[shard].c_str();
    XG_SHIM_TRY
        const Xapian::Database &sh = db->shards[shard];
        memset(out, 0, sizeof *out);
        *fits = 1;
        const uint64_t freq = sh.get_value_freq(slot);
        if (freq == 0) return XG_OK;    /* lower bound empty: no values */
        const std::string lo = sh.get_value_lower_bound(slot);
        const std::string hi = sh.get_value_upper_bound(slot);
        if (lo.size() > XG_FMT_VALUE_MAX || hi.size() > XG_FMT_VALUE_MAX ||
            freq > UINT32_MAX) {
            *fits = 0;
            return XG_OK;
        }
        out->freq = (uint32_t)freq;
        out->lo_len = (uint8_t)lo.size();
        out->hi_len = (uint8_t)hi.size();
        memcpy(out->lo, lo.data(), lo.size());
        memcpy(out->hi, hi.data(), hi.size());
        return XG_OK;
    XG_SHIM_CATCH(where)
}

/* See xg_shim.h.  GlassValueList::check(did) skips to did inside the
 * value chunk it reads and fails past that chunk's last value unless
 * another chunk starts at did, so one probe at a + 1 tells whether the
 * documents between two values a and b share a chunk with b. */
extern "C" int xg_shim_db_each_value(xg_db *db, uint32_t slot,
                                     xg_value_fn fn, void *ctx)
{
    if (!db || !fn)
        return xg_set_error(XG_ERR_ARG, "xg_shim_db_each_value: NULL "
                            "argument");
    const char *where = db->name.c_str();
    XG_SHIM_TRY
        const uint32_t n = (uint32_t)db->shards.size();
        for (uint32_t s = 0; s < n; ++s) {
            where = db->shard_paths[s].c_str();
            const Xapian::Database &sh = db->shards[s];
            const Xapian::ValueIterator end = sh.valuestream_end(slot);
            Xapian::ValueIterator it = sh.valuestream_begin(slot);
            Xapian::ValueIterator probe;    /* its own: copies share one */
            while (it != end) {
                const Xapian::docid a = it.get_docid();
                const std::string v = *it;
                ++it;
                const Xapian::docid b = it != end ? it.get_docid() : 0;
                int in_chunk = 0;
                if (b > a + 1) {
                    if (probe == end) probe = sh.valuestream_begin(slot);
                    in_chunk = probe.check(a + 1) ? 1 : 0;
                }
                const uint32_t g = (a - 1) * n + s + 1;
                int rc = fn(ctx, g, v.data(), v.size(),
                            b ? (b - 1) * n + s + 1 : 0, in_chunk);
                if (rc) return rc;
            }
        }
        return XG_OK;
    XG_SHIM_CATCH(where)
}
