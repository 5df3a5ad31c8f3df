/** @file accelerate.cc
 *  @brief The thin C++ glue between Xapian applications and the context:
 *         xg_accelerate, the ResultSource posting source, and the C API's
 *         search (which runs the same accelerated query through Enquire, so
 *         C programs get Xapian's own estimate too).
 */
#include "xapian-gpu.hh"

#include <algorithm>
#include <cstring>
#include <memory>

#include "../gpu/runtime/error.h"
#include "../gpu/index/format_read.h"
#include "../shim/xg_shim.hh"
#include "context.h"

static_assert(Xapian::QueryParser::FLAG_DEFAULT == XG_PARSE_FLAG_DEFAULT &&
              Xapian::QueryParser::FLAG_WILDCARD == XG_PARSE_FLAG_WILDCARD &&
              Xapian::QueryParser::FLAG_PARTIAL == XG_PARSE_FLAG_PARTIAL,
              "xapian-gpu.h's parser flags are QueryParser's");

using xapian_gpu::ResultSource;
using xapian_gpu::ShardResult;

namespace {

const char source_name[] = "xapian_gpu::ResultSource";
const char magic[] = "XGRS2";

/* Little-endian fixed-width fields for serialise(). */
void put_u64(std::string &s, uint64_t v)
{
    for (int i = 0; i < 8; ++i) s.push_back(char((v >> (8 * i)) & 0xff));
}

uint64_t get_u64(const std::string &s, size_t &at)
{
    if (s.size() - at < 8 || at > s.size())
        throw Xapian::SerialisationError("xapian-gpu: ResultSource: "
                                         "truncated serialisation");
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t((unsigned char)s[at + i]) << (8 * i);
    at += 8;
    return v;
}

/* The engine's top k (combined docids, weight order) split by shard,
 * with the query's starting bounds per shard (3 per shard). */
std::shared_ptr<std::vector<ShardResult>>
split_by_shard(const xg_index *ix, const xg_result &r, const uint64_t *bounds)
{
    const uint32_t n = ix->hdr->n_shards;
    auto shards = std::make_shared<std::vector<ShardResult>>(n);
    for (uint32_t i = 0; i < n; ++i) {
        (*shards)[i].uuid = ix->shards[i].uuid;
        (*shards)[i].revision = ix->shards[i].revision;
        (*shards)[i].tf_min = Xapian::doccount(bounds[3 * i]);
        (*shards)[i].tf_est = Xapian::doccount(bounds[3 * i + 1]);
        (*shards)[i].tf_max = Xapian::doccount(bounds[3 * i + 2]);
    }
    std::vector<std::pair<Xapian::docid, double>> tmp;
    for (uint32_t sh = 0; sh < n; ++sh) {
        tmp.clear();
        for (uint32_t i = 0; i < r.n_hits; ++i)
            if ((r.hits[i].docid - 1) % n == sh)
                tmp.emplace_back((r.hits[i].docid - 1) / n + 1,
                                 r.hits[i].weight);
        std::sort(tmp.begin(), tmp.end());
        ShardResult &s = (*shards)[sh];
        for (const auto &h : tmp) {
            s.docids.push_back(h.first);
            s.weights.push_back(h.second);
            s.max_weight = std::max(s.max_weight, h.second);
        }
    }
    return shards;
}

bool same_bm25(const Xapian::Weight &w, const xg_bm25_params &p)
{
    const std::string name = w.name(), params = w.serialise();
    return xg_shim_weighting_is_bm25(name.data(), name.size(), params.data(),
                                     params.size(), &p);
}

} // namespace

ResultSource::ResultSource(std::shared_ptr<const std::vector<ShardResult>> s)
    : shards_(std::move(s))
{
}

