#!/usr/bin/env python3
"""Which queries the engines answer, on every ../shared/ir-data collection.

For each collection: a database `xapian-gpu index` builds (plain) and,
where Debian's omindex is installed, one omindex builds from the same
documents as HTML pages (Omega's), both exported.  Against each, `xapian-gpu
ab --engines xapian,cpu,plugin-cpu` runs the collection's own queries,
the TREC query logs of ir-data/queries (the first --tb of the 2005
efficiency topics, the first --mq of the 2007 Million Query topics), the
operator queries cut from the collection's text (ab_test.phrase_queries:
quoted and hyphenated phrases, NEAR, ADJ, +/-, NOT, AND/OR nestings,
with wildcards: --wildcard) and the TREC 2005 topics as typed so far
(--partial): OR and AND on the plain database, Omega's form (--omega) on
omindex's, where the collection's queries and the operators run again
with Omega's boolean filters and exclusions (B= and N= as --filter and
--exclude: omindex_test.FILTER_SETS).

Each run must give every MSet of the CPU matcher and of the plugin
(Enquire, the CPU engine) identical to stock Xapian's, and each of them
must answer at least 99% of the queries itself (ab's routing table: the
queries the CPU matcher or the GPU answered).  A table of every run is
printed.  --engines gpu,plugin-gpu runs the GPU engine and the plugin
on it instead (run.sh coverage, on the device).
"""
import argparse
import os
import re
import shutil
import sys
import time

from ab_test import phrase_queries
from omindex_test import FILTER_SETS, write_site
from testlib import collections, partial_texts, resolve_ir_data, run

AB_LINE = re.compile(r"queries (\d+): compared (\d+) MSets, identical (\d+), "
                     r"different (\d+); unsupported (\d+), rejected by "
                     r"QueryParser (\d+)")
STOCK_SELF = re.compile(r"stock's top \d+ differs from its own full ranking: "
                        r"(\d+) MSets")
MIN_ANSWERED = 0.99


def write_queries(path, texts):
    with open(path, "w", encoding="utf-8") as f:
        f.writelines("%d\t%s\n" % (i + 1, t) for i, t in enumerate(texts))
    return path


def head(src, n, dst):
    """The first n queries of src, in dst."""
    with open(src, encoding="utf-8") as f:
        texts = [l.rstrip("\n").split("\t", 1)[1] for l in f if "\t" in l]
    return write_queries(dst, texts[:n])


def operator_texts(docs, work):
    """phrase_queries' operator queries from the collection's text, then
    for every third a wildcard on its first word's first four letters."""
    path = os.path.join(work, "phrases.tsv")
    phrase_queries(docs, path, 160)
    with open(path, encoding="utf-8") as f:
        texts = [l.rstrip("\n").split("\t", 1)[1] for l in f]
    for i, t in enumerate(list(texts)):
        w = re.findall(r"[a-z]{4,}", t)
        if w and i % 3 == 0:
            texts.append("%s* %s" % (w[0][:4], t))
    return texts


