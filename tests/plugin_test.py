#!/usr/bin/env python3
"""The plugin as an application uses it (tests/test_plugin_app.cc), on
every ../shared/ir-data collection (the bundled sample tests/sample where
it is absent) with 1 and 2 shards; every query the engines can serve must
be answered by them (--min-served 1), then 16 threads at
once, and the fallbacks: a stale index, a damaged index, unsupported
queries and injected GPU errors must each give the stock MSet and be
counted under their reason.

usage: plugin_test.py --bin XAPIAN_GPU --app TEST_PLUGIN_APP --ir-data DIR
                      --work DIR [--engine gpu|cpu|auto] [--only C1,C2]
With --engine gpu and no device, set XG_GPU_TWINS=1 (the kernels' CPU
twins), as CI does."""
import argparse
import json
import os
import re
import shutil
import sys

from ab_test import phrase_queries

from testlib import (add_values, build, collections, partial_texts,
                     resolve_ir_data, size_range_texts, skip_reason, run,
                     run_any)


def app(a, db, queries, *extra):
    out = run([a.app, "--db", db, "--queries", queries, "--engine", a.engine,
               *extra])
    lines = out.strip().splitlines()
    if not any(l.startswith("compared: ") and " 0 items" not in l
               for l in lines):
        sys.exit("FAIL: test_plugin_app compared no item:\n%s" % out)
    keep = [l for l in lines if " queries, " in l or
            l.startswith(("unsupported: ", "index: "))]
    return " | ".join(keep)


def query_file(work, name, texts):
    """work/NAME.tsv with one query per text, qids 1, 2, ..."""
    path = os.path.join(work, name + ".tsv")
    with open(path, "w") as f:
        f.writelines("%d\t%s\n" % (i + 1, t) for i, t in enumerate(texts))
    return path


def operator_queries(work, docs):
    """work/operators.tsv: ab_test's operator queries from docs, then for
    every third of them a wildcard (the first word cut to its first four
    letters and "*"), a boolean filter on the last word, and both with a
    +word and a -word."""
    path = os.path.join(work, "operators.tsv")
    phrase_queries(docs, path, 160)
    with open(path) as f:
        texts = [l.rstrip("\n").split("\t", 1)[1] for l in f]
    for i, t in enumerate(list(texts)):
        w = re.findall(r"[a-z]{3,}", t)
        if len(w) < 3 or i % 3:
            continue
        texts.append("%s* %s" % (w[0][:4], " ".join(w[1:])))
        texts.append("%s in:%s" % (" ".join(w[:-1]), w[-1]))
        texts.append("+%s %s* -%s in:%s" % (w[0], w[1][:3], w[2], w[-1]))
    return query_file(work, "operators", texts)


def values_db(a, db):
    """A copy of db with testlib.add_values' values, exported.  None
    without python3-xapian (the GPU machine has none)."""
    try:
        import xapian  # noqa: F401
    except ImportError:
        return None
    vdb = db + "-values"
    shutil.rmtree(vdb, ignore_errors=True)
    shutil.copytree(db, vdb)
    add_values(vdb)
    run([a.bin, "export", "--quiet", "--no-impacts", vdb])
    return vdb


