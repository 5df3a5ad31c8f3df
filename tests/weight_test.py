#!/usr/bin/env python3
"""xapian-gpu weight --db: every posting's weight must be, bit for bit, the
weight stock Xapian gives that document for the one-term query (compared
on a sample of terms, every posting of each), on 1 and 2 shards and with
non-default BM25 parameters; the binary form must hold exactly the TSV's
records; bad output paths leave nothing behind.

usage: weight_test.py --bin XAPIAN_GPU --ir-data DIR --work DIR"""
import argparse
import json
import os
import re
import shutil
import struct
import sys

from testlib import run, run_any


def check(a, db, bm25, label):
    out = os.path.join(a.work, "weights.tsv")
    extra = ["--bm25", bm25] if bm25 else []
    run([a.bin, "weight", "--quiet", "--db", db, "-o", out, *extra])
    by_term = {}
    with open(out, encoding="utf-8") as f:
        for line in f:
            term, docid, w = line.rstrip("\n").split("\t")
            by_term.setdefault(term, {})[int(docid)] = w
    # Plain lowercase words (QueryParser turns them into the same term):
    # every 97th in byte order, and the 8 most frequent.
    plain = sorted(t for t in by_term if re.fullmatch(r"[a-z]{3,}", t))
    frequent = sorted(plain, key=lambda t: -len(by_term[t]))[:8]
    sample = sorted(set(plain[::97] + frequent))
    postings = 0
    for term in sample:
        want = by_term[term]
        out = run([a.bin, "search", "--engine", "xapian", "--stem", "none",
                   "--json", "-k", str(len(want)), "--db", db, *extra, term])
        got = {r["docid"]: "%.17g" % r["weight"]
               for r in json.loads(out)["results"]}
        if got != want:
            bad = [d for d in want if got.get(d) != want[d]][:3]
            sys.exit("FAIL %s: term %r: %d postings, %d from Xapian; e.g. %s" %
                     (label, term, len(want), len(got),
                      [(d, want[d], got.get(d)) for d in bad]))
        postings += len(want)
    # The binary form holds exactly the same records (docs/weight.md).
    binf = os.path.join(a.work, "weights.bin")
    run([a.bin, "weight", "--quiet", "--format", "bin", "--db", db, "-o",
         binf, *extra])
    with open(binf, "rb") as f:
        data = f.read()
    magic, version, flags, n_terms, n_rec, dict_off = struct.unpack_from(
        "<8sIIQQQ", data, 0)
    if (magic != b"XGWEIGHT" or version != 1 or n_terms != len(by_term) or
            dict_off != 40 + 16 * n_rec):
        sys.exit("FAIL %s: binary header %r" % (label, (magic, version,
                                                        n_terms, n_rec)))
    terms, at = [], dict_off
    for _ in range(n_terms):
        (n,) = struct.unpack_from("<I", data, at)
        terms.append(data[at + 4:at + 4 + n].decode("utf-8"))
        at += 4 + n
    if at != len(data) or terms != sorted(by_term, key=lambda t: t.encode()):
        sys.exit("FAIL %s: binary dictionary" % label)
    from_bin = {}
    for i in range(n_rec):
        tid, docid, w = struct.unpack_from("<IId", data, 40 + 16 * i)
        from_bin.setdefault(terms[tid], {})[docid] = "%.17g" % w
    if from_bin != by_term:
        sys.exit("FAIL %s: binary records differ from the TSV" % label)
    print("ok %-28s %d terms, %d postings written; %d sampled terms, %d "
          "postings equal to Xapian's one-term weights" %
          (label, len(by_term), sum(len(v) for v in by_term.values()),
           len(sample), postings))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--ir-data", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    docs = os.path.join(a.ir_data, "cranfield", "docs.tsv")
    if not os.path.isfile(docs):
        print("SKIP: %s not found" % docs)
        return 77
    os.makedirs(a.work, exist_ok=True)
    for shards in ("1", "2"):
        db = os.path.join(a.work, "db-" + shards)
        shutil.rmtree(db, ignore_errors=True)
        run([a.bin, "index", "--quiet", "--shards", shards, docs, db])
        check(a, db, None, "cranfield, %s shard(s)" % shards)
    check(a, os.path.join(a.work, "db-1"), "1.2,0,1,0.75,0.5",
          "cranfield, BM25 1.2/0.75")
    check(a, os.path.join(a.work, "db-1"), "1,1,1,0.5,0.5",
          "cranfield, BM25 k2 = 1")
    # Bad output: one line naming the file, nonzero, nothing left behind.
    bad_dir = os.path.join(a.work, "no-such-dir")
    out = os.path.join(bad_dir, "w.tsv")
    p = run_any([a.bin, "weight", "--quiet", "--db",
                 os.path.join(a.work, "db-1"), "-o", out])
    lines = p.stderr.strip().splitlines()
    if p.returncode == 0 or len(lines) != 1 or "w.tsv" not in lines[0] or \
            os.path.exists(bad_dir):
        sys.exit("FAIL unwritable output: rc %d, stderr %r" %
                 (p.returncode, p.stderr))
    p = run_any([a.bin, "weight", "--quiet", "--db",
                 os.path.join(a.work, "nodb"), "-o",
                 os.path.join(a.work, "x.tsv")])
    if p.returncode == 0 or os.path.exists(os.path.join(a.work, "x.tsv")):
        sys.exit("FAIL missing database: rc %d" % p.returncode)
    print("ok bad output path and missing database refused, nothing "
          "written: %s" % lines[0])
    print("weight: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
