/** @file term_weights.cc
 *  @brief Stock Xapian's one-term query weights, the reference of
 *         weight_test.py: for every term of a database, every posting's
 *         weight as Enquire gives it for the query of that term alone.
 *
 *  usage: term_weights DB [K1,K2,K3,B,MINLEN]
 *  Prints "term TAB docid TAB weight" (weight as %.17g), terms in the
 *  database's order.  A C++ program, not python3-xapian, so the GPU
 *  machine (no Xapian bindings for its Python) can run the same check.
 */
#include <xapian.h>

#include <cstdio>
#include <cstdlib>
#include <string>

int
main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        std::fprintf(stderr, "usage: term_weights DB [K1,K2,K3,B,MINLEN]\n");
        return 2;
    }
    double p[5] = {1, 0, 1, 0.5, 0.5};
    if (argc == 3) {
        const char *s = argv[2];
        for (int i = 0; i < 5; i++) {
            char *end;
            p[i] = std::strtod(s, &end);
            if (end == s || (i < 4 ? *end != ',' : *end != '\0')) {
                std::fprintf(stderr, "term_weights: bad BM25 parameters '%s'\n",
                             argv[2]);
                return 2;
            }
            s = end + 1;
        }
    }
    try {
        Xapian::Database db(argv[1]);
        Xapian::Enquire enq(db);
        enq.set_weighting_scheme(Xapian::BM25Weight(p[0], p[1], p[2], p[3], p[4]));
        for (Xapian::TermIterator t = db.allterms_begin(); t != db.allterms_end(); ++t) {
            const std::string term = *t;
            enq.set_query(Xapian::Query(term));
            Xapian::MSet m = enq.get_mset(0, t.get_termfreq() + 1);
            for (Xapian::MSetIterator i = m.begin(); i != m.end(); ++i)
                std::printf("%s\t%u\t%.17g\n", term.c_str(), *i, i.get_weight());
        }
    } catch (const Xapian::Error &e) {
        std::fprintf(stderr, "term_weights: %s: %s\n", argv[1],
                     e.get_description().c_str());
        return 1;
    }
    return std::fflush(stdout) == 0 ? 0 : 1;
}
