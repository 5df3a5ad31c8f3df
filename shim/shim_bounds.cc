/** @file shim_bounds.cc
 *  @brief The match bounds stock Xapian starts from, per shard.
 *
 *  Before matching, Xapian takes the lower bound, estimate and upper bound
 *  of a query's matches from its postlist tree (multimatch.cc: the root's
 *  get_termfreq_min/est/max); a sharded search sums the shards' trees.
 *  Enquire::get_mset(0, 0) on one shard returns exactly those values,
 *  unrounded in the uncollapsed figures, without matching anything.  The
 *  plugin's ResultSource reports them so Xapian's final bounds for the
 *  accelerated query are computed from the same start as stock's.
 */
#include "shim_int.h"
#include "xg_shim.hh"

int xg_shim_tree_bounds(xg_db *db, const Xapian::Query &q, uint64_t *bounds)
{
    if (!db) return xg_set_error(XG_ERR_ARG, "xg_shim_tree_bounds: NULL db");
    const char *where = db->name.c_str();
    XG_SHIM_TRY
        for (size_t s = 0; s < db->shards.size(); ++s) {
            Xapian::Enquire enquire(db->shards[s]);
            enquire.set_query(q);
            const Xapian::MSet m = enquire.get_mset(0, 0);
            bounds[3 * s] = m.get_uncollapsed_matches_lower_bound();
            bounds[3 * s + 1] = m.get_uncollapsed_matches_estimated();
            bounds[3 * s + 2] = m.get_uncollapsed_matches_upper_bound();
        }
        return XG_OK;
    XG_SHIM_CATCH(where)
}