void ResultSource::init(const Xapian::Database &db)
{
    cur_ = nullptr;
    pos_ = 0;
    started_ = false;
    if (!shards_)
        throw Xapian::InvalidOperationError("xapian-gpu: ResultSource: "
                                            "the registry's prototype holds "
                                            "no result");
    const std::string uuid = db.get_uuid();
    for (const ShardResult &s : *shards_)
        if (s.uuid == uuid) {
            /* A result for another revision would be silently wrong. */
            if (db.get_revision() != s.revision)
                throw Xapian::DatabaseModifiedError(
                    "xapian-gpu: the database changed since its GPU index "
                    "was built; reopen the context after re-exporting");
            cur_ = &s;
            /* 0 until the first move: Xapian takes the MSet's
             * max_possible from the tree before it moves anything, and
             * the source's weights are the query's own, whose bound the
             * query adds.  The true maximum from then on, for the
             * matcher's pruning (set_maxweight tells the matcher). */
            set_maxweight(0.0);
            return;
        }
    throw Xapian::InvalidArgumentError(
        "xapian-gpu: ResultSource: database " + uuid +
        " is not one the context's index was built from");
}

/* The query's own bounds, not the source's k documents: the source is
 * the leftmost leaf of the accelerated query's AND_MAYBEs, whose
 * termfreqs are their left sides', and Xapian starts the MSet's bounds
 * from the root's termfreqs, so they start where stock's do. */
Xapian::doccount ResultSource::get_termfreq_min() const
{
    return cur_ ? cur_->tf_min : 0;
}

Xapian::doccount ResultSource::get_termfreq_est() const
{
    return cur_ ? cur_->tf_est : 0;
}

Xapian::doccount ResultSource::get_termfreq_max() const
{
    return cur_ ? cur_->tf_max : 0;
}

double ResultSource::get_weight() const { return cur_->weights[pos_]; }

void ResultSource::start()
{
    started_ = true;
    if (cur_->max_weight != 0.0) set_maxweight(cur_->max_weight);
}

void ResultSource::next(double)
{
    if (!started_) start();
    else ++pos_;
}

void ResultSource::skip_to(Xapian::docid did, double)
{
    if (!started_) start();
    const auto &d = cur_->docids;
    if (pos_ < d.size() && d[pos_] >= did) return;
    pos_ = size_t(std::lower_bound(d.begin() + pos_, d.end(), did) - d.begin());
}

bool ResultSource::at_end() const
{
    return started_ && pos_ >= cur_->docids.size();
}

Xapian::docid ResultSource::get_docid() const { return cur_->docids[pos_]; }

ResultSource *ResultSource::clone() const { return new ResultSource(shards_); }

std::string ResultSource::name() const { return source_name; }

/* magic, n_shards, then per shard: uuid length and bytes, revision, the
 * three bounds, count, and count (docid, weight bits) pairs; all fields
 * u64 little-endian. */
std::string ResultSource::serialise() const
{
    std::string s(magic);
    if (!shards_)
        throw Xapian::InvalidOperationError("xapian-gpu: ResultSource: "
                                            "the registry's prototype holds "
                                            "no result");
    put_u64(s, shards_->size());
    for (const ShardResult &sh : *shards_) {
        put_u64(s, sh.uuid.size());
        s += sh.uuid;
        put_u64(s, sh.revision);
        put_u64(s, sh.tf_min);
        put_u64(s, sh.tf_est);
        put_u64(s, sh.tf_max);
        put_u64(s, sh.docids.size());
        for (size_t i = 0; i < sh.docids.size(); ++i) {
            uint64_t bits;
            std::memcpy(&bits, &sh.weights[i], 8);
            put_u64(s, sh.docids[i]);
            put_u64(s, bits);
        }
    }
    return s;
}

