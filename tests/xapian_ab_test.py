#!/usr/bin/env python3
"""The CPU matcher against an independent reference: stock Xapian through
python3-xapian (its own QueryParser and Enquire, in this process, not the
project's shim), compared with `xapian-gpu search --json --engine cpu` on
the same queries and database.

1. Every query of each collection (../shared/ir-data, or the bundled
   sample tests/sample where it is absent), OR and AND, k = 1, 2, 3, 10,
   20 and 1000: same docids, order, bit-equal weights; the match count
   wherever the MSet holds every match.
2. The summation plan (shim/shim_plan.cc) and the CPU matcher
   (gpu/query/match_ref.c): random OR/AND trees (nested brackets, repeated
   words, terms of equal frequency, terms absent from the index) on each
   collection, with k = the number of documents, so that every matching
   document's weight must be bit-equal to stock's and every tie in
   stock's order; on 1 and 3 shards.
3. The matcher's edge cases on small collections built here: runs of
   identical documents (ties straddling every k cut-off, k = 1 .. 40),
   k larger than the matches, queries whose every term is absent, sparse
   docids (--docid-scale), 3 shards, deleted documents.

Random queries come from a fixed seed (--seed, printed; rerun with it).
usage: xapian_ab_test.py --bin XAPIAN_GPU --ir-data DIR --work DIR
"""
import argparse
import json
import os
import random
import shutil
import sys
import time

from testlib import (build, collections, resolve_ir_data, run, xapian_module,
                     Tally)

xapian = xapian_module()
BM25 = (1, 0, 1, 0.5, 0.5)   # the CLI's default --bm25
QUIRKS = []                  # where stock's MSet at k is not its top k


def stock(db, texts, op, k):
    """python3-xapian: per query, None (QueryParser rejected it) or
    (matches_estimated, exact, [(docid, "%.17g" weight)])."""
    qp = xapian.QueryParser()
    qp.set_database(db)
    qp.set_stemmer(xapian.Stem("english"))
    qp.set_stemming_strategy(xapian.QueryParser.STEM_SOME)
    qp.set_default_op(xapian.Query.OP_AND if op == "and" else
                      xapian.Query.OP_OR)
    out = []
    for text in texts:
        try:
            q = qp.parse_query(text)
        except xapian.QueryParserError:
            out.append(None)
            continue
        enq = xapian.Enquire(db)
        enq.set_query(q)
        enq.set_weighting_scheme(xapian.BM25Weight(*BM25))
        m = enq.get_mset(0, k)
        out.append((m.get_matches_estimated(),
                    m.get_matches_lower_bound() == m.get_matches_upper_bound(),
                    [(x.docid, "%.17g" % x.weight) for x in m]))
    return out


def ours(binary, dbs, qfile, op, k):
    out = run([binary, "search", *[a for d in dbs for a in ("--db", d)],
               "--engine", "cpu", "--op", op, "-k", str(k), "--json",
               "--queries", qfile])
    return [json.loads(l) for l in out.splitlines()]


