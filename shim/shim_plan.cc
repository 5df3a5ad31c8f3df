/** @file shim_plan.cc
 *  @brief The summation plan: the postlist tree Xapian 1.4.22 would build.
 *
 *  Xapian adds leaf weights in the shape of its postlist tree, and doubles
 *  do not associate, so an exact matcher must add in that same shape.  The
 *  tree comes from two places (xapian-core/api/queryinternal.cc and
 *  matcher/multiandpostlist.h at v1.4.22):
 *   - OrContext::postlist(): a Huffman-like build over a heap ordered by
 *     get_termfreq_est() (make_heap/pop_heap/push_heap); each OrPostList's
 *     estimate is l + r - l*r/dbsize rounded to a doccount.
 *   - MultiAndPostList: kids ordered by ascending get_termfreq_est() with
 *     std::partial_sort_copy, weights added as 0 + w0 + w1 + ...
 *  Ties between equal estimates are broken by the exact sequence of std::
 *  heap and sort operations, so this file runs the same libstdc++ algorithms
 *  with the same comparators over stand-in nodes: the permutation they
 *  produce is the one libxapian's instantiation produced.  This is why the
 *  plan lives in the C++ shim and not in C.
 *
 *  A phrase inside an OR is an AND of its terms under a position filter,
 *  whose estimate is the AND's divided by 4 (exact phrase) or 3
 *  (exactphrasepostlist.cc, phrasepostlist.cc); a phrase merged into an
 *  AND adds its filter above the whole AND (AndContext::postlist()).
 *
 *  OP_SCALE_WEIGHT needs nothing here.  QueryScaleWeight::postlist returns
 *  its subquery's postlist, so the tree's shape and its estimates are the
 *  ones the query would have without it.  The converter refuses the two
 *  placements that would change the shape: an OR scaled inside an OR, or
 *  an AND inside an AND, becomes a subtree instead of being flattened.
 */
#include <algorithm>
#include <deque>
#include <memory>
#include <vector>

#include "shim_int.h"
#include "xg_shim.h"

namespace {

/// A stand-in for a PostList: its estimate and bounds, and what it sums.
struct Node {
    uint32_t est;       ///< get_termfreq_est() as a Xapian::doccount
    uint32_t min = 0;   ///< get_termfreq_min()
    uint32_t max = 0;   ///< get_termfreq_max()
    int leaf;           ///< leaf index, or -1 for an OR node / a clause
    Node *l = nullptr;  ///< OR, AND_NOT, AND_MAYBE: left kid; SELECT: source
    Node *r = nullptr;  ///< OR, AND_NOT, AND_MAYBE: right kid
    int filter = -1;    ///< a clause or SELECT: its position filter; a
                        ///< synonym: its xg_qsyn
    std::vector<Node *> kids;   ///< a clause or AND: the AND's kids, in order
    uint16_t op = 0;    ///< general form: XG_PLAN_AND, FILTER (a SELECT),
                        ///< AND_NOT, AND_MAYBE or SYN; 0: as above

    Node(uint32_t e, int lf, Node *a = nullptr, Node *b = nullptr)
        : est(e), leaf(lf), l(a), r(b) {}
};

/// queryinternal.cc's ComparePostListTermFreqAscending (heap order).
struct HeapCmp {
    bool operator()(const Node *a, const Node *b) const {
        return a->est > b->est;
    }
};

/// multiandpostlist.h's ComparePostListTermFreqAscending.
struct AndCmp {
    bool operator()(const Node *a, const Node *b) const {
        return a->est < b->est;
    }
};

/// OrPostList::get_termfreq_est().
uint32_t or_estimate(uint32_t l, uint32_t r, uint32_t dbsize)
{
    if (dbsize == 0) return 0;
    double lest = static_cast<double>(l);
    double rest = static_cast<double>(r);
    double est = lest + rest - (lest * rest / dbsize);
    return static_cast<uint32_t>(est + 0.5);
}

/// MultiAndPostList::get_termfreq_est() over kids in its sorted order.
uint32_t and_estimate(const std::vector<Node *> &sorted, uint32_t dbsize)
{
    if (dbsize == 0) return 0;
    double result = sorted[0]->est;
    for (size_t i = 1; i < sorted.size(); ++i)
        result = (result * sorted[i]->est) / dbsize;
    return static_cast<uint32_t>(result + 0.5);
}

/// MultiAndPostList::get_termfreq_min(): the kids' minima as disjoint as
/// they can be, in its sorted order (its early return included).
uint32_t and_min(const std::vector<Node *> &sorted, uint32_t dbsize)
{
    uint32_t sum = sorted[0]->min;
    if (!sum) return 0;
    for (size_t i = 1; i < sorted.size(); ++i) {
        const uint32_t old = sum;
        sum += sorted[i]->min;  // wraps where Xapian's doccount wraps
        if (sum >= old && sum <= dbsize) return 0;
        sum -= dbsize;
    }
    return sum;
}

/// A MultiAndPostList's estimate and bounds over kids in its sorted order.
void and_bounds(Node *n, const std::vector<Node *> &sorted, uint32_t dbsize)
{
    n->est = n->min = n->max = 0;
    if (sorted.empty()) return;
    n->est = and_estimate(sorted, dbsize);
    n->min = and_min(sorted, dbsize);
    n->max = sorted[0]->max;
    for (const Node *k : sorted) n->max = std::min(n->max, k->max);
}

/// A position filter (SelectPostList) over `src`: no minimum, the
/// source's maximum, its estimate divided as NearPostList (2),
/// ExactPhrasePostList (4) or PhrasePostList (3) divides it.
void filter_bounds(Node *n, const Node *src, const struct xg_qfilter &qf)
{
    n->min = 0;
    n->max = src->max;
    n->est = qf.kind == XG_QF_NEAR ? src->est / 2
             : qf.window == qf.n ? src->est / 4 : src->est / 3;
}

class PlanBuilder {
  public:
    explicit PlanBuilder(uint32_t dbsize_) : dbsize(dbsize_) {}

