#!/usr/bin/env python3
"""xapian-gpu qlm-search (issue 6, "Query time") on the CPU twin.

Proves:
- every score equals an independent reference written here (n-gram counts
  from the documents by hash maps, eq. 2 and its collection part in the
  documented operation order, back-off, epsilon floor, math.log summed in
  query order), bit for bit, on a hand-checkable collection and on random
  ones, for sigma 1, 2, 3 and lambda 0.5, 0.3 and 1;
- one score checked by hand; ranking by score descending, ties by docid
  ascending, -k truncation; documents without a query word are not ranked;
- back-off: an n-gram absent from the document (collection part), absent
  from the collection (the (n-1)-gram), a word absent from the collection
  (epsilon);
- the same on a real collection: cranfield (../shared/ir-data, or the
  bundled sample tests/sample), its first 60 queries, sigma 2 and 3;
- a missing, truncated, non-table, or count-less table file: one line on
  stderr, exit 1; bad usage: exit 2.
Random collections (up to 400 documents) come from --seed (default 6,
printed and named in every FAIL); checks are explicit (no assert).

usage: qlm_search_test.py --bin XAPIAN_GPU --work DIR"""
import argparse
import json
import math
import os
import random
import re
import sys

from testlib import resolve_ir_data, run, run_any

EPS = 1e-12
SEED = None   # printed, and named in every FAIL


def expect(cond, what, *detail):
    """An explicit check (not assert, which python -O drops): FAIL with
    what was checked, the details and the seed that replays it."""
    if not cond:
        sys.exit("FAIL %s%s (--seed %s replays)" %
                 (what, "".join(": %r" % (d,) for d in detail), SEED))


_COUNTS = {}


def counts(docs, sigma):
    """The n-gram counts of docs (per document and of the collection) and
    the collection's length; computed once per (docs, sigma)."""
    key = (id(docs), sigma)
    if key not in _COUNTS:
        coll, per_doc, length = {}, {}, 0
        for d, words in docs.items():
            c = {}
            for n in range(1, sigma + 1):
                for i in range(len(words) - n + 1):
                    g = tuple(words[i:i + n])
                    c[g] = c.get(g, 0) + 1
                    coll[g] = coll.get(g, 0) + 1
            per_doc[d] = c
            length += len(words)
        _COUNTS.clear()
        _COUNTS[key] = (docs, coll, per_doc, length)
    return _COUNTS[key][1:]


def reference(docs, sigma, lam, query):
    """[(docid, score)] ranked.  docs: {docid: word list}; query: words."""
    coll, per_doc, length = counts(docs, sigma)

    def prob(g, d):
        # f(h, .) for n = 1 is the length; eq. 2 in qlm_formula.h's order.
        z = coll[g]
        w = coll[g[:-1]] if len(g) > 1 else length
        x = per_doc[d].get(g, 0)
        if x:
            y = per_doc[d][g[:-1]] if len(g) > 1 else len(docs[d])
            return lam * (x / y) + (1.0 - lam) * (z / w)
        return (1.0 - lam) * (z / w)

    def factor(i, d):
        for n in range(min(i + 1, sigma), 0, -1):
            g = tuple(query[i - n + 1:i + 1])
            if g in coll:
                p = prob(g, d)
                return p if p > EPS else EPS
        return EPS

    cands = sorted({d for q in set(query) for d in docs
                    if (q,) in per_doc[d]})
    hits = []
    for d in cands:
        s = 0.0
        for i in range(len(query)):
            s += math.log(factor(i, d))
        hits.append((d, s))
    hits.sort(key=lambda h: (-h[1], h[0]))
    return hits


def make_table(a, docs, sigma, lam, name):
    tsv = os.path.join(a.work, name + ".tsv")
    with open(tsv, "w") as f:
        for d in sorted(docs):
            f.write("%d\t%s\n" % (d, " ".join(docs[d])))
    out = os.path.join(a.work, name + ".bin")
    run([a.bin, "qlm", "--quiet", "--tsv", tsv, "-o", out, "--format", "bin",
         "--counts", "--sigma", str(sigma), "--lambda", repr(lam)])
    return out


def search(a, table, queries, k=100000):
    qf = os.path.join(a.work, "queries.tsv")
    with open(qf, "w") as f:
        for i, q in enumerate(queries):
            f.write("%d\t%s\n" % (i + 1, " ".join(q)))
    out = run([a.bin, "qlm-search", "--qlm", table, "--queries", qf, "--json",
               "-k", str(k)])
    res = [json.loads(line) for line in out.splitlines()]
    expect([r["qid"] for r in res] == [str(i + 1) for i in range(len(queries))],
           '[r["qid"] for r in res] == [str(i + 1) for i in range(len...')
    return [[(h["docid"], h["score"]) for h in r["results"]] for r in res]


