// A Xapian application with xapian-gpu added: the only new lines are the
// context and the xg_accelerate() call around the query.
// Build: c++ accelerate.cc $(pkg-config --cflags --libs xapian-gpu xapian-core)
// usage: accelerate DB QUERY
#include <xapian.h>

#include <cstdio>
#include <iostream>

#include <xapian-gpu.hh>

int main(int argc, char **argv)
{
    if (argc != 3) {
        std::cerr << "usage: accelerate DB QUERY\n";
        return 2;
    }
    const char *paths[] = {argv[1]};
    xg_context *ctx;                                   // new: once
    if (xg_context_open(paths, 1, nullptr, nullptr, &ctx) != XG_OK) {
        std::cerr << "accelerate: " << xg_last_error() << "\n";
        return 1;
    }
    try {
        Xapian::Database db(argv[1]);
        Xapian::QueryParser qp;
        qp.set_database(db);
        qp.set_stemmer(Xapian::Stem("english"));
        qp.set_stemming_strategy(Xapian::QueryParser::STEM_SOME);
        Xapian::Query query = qp.parse_query(argv[2]);

        Xapian::Enquire enquire(db);
        int route;
        enquire.set_query(xg_accelerate(ctx, query, 0, 10, &route));  // new
        Xapian::MSet mset = enquire.get_mset(0, 10);
        std::cout << "about " << mset.get_matches_estimated()
                  << " matches (answered by " << xg_route_name(route) << ")\n";
        for (Xapian::MSetIterator i = mset.begin(); i != mset.end(); ++i) {
            char w[32];
            std::snprintf(w, sizeof w, "%.17g", i.get_weight());
            std::cout << *i << "\t" << w << "\n";
        }
    } catch (const Xapian::Error &e) {
        std::cerr << "accelerate: " << e.get_description() << "\n";
        xg_context_close(ctx);
        return 1;
    }
    xg_context_close(ctx);
    return 0;
}