def compare(label, binary, dbpath, queries, ops, ks, tally, seed=None,
            need_all=False):
    """Each (query, op, k): the CLI's CPU matcher against python3-xapian.
    need_all: every query must be served (no 'unsupported')."""
    qfile = os.path.join(os.path.dirname(dbpath), label.replace(" ", "_") +
                         ".queries.tsv")
    with open(qfile, "w", encoding="utf-8") as f:
        for i, t in enumerate(queries):
            f.write("%d\t%s\n" % (i + 1, t))
    db = xapian.Database(dbpath)
    n = unsupported = 0
    for op in ops:
        for k in ks:
            want = stock(db, queries, op, k)
            got = ours(binary, [dbpath], qfile, op, k)
            if len(got) != len(queries):
                sys.exit("FAIL %s: %d answers for %d queries" %
                         (label, len(got), len(queries)))
            for text, w, g in zip(queries, want, got):
                where = "%s op=%s k=%d query %r%s" % (
                    label, op, k, text,
                    "" if seed is None else " (seed %d)" % seed)
                if w is None:
                    if "error" not in g:
                        sys.exit("FAIL %s: QueryParser rejects it, the CLI "
                                 "answered" % where)
                    continue
                if "error" in g:
                    if need_all or not g["error"].startswith("unsupported"):
                        sys.exit("FAIL %s: %s" % (where, g["error"]))
                    unsupported += 1
                    continue
                mine = [(h["docid"], "%.17g" % h["weight"])
                        for h in g["results"]]
                if mine != w[2]:
                    # Stock's own answer at k is not its top k (Xapian 1.4's
                    # pruning on a database with deleted documents): the
                    # true top k, from stock asked for every document, is
                    # accepted and reported.
                    full = stock(db, [text], op, db.get_doccount())[0][2]
                    if w[2] != full[:k] and mine == full[:k]:
                        QUIRKS.append(where)
                        n += 1
                        continue
                    i = next((i for i, (a, b) in enumerate(zip(mine, w[2]))
                              if a != b), min(len(mine), len(w[2])))
                    sys.exit("FAIL %s: rank %d: Xapian %s, cpu %s (lengths "
                             "%d/%d)" % (where, i + 1, w[2][i:i + 1],
                                         mine[i:i + 1], len(w[2]), len(mine)))
                if w[1] and w[0] != g["matches_estimated"]:
                    sys.exit("FAIL %s: %d matches, cpu says %d" %
                             (where, w[0], g["matches_estimated"]))
                n += 1
    tally.add("MSets", n)
    return n, unsupported


def random_queries(rng, db, n):
    """n random OR/AND trees over the database's unprefixed words: frequent
    and rare ones, groups of words with the same frequency (ties in the
    plan's heap and sort), repeats, and words absent from the index."""
    words = {}
    for t in db.allterms():
        w = t.term.decode("utf-8")
        if w.isalpha() and w.islower() and len(w) > 2:
            words[w] = t.termfreq
    by_freq = {}
    for w, f in words.items():
        by_freq.setdefault(f, []).append(w)
    same = [v for v in by_freq.values() if len(v) >= 3]
    vocab = sorted(words)
    frequent = sorted(vocab, key=lambda w: -words[w])[:40]

    def word():
        r = rng.random()
        if r < 0.3:
            return rng.choice(frequent)
        if r < 0.35:
            return "zqx%dabsent" % rng.randrange(1000)
        return rng.choice(vocab)

    def words_(n):
        if same and rng.random() < 0.3:
            grp = rng.choice(same)
            ws = rng.sample(grp, min(len(grp), max(2, n)))
        else:
            ws = [word() for _ in range(n)]
        if rng.random() < 0.2:
            ws.append(ws[0])              # a repeated word: wqf 2
        return ws

    def or_tree(depth):
        """Words and bracketed OR subtrees, joined by OR."""
        if depth == 0 or rng.random() < 0.3:
            return " OR ".join(words_(rng.randint(1, 4)))
        return " OR ".join("(%s)" % or_tree(depth - 1)
                           for _ in range(rng.randint(2, 3)))

    # The shapes the engines serve: an OR tree, or an AND of words and OR
    # trees (docs/plugin.md); explicit operators, so op=or parses them.
    out = []
    for _ in range(n):
        if rng.random() < 0.5:
            out.append(or_tree(rng.randint(0, 3)))
        else:
            out.append(" AND ".join(
                "(%s)" % or_tree(rng.randint(0, 2)) if rng.random() < 0.6
                else word() for _ in range(rng.randint(2, 4))))
    return out


