/** @file qlm_db_make.cc
 *  @brief Test helper for qlm --db: build a glass database term by term
 *         from a spec, so tests can place positions exactly (gaps, two
 *         terms at one position, prefixed terms, terms without positions,
 *         bytes TermGenerator never makes).
 *
 *  usage: qlm_db_make SPEC DB
 *  SPEC: one document per line, `docid<TAB>item item ...` (items separated
 *  by spaces; none: a document without terms); `term@pos` adds the term at
 *  that position (add_posting), a bare `term` adds it without a position
 *  (add_term); `\xNN` in a term is the byte 0xNN.  Lines starting with '#'
 *  and empty lines are skipped.  DB is created or overwritten.
 */
#include <xapian.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

/* The term with its \xNN escapes decoded. */
static std::string unescape(const std::string &s)
{
    std::string t;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] == 'x') {
            t += (char)strtoul(s.substr(i + 2, 2).c_str(), NULL, 16);
            i += 3;
        } else {
            t += s[i];
        }
    }
    return t;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        std::cerr << "usage: qlm_db_make SPEC DB\n";
        return 2;
    }
    try {
        std::ifstream in(argv[1]);
        if (!in) {
            std::cerr << argv[1] << ": cannot open\n";
            return 1;
        }
        Xapian::WritableDatabase db(argv[2], Xapian::DB_CREATE_OR_OVERWRITE |
                                                 Xapian::DB_BACKEND_GLASS);
        std::string line;
        while (std::getline(in, line)) {
            if (line.empty() || line[0] == '#')
                continue;
            size_t tab = line.find('\t');
            if (tab == std::string::npos) {
                std::cerr << argv[1] << ": a line without docid<TAB>\n";
                return 1;
            }
            Xapian::Document doc;
            std::istringstream items(line.substr(tab + 1));
            std::string item;
            while (items >> item) {
                size_t at = item.rfind('@');
                if (at == std::string::npos || at == 0)
                    doc.add_term(unescape(item));
                else
                    doc.add_posting(unescape(item.substr(0, at)),
                                    (Xapian::termpos)std::stoul(item.substr(at + 1)));
            }
            db.replace_document((Xapian::docid)std::stoul(line.substr(0, tab)), doc);
        }
        db.commit();
    } catch (const Xapian::Error &e) {
        std::cerr << e.get_description() << "\n";
        return 1;
    } catch (const std::exception &e) {
        std::cerr << e.what() << "\n";
        return 1;
    }
    return 0;
}