    Node *leaf(int index, uint32_t est) {
        Node *n = &nodes.emplace_back(est, index);
        n->min = n->max = est;  // exact termfreq
        return n;
    }

    /// A general form's node of operator `op` (its estimate set later).
    Node *node(uint32_t est, uint16_t op) {
        Node *n = &nodes.emplace_back(est, -1);
        n->op = op;
        return n;
    }

    /// OrContext::postlist() over `pls` in the order they were added.
    Node *or_tree(std::vector<Node *> pls) {
        if (pls.size() == 1) return pls[0];
        std::make_heap(pls.begin(), pls.end(), HeapCmp());
        while (true) {
            Node *r = pls.front();
            std::pop_heap(pls.begin(), pls.end(), HeapCmp());
            pls.pop_back();
            Node *l = pls.front();
            Node *pl = &nodes.emplace_back(
                or_estimate(l->est, r->est, dbsize), -1, l, r);
            pl->min = std::max(l->min, r->min);
            pl->max = (uint32_t)std::min<uint64_t>(uint64_t(l->max) + r->max,
                                                   dbsize);
            if (pls.size() == 1) return pl;
            std::pop_heap(pls.begin(), pls.end(), HeapCmp());
            pls.back() = pl;
            std::push_heap(pls.begin(), pls.end(), HeapCmp());
        }
    }

    /// A phrase that is an OR operand: AndContext::postlist() over its
    /// leaves, under ExactPhrasePostList (an estimate of a quarter) or
    /// PhrasePostList (a third).
    Node *clause(const struct xg_query *q, uint32_t f,
                 const uint32_t *leaf_df) {
        const struct xg_qfilter &qf = q->filters[f];
        std::vector<Node *> pls;
        for (uint32_t i = qf.first; i < qf.first + qf.n; ++i)
            pls.push_back(leaf((int)i, leaf_df[i]));
        Node *c = &nodes.emplace_back(0, -1);
        c->filter = (int)f;
        c->kids = and_order(pls);
        Node all(0, -1);
        and_bounds(&all, c->kids, dbsize);
        filter_bounds(c, &all, qf);
        return c;
    }

    /// The OR operands among leaves of `group` (every leaf: group < 0),
    /// in the order they were added: leaves, and the clauses where they
    /// start.
    std::vector<Node *> operands(const struct xg_query *q, int64_t group,
                                 const uint32_t *leaf_df) {
        std::vector<Node *> pls;
        for (uint32_t i = 0; i < q->n_leaves; ++i) {
            if (q->leaves[i].negated ||
                (group >= 0 && q->leaves[i].group != (uint64_t)group))
                continue;
            uint32_t f = 0;
            while (f < q->n_filters &&
                   !(q->filters[f].clause && q->filters[f].first == i))
                ++f;
            if (f < q->n_filters) {
                pls.push_back(clause(q, f, leaf_df));
                i += q->filters[f].n - 1;
            } else {
                pls.push_back(leaf((int)i, leaf_df[i]));
            }
        }
        return pls;
    }

