#!/usr/bin/env python3
"""Golden A/B test: the CPU matcher's MSets equal stock Xapian's.

Proves DESIGN.md's exactness contract ("For every query the plugin serves,
the MSet equals the stock matcher's: same docids, same order, same weights
(bit-equal doubles), same tie order") for the CPU engine, on every
collection of ../shared/ir-data, for OR and AND at k = 10 and k = 1000,
plus a two-shard variant, a deleted-documents variant and a sparse-docid
variant (10^4 documents, last docid near 2*10^8).  Weights are compared as
the %.17g text the CLI prints, which round-trips doubles exactly.

Skips (exit 77) when ../shared/ir-data is absent.
"""
import argparse
import json
import os
import re
import resource
import shutil
import sys
import time

from testlib import build, collections, skip_reason, run


def search(binary, db, queries, engine, op, k):
    extra = ["--member", MEMBER] if engine == "gpu" else []
    if engine == "gpu" and LIST_CACHE:
        extra += ["--list-cache", str(LIST_CACHE)]
    if engine == "gpu" and CAND_MIN:
        extra += ["--cand-min", str(CAND_MIN)]
    if engine == "gpu" and IMPACTS:
        extra += ["--impacts", "auto"]
    out = run([binary, "search", "--db", db, "--engine", engine, "--op", op,
               "-k", str(k), "--json", "--queries", queries, *extra])
    return [json.loads(line) for line in out.splitlines()]


def check_cache_used(binary, db, queries):
    """The forced list cache really evicted and reloaded lists (and bench,
    which compares every MSet with stock Xapian, found no difference)."""
    out = run([binary, "bench", "--db", db, "--queries", queries,
               "--engines", "xapian,gpu", "--threads", "1", "--op", "or",
               "--list-cache", str(LIST_CACHE)])
    m = re.search(r"list cache: (\d+) bytes; (\d+) hits, (\d+) misses, "
                  r"(\d+) evictions", out)
    if not m or int(m.group(4)) == 0:
        sys.exit("FAIL %s: the list cache was not exercised:\n%s" % (db, out))
    print("   list cache %s KiB: %s hits, %s misses, %s evictions" %
          (LIST_CACHE, m.group(2), m.group(3), m.group(4)))


def check_impacts_used(binary, db, queries):
    """The GPU engine chose OR candidates from the index's impacts (and
    bench, which compares every MSet with stock Xapian, found no
    difference).  Then again with the margins widened a million times
    (XG_TEST_IMPACT_SLACK): every such query overflows and must run again
    on exact sums on the device, not on the CPU, with identical MSets."""
    def bench(env=None):
        out = run([binary, "bench", "--db", db, "--queries", queries,
                   "--engines", "xapian,gpu", "--threads", "1", "--op", "or",
                   "--impacts", "auto",
                   *(["--cand-min", str(CAND_MIN)] if CAND_MIN else [])],
                  env=env)
        m = re.search(r"impacts: (\d+) queries chose .* \((\d+) overflowed", out)
        d = re.search(r"(\d+) served on the device, (\d+) by the CPU", out)
        if not m or not d or int(m.group(1)) == 0:
            sys.exit("FAIL %s: the impacts were not used:\n%s" % (db, out))
        return int(m.group(1)), int(m.group(2)), d.groups(), out
    used, again, served, _ = bench()
    env = dict(os.environ, XG_TEST_IMPACT_SLACK="1e6")
    used_w, again_w, served_w, out = bench(env)
    if again_w == 0 or served_w != served:
        sys.exit("FAIL %s: widened margins: %d queries ran again, device/CPU "
                 "%s against %s:\n%s" % (db, again_w, served_w, served, out))
    print("   impacts: %d OR queries chose their candidates from them, %d "
          "ran again on exact sums; widened margins: %d ran again, all still "
          "on the device" % (used, again, again_w))