def ab(binary, db, queries, mode, engines=("cpu", "plugin-cpu")):
    """One `ab` run: (queries, {engine: answered by the CPU matcher},
    MSets compared, of them where stock's top k is not its own full
    ranking and the engine's is that one: docs/architecture.md)."""
    out = run([binary, "ab", "--db", db, "--queries", queries, "--threads",
               "2", "--engines", "xapian," + ",".join(engines)] + mode)
    m = AB_LINE.search(out)
    if not m:
        sys.exit("FAIL: no summary line in ab's output:\n" + out)
    n, compared, identical, different, _, rejected = map(int, m.groups())
    own = STOCK_SELF.search(out)
    apart = int(own.group(1)) if own else 0
    if different or identical + apart != compared:
        sys.exit("FAIL: %s on %s: MSets differ from stock's:\n%s" %
                 (" ".join(mode), queries, out))
    # The routing table: engine, then the queries answered by xapian,
    # cpu and gpu.
    table = out[out.index("routing (queries answered by each matcher):"):]
    answered = {}
    for line in table.splitlines()[2:]:
        w = line.split()
        if len(w) != 4 or not all(x.isdigit() for x in w[1:]):
            break   # the table's end ("gpu engine: not used" follows it)
        if w[0] in engines:
            answered[w[0]] = int(w[2]) + int(w[3])
    if set(answered) != set(engines):
        sys.exit("FAIL: no routing rows for %s in ab's output:\n%s" %
                 (", ".join(engines), out))
    return n - rejected, answered, compared, apart


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--ir-data", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--tb", type=int, default=500,
                    help="TREC 2005 efficiency topics to run (500; all: "
                    "50000)")
    ap.add_argument("--engines", default="cpu,plugin-cpu",
                    help="the two engines against stock: an engine, then "
                    "the plugin on it (cpu,plugin-cpu; gpu,plugin-gpu)")
    ap.add_argument("--mq", type=int, default=500,
                    help="TREC 2007 Million Query topics to run (500; all: "
                    "10000)")
    a = ap.parse_args()
    engines = tuple(a.engines.split(","))
    if len(engines) != 2:
        sys.exit("FAIL: --engines takes two engines, not %r" % a.engines)
    t0 = time.time()
    ir = resolve_ir_data(a.ir_data)
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    logs = []
    qdir = os.path.join(ir, "queries")
    for name, fname, n in (("TREC 2005", "trec-tb-2005-efficiency.tsv", a.tb),
                           ("TREC MQ 2007", "trec-mq-2007.tsv", a.mq)):
        if os.path.isfile(os.path.join(qdir, fname)):
            logs.append((name, head(os.path.join(qdir, fname), n,
                                    os.path.join(a.work, fname))))
        else:
            print("(no %s: its topics not run)" % os.path.join(qdir, fname))
    typed = None
    if logs and logs[0][0] == "TREC 2005":
        typed = write_queries(os.path.join(a.work, "typed.tsv"),
                              partial_texts(logs[0][1]))
    omindex = shutil.which("omindex")
    if not omindex:
        print("(no omindex (Debian: xapian-omega): Omega's form not run)")
    rows = []
    short = []
    for c in collections(ir):
        coll = os.path.join(ir, c)
        work = os.path.join(a.work, c)
        os.makedirs(work)
        docs = os.path.join(coll, "docs.tsv")
        plain = os.path.join(work, "plain")
        run([a.bin, "index", "--quiet", docs, plain])
        run([a.bin, "export", "--quiet", plain])
        # (its ab options, how many filters they hold)
        dbs = [("plain", plain, ((["--op", "or"], 0), (["--op", "and"], 0)))]
        if omindex:
            om = os.path.join(work, "omindex")
            write_site(docs, os.path.join(work, "site"))
            run([omindex, "--db", om, "--url", "/", "--empty-docs=index",
                 os.path.join(work, "site")])
            run([a.bin, "export", "--quiet", om])
            filtered = [(["--omega"] + [x for k, t in fs for x in
                                        ("--filter" if k == "B" else
                                         "--exclude", t)], len(fs))
                        for fs in FILTER_SETS]
            dbs.append(("omindex", om, [(["--omega"], 0)] + filtered))
        ops = write_queries(os.path.join(work, "operators.tsv"),
                            operator_texts(docs, work))
        sets = [("bundled", os.path.join(coll, "queries.tsv"), [])] + \
            [(name, path, []) for name, path in logs] + \
            [("operators", ops, ["--wildcard"])]
        if typed:
            sets.append(("TREC 2005 as typed", typed, ["--partial"]))
        for dbname, db, modes in dbs:
            for setname, queries, flags in sets:
                for mode, n_filters in modes:
                    # The filtered forms on the collection's own queries
                    # and the operators only.
                    if n_filters and setname not in ("bundled", "operators"):
                        continue
                    n, answered, compared, apart = ab(a.bin, db, queries,
                                                      mode + flags, engines)
                    shown = mode[:1] + ["+%d filters" % n_filters] \
                        if n_filters else mode
                    row = (c, dbname, setname, " ".join(shown + flags), n,
                           answered[engines[0]], answered[engines[1]],
                           compared, apart)
                    rows.append(row)
                    if min(answered.values()) < MIN_ANSWERED * n:
                        short.append(row)
    print("%-9s %-8s %-19s %-22s %6s %6s %6s %7s %5s" %
          ("coll", "db", "queries", "mode", "n", engines[0][:6],
           engines[1][:6], "MSets", "apart"))
    for r in rows:
        print("%-9s %-8s %-19s %-22s %6d %6d %6d %7d %5d" % r)
    n = sum(r[4] for r in rows)
    print("%d runs, %d queries: %s answered %d (%.2f%%), %s %d (%.2f%%); "
          "%d MSets compared, identical to stock's but %d where stock's top "
          "k is not its own full ranking's (%.1f s)" %
          (len(rows), n, engines[0], sum(r[5] for r in rows),
           100.0 * sum(r[5] for r in rows) / max(n, 1),
           engines[1], sum(r[6] for r in rows),
           100.0 * sum(r[6] for r in rows) / max(n, 1),
           sum(r[7] for r in rows), sum(r[8] for r in rows),
           time.time() - t0))
    if short:
        sys.exit("FAIL: under %d%% answered by an engine in %d runs: %r" %
                 (100 * MIN_ANSWERED, len(short), short))
    print("coverage: PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
