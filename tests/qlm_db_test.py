#!/usr/bin/env python3
"""xapian-gpu qlm --db: n-grams rebuilt from a Xapian database's positions.

Proves (docs/qlm.md, "From a Xapian database"):
- a database indexed from docs.tsv with Xapian's TermGenerator
  (`xapian-gpu index`: unstemmed terms with positions and Z stems without)
  gives byte for byte the table `qlm --tsv` gives on the same docs.tsv, for
  sigma 1, 2 and 3 (with the four counts), on every ../shared/ir-data
  collection and on random collections with non-ASCII words; the
  collections are plain ASCII, so none of the tokenizer's documented
  differences from TermGenerator (invalid UTF-8, CJK) arises, and the
  random words avoid them too;
- the same for 3 shards (a stub read by 3 threads into chunks of 1 MiB,
  and the shards as three --db read by 1 thread) with deleted documents
  and sparse docids: the database's docids;
- the rules, on databases built term by term (tests/qlm_db_make): gaps
  between positions are closed, of two terms at one position the first in
  byte order is kept, prefixed terms ('A'..'Z' first) and terms without
  positions are skipped, documents without positional terms have no rows;
  rows equal qlm_test.py's independent reference;
- a database built by Debian's omindex (when installed): the body text of
  each page, under omindex's docids, equals `qlm --tsv` on the bodies;
- errors: no positional information (one database, one shard of several),
  a missing path, a file that is not a database, a term with positions
  that cannot be a word (control character, invalid UTF-8), no words,
  --db with --tsv: one line naming the database, exit 1 (2 for usage),
  no output file.

usage: qlm_db_test.py --bin XAPIAN_GPU --make QLM_DB_MAKE --ir-data DIR
                      --work DIR [--only a,b]"""
import argparse
import os
import random
import shutil
import sys

from testlib import collections, resolve_ir_data, run, run_any
from qlm_test import reference

SIGMAS = (1, 2, 3)


def qlm(a, args, out):
    run([a.bin, "qlm", "--quiet", "--counts", *args, "-o", out])
    with open(out, "rb") as f:
        return f.read()


def first_diff(got, want):
    g, e = got.decode().splitlines(), want.decode().splitlines()
    bad = [(x, y) for x, y in zip(g, e) if x != y][:2]
    return "%d rows, expected %d; first differences %r" % (len(g), len(e), bad)


def same_as_tsv(a, label, tsv, dbs, sigmas=SIGMAS, extra=()):
    """qlm --db DBS (options extra) equals qlm --tsv TSV for each sigma."""
    w = os.path.join(a.work, "out")
    rows = 0
    for s in sigmas:
        want = qlm(a, ["--tsv", tsv, "--sigma", str(s)], os.path.join(w, "t.tsv"))
        db_args = [x for d in dbs for x in ("--db", d)]
        got = qlm(a, db_args + ["--sigma", str(s), *extra], os.path.join(w, "d.tsv"))
        if got != want:
            sys.exit("FAIL %s sigma %d: --db differs from --tsv: %s" %
                     (label, s, first_diff(got, want)))
        rows += want.count(b"\n")
    return rows


def read_tsv(path):
    with open(path, encoding="utf-8") as f:
        return [l.rstrip("\n").split("\t", 1) for l in f if "\t" in l]


def check_ir_data(a):
    for name in collections(a.ir_data, a.only, strict=True):
        tsv = os.path.join(a.ir_data, name, "docs.tsv")
        db = os.path.join(a.work, name + ".db")
        shutil.rmtree(db, ignore_errors=True)
        run([a.bin, "index", "--quiet", tsv, db])
        rows = same_as_tsv(a, name, tsv, [db])
        print("ok %-10s --db equals --tsv, sigma 1,2,3 (%d rows)" % (name, rows))


def check_shards(a, name):
    """3 shards, every 4th document deleted, docids * 7."""
    src = os.path.join(a.ir_data, name, "docs.tsv")
    if not os.path.isfile(src):
        print("skip shards: no %s" % src)
        return
    db = os.path.join(a.work, "shards.db")
    shutil.rmtree(db, ignore_errors=True)
    run([a.bin, "index", "--quiet", "--shards", "3", "--delete-every", "4",
         "--docid-scale", "7", src, db])
    kept = [(int(d) * 7, t) for i, (d, t) in enumerate(read_tsv(src), 1)
            if i % 4]
    tsv = os.path.join(a.work, "shards.tsv")
    with open(tsv, "w", encoding="utf-8") as f:
        f.writelines("%d\t%s\n" % x for x in kept)
    same_as_tsv(a, "3 shards (stub)", tsv, [db], (2,),
                ("--threads", "3", "--device-memory", "1M"))
    same_as_tsv(a, "3 shards (--db each)", tsv,
                [os.path.join(db, "shard%d" % s) for s in range(3)], (1, 3),
                ("--threads", "1"))
    print("ok 3 shards of %s, deletions, docids * 7: the stub (3 threads, chunks) "
          "and three --db (1 thread)" % name)