ResultSource *ResultSource::unserialise_with_registry(
    const std::string &s, const Xapian::Registry &) const
{
    const size_t m = sizeof magic - 1;
    if (s.compare(0, m, magic) != 0)
        throw Xapian::SerialisationError("xapian-gpu: ResultSource: bad "
                                         "serialisation");
    size_t at = m;
    const uint64_t n = get_u64(s, at);
    if (n == 0 || n > s.size())
        throw Xapian::SerialisationError("xapian-gpu: ResultSource: bad "
                                         "shard count");
    auto shards = std::make_shared<std::vector<ShardResult>>(n);
    for (ShardResult &sh : *shards) {
        const uint64_t len = get_u64(s, at);
        if (len > s.size() - at)
            throw Xapian::SerialisationError("xapian-gpu: ResultSource: "
                                             "truncated uuid");
        sh.uuid.assign(s, at, len);
        at += len;
        sh.revision = get_u64(s, at);
        const uint64_t b0 = get_u64(s, at), b1 = get_u64(s, at),
                       b2 = get_u64(s, at);
        if (b0 > b1 || b1 > b2 || b2 > 0xffffffffu)
            throw Xapian::SerialisationError("xapian-gpu: ResultSource: "
                                             "bad bounds");
        sh.tf_min = Xapian::doccount(b0);
        sh.tf_est = Xapian::doccount(b1);
        sh.tf_max = Xapian::doccount(b2);
        const uint64_t count = get_u64(s, at);
        if (count > (s.size() - at) / 16)
            throw Xapian::SerialisationError("xapian-gpu: ResultSource: "
                                             "truncated hits");
        for (uint64_t i = 0; i < count; ++i) {
            const uint64_t did = get_u64(s, at), bits = get_u64(s, at);
            double w;
            std::memcpy(&w, &bits, 8);
            if (did == 0 || did > 0xffffffffu || !(w >= 0) ||
                (i && did <= sh.docids.back()))
                throw Xapian::SerialisationError("xapian-gpu: ResultSource: "
                                                 "bad hit");
            sh.docids.push_back(Xapian::docid(did));
            sh.weights.push_back(w);
            sh.max_weight = std::max(sh.max_weight, w);
        }
    }
    if (at != s.size())
        throw Xapian::SerialisationError("xapian-gpu: ResultSource: "
                                         "trailing bytes");
    return new ResultSource(shards);
}

std::string ResultSource::get_description() const
{
    size_t n = 0;
    if (shards_) /* NULL in the prototype a Registry holds */
        for (const ShardResult &s : *shards_) n += s.docids.size();
    return std::string(source_name) + "(" + std::to_string(n) + " documents)";
}