def fold_queries(src, dst):
    """Plain-word versions of the queries: punctuation (which QueryParser
    turns into phrases) becomes space and the boolean operator words
    lose their capitals, so every query falls in the shapes the engines
    serve.  The plain pass must compare every single query."""
    ops = re.compile(r"\b(AND|OR|NOT|XOR|NEAR|ADJ)\b")
    with open(src, encoding="utf-8") as f, open(dst, "w", encoding="utf-8") as o:
        for line in f:
            if "\t" not in line:
                continue
            qid, text = line.rstrip("\n").split("\t", 1)
            text = re.sub(r"[^0-9A-Za-z]+", " ", text)
            text = ops.sub(lambda m: m.group(1).lower(), text)
            o.write("%s\t%s\n" % (qid, text))


ENGINE = "cpu"
MEMBER = "auto"   # the GPU engine's AND membership test
LIST_CACHE = 0    # KiB: force the GPU engine's LRU list cache
IMPACTS = False   # export --impacts: OR candidates from quantized impacts
CAND_MIN = 0      # the GPU engine's least candidate room (0: its default)


def compare(name, binary, db, queries, ops=("or", "and", "andor"),
            ks=(10, 1000)):
    """Returns (compared, unsupported); exits on the first difference."""
    compared = unsupported = 0
    for op in ops:
        for k in ks:
            ref = search(binary, db, queries, "xapian", op, k)
            got = search(binary, db, queries, ENGINE, op, k)
            if len(ref) != len(got):
                sys.exit("FAIL %s op=%s k=%d: %d vs %d answers" %
                         (name, op, k, len(ref), len(got)))
            for r, g in zip(ref, got):
                if r["qid"] != g["qid"]:
                    sys.exit("FAIL %s: qid order differs" % name)
                if "error" in r:
                    # QueryParser rejected it: both engines must agree.
                    if "error" not in g:
                        sys.exit("FAIL %s qid %s: xapian error %r, cpu answered"
                                 % (name, r["qid"], r["error"]))
                    continue
                if "error" in g:
                    if not g["error"].startswith("unsupported: "):
                        sys.exit("FAIL %s qid %s: cpu error %r" %
                                 (name, r["qid"], g["error"]))
                    unsupported += 1
                    continue
                if r["results"] != g["results"]:
                    for i, (a, b) in enumerate(zip(r["results"], g["results"])):
                        if a != b:
                            break
                    sys.exit("FAIL %s op=%s k=%d qid %s: MSets differ at rank "
                             "%d: xapian %s cpu %s (lengths %d/%d)" %
                             (name, op, k, r["qid"], i + 1,
                              r["results"][i:i + 1], g["results"][i:i + 1],
                              len(r["results"]), len(g["results"])))
                # Xapian's estimate is exact when it returned fewer than k.
                if len(r["results"]) < k and \
                        r["matches_estimated"] != g["matches_estimated"]:
                    sys.exit("FAIL %s op=%s k=%d qid %s: match count %d vs %d"
                             % (name, op, k, r["qid"], r["matches_estimated"],
                                g["matches_estimated"]))
                compared += 1
    return compared, unsupported


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--ir-data", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--only", help="comma-separated collections")
    ap.add_argument("--engine", default="cpu", choices=["cpu", "gpu"],
                    help="engine compared with stock Xapian")
    ap.add_argument("--member", default="auto",
                    choices=["auto", "binary", "lr", "hashseg", "merge",
                             "block"],
                    help="AND membership test of the GPU engine")
    ap.add_argument("--list-cache", type=int, default=0, metavar="KIB",
                    help="force the GPU engine's list cache to KIB KiB")
    ap.add_argument("--impacts", action="store_true",
                    help="export with --impacts and check they are used")
    ap.add_argument("--cand-min", type=int, default=0, metavar="N",
                    help="the GPU engine's least candidate room (small: the "
                    "selection narrows even on small collections)")
    a = ap.parse_args()
    global ENGINE, MEMBER, LIST_CACHE, IMPACTS, CAND_MIN
    IMPACTS = a.impacts
    CAND_MIN = a.cand_min
    ENGINE = a.engine
    MEMBER = a.member
    LIST_CACHE = a.list_cache
    print("engine under test: %s%s%s%s" % (
        a.engine, " (CPU twins of the kernels)"
        if os.environ.get("XG_GPU_TWINS") == "1" else "",
        ", membership %s" % a.member if a.engine == "gpu" else "",
        ", impacts" if a.impacts else ""))
    why = skip_reason(a.bin, a.ir_data, a.work, a.engine)
    if why:
        # As every GPU test does without a device.
        print("SKIP: %s" % why)
        return 77
    colls = collections(a.ir_data, a.only)
    passed = 0
    total_cmp = 0
    for c in colls:
        docs = os.path.join(a.ir_data, c, "docs.tsv")
        queries = os.path.join(a.ir_data, c, "queries.tsv")
        variants = [("", [])]
        if c in ("cacm", "cranfield"):
            variants += [("-2shards", ["--shards", "2"]),
                         ("-deleted", ["--delete-every", "7"]),
                         ("-3shards-deleted", ["--shards", "3",
                                               "--delete-every", "5"])]
        for suffix, opts in variants:
            name = c + suffix
            db = os.path.join(a.work, name)
            t = time.time()
            build(a.bin, docs, db, *opts,
                  export=["--impacts"] if IMPACTS else [])
            n, u = compare(name, a.bin, db, queries)
            if LIST_CACHE:
                check_cache_used(a.bin, db, queries)
            if IMPACTS and a.engine == "gpu":
                check_impacts_used(a.bin, db, queries)
            if n == 0:
                sys.exit("FAIL %s: no query was compared" % name)
            plain = os.path.join(a.work, c + "-plain-queries.tsv")
            fold_queries(queries, plain)
            pn, pu = compare(name + " plain", a.bin, db, plain)
            if pu:
                sys.exit("FAIL %s: %d plain-word queries unsupported" %
                         (name, pu))
            print("ok %-24s %5d MSets identical, %4d unsupported; plain "
                  "words: all %d identical (%.1fs)" %
                  (name, n, u, pn, time.time() - t))
            passed += 1
            total_cmp += n + pn

    # Sparse docids: 10^4 documents, docids 20000 apart (last ~2*10^8).
    lines = []
    for c in colls:
        with open(os.path.join(a.ir_data, c, "docs.tsv"), encoding="utf-8") as f:
            for line in f:
                if "\t" in line:
                    lines.append(line.split("\t", 1)[1])
                if len(lines) == 10000:
                    break
        if len(lines) == 10000:
            break
    if len(lines) == 10000:
        tsv = os.path.join(a.work, "sparse.tsv")
        with open(tsv, "w", encoding="utf-8") as f:
            for i, text in enumerate(lines):
                f.write("%d\t%s" % (i + 1, text if text.endswith("\n")
                                    else text + "\n"))
        db = os.path.join(a.work, "sparse")
        shutil.rmtree(db, ignore_errors=True)
        run([a.bin, "index", "--quiet", "--docid-scale", "20000", tsv, db])
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        run([a.bin, "export", "--quiet", *(["--impacts"] if IMPACTS else []),
             db])
        rss_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        size = os.path.getsize(os.path.join(db, "xapian-gpu.idx"))
        # A dense array over 2*10^8 docids would be 800 MB of uint32.
        if size > 16 << 20:
            sys.exit("FAIL sparse: index is %d bytes" % size)
        if max(rss_kb, before) > 400 * 1024:
            sys.exit("FAIL sparse: export peak RSS %d KiB" % rss_kb)
        qfile = os.path.join(a.ir_data, "cacm", "queries.tsv")
        n, u = compare("sparse", a.bin, db, qfile)
        if n == 0:
            sys.exit("FAIL sparse: no query was compared")
        print("ok %-24s %5d MSets identical, %4d unsupported; index %d bytes,"
              " peak RSS %d KiB" % ("sparse-docids", n, u, size, rss_kb))
        passed += 1
        total_cmp += n
    print("%d MSets compared in all" % total_cmp)
    print("%d passed, 0 failed" % passed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
