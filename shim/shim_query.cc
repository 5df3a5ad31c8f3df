/** @file shim_query.cc
 *  @brief Parse queries with Xapian's QueryParser, convert them to the
 *         engine's shapes (struct xg_query), and run the stock matcher.
 *
 *  Conversion walks the public Query tree (get_type, get_num_subqueries,
 *  get_subquery).  It accepts what QueryParser builds from plain words: a
 *  term, OP_OR of terms (nested ORs flattened), OP_AND whose operands are
 *  terms or ORs of terms (nested ANDs flattened, each operand one group).
 *  Leaves keep depth-first order; repeated words stay separate leaves.
 *  OP_PHRASE of terms, alone, in an OR or in an AND, adds a position
 *  filter (query_shape.h); so does OP_NEAR of distinct terms, alone or in
 *  an AND (in an OR it is the general form's).  The window (no accessor
 *  in 1.4 either) is decoded from the serialisation.
 *
 *  OP_SCALE_WEIGHT may wrap the whole query, an AND operand or a term.
 *  QueryScaleWeight::postlist only passes factor * scale_factor down, so
 *  there the postlist tree is the one without it, and each leaf carries
 *  the product of its factors.  It does not take part in the OR and AND
 *  flattening (postlist_sub_or_like / postlist_sub_and_like): an OR
 *  scaled inside an OR, or an AND scaled inside an AND, becomes a subtree
 *  of its own, which the engine shapes do not express, so those are
 *  unsupported, as are factors that are 0 or multiply to 0 or infinity.
 *  The 1.4 API has no accessor for the factor either; it is decoded from
 *  QueryScaleWeight::serialise's bytes, 0x0d then serialise_double():
 *
 *      byte 0: bit 7 sign, bits 4-6 mantissa bytes - 1, bits 0-3 E
 *        E 0..13: exponent E - 7; E 14: next byte - 128;
 *        E 15: next two bytes (least significant first) - 32768
 *      mantissa bytes m0 m1 ..., m0 in [1, 256): the value is
 *        (m0 + m1/256 + m2/256^2 + ...) * 256^exponent
 *
 *  (xapian-core/common/serialise-double.cc; every 1.4 release uses this
 *  portable form, with no native-IEEE shortcut).  A finite double needs
 *  at most 8 mantissa bytes holding its 53 significant bits, so the
 *  decoding is exact; Xapian's own encoder re-encodes the value as a
 *  check.  Anything odd is unsupported, so stock Xapian answers it.
 *
 *  The 1.4 API has no accessor for a leaf's wqf, so each leaf is
 *  serialised and the term and wqf are decoded from the bytes that
 *  QueryTerm::serialise writes (xapian-core/api/queryinternal.cc, v1.4.22):
 *
 *      01ccLLLL [encode_length(len-16) if LLLL == 0] term-bytes ...
 *        cc = 0: wqf 0, pos 0          cc = 1: wqf 1, pos 0
 *        cc = 2: wqf 1, then pos       cc = 3: wqf, then pos
 *
 *  with encode_length from xapian-core/net/length.h: a value below 255 is
 *  one byte; otherwise 0xff then (value-255) in 7-bit groups, least
 *  significant first, the last group with its top bit set.
 */
#include "shim_int.h"
#include "xg_shim.hh"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

/* A parsed query, opaque to C. */
struct xg_xquery {
    Xapian::Query q;
};

xg_xquery *xg_shim_xquery_wrap(const Xapian::Query &q)
{
    return new (std::nothrow) xg_xquery{q};
}

const Xapian::Query &xg_shim_xquery_get(const xg_xquery *q) { return q->q; }