def partial_queries(work, queries):
    """Each query as typed so far (testlib.partial_texts)."""
    return query_file(work, "partial", partial_texts(queries))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--app", required=True)
    ap.add_argument("--ir-data", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--engine", default="gpu", choices=["gpu", "cpu", "auto"])
    ap.add_argument("--only")
    ap.add_argument("--impacts", action="store_true",
                    help="export with impacts (the GPU engine's OR "
                    "candidates from them; without it --no-impacts) and "
                    "run the collections and 16 threads only")
    a = ap.parse_args()
    a.ir_data = resolve_ir_data(a.ir_data)
    why = skip_reason(a.bin, a.ir_data, a.work, a.engine)
    if why:
        # As every GPU test does without a device.
        print("SKIP: %s" % why)
        return 77
    colls = collections(a.ir_data, a.only, strict=True)
    # Of the accelerate() calls the engines can serve (all but the
    # other-BM25 probes, stock:weighting, and the shapes they do not serve,
    # stock:unsupported), the GPU or CPU engine must answer all.
    served = "1"
    for c in colls:
        docs = os.path.join(a.ir_data, c, "docs.tsv")
        queries = os.path.join(a.ir_data, c, "queries.tsv")
        for shards in ("1", "2"):
            db = os.path.join(a.work, "%s-%s" % (c, shards))
            build(a.bin, docs, db, "--shards", shards,
                  export=["--impacts"] if a.impacts else ["--no-impacts"])
            # No deadline (10 minutes), as for 16 threads below: a loaded
            # machine's default one withdraws a queued query to stock.
            print("ok %-10s %s shard(s): %s" %
                  (c, shards, app(a, db, queries, "--deadline-ms", "600000",
                                  "--min-served", served)))

    # The fallbacks, on cranfield (or the first collection).
    c = "cranfield" if "cranfield" in colls else colls[0]
    docs = os.path.join(a.ir_data, c, "docs.tsv")
    queries = os.path.join(a.ir_data, c, "queries.tsv")
    db = os.path.join(a.work, c + "-1")
    # No deadline here (10 minutes): on a loaded machine the default one
    # withdraws some queued queries to stock (tested below), and every
    # servable query must be served.
    print("ok 16 threads: %s" % app(a, db, queries, "--threads", "16",
                                     "--deadline-ms", "600000",
                                     "--min-served", served))
    # And on the largest collection, whose OR queries match more documents
    # than the GPU's candidate room: the selection narrows its threshold
    # there, in both dispatcher lanes at once.
    big = max(colls, key=lambda c: os.path.getsize(
        os.path.join(a.ir_data, c, "docs.tsv")))
    if big != c:
        print("ok 16 threads, %s: %s" % (big, app(
            a, os.path.join(a.work, big + "-1"),
            os.path.join(a.ir_data, big, "queries.tsv"), "--threads", "16",
            "--deadline-ms", "600000", "--min-served", served)))
    if a.impacts:
        print("plugin: all checks passed (indexes with impacts)")
        return 0
    if a.engine != "cpu":
        # The dispatcher's deadline: 0.05 ms is shorter than a 1 ms wait
        # for company, so queued queries are withdrawn to stock; at 2 ms
        # some are withdrawn and some wait out a batch already running.
        # Every MSet is still the stock one.
        print("ok deadline 0.05 ms: %s" %
              app(a, db, queries, "--threads", "16", "--deadline-ms", "0.05",
                  "--batch-wait-ms", "1", "--require-route", "stock:deadline"))
        print("ok deadline 2 ms: %s" %
              app(a, db, queries, "--threads", "16", "--deadline-ms", "2",
                  "--batch-wait-ms", "1"))

    # Through Enquire the shapes no engine serves are stock's.
    odd = query_file(a.work, "unsupported", ["shock XOR wave",
                                             "shock XOR wave XOR flow"])
    print("ok unsupported: %s" % app(a, db, odd, "--expect-route",
                                     "stock:unsupported"))
    # The general form: every operator QueryParser offers by default
    # (phrases, NEAR, +/-, NOT, nested AND/OR), wildcards (synonyms) and
    # boolean filters ("in:word"), from the collection's own text; every
    # field equal to stock's.
    print("ok general form: %s" % app(a, db, operator_queries(a.work, docs),
                                      "--wildcard", "--min-served", "1"))
    # Phrases, hyphenated words and NEAR, in an AND's ORs too (served where
    # no answer document holds a phantom of stock's moves), every field
    # equal.
    phr = query_file(a.work, "phrases", [
        '("shock wave" OR flow) AND heat',
        '("boundary layer" OR "heat transfer") AND (plate OR "flat plate")',
        '"boundary layer" flow', "shock-wave interaction",
        '"heat transfer" "flat plate"', '"pressure distribution" supersonic',
        "lift-curve slope", '"boundary layer transition"', "shock NEAR wave",
        "pressure NEAR/4 distribution"])
    print("ok phrases: %s" % app(a, db, phr, "--min-served", "1"))
    # AND_NOT is the engines': every field equal to stock's, its negated
    # terms left out of the percentages' subquery count.
    neg = query_file(a.work, "negated", [
        "shock NOT wave", "heat -transfer", "boundary layer -flow",
        "pressure distribution -supersonic -hypersonic"])
    print("ok AND_NOT: %s" % app(a, db, neg, "--min-served", "1"))
    # FLAG_PARTIAL: the last word's 100 most frequent completions.
    print("ok partial: %s" % app(a, db, partial_queries(a.work, queries),
                                 "--partial", "--min-served", "1"))
    # Value ranges (test_plugin_app's "size:" is Omega's, on slot 2): the
    # engines', every field equal to stock's, percentages whose top
    # document counts the range among its matching subqueries included.
    vdb = values_db(a, db)
    if vdb:
        ranged = query_file(a.work, "ranges", size_range_texts(queries))
        print("ok value ranges: %s" % app(a, vdb, ranged, "--min-served", "1"))
    else:
        print("(no python3-xapian: value ranges through Enquire not checked)")

    if a.engine != "cpu" and os.environ.get("XG_GPU_TWINS") == "1":
        print("ok injected GPU errors: %s" %
              app(a, db, queries, "--inject-gpu-fault", "--require-route",
                  "stock:gpu-error"))

    if a.engine != "cpu":
        # The cost model routes: cheap queries to stock, the rest to the
        # GPU, every MSet still the stock one.
        model = os.path.join(a.work, "routing.model")
        with open(model, "w") as f:
            f.write("stock_or_scale 2e-6\nstock_or_exponent 1\n"
                    "stock_and_scale 2e-6\nstock_and_exponent 1\n"
                    "stock_or_spread 1\nstock_and_spread 1\n"
                    "gpu_batch 1e-4\ngpu_per_posting 1e-9\n")
        out = run([a.app, "--db", db, "--queries", queries, "--engine",
                   "auto", "--model", model, "--require-route", "gpu",
                   "--require-route", "stock:cheaper"])
        print("ok cost-model routing: %s" % out.strip().splitlines()[-1])
        with open(model, "a") as f:
            f.write("gpu_speed 3\n")
        old = os.path.join(a.work, "old.model")
        with open(old, "w") as f:
            f.write("stock_base 0\nstock_per_posting 2e-6\n")
        # A malformed model, and the linear model of an older calibrate,
        # are refused, each named as such.
        for path, want, what in ((model, "routing.model:9: unknown key",
                                  "malformed"),
                                 (old, "re-run xapian-gpu calibrate", "old")):
            p = run_any([a.app, "--db", db, "--queries", queries, "--engine",
                         "auto", "--model", path])
            if p.returncode == 0 or want not in p.stderr:
                sys.exit("FAIL: the %s model file was not refused as such: "
                         "%s" % (what, p.stderr))
            print("ok %s model refused: %s" % (what, p.stderr.strip()))
        # calibrate writes a model the context reads back.
        cal = os.path.join(a.work, "calibrated.model")
        run([a.bin, "calibrate", "--db", db, "--queries", queries, "--model",
             cal])
        run([a.app, "--db", db, "--queries", queries, "--engine", "auto",
             "--model", cal])
        print("ok calibrate: wrote and read %s" % cal)

    if a.engine != "cpu":
        # search --engine auto: the planner answers, the JSON says who, and
        # every result is stock's.
        routes = {}
        for op in ("or", "and"):
            got = [json.loads(l) for l in run(
                [a.bin, "search", "--db", db, "--engine", "auto", "--op", op,
                 "--json", "--queries", queries]).splitlines()]
            want = [json.loads(l) for l in run(
                [a.bin, "search", "--db", db, "--engine", "xapian", "--op", op,
                 "--json", "--queries", queries]).splitlines()]
            for g, w in zip(got, want):
                if g["results"] != w["results"] or g["qid"] != w["qid"]:
                    sys.exit("FAIL search --engine auto, qid %s: %s" %
                             (g["qid"], g))
                routes[g["engine"]] = routes.get(g["engine"], 0) + 1
            if len(got) != len(want):
                sys.exit("FAIL search --engine auto: %d answers for %d "
                         "queries" % (len(got), len(want)))
        if not routes or any(r not in ("gpu", "cpu") and
                             not r.startswith("stock:") for r in routes):
            sys.exit("FAIL search --engine auto: routes %s" % routes)
        print("ok search --engine auto: results identical to stock; routes "
              "%s" % routes)
        # ab --engines xapian,plugin: the operator's view of the same.
        report = os.path.join(a.work, "ab-plugin.json")
        samples = os.path.join(a.work, "ab-plugin.tsv")
        run([a.bin, "ab", "--db", db, "--queries", queries, "--engines",
             "xapian,plugin", "--threads", "4", "--repeat", "3",
             "--json=" + report, "--samples", samples])
        with open(report) as f:
            rep = json.load(f)
        plug = rep["engines"][1]
        # Three passes, the median reported, and the warm-up's routes and
        # the other passes' not added to the reported pass's.
        passes = sorted(plug["pass_qps"])
        if (rep["different"] or rep["identical"] != rep["queries"] or
                sum(plug["routes"].values()) != rep["queries"] or
                len(passes) != 3 or plug["qps"] != passes[1]):
            sys.exit("FAIL ab --engines xapian,plugin: %s" % rep)
        # Host CPU over the reported pass alone: some, and no more cores
        # than the machine has (a window that took in the context's start
        # or the warm-up would read more).
        cores = os.cpu_count() or 1
        for g in rep["engines"]:
            if not (g["host_cpu_us"] > 0 and
                    0 < g["cores_busy"] <= cores * 1.1 + 0.2):
                sys.exit("FAIL ab host CPU of %s: %.1f us a query, %.2f "
                         "cores busy on %d" % (g["engine"], g["host_cpu_us"],
                                               g["cores_busy"], cores))
        # The samples: a line per query; each answered query's latency
        # and start inside its engine's reported pass (wall = queries/qps).
        with open(samples) as f:
            rows = [l.rstrip("\n").split("\t") for l in f]
        head = ["qid", "cost"] + ["%s_%s" % (e, c) for e in ("xapian", "plugin")
                                  for c in ("ms", "route", "start_ms")]
        if rows[0] != head or len(rows) != rep["queries"] + 1:
            sys.exit("FAIL ab --samples: header %s, %d lines" % (rows[0], len(rows)))
        for k, g in enumerate(rep["engines"]):
            wall_ms = 1e3 * rep["queries"] / g["qps"]
            for r in rows[1:]:
                ms, route, start = float(r[2 + 3 * k]), r[3 + 3 * k], float(r[4 + 3 * k])
                if route != "-" and not (ms > 0 and 0 <= start and
                                         start + ms <= wall_ms * 1.01 + 1):
                    sys.exit("FAIL ab --samples %s: %s" % (g["engine"], r))
        print("ok ab --engines xapian,plugin: %d of %d identical; routes %s" %
              (rep["identical"], rep["queries"], plug["routes"]))

    damaged = os.path.join(a.work, c + "-damaged")
    shutil.rmtree(damaged, ignore_errors=True)
    shutil.copytree(db, damaged)
    idx = os.path.join(damaged, "xapian-gpu.idx")
    with open(idx, "r+b") as f:
        f.seek(os.path.getsize(idx) // 2)
        b = f.read(1)
        f.seek(-1, 1)
        f.write(bytes([b[0] ^ 0x5A]))
    print("ok damaged index: %s" % app(a, damaged, queries, "--expect-route",
                                       "stock:damaged"))

    stale = os.path.join(a.work, c + "-stale")
    shutil.rmtree(stale, ignore_errors=True)
    shutil.copytree(db, stale)
    print("ok stale index: %s" % app(a, stale, queries, "--modify-db",
                                     "--expect-route", "stock:stale"))
    print("plugin: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
