/** @file test_positions.cc
 *  @brief The index's term positions (POSITIONS, gpu/index/positions.h)
 *         against Xapian's own, and the reader's refusals.
 *
 *   1. cranfield (IR_DATA, else the bundled sample) as one database, as
 *      2 shards and as 3 shards with every 7th document deleted: for
 *      every term and every posting, the positions read through
 *      xg_fmt_block_positions + xg_pos_open/xg_pos_next equal Xapian's
 *      positionlist for that (term, docid) on the combined database, and
 *      the index holds every term Xapian has.
 *   2. A database made here: a term whose first block has no positions
 *      (an empty range), then positions up to 2^32 - 1; a document
 *      without positions; compared the same way.
 *   3. --no-positions (opts.positions = 0): no flag, an empty section,
 *      empty ranges; a database without positions exports without them.
 *   4. Corruption with the CRCs recomputed (tests/fuzz/fix_crcs.h): a
 *      varint cut off at the data's end, a zero gap, a count that
 *      overruns, offsets out of order or not spanning the data, the flag
 *      without the section and the section without the flag: each open
 *      fails with XG_ERR_FORMAT and a message naming the file.
 *
 *  usage: test_positions IR_DATA_OR_SAMPLE WORK_DIR
 */
#include <xapian.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "../gpu/runtime/error.h"
#include "../shim/tools/indexer.h"
#include "../shim/xg_export.h"
extern "C" {  /* C headers without their own guards */
#include "../gpu/index/format_read.h"
#include "../gpu/index/positions.h"
#include "fuzz/fix_crcs.h"
}