    /// MultiAndPostList's kid order.
    static std::vector<Node *> and_order(const std::vector<Node *> &pls) {
        std::vector<Node *> plist(pls.size());
        std::partial_sort_copy(pls.begin(), pls.end(), plist.begin(),
                               plist.end(), AndCmp());
        return plist;
    }

  private:
    uint32_t dbsize;
    /* A deque: its nodes stay where they are as it grows, and come a
     * few to an allocation. */
    std::deque<Node> nodes;
};

/* The general form (XG_QOP_TREE): what Query::Internal::postlist() and
 * the postlist_sub_and_like / postlist_sub_or_like merges build
 * (queryinternal.cc): an OR's operands that are ORs join its OrContext;
 * an AND's (and FILTER's) operands that are ANDs or FILTERs join its
 * AndContext, a phrase adds its terms and a position filter, AND_NOT and
 * AND_MAYBE add their left side and put the rest in the context's NOT and
 * MAYBE ORs; AndContext::postlist() is then MultiAnd, AND_NOT, the
 * filters, AND_MAYBE.  Anything else (a SCALE_WEIGHT too) is a postlist
 * of its own.  A synonym (or a wildcard's expansion) is an OrContext of
 * its own, whose ORs join it, under a SynonymPostList where weighted.  The
 * estimates: AndNotPostList's l * (1 - r / dbsize), AndMaybePostList's l,
 * SynonymPostList's its OR's. */
struct QNode {
    xg_qnode n;
    std::vector<QNode *> kids;
};

class TreeBuilder {
  public:
    TreeBuilder(PlanBuilder &b_, const struct xg_query *q_,
                const uint32_t *df_, uint32_t dbsize_)
        : b(b_), q(q_), df(df_), dbsize(dbsize_) {}

    /// The query's nodes as a tree; nullptr if the program is malformed.
    QNode *parse() {
        std::vector<QNode *> st;
        for (uint32_t i = 0; i < q->n_nodes; ++i) {
            qnodes.emplace_back(new QNode{q->nodes[i], {}});
            QNode *x = qnodes.back().get();
            /* A wildcard is planned once expanded, over the index's terms. */
            if (x->n.kind == XG_QN_WILDCARD ||
                (x->n.kind == XG_QN_SYN && x->n.arg >= q->n_syns))
                return nullptr;
            size_t k = x->n.kind == XG_QN_LEAF || x->n.kind == XG_QN_PHRASE
                           ? 0 : x->n.kind == XG_QN_SCALE ||
                                 x->n.kind == XG_QN_SYN ? 1 : x->n.arg;
            if (k > st.size() || (k == 0 && x->n.kind != XG_QN_LEAF &&
                                  x->n.kind != XG_QN_PHRASE))
                return nullptr;
            x->kids.assign(st.end() - (long)k, st.end());
            st.resize(st.size() - k);
            st.push_back(x);
        }
        return st.size() == 1 ? st[0] : nullptr;
    }

    Node *build(const QNode *x) {
        switch (x->n.kind) {
        case XG_QN_LEAF: return b.leaf(x->n.arg, df[x->n.arg]);
        case XG_QN_SCALE: return build(x->kids[0]);
        case XG_QN_SYN: {
            /* Its own OrContext; SynonymPostList's estimate is its OR's. */
            std::vector<Node *> pls;
            or_like(x->kids[0], pls);
            Node *pl = b.or_tree(pls);
            if (q->syns[x->n.arg].factor == 0) return pl;
            Node *syn = b.node(pl->est, XG_PLAN_SYN);
            syn->min = pl->min;     // SynonymPostList: its OR's bounds
            syn->max = pl->max;
            syn->l = pl;
            syn->filter = x->n.arg;
            return syn;
        }
        case XG_QN_OR: {
            std::vector<Node *> pls;
            for (const QNode *k : x->kids) or_like(k, pls);
            return b.or_tree(pls);
        }
        case XG_QN_AND_NOT:
        case XG_QN_AND_MAYBE: {
            Node *l = build(x->kids[0]);
            std::vector<Node *> pls;
            for (size_t i = 1; i < x->kids.size(); ++i) or_like(x->kids[i], pls);
            return branch(x->n.kind == XG_QN_AND_NOT ? XG_PLAN_AND_NOT
                                                     : XG_PLAN_AND_MAYBE,
                          l, b.or_tree(pls));
        }
        default: {  /* AND, FILTER, PHRASE: an AndContext */
            Ctx c;
            and_like(x, c);
            Node *pl = b.node(0, XG_PLAN_AND);
            pl->kids = PlanBuilder::and_order(c.pls);
            and_bounds(pl, pl->kids, dbsize);
            if (!c.nots.empty()) pl = branch(XG_PLAN_AND_NOT, pl, b.or_tree(c.nots));
            for (int f : c.filters) {
                Node *sel = b.node(0, XG_PLAN_FILTER);
                sel->l = pl;
                sel->filter = f;
                filter_bounds(sel, pl, q->filters[f]);
                pl = sel;
            }
            if (!c.maybes.empty())
                pl = branch(XG_PLAN_AND_MAYBE, pl, b.or_tree(c.maybes));
            return pl;
        }
        }
    }