namespace {

/* A small English stop-word list (function words that carry no topic).
 * QueryParser drops these unless the query is only stop words. */
const char *const english_stop_words[] = {
    "a", "about", "above", "after", "again", "against", "all", "am", "an",
    "and", "any", "are", "as", "at", "be", "because", "been", "before",
    "being", "below", "between", "both", "but", "by", "can", "could", "did",
    "do", "does", "doing", "down", "during", "each", "few", "for", "from",
    "further", "had", "has", "have", "having", "he", "her", "here", "hers",
    "herself", "him", "himself", "his", "how", "i", "if", "in", "into",
    "is", "it", "its", "itself", "just", "me", "more", "most", "my",
    "myself", "no", "nor", "not", "of", "off", "on", "once", "only", "or",
    "other", "our", "ours", "ourselves", "out", "over", "own", "same", "she",
    "should", "so", "some", "such", "than", "that", "the", "their",
    "theirs", "them", "themselves", "then", "there", "these", "they",
    "this", "those", "through", "to", "too", "under", "until", "up", "very",
    "was", "we", "were", "what", "when", "where", "which", "while", "who",
    "whom", "why", "will", "with", "would", "you", "your", "yours",
    "yourself", "yourselves",
};

const Xapian::Stopper *english_stopper()
{
    /* Built once (thread-safe static init); Stopper::operator() is const,
     * so sharing it between threads is fine. */
    static const Xapian::SimpleStopper stopper(
        english_stop_words,
        english_stop_words +
            sizeof english_stop_words / sizeof english_stop_words[0]);
    return &stopper;
}

/* Omega 1.4.22's stop words (MyStopper in xapian-applications/omega/
 * query.cc), which every Omega query uses; not the list above. */
const char *const omega_stop_words[] = {
    "a", "about", "an", "and", "are", "as", "at", "be", "by", "en", "for",
    "from", "how", "i", "in", "is", "it", "of", "on", "or", "that", "the",
    "this", "to", "was", "what", "when", "where", "which", "who", "why",
    "will", "with", "you", "your",
};

const Xapian::Stopper *omega_stopper()
{
    static const Xapian::SimpleStopper stopper(
        omega_stop_words,
        omega_stop_words + sizeof omega_stop_words / sizeof omega_stop_words[0]);
    return &stopper;
}

/* Omega's QueryParser setup beyond stemmer and default op (its query.cc
 * parse_queries, with the default templates/query):
 *  - the stopper above;
 *  - "size:" ranges on value slot 2 (VALUE_SIZE in omega/values.h);
 *  - the template's $setmap{prefix,,$split{ S B F},title,S,author,A,
 *    topic,B}: free text searches the unprefixed terms and S (title),
 *    B (description) and F (file name), in that order, and title:,
 *    author:, topic: search S, A, B.  Omega adds the prefixes in its
 *    option map's order, with the free-text ones first. */
void omega_setup(Xapian::QueryParser &qp)
{
    qp.set_stopper(omega_stopper());
    qp.add_rangeprocessor(
        (new Xapian::NumberRangeProcessor(2, "size:"))->release());
    static const char *const free_text[] = {"", "S", "B", "F"};
    for (const char *pfx : free_text)
        qp.add_prefix("", pfx);
    qp.add_prefix("author", "A");
    qp.add_prefix("title", "S");
    qp.add_prefix("topic", "B");
}

/* Names for "unsupported: <what>" messages, by Query::op value. */
const char *op_name(Xapian::Query::op op)
{
    static const char *const ops[] = {
        "OP_AND", "OP_OR", "OP_AND_NOT", "OP_XOR", "OP_AND_MAYBE",
        "OP_FILTER", "OP_NEAR", "OP_PHRASE", "OP_VALUE_RANGE",
        "OP_SCALE_WEIGHT", "OP_ELITE_SET", "OP_VALUE_GE", "OP_VALUE_LE",
        "OP_SYNONYM", "OP_MAX", "OP_WILDCARD",
    };
    unsigned v = (unsigned)op;
    if (v < sizeof ops / sizeof ops[0])
        return ops[v];
    switch (op) {
    case Xapian::Query::OP_INVALID: return "OP_INVALID";
    case Xapian::Query::LEAF_TERM: return "term";
    case Xapian::Query::LEAF_POSTING_SOURCE: return "PostingSource";
    case Xapian::Query::LEAF_MATCH_ALL: return "MatchAll";
    case Xapian::Query::LEAF_MATCH_NOTHING: return "MatchNothing";
    default: return "unknown query operator";
    }
}

/* Nesting deeper than this is not something QueryParser builds. */
const int max_depth = 64;

struct leaf {
    std::string term;
    uint32_t wqf;
    uint32_t group;
    double factor;
    bool negated = false;
    uint32_t range = 0;     /* xg_qleaf.range */
};

/* decode_length() of xapian-core/net/length.cc, without exceptions. */
bool decode_length(const unsigned char *&p, const unsigned char *end,
                   uint64_t &out)
{
    if (p == end)
        return false;
    uint64_t v = *p++;
    if (v == 0xff) {
        v = 0;
        unsigned shift = 0;
        unsigned char ch;
        do {
            if (p == end || shift > 56)
                return false;
            ch = *p++;
            v |= uint64_t(ch & 0x7f) << shift;
            shift += 7;
        } while ((ch & 0x80) == 0);
        v += 255;
    }
    out = v;
    return true;
}

int bad_leaf(const char *why)
{
    return xg_set_error(XG_ERR_XAPIAN,
                        "query: cannot decode a term leaf's serialisation "
                        "(%s)", why);
}

/* Append one LEAF_TERM query to `out`, with its term, wqf and factor. */
int add_leaf(const Xapian::Query &q, uint32_t group, double factor,
             std::vector<leaf> &out)
{
    if (out.size() >= XG_QUERY_MAX_LEAVES)
        return xg_set_error(XG_ERR_UNSUPPORTED,
                            "unsupported: more than %u leaves",
                            XG_QUERY_MAX_LEAVES);
    const std::string s = q.serialise();
    const unsigned char *p = (const unsigned char *)s.data();
    const unsigned char *end = p + s.size();
    if (p == end)
        return bad_leaf("empty");
    unsigned char ch = *p++;
    if ((ch & 0xc0) != 0x40)
        return bad_leaf("not a term");
    uint64_t len = ch & 0x0f;
    if (len == 0) {
        if (!decode_length(p, end, len))
            return bad_leaf("bad length");
        len += 16;
    }
    if (len > uint64_t(end - p))
        return bad_leaf("term runs past the end");
    leaf l;
    l.term.assign((const char *)p, (size_t)len);
    p += len;
    unsigned code = (ch >> 4) & 0x03;
    uint64_t wqf = code > 0, pos = 0;
    if (code == 3 && !decode_length(p, end, wqf))
        return bad_leaf("bad wqf");
    if (code >= 2 && !decode_length(p, end, pos))
        return bad_leaf("bad position");
    if (p != end)
        return bad_leaf("trailing bytes");
    if (wqf > UINT32_MAX)
        return bad_leaf("wqf exceeds 32 bits");
    l.wqf = (uint32_t)wqf;
    l.group = group;
    l.factor = factor;
    out.push_back(std::move(l));
    return XG_OK;
}

int unsupported(Xapian::Query::op op, const char *inside)
{
    if (inside)
        return xg_set_error(XG_ERR_UNSUPPORTED, "unsupported: %s inside %s",
                            op_name(op), inside);
    return xg_set_error(XG_ERR_UNSUPPORTED, "unsupported: %s", op_name(op));
}

/* serialise_double()'s form (see the file comment) at p; advances p.
 * False if the bytes run out. */
bool decode_double(const unsigned char *&p, const unsigned char *end,
                   double &out)
{
    if (end - p < 2)
        return false;
    unsigned first = *p++;
    int exp = (int)(first & 0x0f) - 7;
    if ((first & 0x0f) == 14) {
        exp = (int)*p++ - 128;
    } else if ((first & 0x0f) == 15) {
        if (end - p < 2)
            return false;
        exp = (int)(p[0] | p[1] << 8) - 32768;
        p += 2;
    }
    unsigned n = ((first >> 4) & 0x07) + 1;
    if (unsigned(end - p) < n)
        return false;
    /* The mantissa bytes as one integer: at most 64 bits, exact in a
     * double for anything a finite double encodes to. */
    uint64_t m = 0;
    for (unsigned i = 0; i < n; ++i)
        m = m << 8 | *p++;
    double v = std::ldexp((double)m, 8 * (exp - (int)(n - 1)));
    out = (first & 0x80) ? -v : v;
    return true;
}

/* The factor of an OP_SCALE_WEIGHT query, if it is finite and > 0. */
int scale_factor(const Xapian::Query &q, double &out)
{
    const std::string s = q.serialise();
    const unsigned char *p = (const unsigned char *)s.data();
    const unsigned char *end = p + s.size();
    double f = 0;
    if (p == end || *p++ != 0x0d || !decode_double(p, end, f))
        return xg_set_error(XG_ERR_UNSUPPORTED, "unsupported: "
                            "OP_SCALE_WEIGHT factor that cannot be decoded");
    if (!(f > 0) || !std::isfinite(f))
        return xg_set_error(XG_ERR_UNSUPPORTED,
                            "unsupported: OP_SCALE_WEIGHT with factor %g", f);
    /* The stock encoder is the oracle: it must give back the same bytes
     * (it encodes a finite double exactly, so equal bytes mean equal
     * values, whatever the 1.4 release). */
    size_t n = (size_t)(p - (const unsigned char *)s.data());
    const std::string again = Xapian::Query(f, Xapian::Query("x")).serialise();
    if (again.compare(0, n, s, 0, n) != 0)
        return xg_set_error(XG_ERR_UNSUPPORTED, "unsupported: OP_SCALE_WEIGHT "
                            "factor that does not round-trip (%g)", f);
    out = f;
    return XG_OK;
}

/* Step q down through any OP_SCALE_WEIGHT nodes, multiplying their factors
 * into `factor` outermost first (factor * scale_factor, as
 * QueryScaleWeight::postlist does).  *scaled: whether there were any. */
int unwrap_scale(Xapian::Query &q, double &factor, bool *scaled)
{
    *scaled = false;
    for (int depth = 0; q.get_type() == Xapian::Query::OP_SCALE_WEIGHT;
         ++depth) {
        if (depth > max_depth)
            return xg_set_error(XG_ERR_UNSUPPORTED, "unsupported: "
                                "OP_SCALE_WEIGHT nested deeper than %d",
                                max_depth);
        double f = 0;
        int rc = scale_factor(q, f);
        if (rc != XG_OK)
            return rc;
        factor = factor * f;
        /* 0 would make the leaves unweighted, not just weightless. */
        if (!(factor > 0) || !std::isfinite(factor))
            return xg_set_error(XG_ERR_UNSUPPORTED, "unsupported: "
                                "OP_SCALE_WEIGHT factors multiply to %g",
                                factor);
        q = q.get_subquery(0);
        *scaled = true;
    }
    return XG_OK;
}

/* A scaled OR inside an OR (or AND inside an AND) is its own subtree. */
int unsupported_scaled(Xapian::Query::op op)
{
    return xg_set_error(XG_ERR_UNSUPPORTED,
                        "unsupported: OP_SCALE_WEIGHT of %s inside %s",
                        op_name(op), op_name(op));
}

/* The walks' shared steps: refuse nesting deeper than max_depth, and
 * operand i of q with its scale nodes stepped through (its factor
 * multiplied in; *scaled: whether it had any). */
int too_deep(int depth, const char *op)
{
    return depth > max_depth
               ? xg_set_error(XG_ERR_UNSUPPORTED,
                              "unsupported: %s nested deeper than %d", op,
                              max_depth)
               : XG_OK;
}

int operand(const Xapian::Query &q, size_t i, double factor,
            Xapian::Query &sub, double &f, bool *scaled)
{
    sub = q.get_subquery(i);
    f = factor;
    return unwrap_scale(sub, f, scaled);
}

/* What a walk collects. */
struct shape {
    std::vector<leaf> leaves;
    std::vector<xg_qfilter> filters;
};

/* OP_PHRASE's (and OP_NEAR's) window: serialise_() writes the operator
 * byte (with the operand count when under 8), the count - 8 otherwise,
 * then the window; QueryWindowed::done() has replaced a window of 0 by
 * the count. */
int phrase_window(const Xapian::Query &q, uint32_t &window)
{
    const unsigned code = q.get_type() == Xapian::Query::OP_NEAR ? 14 : 15;
    const std::string s = q.serialise();
    const unsigned char *p = (const unsigned char *)s.data();
    const unsigned char *end = p + s.size();
    uint64_t n = 0, w = 0;
    if (p == end)
        return bad_leaf("empty phrase");
    const unsigned char ch = *p++;
    if ((ch & 0xf8) != (0x80 | code << 3))
        return xg_set_error(XG_ERR_XAPIAN, "query: cannot decode OP_PHRASE");
    n = ch & 0x07;
    if (n == 0 && !decode_length(p, end, n))
        return xg_set_error(XG_ERR_XAPIAN, "query: cannot decode OP_PHRASE");
    if ((ch & 0x07) == 0)
        n += 8;
    if (!decode_length(p, end, w) || n != q.get_num_subqueries())
        return xg_set_error(XG_ERR_XAPIAN, "query: cannot decode OP_PHRASE");
    /* A window narrower than the phrase can never hold. */
    if (w < n || w > UINT32_MAX)
        return xg_set_error(XG_ERR_UNSUPPORTED, "unsupported: OP_PHRASE "
                            "with window %llu of %llu terms",
                            (unsigned long long)w, (unsigned long long)n);
    window = (uint32_t)w;
    return XG_OK;
}

/* OP_PHRASE of terms: its leaves, in order, then a filter over them.
 * group_of(i): the group of the i-th term (one group per term when it is
 * merged into an AND, the OR's group when it is an OR clause). */
template <typename GroupOf>
int add_phrase(const Xapian::Query &q, double factor, uint32_t clause,
               GroupOf group_of, shape &out)
{
    if (out.filters.size() >= XG_QUERY_MAX_FILTERS)
        return xg_set_error(XG_ERR_UNSUPPORTED, "unsupported: more than %u "
                            "phrases", XG_QUERY_MAX_FILTERS);
    xg_qfilter f;
    f.kind = q.get_type() == Xapian::Query::OP_NEAR ? XG_QF_NEAR
                                                    : XG_QF_PHRASE;
    f.clause = clause;
    f.first = (uint32_t)out.leaves.size();
    f.n = (uint32_t)q.get_num_subqueries();
    int rc = phrase_window(q, f.window);
    /* QueryWindowed::postlist_windowed wraps any operand but a term in an
     * OrPosPostList, and gives each the phrase's own factor. */
    for (uint32_t i = 0; !rc && i < f.n; ++i) {
        const Xapian::Query sub = q.get_subquery(i);
        if (sub.get_type() != Xapian::Query::LEAF_TERM)
            return unsupported(sub.get_type(), "OP_PHRASE");
        rc = add_leaf(sub, group_of(i), factor, out.leaves);
    }
    if (!rc)
        out.filters.push_back(f);
    return rc;
}

/* OP_OR: every leaf below (through nested ORs) goes into `group`; a
 * phrase is a clause of its own where `phrases` allows it (not in the
 * ORs AND_NOT excludes).  Under an AND, MultiAndPostList moves that OR
 * with check(), and on some documents Xapian 1.4.22 adds the weight of a
 * phrase whose check failed (lisa query 2: "information on non-users
 * libraries AND they" gives document 3716 9.844 with the phrase and
 * 4.537, its terms' weights, without): match_tree.c makes those moves. */
int walk_or(const Xapian::Query &q, uint32_t group, double factor,
            int depth, bool phrases, shape &out)
{
    int rc = too_deep(depth, "OP_OR");
    for (size_t i = 0, n = q.get_num_subqueries(); !rc && i < n; ++i) {
        Xapian::Query sub;
        double f;
        bool scaled;
        if ((rc = operand(q, i, factor, sub, f, &scaled)))
            break;
        Xapian::Query::op t = sub.get_type();
        if (t == Xapian::Query::LEAF_TERM)
            rc = add_leaf(sub, group, f, out.leaves);
        else if (t == Xapian::Query::OP_OR && !scaled)
            rc = walk_or(sub, group, f, depth + 1, phrases, out);
        else if (t == Xapian::Query::OP_OR)
            rc = unsupported_scaled(t);
        else if (t == Xapian::Query::OP_PHRASE && phrases)
            rc = add_phrase(sub, f, 1, [group](uint32_t) { return group; },
                            out);
        else if (t == Xapian::Query::OP_PHRASE)
            rc = unsupported(t, "OP_OR inside OP_AND_NOT");
        else
            rc = unsupported(t, "OP_OR");
    }
    return rc;
}

/* OP_NEAR's terms must differ: Xapian's slide decides "distinct
 * positions in the window" only where no two of them share a position. */
int near_distinct(const Xapian::Query &q)
{
    const size_t n = q.get_num_subqueries();
    for (size_t i = 0; i < n; ++i)
        for (size_t j = i + 1; j < n; ++j)
            if (q.get_subquery(i).get_type() == Xapian::Query::LEAF_TERM &&
                q.get_subquery(j).get_type() == Xapian::Query::LEAF_TERM &&
                *q.get_subquery(i).get_terms_begin() ==
                    *q.get_subquery(j).get_terms_begin())
                return xg_set_error(XG_ERR_UNSUPPORTED, "unsupported: "
                                    "OP_NEAR with a repeated term");
    return XG_OK;
}

/* OP_AND: each operand is a group (a term, or an OR of terms); nested
 * ANDs contribute their operands as groups of this AND, and so do a
 * phrase's terms (AndContext's position filters apply to the whole AND). */
int walk_and(const Xapian::Query &q, uint32_t &n_groups, double factor,
             int depth, shape &out)
{
    int rc = too_deep(depth, "OP_AND");
    for (size_t i = 0, n = q.get_num_subqueries(); !rc && i < n; ++i) {
        Xapian::Query sub;
        double f;
        bool scaled;
        if ((rc = operand(q, i, factor, sub, f, &scaled)))
            break;
        Xapian::Query::op t = sub.get_type();
        if (t == Xapian::Query::LEAF_TERM)
            rc = add_leaf(sub, n_groups++, f, out.leaves);
        else if (t == Xapian::Query::OP_OR)
            rc = walk_or(sub, n_groups++, f, depth + 1, true, out);
        else if ((t == Xapian::Query::OP_AND || t == Xapian::Query::OP_PHRASE ||
                  t == Xapian::Query::OP_NEAR) && scaled)
            rc = unsupported_scaled(t);
        else if (t == Xapian::Query::OP_AND)
            rc = walk_and(sub, n_groups, f, depth + 1, out);
        else if (t == Xapian::Query::OP_PHRASE ||
                 (t == Xapian::Query::OP_NEAR && !(rc = near_distinct(sub))))
            rc = add_phrase(sub, f, 0,
                            [&n_groups](uint32_t) { return n_groups++; },
                            out);
        else if (t == Xapian::Query::OP_NEAR)
            break;
        else
            rc = unsupported(t, "OP_AND");
    }
    return rc;
}

/* The general form (XG_QOP_TREE): the Query's own tree, in postfix, for
 * the plan to build as Xapian's contexts do (shim_plan.cc) and the
 * postlist-tree matcher to run.  Factors go into the leaves: 0 under
 * AND_NOT's right side and FILTER's later operands (Xapian opens those
 * unweighted); a SCALE_WEIGHT node stays as a node, since Xapian builds
 * what it wraps as a subtree of its own instead of merging it into the
 * parent's context. */
struct tree_shape : shape {
    std::vector<xg_qnode> nodes;
    std::vector<xg_qsyn> syns;
    std::vector<xg_qwild> wildcards;
    std::vector<xg_qrange> ranges;
};

int push_node(tree_shape &out, uint16_t kind, size_t arg)
{
    if (out.nodes.size() >= XG_QUERY_MAX_NODES || arg > UINT16_MAX)
        return xg_set_error(XG_ERR_UNSUPPORTED, "unsupported: a query of "
                            "more than %u nodes", XG_QUERY_MAX_NODES);
    out.nodes.push_back(xg_qnode{kind, (uint16_t)arg});
    return XG_OK;
}

int tree_node(const Xapian::Query &q, double factor, int depth,
              const char *inside, tree_shape &out);

/* A synonym node over what was pushed since `kids` nodes ago (an OR when
 * more than one). */
int push_syn(tree_shape &out, double factor, size_t kids)
{
    int rc = XG_OK;
    if (kids > 1 && (rc = push_node(out, XG_QN_OR, kids)))
        return rc;
    if (out.syns.size() >= XG_QUERY_MAX_SYNS)
        return xg_set_error(XG_ERR_UNSUPPORTED, "unsupported: more than %u "
                            "synonyms and wildcards", XG_QUERY_MAX_SYNS);
    out.syns.push_back(xg_qsyn{factor});
    return push_node(out, XG_QN_SYN, out.syns.size() - 1);
}

static_assert(Xapian::Query::WILDCARD_LIMIT_ERROR == XG_WILDCARD_LIMIT_ERROR &&
              Xapian::Query::WILDCARD_LIMIT_FIRST == XG_WILDCARD_LIMIT_FIRST &&
              Xapian::Query::WILDCARD_LIMIT_MOST_FREQUENT ==
                  XG_WILDCARD_LIMIT_MOST_FREQUENT,
              "query_shape.h's wildcard limits are Xapian's");

/* OP_WILDCARD from its serialisation (QueryWildcard::serialise): 0x0b,
 * encode_length(max_expansion), max_type, combiner, encode_length(pattern
 * length), pattern.  A leaf holds the pattern until
 * xg_query_expand_wildcards() replaces it with the index's terms. */
int wildcard_node(const Xapian::Query &q, double factor, tree_shape &out)
{
    const std::string s = q.serialise();
    const unsigned char *p = (const unsigned char *)s.data();
    const unsigned char *end = p + s.size();
    uint64_t max_expansion, len;
    if (p == end || *p++ != 0x0b || !decode_length(p, end, max_expansion) ||
        end - p < 2)
        return xg_set_error(XG_ERR_ARG, "query: malformed OP_WILDCARD");
    const unsigned max_type = *p++, combiner = *p++;
    if (!decode_length(p, end, len) || len != uint64_t(end - p))
        return xg_set_error(XG_ERR_ARG, "query: malformed OP_WILDCARD");
    /* Unweighted, any combiner is an OR; weighted, only OP_SYNONYM's one
     * weight is served. */
    if (factor != 0 && combiner != Xapian::Query::OP_SYNONYM)
        return xg_set_error(XG_ERR_UNSUPPORTED, "unsupported: OP_WILDCARD "
                            "combined by %s",
                            op_name((Xapian::Query::op)combiner));
    /* MOST_FREQUENT with no limit selects none (select_most_frequent(0)
     * is past std::nth_element's range): left to stock. */
    if (max_type > Xapian::Query::WILDCARD_LIMIT_MOST_FREQUENT ||
        (max_type == Xapian::Query::WILDCARD_LIMIT_MOST_FREQUENT &&
         max_expansion == 0))
        return xg_set_error(XG_ERR_UNSUPPORTED, "unsupported: OP_WILDCARD "
                            "of limit type %u and limit %llu", max_type,
                            (unsigned long long)max_expansion);
    if (max_expansion > UINT32_MAX)
        return xg_set_error(XG_ERR_ARG, "query: malformed OP_WILDCARD");
    /* An empty pattern is every term: past the engines' leaves. */
    if (len == 0)
        return xg_set_error(XG_ERR_UNSUPPORTED, "unsupported: OP_WILDCARD "
                            "with an empty pattern");
    if (out.leaves.size() >= XG_QUERY_MAX_LEAVES ||
        out.wildcards.size() >= XG_QUERY_MAX_WILDCARDS)
        return xg_set_error(XG_ERR_UNSUPPORTED, "unsupported: more than %u "
                            "wildcards", XG_QUERY_MAX_WILDCARDS);
    leaf l;
    l.term.assign((const char *)p, (size_t)len);
    l.wqf = 1;
    l.group = 0;
    l.factor = 0;
    out.leaves.push_back(l);
    out.wildcards.push_back(xg_qwild{(uint32_t)out.leaves.size() - 1,
                                     (uint32_t)max_expansion, max_type});
    int rc = push_node(out, XG_QN_WILDCARD, out.wildcards.size() - 1);
    return rc ? rc : push_syn(out, factor, 1);
}

/* One bound of a value range: encode_length(size), then the bytes. */
bool range_bound(const unsigned char *&p, const unsigned char *end,
                 char *out, uint32_t &len)
{
    uint64_t n;
    if (!decode_length(p, end, n) || n > uint64_t(end - p)) return false;
    if (n > XG_QRANGE_MAX) return false;
    memcpy(out, p, (size_t)n);
    len = (uint32_t)n;
    p += n;
    return true;
}

/* OP_VALUE_RANGE, _GE and _LE from their serialisation
 * (QueryValueRange::serialise and its siblings): 0x20 | slot (0x30 | slot
 * for GE; slot 15 means encode_length(slot - 15) follows), then begin and
 * end (GE: its limit; LE: an empty begin and its limit), each as
 * encode_length(size) and the bytes.  A leaf of its own, wqf 0 (Query::
 * Internal::get_length). */
int range_node(const Xapian::Query &q, double factor, tree_shape &out)
{
    const Xapian::Query::op t = q.get_type();
    const std::string s = q.serialise();
    const unsigned char *p = (const unsigned char *)s.data();
    const unsigned char *end = p + s.size();
    xg_qrange r = {};
    r.kind = t == Xapian::Query::OP_VALUE_GE ? XG_QR_GE
             : t == Xapian::Query::OP_VALUE_LE ? XG_QR_LE : XG_QR_RANGE;
    const unsigned char code = r.kind == XG_QR_GE ? 0x30 : 0x20;
    if (p == end || (*p & 0xf0) != code)
        return xg_set_error(XG_ERR_ARG, "query: malformed %s", op_name(t));
    uint64_t slot = *p++ & 0x0f;
    if (slot == 15) {
        uint64_t more;
        if (!decode_length(p, end, more) || more > UINT32_MAX - 15)
            return xg_set_error(XG_ERR_ARG, "query: malformed %s", op_name(t));
        slot += more;
    }
    r.slot = (uint32_t)slot;
    const bool ok = r.kind == XG_QR_GE
        ? range_bound(p, end, r.begin, r.begin_len)
        : range_bound(p, end, r.begin, r.begin_len) &&
          range_bound(p, end, r.end, r.end_len);
    if (!ok || p != end)
        return xg_set_error(XG_ERR_UNSUPPORTED, "unsupported: %s with a bound "
                            "longer than %u bytes", op_name(t), XG_QRANGE_MAX);
    if (out.leaves.size() >= XG_QUERY_MAX_LEAVES ||
        out.ranges.size() >= XG_QUERY_MAX_RANGES)
        return xg_set_error(XG_ERR_UNSUPPORTED, "unsupported: more than %u "
                            "value ranges", XG_QUERY_MAX_RANGES);
    leaf l;
    l.wqf = 0;
    l.group = 0;
    l.factor = factor;
    l.range = (uint32_t)out.ranges.size() + 1;
    out.leaves.push_back(l);
    r.leaf = (uint32_t)out.leaves.size() - 1;
    out.ranges.push_back(r);
    return push_node(out, XG_QN_LEAF, r.leaf);
}

/* OP_SYNONYM (QueryBranch::do_synonym): its operands unweighted in an OR
 * context of their own, then weighed as one term.  Served over terms,
 * wildcards, and ORs and synonyms of those. */
int synonym_node(const Xapian::Query &q, double factor, int depth,
                 tree_shape &out)
{
    const size_t n = q.get_num_subqueries();
    for (size_t i = 0; i < n; ++i) {
        const Xapian::Query sub = q.get_subquery(i);
        const Xapian::Query::op t = sub.get_type();
        if (t != Xapian::Query::LEAF_TERM && t != Xapian::Query::OP_WILDCARD &&
            t != Xapian::Query::OP_OR && t != Xapian::Query::OP_SYNONYM)
            return unsupported(t, "OP_SYNONYM");
        int rc = tree_node(sub, 0.0, depth + 1, "OP_SYNONYM", out);
        if (rc) return rc;
    }
    return n ? push_syn(out, factor, n) : XG_OK;
}

int tree_node(const Xapian::Query &q, double factor, int depth,
              const char *inside, tree_shape &out)
{
    int rc = too_deep(depth, "a query");
    if (rc) return rc;
    const Xapian::Query::op t = q.get_type();
    const size_t n = q.get_num_subqueries();
    uint16_t kind = 0;
    switch (t) {
    case Xapian::Query::LEAF_TERM:
        if ((rc = add_leaf(q, 0, factor, out.leaves))) return rc;
        return push_node(out, XG_QN_LEAF, out.leaves.size() - 1);
    case Xapian::Query::OP_SCALE_WEIGHT: {
        Xapian::Query sub = q;
        double f = factor;
        bool scaled;
        if (factor == 0) {
            while (sub.get_type() == Xapian::Query::OP_SCALE_WEIGHT)
                sub = sub.get_subquery(0);
        } else if ((rc = unwrap_scale(sub, f, &scaled))) {
            return rc;
        }
        if ((rc = tree_node(sub, f, depth + 1, "OP_SCALE_WEIGHT", out)))
            return rc;
        return push_node(out, XG_QN_SCALE, 0);
    }
    case Xapian::Query::OP_NEAR:
        if ((rc = near_distinct(q))) return rc;
        /* fall through */
    case Xapian::Query::OP_PHRASE:
        if ((rc = add_phrase(q, factor, 1, [](uint32_t) { return 0u; }, out)))
            return rc;
        return push_node(out, XG_QN_PHRASE, out.filters.size() - 1);
    case Xapian::Query::OP_SYNONYM:
        return synonym_node(q, factor, depth, out);
    case Xapian::Query::OP_WILDCARD:
        return wildcard_node(q, factor, out);
    case Xapian::Query::OP_VALUE_RANGE:
    case Xapian::Query::OP_VALUE_GE:
    case Xapian::Query::OP_VALUE_LE:
        return range_node(q, factor, out);
    case Xapian::Query::OP_OR: kind = XG_QN_OR; break;
    case Xapian::Query::OP_AND: kind = XG_QN_AND; break;
    case Xapian::Query::OP_FILTER: kind = XG_QN_FILTER; break;
    case Xapian::Query::OP_AND_NOT: kind = XG_QN_AND_NOT; break;
    case Xapian::Query::OP_AND_MAYBE:
        /* Unweighted, Xapian drops its right side unopened. */
        if (factor == 0) return unsupported(t, inside);
        kind = XG_QN_AND_MAYBE;
        break;
    default:
        return unsupported(t, inside);
    }
    /* The plan builds AND_NOT's and AND_MAYBE's right side as an OR of
     * their later operands: one at least. */
    if (n < 2 && (kind == XG_QN_AND_NOT || kind == XG_QN_AND_MAYBE))
        return unsupported(t, inside);
    for (size_t i = 0; i < n; ++i) {
        const double f = i > 0 && (kind == XG_QN_FILTER ||
                                   kind == XG_QN_AND_NOT) ? 0.0 : factor;
        if ((rc = tree_node(q.get_subquery(i), f, depth + 1, op_name(t), out)))
            return rc;
    }
    return push_node(out, kind, n);
}

/* v into the query's fixed array (the shapes check their limits). */
template <class T> uint32_t copy_out(const std::vector<T> &v, T *out)
{
    std::copy(v.begin(), v.end(), out);
    return (uint32_t)v.size();
}

/* A query without AND_NOT at its root: op, n_groups and the leaves. */
int convert_positive(const Xapian::Query &root, double factor, int &op,
                     uint32_t &n_groups, shape &sh)
{
    const Xapian::Query::op t = root.get_type();
    switch (t) {
    case Xapian::Query::LEAF_MATCH_NOTHING:
        return XG_OK;
    case Xapian::Query::LEAF_TERM:
        n_groups = 1;
        return add_leaf(root, 0, factor, sh.leaves);
    case Xapian::Query::OP_OR:
        n_groups = 1;
        return walk_or(root, 0, factor, 0, true, sh);
    case Xapian::Query::OP_AND:
        op = XG_QOP_AND;
        return walk_and(root, n_groups, factor, 0, sh);
    case Xapian::Query::OP_NEAR:
        if (int rc = near_distinct(root)) return rc;
        /* fall through */
    case Xapian::Query::OP_PHRASE:
        /* QueryAndLike::postlist: an AndContext of its terms. */
        op = XG_QOP_AND;
        return add_phrase(root, factor, 0,
                          [&n_groups](uint32_t) { return n_groups++; }, sh);
    default:
        return unsupported(t, NULL);
    }
}

/* The flat shapes (XG_QOP_OR, XG_QOP_AND), AND_NOT at the root with
 * negated leaves. */
int convert_flat(const Xapian::Query &root, double factor, int &op,
                 uint32_t &n_groups, shape &sh)
{
    std::vector<leaf> &leaves = sh.leaves;
    int rc;
    bool scaled;
    Xapian::Query::op t = root.get_type();
    if (t == Xapian::Query::OP_AND_NOT) {
        /* QueryAndNot::postlist: its first operand's own tree, and an
         * OR of the rest built with factor 0 (scale weights on them
         * already stripped by QueryAndNot::add_subquery). */
        Xapian::Query left = root.get_subquery(0);
        if ((rc = unwrap_scale(left, factor, &scaled)) != XG_OK ||
            (rc = convert_positive(left, factor, op, n_groups, sh)) !=
                XG_OK)
            return rc;
        /* AndNotPostList moves its left side with skip_to() too, which
         * the direct matcher does not model: the general form's tree
         * matcher takes such a query. */
        for (const xg_qfilter &f : sh.filters)
            if (f.clause && op == XG_QOP_AND && n_groups > 1)
                return xg_set_error(XG_ERR_UNSUPPORTED, "unsupported: "
                                    "OP_PHRASE inside OP_OR inside "
                                    "OP_AND inside OP_AND_NOT");
        for (size_t i = 1, n = root.get_num_subqueries(); i < n; ++i) {
            const Xapian::Query sub = root.get_subquery(i);
            const size_t from = leaves.size();
            if (sub.get_type() == Xapian::Query::LEAF_TERM)
                rc = add_leaf(sub, 0, 1.0, leaves);
            else if (sub.get_type() == Xapian::Query::OP_OR)
                rc = walk_or(sub, 0, 1.0, 1, false, sh);
            else
                rc = unsupported(sub.get_type(), "OP_AND_NOT");
            if (rc != XG_OK)
                return rc;
            for (size_t j = from; j < leaves.size(); ++j) {
                leaves[j].factor = 0.0;
                leaves[j].negated = true;
            }
        }
        return XG_OK;
    }
    return convert_positive(root, factor, op, n_groups, sh);
}

/* Omega's prefix of a boolean term (its query.cc prefix_from_term): 'X'
 * and the capitals after it, else a leading capital; "" for none. */
std::string omega_prefix(const std::string &term)
{
    if (!term.empty() && term[0] == 'X') {
        size_t i = 1;
        while (i < term.size() && term[i] >= 'A' && term[i] <= 'Z') ++i;
        return term.substr(0, i);
    }
    if (!term.empty() && term[0] >= 'A' && term[0] <= 'Z')
        return term.substr(0, 1);
    return std::string();
}

/* q with Omega's B= filters and N= exclusions as its run_query applies
 * them to a query it has: OP_FILTER by the AND, over the prefixes in
 * order, of each prefix's terms (ORed where several, in the order
 * given), then AND_NOT the OR of the distinct excluded terms in byte
 * order. */
Xapian::Query omega_filtered(const Xapian::Query &q,
                             const struct xg_parse_opts *o)
{
    Xapian::Query out = q;
    std::multimap<std::string, std::string> by_prefix;
    for (size_t i = 0; i < o->n_filters; ++i) {
        const std::string term(o->filters[i]);
        const std::string prefix = omega_prefix(term);
        if (!prefix.empty()) by_prefix.emplace(prefix, term);
    }
    if (!by_prefix.empty()) {
        std::vector<Xapian::Query> groups;
        for (auto i = by_prefix.begin(); i != by_prefix.end();) {
            auto end = by_prefix.upper_bound(i->first);
            std::vector<std::string> same;
            for (; i != end; ++i) same.push_back(i->second);
            groups.push_back(same.size() == 1
                                 ? Xapian::Query(same[0])
                                 : Xapian::Query(Xapian::Query::OP_OR,
                                                 same.begin(), same.end()));
        }
        out = Xapian::Query(Xapian::Query::OP_FILTER, out,
                            Xapian::Query(Xapian::Query::OP_AND,
                                          groups.begin(), groups.end()));
    }
    std::set<std::string> neg;
    for (size_t i = 0; i < o->n_excludes; ++i)
        if (*o->excludes[i]) neg.insert(o->excludes[i]);
    if (!neg.empty())
        out = Xapian::Query(Xapian::Query::OP_AND_NOT, out,
                            Xapian::Query(Xapian::Query::OP_OR, neg.begin(),
                                          neg.end()));
    return out;
}

} // namespace