namespace {

int failures = 0, checks = 0;

void fail(const std::string &what)
{
    if (failures++ < 20) printf("FAIL %s\n", what.c_str());
}

/* Export db to idx; opts.positions as given.  0 or 1 (FAIL printed). */
int export_db(const std::string &db, const std::string &idx, int positions,
              xg_export_report *rep)
{
    const char *paths[] = {db.c_str()};
    xg_db *xdb;
    xg_export_opts eo;
    xg_export_opts_init(&eo);
    eo.positions = positions;
    if (xg_shim_db_open(paths, 1, &xdb) || xg_export(xdb, idx.c_str(), &eo,
                                                      rep)) {
        fail("export " + db + ": " + xg_last_error());
        return 1;
    }
    xg_shim_db_close(xdb);
    return 0;
}

/* Every posting's positions in the index equal Xapian's; returns the
 * number of positions compared. */
uint64_t compare_all(const std::string &db_path, const xg_index *ix,
                     const std::string &label)
{
    Xapian::Database db(db_path);
    uint64_t n_terms = 0, n_pos = 0;
    uint32_t docs[XG_FMT_BLOCK], wdfs[XG_FMT_BLOCK], n;
    for (Xapian::TermIterator t = db.allterms_begin();
         t != db.allterms_end(); ++t) {
        const std::string term = *t;
        ++n_terms;
        const int64_t id = xg_fmt_lookup(ix, term.data(), term.size());
        if (id < 0) {
            fail(label + ": term missing: " + term);
            continue;
        }
        Xapian::PostingIterator pl = db.postlist_begin(term);
        for (uint32_t b = 0; b < xg_fmt_n_blocks(ix, (uint64_t)id); ++b) {
            if (xg_fmt_block_decode(ix, (uint64_t)id, b, docs, wdfs, &n)) {
                fail(label + ": " + xg_last_error());
                return n_pos;
            }
            const uint8_t *begin, *end;
            xg_fmt_block_positions(ix, (uint64_t)id, b, &begin, &end);
            for (uint32_t j = 0; j < n; ++j, ++pl) {
                const Xapian::docid did = ix->docids[docs[j]];
                std::vector<uint32_t> want, got;
                for (Xapian::PositionIterator p = db.positionlist_begin(did,
                                                                       term);
                     p != db.positionlist_end(did, term); ++p)
                    want.push_back(*p);
                xg_pos_cursor c;
                uint32_t pos;
                if (xg_pos_open(&c, begin, end, j)) {
                    fail(label + ": xg_pos_open failed: " + term);
                    continue;
                }
                while (xg_pos_next(&c, &pos)) got.push_back(pos);
                if (pl == db.postlist_end(term) || *pl != did || got != want)
                    fail(label + ": term " + term + " docid " +
                         std::to_string(did) + ": " +
                         std::to_string(got.size()) + " positions, Xapian " +
                         std::to_string(want.size()));
                n_pos += want.size();
            }
        }
        if (pl != db.postlist_end(term))
            fail(label + ": fewer postings than Xapian: " + term);
    }
    if (n_terms != ix->hdr->n_terms)
        fail(label + ": term count differs from Xapian's");
    ++checks;
    printf("ok %-28s %" PRIu64 " terms, %" PRIu64 " postings, %" PRIu64
           " positions equal to Xapian's\n", label.c_str(), n_terms,
           ix->hdr->n_postings, n_pos);
    return n_pos;
}

/* Index cranfield with io, export, compare. */
void check_collection(const std::string &tsv, const std::string &db,
                      const xg_index_opts &io, const std::string &label)
{
    std::string cmd = "rm -rf '" + db + "'";
    if (system(cmd.c_str()) != 0 || xg_shim_index_tsv(tsv.c_str(),
                                                       db.c_str(), &io)) {
        fail(label + ": index: " + xg_last_error());
        return;
    }
    xg_export_report rep;
    const std::string idx = db + "/xapian-gpu.idx";
    if (export_db(db, idx, 1, &rep)) return;
    xg_index *ix;
    if (xg_fmt_open(idx.c_str(), &ix)) {
        fail(label + ": open: " + xg_last_error());
        return;
    }
    if (!xg_fmt_has_positions(ix) || !rep.positions ||
        !(ix->hdr->flags & XG_FMT_FLAG_POSITIONS) ||
        rep.xapian_position_bytes == 0)
        fail(label + ": no positions exported");
    else
        compare_all(db, ix, label);
    xg_fmt_close(ix);
}

std::string slurp(const std::string &path)
{
    std::ifstream f(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
}

void spit(const std::string &path, const std::string &data)
{
    std::ofstream(path, std::ios::binary).write(data.data(),
                                                (std::streamsize)data.size());
}

/* A copy of idx changed by `mutate`, its CRCs recomputed, must be refused
 * with XG_ERR_FORMAT, the file and `needle` in the message. */
void refused(const std::string &idx, const std::string &work,
             const std::string &name,
             const std::function<void(uint8_t *, const xg_fmt_section *)>
                 &mutate,
             const char *needle)
{
    std::string d = slurp(idx);
    uint8_t *p = (uint8_t *)&d[0];
    const xg_fmt_header *h = (const xg_fmt_header *)p;
    const xg_fmt_section *s =
        (const xg_fmt_section *)(p + XG_FMT_SECTIONS_OFFSET(h->n_shards));
    mutate(p, &s[XG_SEC_POSITIONS]);
    xg_test_fix_crcs(p, d.size());
    const std::string path = work + "/" + name + ".idx";
    spit(path, d);
    xg_index *ix = NULL;
    const int rc = xg_fmt_open(path.c_str(), &ix);
    const std::string msg = xg_last_error();
    if (rc != XG_ERR_FORMAT || msg.find(path) == std::string::npos ||
        msg.find(needle) == std::string::npos ||
        msg.find('\n') != std::string::npos) {
        fail(name + ": rc " + std::to_string(rc) + ": " + msg);
        xg_fmt_close(ix);
        return;
    }
    ++checks;
    printf("ok %-28s %s\n", name.c_str(), msg.c_str());
}

/* The block of `ix` whose data is first non-empty with a posting of at
 * least two positions: its offset in the data and that posting's gap
 * byte (a one-byte varint), or false. */
bool find_gap(const uint8_t *base, const xg_fmt_section *s, uint64_t n_blocks,
              uint64_t *gap_at)
{
    const uint64_t *off = (const uint64_t *)(base + s->offset);
    const uint8_t *data = (const uint8_t *)(off + n_blocks + 1);
    for (uint64_t g = 0; g < n_blocks; ++g) {
        const uint8_t *p = data + off[g], *end = data + off[g + 1];
        uint32_t c, v;
        /* The block's first posting. */
        if (p == end || xg_pos_varint(&p, end, &c) || c < 2) continue;
        if (xg_pos_varint(&p, end, &v) || *p == 0 || *p > 0x7f) continue;
        *gap_at = (uint64_t)(p - base);
        return true;
    }
    return false;
}

void check_corruption(const std::string &idx, const std::string &nopos_idx,
                      const std::string &work)
{
    const std::string d = slurp(idx);
    const xg_fmt_header *h = (const xg_fmt_header *)d.data();
    const uint64_t nb = h->n_blocks;
    refused(idx, work, "pos-cut-off", [](uint8_t *p, const xg_fmt_section *s) {
        p[s->offset + s->length - 1] |= 0x80;  /* the last varint runs on */
    }, "term ");
    refused(idx, work, "pos-zero-gap", [nb](uint8_t *p,
                                            const xg_fmt_section *s) {
        uint64_t at;
        if (find_gap(p, s, nb, &at)) p[at] = 0;
    }, "a zero position gap");
    refused(idx, work, "pos-count-overrun", [nb](uint8_t *p,
                                                 const xg_fmt_section *s) {
        const uint64_t *off = (const uint64_t *)(p + s->offset);
        uint8_t *data = (uint8_t *)(off + nb + 1);
        /* A first count of 127 where fewer than 127 bytes follow. */
        for (uint64_t g = 0; g < nb; ++g)
            if (off[g + 1] > off[g] && off[g + 1] - off[g] <= 127) {
                data[off[g]] = 0x7f;
                return;
            }
    }, "term ");
    refused(idx, work, "pos-offsets-order", [nb](uint8_t *p,
                                                 const xg_fmt_section *s) {
        uint64_t *off = (uint64_t *)(p + s->offset);
        /* Block g ends before it starts (the blocks before it intact). */
        for (uint64_t g = 0; g + 1 < nb; ++g)
            if (off[g] > 0) {
                off[g + 1] = off[g] - 1;
                return;
            }
    }, "position offsets out of order");
    refused(idx, work, "pos-offsets-span", [nb](uint8_t *p,
                                                const xg_fmt_section *s) {
        uint64_t *off = (uint64_t *)(p + s->offset);
        off[nb] -= 1;
    }, "do not span");
    refused(idx, work, "pos-flag-cleared", [](uint8_t *p,
                                              const xg_fmt_section *) {
        ((xg_fmt_header *)p)->flags &= ~XG_FMT_FLAG_POSITIONS;
    }, "POSITIONS present without its flag");
    refused(nopos_idx, work, "pos-flag-without-section",
            [](uint8_t *p, const xg_fmt_section *) {
        ((xg_fmt_header *)p)->flags |= XG_FMT_FLAG_POSITIONS;
    }, "too small");
}

/* A database whose term "a" has no positions in its first block, one
 * with positions up to 2^32 - 1, and a document without any. */
void check_made(const std::string &work)
{
    const std::string db = work + "/made";
    {
        Xapian::WritableDatabase w(db, Xapian::DB_CREATE_OR_OVERWRITE |
                                           Xapian::DB_BACKEND_GLASS);
        for (Xapian::docid d = 1; d <= 300; ++d) {
            Xapian::Document doc;
            if (d <= 200) {
                doc.add_term("a");
            } else {
                doc.add_posting("a", d);
                doc.add_posting("a", d + 7);
            }
            if (d % 3 == 0) {
                doc.add_posting("big", 0);
                doc.add_posting("big", 1);
                doc.add_posting("big", 4000000000u);
                doc.add_posting("big", 4294967295u);
            }
            if (d == 5) doc.add_term("bool", 0);
            w.replace_document(d, doc);
        }
        w.commit();
    }
    xg_export_report rep;
    const std::string idx = db + "/xapian-gpu.idx";
    if (export_db(db, idx, 1, &rep)) return;
    xg_index *ix;
    if (xg_fmt_open(idx.c_str(), &ix)) {
        fail(std::string("made: open: ") + xg_last_error());
        return;
    }
    const int64_t a = xg_fmt_lookup(ix, "a", 1);
    const uint8_t *b0, *e0, *b1, *e1;
    if (!xg_fmt_has_positions(ix) || a < 0) {
        fail("made: no positions or no term a");
    } else {
        xg_fmt_block_positions(ix, (uint64_t)a, 0, &b0, &e0);
        xg_fmt_block_positions(ix, (uint64_t)a, 1, &b1, &e1);
        if (b0 != e0 || b1 == e1)
            fail("made: term a: block 0 should be empty, block 1 not");
        /* 4 distinct positions per "big" posting, 2 per later "a". */
        if (compare_all(db, ix, "made (2^32 - 1, empty)") != 100 * 4 + 100 * 2)
            fail("made: wrong number of positions");
    }
    xg_fmt_close(ix);
}

/* No positions: asked for none, or the database has none. */
void check_without(const std::string &cran_db, const std::string &work)
{
    const std::string db = work + "/nopos";
    {
        Xapian::WritableDatabase w(db, Xapian::DB_CREATE_OR_OVERWRITE |
                                           Xapian::DB_BACKEND_GLASS);
        for (Xapian::docid d = 1; d <= 50; ++d) {
            Xapian::Document doc;
            doc.add_term("t" + std::to_string(d % 7), d % 3 + 1);
            doc.add_term("all");
            w.add_document(doc);
        }
        w.commit();
    }
    struct Case { std::string db, idx, label; int ask; };
    const Case cases[] = {
        {cran_db, work + "/cran-nopos.idx", "--no-positions", 0},
        {db, db + "/xapian-gpu.idx", "database without positions", 1}};
    for (const Case &c : cases) {
        xg_export_report rep;
        if (export_db(c.db, c.idx, c.ask, &rep)) continue;
        xg_index *ix;
        if (xg_fmt_open(c.idx.c_str(), &ix)) {
            fail(c.label + ": open: " + xg_last_error());
            continue;
        }
        const uint8_t *b, *e;
        xg_fmt_block_positions(ix, 0, 0, &b, &e);
        if (xg_fmt_has_positions(ix) || rep.positions ||
            (ix->hdr->flags & XG_FMT_FLAG_POSITIONS) ||
            ix->sec[XG_SEC_POSITIONS].length != 0 ||
            rep.section_bytes[XG_SEC_POSITIONS] != 0 || b != e)
            fail(c.label + ": the index has positions");
        else
            printf("ok %-28s no flag, POSITIONS empty (%" PRIu64 " terms)\n",
                   c.label.c_str(), ix->hdr->n_terms);
        ++checks;
        xg_fmt_close(ix);
    }
}

} // namespace

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_positions IR_DATA_OR_SAMPLE WORK_DIR\n");
        return 2;
    }
    const std::string tsv = std::string(argv[1]) + "/cranfield/docs.tsv";
    const std::string work = argv[2];
    std::string cmd = "rm -rf '" + work + "' && mkdir -p '" + work + "'";
    if (system(cmd.c_str()) != 0) return 1;
    try {
        const xg_index_opts one = {1, 0, 1, 1, 0};
        const xg_index_opts two = {2, 0, 1, 1, 0};
        const xg_index_opts three = {3, 7, 1, 1, 0};
        check_collection(tsv, work + "/cran", one, "cranfield");
        check_collection(tsv, work + "/cran2", two, "cranfield, 2 shards");
        check_collection(tsv, work + "/cran3", three,
                         "cranfield, 3 shards, deleted");
        check_made(work);
        check_without(work + "/cran", work);
        check_corruption(work + "/cran/xapian-gpu.idx",
                         work + "/cran-nopos.idx", work);
    } catch (const Xapian::Error &e) {
        fail("Xapian: " + e.get_description());
    }
    printf("%d passed, %d failed\n", checks, failures);
    return failures ? 1 : 0;
}