  private:
    struct Ctx {
        std::vector<Node *> pls, nots, maybes;
        std::vector<int> filters;
    };

    Node *branch(uint16_t op, Node *l, Node *r) {
        Node *n = b.node(0, op);
        n->l = l;
        n->r = r;
        n->max = l->max;
        if (op == XG_PLAN_AND_MAYBE) {
            n->est = l->est;
            n->min = l->min;
        } else {
            double est = dbsize ? l->est * (1.0 - double(r->est) / dbsize) : 0;
            n->est = static_cast<uint32_t>(est + 0.5);
            n->min = l->min > r->max ? l->min - r->max : 0;
        }
        return n;
    }

    void or_like(const QNode *x, std::vector<Node *> &pls) {
        if (x->n.kind == XG_QN_OR)
            for (const QNode *k : x->kids) or_like(k, pls);
        else
            pls.push_back(build(x));
    }

    void and_like(const QNode *x, Ctx &c) {
        switch (x->n.kind) {
        case XG_QN_AND:
        case XG_QN_FILTER:
            for (const QNode *k : x->kids) and_like(k, c);
            break;
        case XG_QN_PHRASE: {
            const struct xg_qfilter &qf = q->filters[x->n.arg];
            for (uint32_t i = qf.first; i < qf.first + qf.n; ++i)
                c.pls.push_back(b.leaf((int)i, df[i]));
            c.filters.push_back(x->n.arg);
            break;
        }
        case XG_QN_AND_NOT:
        case XG_QN_AND_MAYBE:
            and_like(x->kids[0], c);
            for (size_t i = 1; i < x->kids.size(); ++i)
                or_like(x->kids[i], x->n.kind == XG_QN_AND_NOT ? c.nots
                                                              : c.maybes);
            break;
        default:
            c.pls.push_back(build(x));
        }
    }

    PlanBuilder &b;
    const struct xg_query *q;
    const uint32_t *df;
    uint32_t dbsize;
    std::vector<std::unique_ptr<QNode>> qnodes;
};

bool emit(struct xg_plan *out, uint16_t kind, uint16_t arg)
{
    if (out->n_ops >= XG_PLAN_MAX_OPS) return false;
    out->ops[out->n_ops].kind = kind;
    out->ops[out->n_ops].arg = arg;
    ++out->n_ops;
    return true;
}

/// The root's bounds into the plan.
void set_bounds(struct xg_plan *out, const Node *root)
{
    out->bounds[XG_PLAN_MIN] = root->min;
    out->bounds[XG_PLAN_EST] = root->est;
    out->bounds[XG_PLAN_MAX] = root->max;
    out->bounds_known = 1;
}

/// Postfix emission of an OR tree (or a single leaf, or a clause), or of
/// a general form's tree.
bool emit_tree(const Node *n, struct xg_plan *out)
{
    if (n->leaf >= 0) return emit(out, XG_PLAN_LEAF, (uint16_t)n->leaf);
    if (n->op == XG_PLAN_AND) {
        for (const Node *k : n->kids)
            if (!emit_tree(k, out)) return false;
        return emit(out, XG_PLAN_AND, (uint16_t)n->kids.size());
    }
    if (n->op == XG_PLAN_FILTER || n->op == XG_PLAN_SYN)
        return emit_tree(n->l, out) && emit(out, n->op, (uint16_t)n->filter);
    if (n->op)
        return emit_tree(n->l, out) && emit_tree(n->r, out) &&
               emit(out, n->op, 0);
    if (n->filter >= 0) {
        for (const Node *k : n->kids)
            if (!emit_tree(k, out)) return false;
        return emit(out, XG_PLAN_AND, (uint16_t)n->kids.size()) &&
               emit(out, XG_PLAN_FILTER, (uint16_t)n->filter);
    }
    return emit_tree(n->l, out) && emit_tree(n->r, out) &&
           emit(out, XG_PLAN_OR2, 0);
}

} // namespace

/* See xg_shim.h.  The permutation std::nth_element makes depends only on
 * its comparator's answers, so indices stand in for PostList pointers;
 * the comparator is queryinternal.cc's ComparePostListTermFreqAscending
 * (descending termfreq, despite its name). */