extern "C" {

/* See xg_shim.h.  db may be NULL (no database for wildcards or spelling);
 * o NULL means stem_english = 1, OR, no stopper, FLAG_DEFAULT.  With
 * o->omega, Omega's stopper replaces o->stopper, and the flags get
 * FLAG_ACCUMULATE as Omega's always do (it changes no query).  A
 * non-empty query gets o's filters and exclusions (omega_filtered); an
 * empty one stays empty (Omega would match the filters alone, weighted
 * as booleans).
 * A query QueryParser rejects gives XG_ERR_ARG "query: <message>". */
int xg_shim_parse(xg_db *db, const char *text, const struct xg_parse_opts *o,
                  xg_xquery **out)
{
    if (out)
        *out = NULL;
    if (!text || !out)
        return xg_set_error(XG_ERR_ARG, "xg_shim_parse: NULL argument");
    static const struct xg_parse_opts defaults = {1, 0, NULL, 0, 0, NULL, 0,
                                                  NULL, 0};
    if (!o)
        o = &defaults;
    const bool stop = o->stopper && *o->stopper;
    if (stop && strcmp(o->stopper, "english") != 0)
        return xg_set_error(XG_ERR_ARG, "query: unknown stopper '%s' (only "
                            "\"english\")", o->stopper);
    XG_SHIM_TRY
        /* The database's parser, set up once for these options (building
         * a QueryParser and its stemmer for every query was 3% of the
         * instructions of parsing and preparing it); a parse leaves
         * nothing in it that the next reads. */
        const int key = (o->stem_english != 0) | (o->default_and != 0) << 1 |
                        int(stop) << 2 | (o->omega != 0) << 3;
        Xapian::QueryParser local;
        Xapian::QueryParser *qp = &local;
        if (db && db->parser && db->parser_key == key) {
            qp = db->parser.get();
        } else {
            if (db) {
                db->parser.reset(new Xapian::QueryParser);
                db->parser_key = -1;
                qp = db->parser.get();
                qp->set_database(db->combined);
            }
            if (o->stem_english) {
                qp->set_stemmer(Xapian::Stem("english"));
                qp->set_stemming_strategy(Xapian::QueryParser::STEM_SOME);
            } else {
                qp->set_stemming_strategy(Xapian::QueryParser::STEM_NONE);
            }
            qp->set_default_op(o->default_and ? Xapian::Query::OP_AND
                                              : Xapian::Query::OP_OR);
            if (stop) qp->set_stopper(english_stopper());
            if (o->omega) omega_setup(*qp);
            if (db) db->parser_key = key;
        }
        /* No FLAG_ACCUMULATE even for Omega's form: it only keeps the
         * stop and unstem lists, which nobody reads here, from one parse
         * to the next, and they would grow with every query. */
        const unsigned flags =
            o->flags ? o->flags : (unsigned)Xapian::QueryParser::FLAG_DEFAULT;
        std::unique_ptr<xg_xquery> q(new xg_xquery);
        try {
            q->q = qp->parse_query(text, flags);
            /* Omega ANDs its query strings (one here: P=), which keeps a
             * single query as it is. */
            if (o->omega && !q->q.empty())
                q->q = Xapian::Query(Xapian::Query::OP_AND, &q->q, &q->q + 1);
            if (!q->q.empty()) q->q = omega_filtered(q->q, o);
        } catch (const Xapian::QueryParserError &e) {
            return xg_set_error(XG_ERR_ARG, "query: %s", e.get_msg().c_str());
        }
        *out = q.release();
        return XG_OK;
    XG_SHIM_CATCH("query")
}

/* Free; NULL is fine. */
void xg_shim_xquery_free(xg_xquery *q)
{
    XG_SHIM_TRY
        delete q;
    XG_SHIM_CATCH_VOID("query")
}

/* See xg_shim.h.  *out is overwritten (its old strbuf is not freed); on
 * error it is left empty (n_leaves 0, strbuf NULL), so xg_query_free() is
 * always safe on it.  Only leaves [0, n_leaves) are written: the 32 KB
 * leaf array is not cleared, which the planner would pay on every query. */
int xg_shim_xquery_convert(const xg_xquery *q, struct xg_query *out)
{
    if (!out)
        return xg_set_error(XG_ERR_ARG, "xg_shim_xquery_convert: NULL out");
    out->n_leaves = out->n_groups = out->query_length = out->n_filters = 0;
    out->n_negated = out->n_nodes = out->n_syns = out->n_wildcards = 0;
    out->n_ranges = 0;
    out->strbuf = NULL;
    out->op = XG_QOP_OR;
    if (!q)
        return xg_set_error(XG_ERR_ARG, "xg_shim_xquery_convert: NULL query");
    XG_SHIM_TRY
        shape sh;
        std::vector<leaf> &leaves = sh.leaves;
        uint32_t n_groups = 0;
        int op = XG_QOP_OR;
        /* LocalSubMatch::get_postlist starts BM25 at factor 1.0. */
        double factor = 1.0;
        bool scaled;
        Xapian::Query root = q->q;
        int rc = unwrap_scale(root, factor, &scaled);
        if (rc != XG_OK)
            return rc;
        rc = convert_flat(root, factor, op, n_groups, sh);
        /* What the flat shapes cannot hold, the general form may. */
        tree_shape ts;
        if (rc == XG_ERR_UNSUPPORTED) {
            if ((rc = tree_node(q->q, 1.0, 0, NULL, ts)) != XG_OK)
                return rc;
            sh.leaves.swap(ts.leaves);
            sh.filters.swap(ts.filters);
            op = XG_QOP_TREE;
            n_groups = 1;
        }
        if (rc != XG_OK)
            return rc;
        if (leaves.empty()) {
            out->n_groups = 0;
            return XG_OK;
        }
        size_t bytes = 0;
        for (const leaf &l : leaves)
            bytes += l.term.size() + 1;
        /* One NUL after each term: term_len is authoritative, but a
         * terminated string is handy in messages and debuggers. */
        char *buf = (char *)malloc(bytes);
        if (!buf)
            return xg_set_error(XG_ERR_NOMEM, "query: out of memory");
        char *p = buf;
        uint32_t length = 0, n_negated = 0;
        for (size_t i = 0; i < leaves.size(); ++i) {
            memcpy(p, leaves[i].term.data(), leaves[i].term.size());
            p[leaves[i].term.size()] = '\0';
            out->leaves[i].term = p;
            out->leaves[i].term_len = (uint32_t)leaves[i].term.size();
            out->leaves[i].wqf = leaves[i].wqf;
            out->leaves[i].group = leaves[i].group;
            out->leaves[i].expanded = 0;
            out->leaves[i].factor = leaves[i].factor;
            out->leaves[i].negated = leaves[i].negated;
            out->leaves[i].range = leaves[i].range;
            n_negated += leaves[i].negated;
            length += leaves[i].wqf;
            p += leaves[i].term.size() + 1;
        }
        out->n_filters = copy_out(sh.filters, out->filters);
        out->n_nodes = copy_out(ts.nodes, out->nodes);
        out->n_syns = copy_out(ts.syns, out->syns);
        out->n_wildcards = copy_out(ts.wildcards, out->wildcards);
        out->n_ranges = copy_out(ts.ranges, out->ranges);
        out->n_negated = n_negated;
        out->op = op;
        out->n_leaves = (uint32_t)leaves.size();
        out->n_groups = n_groups;
        out->query_length = length;
        out->strbuf = buf;
        return XG_OK;
    XG_SHIM_CATCH("query")
}

int xg_shim_weighting_is_bm25(const char *name, size_t name_len,
                              const void *params, size_t params_len,
                              const struct xg_bm25_params *p)
{
    try {
        /* The server's parameters serialised once per thread, not per
         * search. */
        static thread_local struct xg_bm25_params last;
        static thread_local std::string bm25;
        if (bm25.empty() || memcmp(&last, p, sizeof last)) {
            bm25 = Xapian::BM25Weight(p->k1, p->k2, p->k3, p->b,
                                      p->min_normlen).serialise();
            last = *p;
        }
        static const char scheme[] = "Xapian::BM25Weight";
        return name_len == sizeof scheme - 1 &&
               !memcmp(name, scheme, name_len) &&
               params_len == bm25.size() &&
               !memcmp(params, bm25.data(), params_len);
    } catch (...) {
        return 0;
    }
}

/* See xg_shim.h.  NULL on error (message set). */
char *xg_shim_xquery_describe(const xg_xquery *q)
{
    if (!q) {
        xg_set_error(XG_ERR_ARG, "xg_shim_xquery_describe: NULL query");
        return NULL;
    }
    XG_SHIM_TRY
        const std::string d = q->q.get_description();
        char *s = strdup(d.c_str());
        if (!s)
            xg_set_error(XG_ERR_NOMEM, "query: out of memory");
        return s;
    XG_SHIM_CATCH_NULL("query")
}

/* The stock matcher on q; unpruned: check_at_least = the database's
 * size, so the matcher never raises its minimum weight and skips nothing.
 * p NULL means XG_BM25_DEFAULTS.  out->hits is malloc'd (NULL when there
 * are no hits); on error *out is left empty. */
static int search_query(xg_db *db, const Xapian::Query &q,
                        const struct xg_bm25_params *p, uint32_t first,
                        uint32_t maxitems, int unpruned,
                        struct xg_result *out);

/* xg_shim_search and xg_shim_search_unpruned (fn names it): search_query
 * catches its own; this keeps the rule that no exception leaves an
 * extern "C" function however it changes. */
static int search_xquery(const char *fn, xg_db *db, const xg_xquery *q,
                         const struct xg_bm25_params *p, uint32_t k,
                         int unpruned, struct xg_result *out)
{
    if (!out)
        return xg_set_error(XG_ERR_ARG, "%s: NULL out", fn);
    std::memset(out, 0, sizeof *out);
    if (!q)
        return xg_set_error(XG_ERR_ARG, "%s: NULL argument", fn);
    XG_SHIM_TRY
        return search_query(db, q->q, p, 0, k, unpruned, out);
    XG_SHIM_CATCH("query")
}

int xg_shim_search(xg_db *db, const xg_xquery *q,
                   const struct xg_bm25_params *p, uint32_t k,
                   struct xg_result *out)
{
    return search_xquery("xg_shim_search", db, q, p, k, 0, out);
}

int xg_shim_search_unpruned(xg_db *db, const xg_xquery *q,
                            const struct xg_bm25_params *p, uint32_t k,
                            struct xg_result *out)
{
    return search_xquery("xg_shim_search_unpruned", db, q, p, k, 1, out);
}

} // extern "C"

