#!/usr/bin/env python3
"""An unchanged python3-xapian search, as a site's application runs it,
through a stub database file: the README's main job points the stub at
`xapian-gpu serve`.  Prints each query's top documents and whether the
MSet (docids, weights, percentages) equals the one stock Xapian gives on
the database itself.

usage: demo_client.py STUB DB QUERIES.tsv [N]"""
import sys

import xapian


def top(db, text, k=10):
    qp = xapian.QueryParser()
    qp.set_stemmer(xapian.Stem("english"))
    qp.set_stemming_strategy(xapian.QueryParser.STEM_SOME)
    enquire = xapian.Enquire(db)
    enquire.set_query(qp.parse_query(text))
    return [(m.docid, m.weight, m.percent) for m in enquire.get_mset(0, k)]


def main():
    stub, dbpath, queries = sys.argv[1:4]
    n = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    remote, local = xapian.Database(stub), xapian.Database(dbpath)
    same = 0
    with open(queries) as f:
        texts = [l.rstrip("\n").split("\t", 1)[1] for l in f if "\t" in l][:n]
    for text in texts:
        got, want = top(remote, text), top(local, text)
        same += got == want
        print("  %-50.50s top: %s" % (text, ", ".join(
            "%d (%d%%)" % (d, p) for d, _, p in got[:3])))
    print("  %d of %d MSets through the stub identical to stock Xapian's on "
          "the database itself" % (same, len(texts)))
    return 0 if same == len(texts) else 1


if __name__ == "__main__":
    sys.exit(main())