def check_random(a, rng):
    """Random collections with non-ASCII words, punctuation, empty
    documents and sparse docids, through TermGenerator."""
    letters = "abcdefghijklmnopqrstuvwxyz0123456789" + "\u00e9\u00fc\u00df\u03b1\u0436"
    for k in range(4):
        vocab = ["".join(rng.choice(letters) for _ in range(rng.randint(1, 6)))
                 for _ in range(rng.choice((2, 5, 40, 300)))]
        lines = []
        for docid in rng.sample(range(1, 10 ** 6), rng.randint(1, 120)):
            n = rng.choice((0, 1, 2, 3, 8, 60))
            words = [rng.choice(vocab) for _ in range(n)]
            text = "".join(w + rng.choice((" ", " ", ", ", ". ", " - "))
                           for w in words)
            if rng.random() < 0.3:
                text = text.upper()
            lines.append("%d\t%s" % (docid, text if n else "; ."))
        if all(l.endswith("\t; .") for l in lines):
            lines.append("1000000\tone word")
        tsv = os.path.join(a.work, "random%d.tsv" % k)
        with open(tsv, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        db = os.path.join(a.work, "random%d.db" % k)
        shutil.rmtree(db, ignore_errors=True)
        run([a.bin, "index", "--quiet", tsv, db])
        same_as_tsv(a, "random%d" % k, tsv, [db])
    print("ok 4 random collections (non-ASCII, upper case, empty documents, "
          "sparse docids): --db equals --tsv")


def make_db(a, name, spec):
    path = os.path.join(a.work, name + ".spec")
    with open(path, "w", encoding="utf-8") as f:
        f.write(spec)
    db = os.path.join(a.work, name + ".db")
    shutil.rmtree(db, ignore_errors=True)
    run([a.make, path, db])
    return db


# The rules, one document each; the expected word sequence per docid.
RULES_SPEC = """\
# gaps are closed: omindex leaves 100 between fields
3\ttitle@1 Stitle@1 ZStitl alpha@102 beta@103 gamma@205 alpha@206
# two terms at one position: the first in byte order is the word there
7\tzeta@1 eta@1 theta@2 eta@3 beta@3 alpha@3 eta@4
# prefixed terms skipped (positions or not), unprefixed terms without
# positions skipped; terms in byte order between 'Z' and 'a' are words
9\tXFOO@1 Qid ZSstem Aauthor@2 plain _under@3 [br@4 0digit@5 \\xc3\\xa9t\\xc3\\xa9@6 \
~tilde@7
# position 0 and the largest position
12\tfirst@0 last@4294967295 middle@70000
# no positional unprefixed terms: empty documents, no rows
20\tStitle@1 Zstem bare
21\t
# a document of one word, at a sparse docid
4000000000\talpha@9
"""
RULES_DOCS = {
    3: "title alpha beta gamma alpha",
    7: "eta theta alpha eta",
    9: "_under [br 0digit \u00e9t\u00e9 ~tilde",
    12: "first middle last",
    4000000000: "alpha",
}


def check_rules(a):
    db = make_db(a, "rules", RULES_SPEC)
    ids = sorted(RULES_DOCS)
    docs = [RULES_DOCS[d].split(" ") for d in ids]
    w = os.path.join(a.work, "out")
    for s in SIGMAS:
        for lam in (0.5, 0.3):
            got = qlm(a, ["--db", db, "--sigma", str(s), "--lambda", repr(lam)],
                      os.path.join(w, "r.tsv"))
            want = "\n".join(reference(docs, ids, s, lam)) + "\n"
            if got != want.encode():
                sys.exit("FAIL rules sigma %d lambda %r: %s" %
                         (s, lam, first_diff(got, want.encode())))
    p = run_any([a.bin, "qlm", "--db", db, "-o", os.path.join(w, "r.tsv")])
    stats = "7 documents (2 without positional terms), 18 words from 21 positions"
    if p.returncode != 0 or stats not in p.stderr or "(3 dropped" not in p.stderr:
        sys.exit("FAIL rules: summary %r, expected %r and 3 dropped" % (p.stderr, stats))
    print("ok rules: gaps closed, first term in byte order at a shared position, "
          "prefixed and position-less terms skipped, empty documents, sigma 1,2,3")


def check_omindex(a):
    """omindex's body terms, under omindex's docids, equal --tsv on the
    bodies (the title is S-prefixed, so not a word)."""
    coll = os.path.join(a.ir_data, "cranfield", "docs.tsv")
    if not shutil.which("omindex") or not os.path.isfile(coll):
        print("skip omindex: omindex or cranfield absent")
        return
    from omindex_test import write_site
    site = os.path.join(a.work, "site")
    db = os.path.join(a.work, "omindex.db")
    shutil.rmtree(site, ignore_errors=True)
    shutil.rmtree(db, ignore_errors=True)
    write_site(coll, site)
    run(["omindex", "--db", db, "--url", "/", "--empty-docs=index", site])
    # omindex's docid of each page, from its URL term U/dNNNNN.html.
    terms = os.path.join(a.work, "omindex-terms.tsv")
    run([a.bin, "weight", "--quiet", "--db", db, "-o", terms])
    page = {}
    with open(terms, encoding="utf-8") as f:
        for line in f:
            if line.startswith("U/d"):
                term, docid, _ = line.split("\t")
                page[int(term[3:8])] = int(docid)
    bodies = []
    for d, text in read_tsv(coll):
        bodies.append((page[int(d)], text.partition(" . ")[2]))
    tsv = os.path.join(a.work, "omindex-bodies.tsv")
    with open(tsv, "w", encoding="utf-8") as f:
        f.writelines("%d\t%s\n" % x for x in sorted(bodies))
    rows = same_as_tsv(a, "omindex", tsv, [db])
    print("ok omindex database of cranfield (%d pages): body n-grams equal --tsv "
          "on the bodies, sigma 1,2,3 (%d rows)" % (len(bodies), rows))


def expect_fail(a, label, args, needle, rc=1):
    out = os.path.join(a.work, "bad", "out.tsv")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    p = run_any([a.bin, "qlm", *args, "-o", out])
    lines = p.stderr.strip().splitlines()
    if p.returncode != rc or len(lines) != 1 or needle not in lines[0]:
        sys.exit("FAIL %s: exit %d, stderr %r; expected exit %d and one line with %r"
                 % (label, p.returncode, p.stderr, rc, needle))
    left = os.listdir(os.path.dirname(out))
    if left:
        sys.exit("FAIL %s: left %r behind" % (label, left))


def check_errors(a):
    nopos = make_db(a, "nopos", "1\talpha beta Zalph\n2\tgamma\n")
    pos = make_db(a, "pos", "1\talpha@1 beta@2\n")
    expect_fail(a, "no positions", ["--db", nopos],
                nopos + ": no positional information")
    expect_fail(a, "a shard without positions", ["--db", pos, "--db", nopos],
                nopos + ": no positional information")
    missing = os.path.join(a.work, "no-such-db")
    expect_fail(a, "missing database", ["--db", missing],
                missing + ": no such file or directory")
    junk = os.path.join(a.work, "junk")
    with open(junk, "w") as f:
        f.write("this is not a database\n")
    expect_fail(a, "not a database", ["--db", junk], junk + ":1: not a Xapian database")
    ctrl = make_db(a, "ctrl", "1\tok@1 a\\x09b@2\n")
    expect_fail(a, "control character", ["--db", ctrl],
                ctrl + ": term 'a\\x09b' (docid 1) has positions but cannot be "
                "a word: control character 0x09")
    utf = make_db(a, "utf", "5\tok@1 bad\\xff@2\n")
    expect_fail(a, "invalid UTF-8", ["--db", utf], utf + ": term 'bad\\xff' (docid 5) "
                "has positions but cannot be a word: invalid UTF-8")
    # A term that cannot be a word but has no positions is not read.
    fine = make_db(a, "ctrl-nopos", "1\tok@1 fine@2 a\\x09b\n")
    got = qlm(a, ["--db", fine, "--sigma", "2"], os.path.join(a.work, "out", "f.tsv"))
    if got != ("\n".join(reference([["ok", "fine"]], [1], 2, 0.5)) + "\n").encode():
        sys.exit("FAIL a position-less control-character term: %r" % got)
    words = make_db(a, "nowords", "1\tStitle@1 Zstem\n2\t\n")
    expect_fail(a, "no words", ["--db", words], words + ": no words")
    expect_fail(a, "--db with --tsv", ["--db", pos, "--tsv", junk], "one of", rc=2)
    print("ok errors: no positions (database, shard), missing, not a database, "
          "control character, invalid UTF-8, no words, --db with --tsv")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--make", required=True)
    ap.add_argument("--ir-data", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--only", default=None)
    ap.add_argument("--seed", type=int, default=None)
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(os.path.join(a.work, "out"))
    seed = a.seed if a.seed is not None else random.randrange(1 << 30)
    print("seed %d (--seed replays)" % seed)
    check_rules(a)
    check_errors(a)
    check_random(a, random.Random(seed))
    a.ir_data = resolve_ir_data(a.ir_data)
    check_ir_data(a)
    if os.path.isdir(os.path.join(a.ir_data, "med")):
        check_shards(a, "med")
    else:
        check_shards(a, "cranfield")
    check_omindex(a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
