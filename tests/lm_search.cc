/** @file lm_search.cc
 *  @brief Answer a query file with stock Xapian Enquire and LMWeight (the
 *         unigram language model), for docs/qlm.md's quality table.
 *
 *  usage: lm_search DB QUERIES K [two-stage|jm:LAMBDA]
 *  QUERIES holds 'qid<TAB>text' lines.  Queries are parsed as `xapian-gpu
 *  search` parses them by default (shim/shim_query.cc: QueryParser with
 *  the database, Stem("english"), STEM_SOME, OP_OR, FLAG_DEFAULT).
 *  Output: one line per query as `search --json` prints it,
 *  {"qid":..,"engine":"lm","results":[{"docid":..,"weight":..}]}.
 *  LMWeight: two-stage (its default: 0.7, 2000) or Jelinek-Mercer with
 *  param_smoothing1 = LAMBDA (Xapian's weight of the collection model).
 */
#include <xapian.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 5) {
        std::cerr << "usage: lm_search DB QUERIES K [two-stage|jm:LAMBDA]\n";
        return 2;
    }
    try {
        Xapian::Database db(argv[1]);
        std::ifstream in(argv[2]);
        if (!in) {
            std::cerr << "lm_search: " << argv[2] << ": cannot open\n";
            return 1;
        }
        unsigned k = (unsigned)std::strtoul(argv[3], nullptr, 10);
        std::string sm = argc == 5 ? argv[4] : "two-stage";
        bool jm = sm.compare(0, 3, "jm:") == 0;
        if (!jm && sm != "two-stage") {
            std::cerr << "lm_search: smoothing must be two-stage or jm:L\n";
            return 2;
        }
        Xapian::LMWeight w = jm
            ? Xapian::LMWeight(0.0, Xapian::Weight::JELINEK_MERCER_SMOOTHING,
                               std::strtod(sm.c_str() + 3, nullptr))
            : Xapian::LMWeight();
        Xapian::QueryParser qp;
        qp.set_database(db);
        qp.set_stemmer(Xapian::Stem("english"));
        qp.set_stemming_strategy(Xapian::QueryParser::STEM_SOME);
        qp.set_default_op(Xapian::Query::OP_OR);
        Xapian::Enquire enq(db);
        enq.set_weighting_scheme(w);
        std::string line;
        while (std::getline(in, line)) {
            size_t tab = line.find('\t');
            if (tab == std::string::npos) continue;
            enq.set_query(qp.parse_query(line.substr(tab + 1)));
            Xapian::MSet m = enq.get_mset(0, k);
            std::printf("{\"qid\":\"%s\",\"engine\":\"lm\",\"results\":[",
                        line.substr(0, tab).c_str());
            const char *sep = "";
            for (Xapian::MSetIterator i = m.begin(); i != m.end(); ++i) {
                std::printf("%s{\"docid\":%u,\"weight\":%.17g}", sep, *i,
                            i.get_weight());
                sep = ",";
            }
            std::printf("]}\n");
        }
    } catch (const Xapian::Error &e) {
        std::cerr << "lm_search: " << e.get_description() << "\n";
        return 1;
    }
    return 0;
}