def check(a, docs, sigma, lam, queries, label):
    table = make_table(a, docs, sigma, lam, label)
    got = search(a, table, queries)
    expect(len(got) == len(queries), "%s: one answer per query" % label,
           len(got), len(queries))
    for q, g in zip(queries, got):
        want = reference(docs, sigma, lam, q)
        if g != want:
            sys.exit("FAIL %s sigma %d lambda %r query %r (--seed %s "
                     "replays):\n got  %r\n want %r"
                     % (label, sigma, lam, q, SEED, g[:5], want[:5]))
    return got


def check_hand(a):
    docs = {1: "a b c a b".split(), 2: "b c d".split(), 3: "a a".split(),
            5: "b c d".split(), 7: "e".split()}
    queries = [["a", "b"], ["b", "c", "zz"], ["zz"], ["c", "a"], ["b", "c", "d"],
               ["d", "b"], ["a", "b", "c", "a"], []]
    for sigma in (1, 2, 3):
        for lam in (0.5, 0.3, 1.0):
            got = check(a, docs, sigma, lam, queries, "hand")
    # Hand: sigma 2, lambda 0.5, "a b" on doc 1 (|d| = 5, |C| = 14):
    # P(a|d1) = .5*2/5 + .5*4/14, P(b|a,d1) = .5*2/2 + .5*2/4.
    got = check(a, docs, 2, 0.5, queries, "hand")
    p1 = 0.5 * (2 / 5) + (1.0 - 0.5) * (4 / 14)
    p2 = 0.5 * (2 / 2) + (1.0 - 0.5) * (2 / 4)
    expect(got[0][0] == (1, 0.0 + math.log(p1) + math.log(p2)),
           'got[0][0] == (1, 0.0 + math.log(p1) + math.log(p2))', got[0])
    # Doc 7 holds no query word of "a b": not ranked; docs 2 and 5 are
    # identical: tied, the smaller docid first.
    expect([d for d, _ in got[0]] == [1, 3, 2, 5],
           '[d for d, _ in got[0]] == [1, 3, 2, 5]', got[0])
    expect(got[0][2][1] == got[0][3][1],
           'got[0][2][1] == got[0][3][1]')
    # Back-off, doc 3 ("a a") for "a b": "a b" is in the collection, not in
    # doc 3: the collection part .5 * 2/4.
    expect(got[0][1] == (3, math.log(0.5 * (1 / 1) + 0.5 * (4 / 14)) +
                         math.log(0.5 * (2 / 4))),
           'got[0][1] == (3, math.log(0.5 * (1 / 1) + 0.5 * (4 / 14))...', got[0][1])
    # "d b": the bigram is absent from the collection: P(b | d) backs off
    # to P(b | d2).
    d2 = dict(got[5])[2]
    expect(d2 == math.log(0.5 * (1 / 3) + 0.5 * (2 / 14)) + \
        math.log(0.5 * (1 / 3) + 0.5 * (4 / 14)),
           'd2 == math.log(0.5 * (1 / 3) + 0.5 * (2 / 14)) + \\ math.l...', d2)
    # "b c zz": zz is unknown, every ranked document gets log(EPS) for it.
    b_c = dict(got[1])   # the query "b c zz"
    for d, s in b_c.items():
        want = dict(reference(docs, 2, 0.5, ["b", "c"]))[d] + math.log(EPS)
        expect(s == want,
               's == want', (d, s, want))
    expect(got[2] == [] and got[7] == [],
           'got[2] == [] and got[7] == []')       # "zz" alone, the empty query
    # -k truncation keeps the ranking's head.
    table = make_table(a, docs, 2, 0.5, "hand")
    expect(search(a, table, queries, k=2)[0] == got[0][:2],
           'search(a, table, queries, k=2)[0] == got[0][:2]')
    # Queries as arguments, tokenized by the --tsv tokenizer (case, punct).
    out = run([a.bin, "qlm-search", "--qlm", table, "--json", "A, B!"])
    expect([(h["docid"], h["score"]) for h in json.loads(out)["results"]] \
        == got[0][:10],
           '[(h["docid"], h["score"]) for h in json.loads(out)["resul...')
    out = run([a.bin, "qlm-search", "--qlm", table, "a b"])
    expect(out.startswith("query 1: 4 results\n"),
           'out.startswith("query 1: 4 results\\n")', out)
    # search --scoring qlm is the same command.
    for scoring in (["--scoring", "qlm"], ["--scoring=qlm"]):
        alias = run([a.bin, "search", *scoring, "--qlm", table, "--json", "A, B!"])
        direct = run([a.bin, "qlm-search", "--qlm", table, "--json", "A, B!"])
        expect(alias == direct,
               'alias == direct', (alias, direct))
    p = run_any([a.bin, "search", "--scoring", "lm", "--qlm", table, "a"])
    expect(p.returncode == 2 and "bm25 or qlm" in p.stderr,
           'p.returncode == 2 and "bm25 or qlm" in p.stderr', p.stderr)


