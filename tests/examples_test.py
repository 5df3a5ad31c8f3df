#!/usr/bin/env python3
"""docs/examples build in the test suite; here they run on the bundled
cranfield sample, and each one's results must be stock Xapian's (docids and
weights from `xapian-gpu search --engine xapian`).

usage: examples_test.py --bin XAPIAN_GPU --sample DIR --work DIR EXAMPLE..."""
import argparse
import json
import os
import shutil
import subprocess
import sys

QUERIES = ["boundary layer flow", "heat transfer in hypersonic flow",
           "shock wave interaction", "zzzunknownword"]


def run(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit("FAIL: %s exited %d: %s" % (" ".join(cmd), p.returncode,
                                             p.stderr))
    return p.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--sample", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("examples", nargs="+")
    a = ap.parse_args()
    db = os.path.join(a.work, "db")
    shutil.rmtree(db, ignore_errors=True)
    os.makedirs(a.work, exist_ok=True)
    run([a.bin, "index", "--quiet", os.path.join(a.sample, "docs.tsv"), db])
    run([a.bin, "export", "--quiet", db])
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