extern "C" int xg_shim_most_frequent(const uint32_t *tf, uint32_t n,
                                     uint32_t k, uint32_t *keep)
{
    XG_SHIM_TRY {
        if (k == 0 || k > n)
            return xg_set_error(XG_ERR_ARG, "most frequent: %u of %u", k, n);
        std::vector<uint32_t> pls(n);
        for (uint32_t i = 0; i < n; ++i) pls[i] = i;
        std::nth_element(pls.begin(), pls.begin() + (k - 1), pls.end(),
                         [tf](uint32_t a, uint32_t b) { return tf[a] > tf[b]; });
        std::copy(pls.begin(), pls.begin() + k, keep);
        return XG_OK;
    }
    XG_SHIM_CATCH("most frequent");
}

extern "C" int xg_shim_plan(const struct xg_query *q,
                            const uint32_t *leaf_shard_df,
                            uint32_t shard_doccount, struct xg_plan *out)
{
    XG_SHIM_TRY {
        out->n_ops = 0;
        /* Nothing to match, or an empty shard: an EmptyPostList. */
        out->bounds[0] = out->bounds[1] = out->bounds[2] = 0;
        out->bounds_known = q->n_ranges == 0 &&
                            (q->op == XG_QOP_TREE || q->n_negated == 0);
        if (q->n_leaves == 0) return XG_OK;
        if (q->n_leaves > XG_QUERY_MAX_LEAVES)
            return xg_set_error(XG_ERR_UNSUPPORTED,
                                "unsupported: more than %u leaves",
                                XG_QUERY_MAX_LEAVES);
        PlanBuilder b(shard_doccount);
        if (q->op == XG_QOP_TREE) {
            TreeBuilder tb(b, q, leaf_shard_df, shard_doccount);
            const QNode *root = tb.parse();
            if (!root)
                return xg_set_error(XG_ERR_ARG, "plan: malformed query tree");
            const Node *top = tb.build(root);
            if (out->bounds_known && shard_doccount) set_bounds(out, top);
            if (!emit_tree(top, out))
                return xg_set_error(XG_ERR_UNSUPPORTED,
                                    "unsupported: plan too large");
            return XG_OK;
        }
        if (q->op == XG_QOP_OR || q->n_groups <= 1) {
            const Node *top = b.or_tree(b.operands(q, -1, leaf_shard_df));
            bool filtered = false;
            for (uint32_t f = 0; f < q->n_filters; ++f)
                filtered |= !q->filters[f].clause;
            if (filtered) out->bounds_known = 0;
            if (out->bounds_known && shard_doccount) set_bounds(out, top);
            if (!emit_tree(top, out))
                return xg_set_error(XG_ERR_UNSUPPORTED,
                                    "unsupported: plan too large");
            return XG_OK;
        }
        if (q->op != XG_QOP_AND)
            return xg_set_error(XG_ERR_ARG, "plan: unknown query operator %d",
                                q->op);
        // One postlist per AND operand: the group's own OR tree.
        std::vector<Node *> kids;
        for (uint32_t g = 0; g < q->n_groups; ++g) {
            std::vector<Node *> pls = b.operands(q, g, leaf_shard_df);
            if (pls.empty())
                return xg_set_error(XG_ERR_ARG, "plan: empty AND operand %u",
                                    g);
            kids.push_back(b.or_tree(pls));
        }
        const std::vector<Node *> sorted = PlanBuilder::and_order(kids);
        for (const Node *k : sorted)
            if (!emit_tree(k, out))
                return xg_set_error(XG_ERR_UNSUPPORTED,
                                    "unsupported: plan too large");
        if (!emit(out, XG_PLAN_AND, (uint16_t)kids.size()))
            return xg_set_error(XG_ERR_UNSUPPORTED,
                                "unsupported: plan too large");
        Node top(0, -1);
        and_bounds(&top, sorted, shard_doccount);
        // AndContext::postlist(): the position filters over the whole AND.
        for (uint32_t f = 0; f < q->n_filters; ++f) {
            if (q->filters[f].clause) continue;
            if (!emit(out, XG_PLAN_FILTER, (uint16_t)f))
                return xg_set_error(XG_ERR_UNSUPPORTED,
                                    "unsupported: plan too large");
            Node src = top;
            filter_bounds(&top, &src, q->filters[f]);
        }
        if (out->bounds_known && shard_doccount) set_bounds(out, &top);
        return XG_OK;
    }
    XG_SHIM_CATCH("plan");
}