def edge_collection(path, rng):
    """A small collection whose ties straddle every cut-off: runs of
    identical documents, of different lengths, among unique ones."""
    docs = []
    for run_len, text in ((7, "alpha beta"), (5, "alpha beta gamma"),
                          (9, "alpha"), (4, "beta gamma delta"),
                          (6, "gamma gamma alpha")):
        docs += [text] * run_len
    docs += ["alpha %s" % w for w in ("epsilon", "zeta", "eta", "theta")]
    docs += ["unique%d words here beta" % i for i in range(5)]
    rng.shuffle(docs)
    with open(path, "w", encoding="utf-8") as f:
        for i, d in enumerate(docs):
            f.write("%d\t%s\n" % (i + 1, d))
    return len(docs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--ir-data", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--seed", type=int, default=20)
    ap.add_argument("--random", type=int, default=60,
                    help="random queries per collection (60)")
    ap.add_argument("--only", default="cranfield,cacm,med,adi")
    a = ap.parse_args()
    print("python3-xapian %s as the reference; seed %d (rerun with --seed "
          "%d)" % (xapian.version_string(), a.seed, a.seed))
    ir_data = resolve_ir_data(a.ir_data)
    os.makedirs(a.work, exist_ok=True)
    tally = Tally()
    rng = random.Random(a.seed)
    colls = collections(ir_data, a.only, strict=True)
    for c in colls:
        t = time.time()
        docs = os.path.join(ir_data, c, "docs.tsv")
        with open(os.path.join(ir_data, c, "queries.tsv"),
                  encoding="utf-8") as f:
            texts = [l.rstrip("\n").split("\t", 1)[1] for l in f if "\t" in l]
        for shards in ("1", "3"):
            db = os.path.join(a.work, "%s-%s" % (c, shards))
            build(a.bin, docs, db, "--shards", shards)
            n_docs = xapian.Database(db).get_doccount()
            label = "%s %s shard(s)" % (c, shards)
            n, u = compare(label, a.bin, db, texts, ("or", "and"),
                           (1, 2, 3, 10, 20, 1000) if shards == "1" else
                           (10, 1000), tally)
            rq = random_queries(rng, xapian.Database(db), a.random)
            rn, _ = compare(label + " random", a.bin, db, rq,
                            ("or",), (n_docs,), tally, seed=a.seed,
                            need_all=True)
            print("ok %-22s %5d MSets identical to python3-xapian's (%d "
                  "unsupported); %d random OR/AND trees at k = %d (every "
                  "match): identical (%.1fs)" % (label, n, u, rn, n_docs,
                                                 time.time() - t))
    # The matcher's edge cases.
    tsv = os.path.join(a.work, "edge.tsv")
    n_docs = edge_collection(tsv, rng)
    queries = ["alpha", "beta", "gamma", "alpha beta", "alpha AND beta",
               "beta gamma", "gamma OR delta", "alpha beta gamma delta",
               "zqxabsent", "zqxabsent zqyabsent", "alpha zqxabsent",
               "alpha AND zqxabsent", "(alpha OR beta) AND gamma",
               "unique3 beta", "epsilon zeta eta theta alpha"]
    for name, opts in (("edge", []), ("edge-3shards", ["--shards", "3"]),
                       ("edge-sparse", ["--docid-scale", "1000003"]),
                       ("edge-deleted-3shards", ["--shards", "3",
                                                 "--delete-every", "4"])):
        db = os.path.join(a.work, name)
        build(a.bin, tsv, db, *opts)
        n, _ = compare(name, a.bin, db, queries, ("or", "and"),
                       list(range(1, 41)), tally, need_all=True)
        print("ok %-22s %5d MSets identical: %d documents in runs of "
              "identical ones, k = 1..40, absent terms" % (name, n, n_docs))
    if QUIRKS:
        print("note: %d MSets where stock Xapian's answer at k is not its own "
              "top k (it returns another document when asked for more: its "
              "pruning on a database with deleted documents); the CPU "
              "matcher gave the true top k.  First: %s" %
              (len(QUIRKS), QUIRKS[:3]))
    tally.finish("xapian_ab")
    return 0


if __name__ == "__main__":
    sys.exit(main())