namespace {

/* Free a result on every way out. */
struct ResultGuard {
    xg_result r;
    ResultGuard() { std::memset(&r, 0, sizeof r); }
    ~ResultGuard() { xg_result_free(&r); }
};

/* A thread's handle from the context, given back on every way out. */
struct HandleGuard {
    xg_context *ctx;
    xg_handle *h = nullptr;
    explicit HandleGuard(xg_context *c) : ctx(c) {}
    ~HandleGuard()
    {
        if (h) xg_context_give(ctx, h);
    }
};

/* A prepared query, freed on every way out. */
struct PreparedGuard {
    xg_prepared *pq = nullptr;
    ~PreparedGuard() { xg_prepared_free(pq); }
};

/* Sources of weight 0 that Xapian counts as subqueries (factor 1), each
 * matching the document `top` (its shard's docid in that shard) or no
 * document. */
std::shared_ptr<std::vector<ShardResult>>
counter_shards(const xg_index *ix, const xg_hit *top)
{
    const uint32_t n = ix->hdr->n_shards;
    auto shards = std::make_shared<std::vector<ShardResult>>(n);
    for (uint32_t i = 0; i < n; ++i) {
        (*shards)[i].uuid = ix->shards[i].uuid;
        (*shards)[i].revision = ix->shards[i].revision;
    }
    if (top) {
        ShardResult &s = (*shards)[(top->docid - 1) % n];
        s.docids.push_back((top->docid - 1) / n + 1);
        s.weights.push_back(0.0);
        s.tf_min = s.tf_est = s.tf_max = 1;
    }
    return shards;
}

uint32_t gcd(uint32_t a, uint32_t b)
{
    while (b) {
        const uint32_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Xapian's percentages scale by m / n: of the n subqueries its matcher
 * counts (leaves of factor other than 0), the m the greatest-weight
 * document matches (a value range counts itself there even unweighted,
 * so m can pass n).  In the accelerated query the query's own leaves
 * match no document, and the source, weighted, is one more subquery that
 * always matches (ExternalPostList::count_matching_subqs() is 1): alone
 * it scales by 1 / (n + 1).  Adding t sources of weight 0, j of them
 * matching that document, and u sources scaled by 0 (not counted among
 * the subqueries) that match it, gives (1 + j + u) / (n + 1 + t), which
 * is m / n exactly (the same rational, so the same double) for
 * t = n / g - 1 and j + u = m + m / g - 1, g = gcd(m, n): both terms are
 * m / n's times (g + 1) / g.  j is at most t.  Each adds weight 0: a
 * document's weight is unchanged bit for bit. */
Xapian::Query percent_counters(const xg_index *ix, const xg_hit *top,
                               uint32_t m, uint32_t n)
{
    const uint32_t g = gcd(m, n), t = n / g - 1, ju = m + m / g - 1;
    const uint32_t j = ju < t ? ju : t, u = ju - j;
    std::shared_ptr<const std::vector<ShardResult>> on =
        counter_shards(ix, top), off = counter_shards(ix, nullptr);
    std::vector<Xapian::Query> subs;
    for (uint32_t i = 0; i < t; ++i)
        subs.emplace_back((new ResultSource(i < j ? on : off))->release());
    for (uint32_t i = 0; i < u; ++i)
        subs.emplace_back(Xapian::Query::OP_SCALE_WEIGHT,
                          Xapian::Query((new ResultSource(on))->release()),
                          0.0);
    return Xapian::Query(Xapian::Query::OP_OR, subs.begin(), subs.end());
}

/* The match bounds stock starts from on each shard, from the plans
 * (Xapian's postlist tree, built as Xapian builds it) where they hold the
 * whole tree: no second postlist tree to open per query.  False: only
 * Xapian can tell (xg_shim_tree_bounds). */
bool plan_bounds(const xg_index *ix, const struct xg_prepared *pq,
                 uint64_t *bounds)
{
    if (!pq->plans) return false;
    for (uint32_t s = 0; s < ix->hdr->n_shards; ++s) {
        const struct xg_plan &p = pq->plans[s];
        if (!p.bounds_known) return false;
        bounds[3 * s] = p.bounds[XG_PLAN_MIN];
        bounds[3 * s + 1] = p.bounds[XG_PLAN_EST];
        bounds[3 * s + 2] = p.bounds[XG_PLAN_MAX];
    }
    return true;
}

/* An answered query that stock answers after all: the routes say so. */
const Xapian::Query &to_stock(xg_context *ctx, int r, int *route,
                              const Xapian::Query &query, const char *why)
{
    xg_router_recount_unsupported(xg_context_router(ctx), r, why);
    if (route) *route = XG_ROUTE_STOCK_UNSUPPORTED;
    return query;
}

/* The query's shape before planning (shapes.h): its root's operator, how
 * many subqueries it has and whether they are all terms. */
int query_shape(const Xapian::Query &q)
{
    const Xapian::Query::op t = q.get_type();
    const size_t n = q.get_num_subqueries();
    bool flat = true;
    for (size_t i = 0; i < n && flat; ++i)
        flat = q.get_subquery(i).get_type() == Xapian::Query::LEAF_TERM;
    return xg_router_shape_of(t == Xapian::Query::LEAF_TERM,
                              t == Xapian::Query::OP_AND,
                              t == Xapian::Query::OP_OR,
                              n > UINT32_MAX ? UINT32_MAX : uint32_t(n), flat);
}

/* The router answers (or leaves to stock) the query.  An answered one
 * becomes AND_MAYBE(AND_MAYBE(ResultSource, AND_MAYBE(SCALE_WEIGHT(
 * nothing, 0), query)), counters): the source is the match, the engine's
 * top k with their weights (stock's, bit for bit); the query hangs off a
 * source of no document, so Xapian opens and bounds its postlists as
 * stock does (max_possible, each term's max_part: its termweight; its
 * terms: the matching terms) but never moves them, and the counters make
 * its percentages stock's.  (Moving the query to the source's documents
 * with check(), as Xapian weighed them before, gives a phrase in an OR
 * weights stock's own match does not; docs/plugin.md.)  h: the caller's
 * handle, or NULL to take one. */
Xapian::Query accelerate(xg_context *ctx, xg_handle *given,
                         const Xapian::Query &query, Xapian::doccount first,
                         Xapian::doccount maxitems, bool weighting_ok,
                         int *route)
{
    int r = XG_ROUTE_STOCK_UNSUPPORTED;
    if (route) *route = r;
    /* Stock unplanned where the planner sent the shape's recent queries
     * there (the planning would cost more than it could win). */
    xg_router *router = xg_context_router(ctx);
    const int shape = weighting_ok && xg_router_shapes_on(router)
                          ? query_shape(query) : -1;
    if (xg_router_shape_skip(router, shape)) {
        if (route) *route = XG_ROUTE_STOCK_CHEAPER;
        return query;
    }
    HandleGuard own(ctx);
    xg_handle *h = given;
    int rc = h ? XG_OK : xg_context_take(ctx, &own.h);
    if (!h) h = own.h;
    if (rc == XG_ERR_NOMEM) throw std::bad_alloc();
    if (rc)
        throw Xapian::DatabaseError(std::string("xapian-gpu: ") +
                                    xg_last_error());
    std::unique_ptr<xg_xquery, void (*)(xg_xquery *)> xq(
        xg_shim_xquery_wrap(query), xg_shim_xquery_free);
    if (!xq) throw std::bad_alloc();
    /* Prepared here, so that its leaves are at hand below; a query that
     * cannot be prepared the router routes (and counts) itself. */
    PreparedGuard pq;
    if (weighting_ok) {
        rc = xg_handle_prepare_terms(h, xq.get(), &pq.pq);
        if (rc == XG_ERR_NOMEM) throw std::bad_alloc();
        if (rc) pq.pq = nullptr;
    }
    ResultGuard res;
    rc = xg_router_answer(router, xq.get(), pq.pq, uint64_t(first) + maxitems,
                          weighting_ok, NULL, &res.r, &r);
    if (rc == XG_ERR_NOMEM) throw std::bad_alloc();
    if (rc)
        throw Xapian::InternalError(std::string("xapian-gpu: ") +
                                    xg_last_error());
    xg_router_shape_note(router, shape, r);
    if (route) *route = r;
    if ((r != XG_ROUTE_GPU && r != XG_ROUTE_CPU) || !pq.pq) return query;
    const xg_index *ix = xg_context_index(ctx);
    std::vector<uint64_t> bounds(3 * size_t(ix->hdr->n_shards));
    rc = plan_bounds(ix, pq.pq, bounds.data())
             ? XG_OK
             : xg_shim_tree_bounds(xg_handle_db(h), query, bounds.data());
    const xg_hit *top = res.r.n_hits
                            ? xg_result_greatest(&res.r, ix->hdr->n_shards)
                            : nullptr;
    uint32_t m = 0;
    if (!rc && top) rc = xg_handle_doc_leaves(h, pq.pq, top, &m);
    if (rc == XG_ERR_UNSUPPORTED)
        return to_stock(ctx, r, route, query, xg_last_error());
    if (rc) {
        if (rc == XG_ERR_NOMEM) throw std::bad_alloc();
        throw Xapian::DatabaseError(std::string("xapian-gpu: ") +
                                    xg_last_error());
    }
    /* A match holds at least one subquery; none would scale the
     * percentages wrongly, so stock answers.  So does a count too large
     * for the counters to spell out. */
    const uint32_t n = xg_query_weighted_subqs(&pq.pq->q);
    if (top && (m == 0 || n == 0 || m + m / gcd(m, n) > XG_QUERY_MAX_LEAVES))
        return to_stock(ctx, r, route, query, "percentages the counters "
                        "cannot scale");
    ResultSource *src = new ResultSource(split_by_shard(ix, res.r,
                                                        bounds.data()));
    ResultSource *none = new ResultSource(counter_shards(ix, nullptr));
    Xapian::Query bounded(Xapian::Query::OP_AND_MAYBE,
                          Xapian::Query(Xapian::Query::OP_SCALE_WEIGHT,
                                        Xapian::Query(none->release()), 0.0),
                          query);
    Xapian::Query weighed(Xapian::Query::OP_AND_MAYBE,
                          Xapian::Query(src->release()), bounded);
    /* No match: no percentages to scale. */
    if (!top) return weighed;
    return Xapian::Query(Xapian::Query::OP_AND_MAYBE, weighed,
                         percent_counters(ix, top, m, n));
}

} // namespace

Xapian::Query xg_accelerate(xg_context *ctx, const Xapian::Query &query,
                            Xapian::doccount first, Xapian::doccount maxitems,
                            int *route)
{
    return accelerate(ctx, nullptr, query, first, maxitems, true, route);
}

Xapian::Query xg_accelerate(xg_context *ctx, const Xapian::Query &query,
                            Xapian::doccount first, Xapian::doccount maxitems,
                            const Xapian::Weight &weighting, int *route)
{
    return accelerate(ctx, nullptr, query, first, maxitems,
                      same_bm25(weighting, xg_context_options(ctx)->bm25),
                      route);
}

extern "C" int xg_context_search(xg_context *ctx, const char *query,
                                 const struct xg_search_opts *o,
                                 uint32_t first, uint32_t maxitems,
                                 struct xg_result *out, int *route)
{
    if (!out)
        return xg_set_error(XG_ERR_ARG, "xg_context_search: NULL argument");
    std::memset(out, 0, sizeof *out);
    if (!ctx || !query || !o)
        return xg_set_error(XG_ERR_ARG, "xg_context_search: NULL argument");
    if (o->default_and != 0 && o->default_and != 1)
        return xg_set_error(XG_ERR_ARG, "xg_context_search: default_and "
                            "must be 0 (OR) or 1 (AND)");
    /* No exception may reach a C caller: each becomes a status code with
     * its one-line message. */
    int rc;
    xg_xquery *xq = nullptr;
    try {
        HandleGuard h(ctx);
        rc = xg_context_take(ctx, &h.h);
        if (!rc) rc = xg_handle_parse(h.h, query, o, &xq);
        if (!rc) {
            Xapian::Query q = accelerate(ctx, h.h, xg_shim_xquery_get(xq),
                                         first, maxitems, true, route);
            rc = xg_shim_search_query(xg_handle_db(h.h), q,
                                      &xg_context_options(ctx)->bm25, first,
                                      maxitems, out);
        }
    } catch (const std::bad_alloc &) {
        rc = xg_set_error(XG_ERR_NOMEM, "out of memory");
    } catch (const Xapian::Error &e) {
        rc = xg_set_error(XG_ERR_XAPIAN, "xg_context_search: %s",
                          e.get_description().c_str());
    } catch (const std::exception &e) {
        rc = xg_set_error(XG_ERR_XAPIAN, "xg_context_search: %s", e.what());
    } catch (...) {
        rc = xg_set_error(XG_ERR_XAPIAN, "xg_context_search: unknown "
                          "exception");
    }
    if (xq) xg_shim_xquery_free(xq);
    if (rc) {
        xg_result_free(out);
        std::memset(out, 0, sizeof *out);
    }
    return rc;
}
