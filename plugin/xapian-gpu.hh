/** @file xapian-gpu.hh
 *  @brief The C++ face of the plugin: hand a Xapian::Query to xapian-gpu,
 *         give the query it returns to your Enquire, get the stock MSet.
 *
 *      xg_context *ctx;                      // once, at startup
 *      xg_context_open(paths, n, NULL, NULL, &ctx);
 *      ...
 *      Xapian::Query q = parser.parse_query(text);
 *      enquire.set_query(xg_accelerate(ctx, q, first, maxitems));
 *      Xapian::MSet mset = enquire.get_mset(first, maxitems);
 *
 *  When the planner answers a query (GPU, or the exact CPU matcher), the
 *  returned query is AND_MAYBE(AND_MAYBE(ResultSource, AND_MAYBE(
 *  SCALE_WEIGHT(nothing, 0), q)), counters): Xapian visits only the
 *  source's documents, the exact top first+maxitems with their weights;
 *  q hangs off a source of no document, so Xapian opens and bounds its
 *  postlists (max_possible, termweights, matching terms: Xapian's own)
 *  without moving them; the source reports q's own match bounds, and the
 *  counters, sources of weight 0, make Xapian's percentages stock's
 *  (docs/plugin.md).  Otherwise it returns q unchanged and stock Xapian
 *  answers.  What can differ is in
 *  docs/plugin.md (the lower bound where stock's bounds are estimates).
 *  Do not ask the
 *  Enquire for more than first+maxitems items with the returned query.
 */
#ifndef XAPIAN_GPU_HH
#define XAPIAN_GPU_HH

#include <xapian.h>

#include <memory>
#include <string>
#include <vector>

#include "xapian-gpu.h"

namespace xapian_gpu {

/* One shard's part of a precomputed result: shard-local docids ascending
 * and their exact weights. */
struct ShardResult {
    std::string uuid;               /* the shard's Database::get_uuid() */
    Xapian::rev revision = 0;       /* the revision the index was built at */
    std::vector<Xapian::docid> docids;
    std::vector<double> weights;
    double max_weight = 0;
    /* The query's match bounds on this shard as stock Xapian starts them
     * (lower, estimate, upper): reported as the source's termfreqs. */
    Xapian::doccount tf_min = 0, tf_est = 0, tf_max = 0;
};

/* A PostingSource that yields a precomputed top k, shard by shard
 * (xapian-notes.md §3: shard-local docids ascending, live only, exact
 * weights; maxweight 0 until its first move, so that the MSet's
 * max_possible is the query's own, then the true maximum).  Serialisable, so a remote server
 * with it registered can run it: the result travels with the query. */
class ResultSource : public Xapian::PostingSource {
    std::shared_ptr<const std::vector<ShardResult>> shards_;
    const ShardResult *cur_ = nullptr;
    size_t pos_ = 0;
    bool started_ = false;

    void start();

  public:
    explicit ResultSource(std::shared_ptr<const std::vector<ShardResult>> s);

    void init(const Xapian::Database &db) override;
    Xapian::doccount get_termfreq_min() const override;
    Xapian::doccount get_termfreq_est() const override;
    Xapian::doccount get_termfreq_max() const override;
    double get_weight() const override;
    void next(double min_wt) override;
    void skip_to(Xapian::docid did, double min_wt) override;
    bool at_end() const override;
    Xapian::docid get_docid() const override;

    ResultSource *clone() const override;
    std::string name() const override;
    std::string serialise() const override;
    ResultSource *unserialise_with_registry(
        const std::string &s, const Xapian::Registry &registry) const override;
    std::string get_description() const override;
};

} // namespace xapian_gpu

/* The query to give to Enquire for get_mset(first, maxitems).  *route (may
 * be NULL): who answered (enum xg_route).  The context's BM25 parameters
 * must be the Enquire's; the second form checks that against the Enquire's
 * weighting scheme and routes to stock Xapian when they differ. */
Xapian::Query xg_accelerate(xg_context *ctx, const Xapian::Query &query,
                            Xapian::doccount first, Xapian::doccount maxitems,
                            int *route = nullptr);
Xapian::Query xg_accelerate(xg_context *ctx, const Xapian::Query &query,
                            Xapian::doccount first, Xapian::doccount maxitems,
                            const Xapian::Weight &weighting,
                            int *route = nullptr);

#endif