def check_random(a, rng):
    for trial in range(6):
        vocab = ["w%d" % i for i in range(rng.randint(2, 9))]
        ids = rng.sample(range(1, 2000), rng.randint(1, 400))
        docs = {d: [rng.choice(vocab) for _ in range(rng.randint(1, 30))]
                for d in ids}
        queries = [[rng.choice(vocab + ["zz", "yy"])
                    for _ in range(rng.randint(1, 7))] for _ in range(20)]
        sigma = rng.choice((1, 2, 3))
        lam = rng.choice((0.5, 0.3, 1.0, 0.9))
        check(a, docs, sigma, lam, queries, "rand%d" % trial)


def check_collection(a, ir_data):
    """A real collection: cranfield (../shared/ir-data's, or the bundled
    sample's), its words as qlm's tokenizer gives them, its first 60
    queries, sigma 2 and 3, every ranked document's score bit-equal to the
    reference's."""
    coll = os.path.join(ir_data, "cranfield")
    docs = {}
    with open(os.path.join(coll, "docs.tsv"), encoding="utf-8") as f:
        for line in f:
            if "\t" in line:
                d, text = line.split("\t", 1)
                words = re.findall(r"[a-z0-9]+", text.lower())
                if words:
                    docs[int(d)] = words
    with open(os.path.join(coll, "queries.tsv"), encoding="utf-8") as f:
        queries = [re.findall(r"[a-z0-9]+", l.split("\t", 1)[1].lower())
                   for l in f if "\t" in l][:60]
    expect(len(docs) > 1000 and len(queries) == 60, "cranfield read",
           len(docs), len(queries))
    ranked = 0
    for sigma, lam in ((2, 0.5), (3, 0.3)):
        got = check(a, docs, sigma, lam, queries, "cranfield")
        ranked += sum(len(g) for g in got)
    expect(ranked > 0, "cranfield: some document ranked")
    print("ok cranfield (%s): %d documents, %d queries, sigma 2 and 3: %d "
          "ranked scores bit-equal to the reference" %
          (coll, len(docs), len(queries), ranked))


def check_bad(a):
    table = os.path.join(a.work, "hand.bin")
    data = open(table, "rb").read()
    changed = bytearray(data)
    changed[56 + 12] ^= 0x01        # a bit of the first record's docid
    cases = {"missing": None, "truncated": data[:len(data) - 3],
             "header": data[:30], "magic": b"XGQLM999" + data[8:],
             "junk": b"hello\n", "tail": data + b"x",
             "version 1": b"XGQLM001" + data[8:], "changed": bytes(changed)}
    needle = {"version 1": "version 1", "changed": "checksum mismatch"}
    for name, body in cases.items():
        path = os.path.join(a.work, "bad-" + name)
        if body is not None:
            open(path, "wb").write(body)
        elif os.path.exists(path):
            os.remove(path)
        p = run_any([a.bin, "qlm-search", "--qlm", path, "a"])
        lines = p.stderr.strip().splitlines()
        expect(p.returncode == 1 and len(lines) == 1 and path in lines[0] \
            and not p.stdout and needle.get(name, "") in lines[0],
               'p.returncode == 1 and len(lines) == 1 and path in lines[0...', (name, p.returncode, p.stderr, p.stdout))
    # A table without counts (and a TSV table) cannot serve the back-off.
    tsv = os.path.join(a.work, "hand.tsv")
    for fmt in ("bin", "tsv"):
        out = os.path.join(a.work, "nocounts." + fmt)
        run([a.bin, "qlm", "--quiet", "--tsv", tsv, "-o", out, "--format", fmt])
        p = run_any([a.bin, "qlm-search", "--qlm", out, "a"])
        expect(p.returncode == 1 and len(p.stderr.strip().splitlines()) == 1,
               'p.returncode == 1 and len(p.stderr.strip().splitlines()) ...', (fmt, p.returncode, p.stderr))
        if fmt == "bin":
            expect("counts" in p.stderr,
                   '"counts" in p.stderr', p.stderr)
    for args in ([], ["a"], ["--qlm", table], ["--qlm", table, "-k", "x", "a"],
                 ["--bogus", "--qlm", table, "a"]):
        p = run_any([a.bin, "qlm-search"] + args)
        expect(p.returncode == 2,
               'p.returncode == 2', (args, p.returncode, p.stderr))
    p = run_any([a.bin, "qlm-search", "--qlm", table, "\udcff"])
    expect(p.returncode != 0,
           'p.returncode != 0')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--seed", type=int, default=6,
                    help="the random collections' seed (6; printed)")
    ap.add_argument("--ir-data", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared",
        "ir-data"))
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    global SEED
    SEED = a.seed
    print("seed %d (--seed %d replays)" % (a.seed, a.seed))
    rng = random.Random(a.seed)
    check_hand(a)
    check_random(a, rng)
    check_collection(a, resolve_ir_data(a.ir_data))
    check_bad(a)
    print("qlm-search: all checks passed")


if __name__ == "__main__":
    main()
