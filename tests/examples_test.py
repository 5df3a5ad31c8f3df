#!/usr/bin/env python3
"""docs/examples build in the test suite; here they run on the bundled
cranfield sample, and each one's results must be stock Xapian's (docids and
weights from `xapian-gpu search --engine xapian`).

usage: examples_test.py --bin XAPIAN_GPU --sample DIR --work DIR EXAMPLE..."""
import argparse
import json
import os
import sys

from testlib import build, run

QUERIES = ["boundary layer flow", "heat transfer in hypersonic flow",
           "shock wave interaction", "zzzunknownword"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--sample", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("examples", nargs="+")
    a = ap.parse_args()
    db = os.path.join(a.work, "db")
    os.makedirs(a.work, exist_ok=True)
    build(a.bin, os.path.join(a.sample, "docs.tsv"), db)
    env = dict(os.environ, XG_GPU_TWINS="1")   # the plugin path, no GPU
    for q in QUERIES:
        stock = json.loads(run([a.bin, "search", "--db", db, "--engine",
                                "xapian", "--json", q]))
        want = [(r["docid"], float(r["weight"])) for r in stock["results"]]
        for ex in a.examples:
            out = run([ex, db, q], env).splitlines()
            got = [(int(d), float(w)) for d, w in
                   (line.split("\t") for line in out[1:])]
            if got != want:
                sys.exit("FAIL %s '%s':\n  stock %s\n  got   %s" %
                         (os.path.basename(ex), q, want, got))
            print("ok %-12s '%s': %d results, %s" %
                  (os.path.basename(ex), q, len(got), out[0]))
    print("examples: all identical to stock Xapian")
    return 0


if __name__ == "__main__":
    sys.exit(main())