/* See xg_shim.hh. */
int xg_shim_search_query(xg_db *db, const Xapian::Query &q,
                         const struct xg_bm25_params *p, uint32_t first,
                         uint32_t maxitems, struct xg_result *out)
{
    return search_query(db, q, p, first, maxitems, 0, out);
}

static int search_query(xg_db *db, const Xapian::Query &q,
                        const struct xg_bm25_params *p, uint32_t first,
                        uint32_t maxitems, int unpruned,
                        struct xg_result *out)
{
    out->matches_estimated = 0;
    out->n_hits = 0;
    out->hits = NULL;
    if (!db)
        return xg_set_error(XG_ERR_ARG, "xg_shim_search: NULL database");
    static const struct xg_bm25_params defaults = XG_BM25_DEFAULTS;
    if (!p)
        p = &defaults;
    const char *where = db->name.c_str();
    XG_SHIM_TRY
        Xapian::Enquire enquire(db->combined);
        enquire.set_query(q);
        enquire.set_weighting_scheme(
            Xapian::BM25Weight(p->k1, p->k2, p->k3, p->b, p->min_normlen));
        Xapian::MSet mset = enquire.get_mset(
            first, maxitems, unpruned ? db->combined.get_doccount() : 0);
        uint32_t n = (uint32_t)mset.size();
        /* Owned here until filled, so nothing leaks if iteration throws. */
        std::unique_ptr<struct xg_hit, void (*)(void *)> owned(NULL, free);
        struct xg_hit *hits = NULL;
        if (n) {
            hits = (struct xg_hit *)malloc(n * sizeof *hits);
            if (!hits)
                return xg_set_error(XG_ERR_NOMEM, "%s: out of memory", where);
            owned.reset(hits);
            uint32_t i = 0;
            for (Xapian::MSetIterator it = mset.begin();
                 it != mset.end() && i < n; ++it, ++i) {
                hits[i].docid = *it;
                hits[i].matched_leaves = 0;
                hits[i].weight = it.get_weight();
            }
        }
        out->hits = owned.release();
        out->n_hits = n;
        out->matches_estimated = mset.get_matches_estimated();
        return XG_OK;
    XG_SHIM_CATCH(where)
}
