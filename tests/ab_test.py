#!/usr/bin/env python3
"""Golden A/B test: the CPU matcher's MSets equal stock Xapian's.

Proves DESIGN.md's exactness contract ("For every query the plugin serves,
the MSet equals the stock matcher's: same docids, same order, same weights
(bit-equal doubles), same tie order") for the CPU engine, on every
collection of ../shared/ir-data (or, where it is absent, the bundled
sample tests/sample/cranfield), for OR, AND and AND-then-OR at every k
from 1 to 20 and at k = 1000 (--ks), plus a two-shard variant, a
deleted-documents variant and a sparse-docid variant (up to 10^4
documents, last docid near 2*10^8; always run).  Each collection's
queries are joined by phrase queries cut from its own text (quoted and
hyphenated words, phrase_queries()), which every engine must serve.  Weights are compared as
the %.17g text the CLI prints, which round-trips doubles exactly.  Stock
Xapian is asked for k = 20 and k = 1000 (and 1 and 10, to check its top k
is the prefix of its top 20); the engine under test for every k.

Pages (first > 0) are not compared here: `xapian-gpu search` has no
--first option (test_plugin_app.cc compares pages through Enquire).

Who answered is required, not assumed: `xapian-gpu ab --json` per
operator gives the "routing" counts, and every query the engine under
test can serve must have been answered by it (--engine gpu: by the GPU
engine, except the queries over its limits, more than 32 AND operands or
64 leaves, and at most --max-cpu (2%) of the rest, which the CPU matcher
answers: both counts are printed), none by stock Xapian; zero MSets
compared is a FAIL.

Skips (exit 77) only for --engine gpu without a CUDA device (or in a
build without CUDA); any other failure of the GPU engine is a FAIL.
"""
import argparse
import json
import os
import re
import subprocess
import shutil
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from testlib import (build, collections, resolve_ir_data, run, run_any,
                     skip_reason, write_and_maybe_skip)


def search(binary, db, queries, engine, op, k):
    extra = gpu_extra() if engine == "gpu" else []
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
    on exact sums on the device, not on the CPU, with identical MSets;
    and with every such query's selection reading its touched list."""
    def bench(env=None):
        out = run([binary, "bench", "--db", db, "--queries", queries,
                   "--engines", "xapian,gpu", "--threads", "1", "--op", "or",
                   "--impacts", "auto",
                   *(["--cand-min", str(CAND_MIN)] if CAND_MIN else [])],
                  env=env)
        m = re.search(r"impacts: (\d+) queries chose .* \((\d+) from touched "
                      r"lists; (\d+) overflowed", out)
        d = re.search(r"(\d+) served on the device, (\d+) by the CPU", out)
        if not m or not d or int(m.group(1)) == 0:
            sys.exit("FAIL %s: the impacts were not used:\n%s" % (db, out))
        return int(m.group(1)), int(m.group(3)), d.groups(), out, \
            int(m.group(2))
    used, again, served, _, sparse = bench()
    env = dict(os.environ, XG_TEST_IMPACT_SLACK="1e6")
    used_w, again_w, served_w, out, _ = bench(env)
    if again_w == 0 or served_w != served:
        sys.exit("FAIL %s: widened margins: %d queries ran again, device/CPU "
                 "%s against %s:\n%s" % (db, again_w, served_w, served, out))
    # Every such query from its touched list (real data lists only the
    # queries with few postings): the same MSets, all still on the device.
    used_s, _, served_s, out, sparse_s = bench(
        dict(os.environ, XG_TEST_SPARSE="1"))
    if sparse_s != used_s or used_s != used or served_s != served:
        sys.exit("FAIL %s: XG_TEST_SPARSE: %d of %d impact queries from "
                 "touched lists, device/CPU %s against %s:\n%s"
                 % (db, sparse_s, used_s, served_s, served, out))
    print("   impacts: %d OR queries chose their candidates from them (%d "
          "from touched lists; all %d when forced), %d ran again on exact "
          "sums; widened margins: %d ran again, all still on the device"
          % (used, sparse, sparse_s, again, again_w))


def check_finish_ways(name, binary, db, queries):
    """The finish's two ways of finding the candidates' wdfs, each forced
    for every query (XG_FINISH_WDFS; by cost these small collections
    mostly gather): every MSet of the GPU engine identical to stock's, at
    top 10 and top 1000."""
    done = []
    for way, k in (("lookup", 10), ("lookup", 1000), ("gather", 10)):
        out = run([binary, "bench", "--db", db, "--queries", queries,
                   "--engines", "xapian,gpu", "--op", "or", "-k", str(k),
                   "--threads", "1", "--repeat", "1", *gpu_extra()],
                  env=dict(os.environ, XG_FINISH_WDFS=way), timeout=600)
        m = re.search(r"compared (\d+) MSets, identical (\d+), "
                      r"different (\d+)", out)
        if not m or m.group(3) != "0" or m.group(1) != m.group(2) or \
                m.group(1) == "0":
            sys.exit("FAIL %s: XG_FINISH_WDFS=%s, top %d:\n%s"
                     % (name, way, k, out))
        done.append("%s k%d %s" % (way, k, m.group(1)))
    return "; wdfs forced: " + ", ".join(done) + " identical"


def check_one_term_paths(binary, db, plain, work):
    """Where the GPU engine's one-term queries go (gpu/query/batch.c,
    xg_batch_build): one at a time, those with a short list intersect;
    mixed with multi-word ORs in batches of 16 they take a row like the
    rest (the intersection's launches would run for them alone); in a
    batch of 64 or more the short ones intersect again.  Every one is exact either way (compare() checks the MSets)."""
    words = os.path.join(work, "paths-words.tsv")
    open(words, "w").close()
    n = word_queries(plain, words, limit=40)
    multi = []
    with open(plain, encoding="utf-8") as f:
        for line in f:
            if "\t" in line and len(re.findall(r"[A-Za-z]+",
                                               line.split("\t", 1)[1])) >= 3:
                multi.append(line if line.endswith("\n") else line + "\n")
    with open(words, encoding="utf-8") as f:
        one = [line for line in f if "\t" in line]
    # Pairs enough for a batch of 64 or more.
    pairs = min(len(one), len(multi))
    if pairs < 32:
        sys.exit("FAIL %s: %d one-word and %d multi-word queries for the "
                 "path check" % (db, 2 * n, len(multi)))
    one = one[:pairs]
    with open(words, "w", encoding="utf-8") as o:
        o.writelines(one)
    mixed = os.path.join(work, "paths-mixed.tsv")
    with open(mixed, "w", encoding="utf-8") as o:
        for w, m in zip(one, multi):
            o.write(w)
            o.write(m)

    def paths(queries, batch):
        out = run([binary, "bench", "--db", db, "--queries", queries,
                   "--engines", "gpu", "--threads", "1", "--op", "or",
                   "--batch", str(batch), "--repeat", "1"])
        m = re.search(r"paths: (\d+) queries took a row, (\d+) the "
                      r"intersection", out)
        if not m:
            sys.exit("FAIL %s: bench printed no paths:\n%s" % (db, out))
        return int(m.group(1)), int(m.group(2))

    _, alone = paths(words, 1)
    _, mixed16 = paths(mixed, 16)
    _, mixed_big = paths(mixed, 256)
    if alone == 0 or mixed16 != 0 or mixed_big != alone:
        sys.exit("FAIL %s: one-term queries intersected: %d one at a "
                 "time, %d mixed in batches of 16 (want 0), %d "
                 "mixed in one batch of %d (want %d)"
                 % (db, alone, mixed16, mixed_big, 2 * len(one), alone))
    print("   one-term paths: %d of %d one-word queries intersect one at a "
          "time and in a batch of %d, none in mixed batches of 16"
          % (alone, len(one), 2 * len(one)))


def fold_queries(src, dst, append_original=False):
    """Plain-word versions of the queries: punctuation (which QueryParser
    turns into phrases) becomes space and the boolean operator words
    lose their capitals, so every query falls in the shapes the engines
    serve.  The plain pass must compare every single query."""
    ops = re.compile(r"\b(AND|OR|NOT|XOR|NEAR|ADJ)\b")
    with open(src, encoding="utf-8") as f, open(dst, "w", encoding="utf-8") as o:
        lines = [l.rstrip("\n").split("\t", 1) for l in f if "\t" in l]
        if append_original:
            o.writelines("%s\t%s\n" % (q, t) for q, t in lines)
        for qid, text in lines:
            text = re.sub(r"[^0-9A-Za-z]+", " ", text)
            text = ops.sub(lambda m: m.group(1).lower(), text)
            o.write("plain-%s\t%s\n" % (qid, text))


def word_queries(src, dst, limit=120):
    """One-word queries: the distinct words of the collection's queries
    in their order, and each twice ("w w"), appended to dst.  The GPU
    engine intersects a word whose list is short and accumulates a row
    for a common one (gpu/query/batch.c, batch_path); both must give
    stock's MSet."""
    seen = []
    with open(src, encoding="utf-8") as f:
        for line in f:
            if "\t" not in line:
                continue
            for w in re.findall(r"[A-Za-z]+", line.split("\t", 1)[1]):
                w = w.lower()
                if w not in seen and w not in ("and", "or", "not", "xor",
                                               "near", "adj"):
                    seen.append(w)
    words = seen[:limit]
    with open(dst, "a", encoding="utf-8") as o:
        for i, w in enumerate(words):
            o.write("word-%d\t%s\n" % (i, w))
            o.write("word2-%d\t%s %s\n" % (i, w, w))
    return len(words)


def phrase_queries(docs, dst, limit=160):
    """Queries with phrases and the other operators QueryParser offers by
    default, taken from the collection's own text so that most of them
    match: a quoted pair, a hyphenated pair, a quoted triple between two
    other words of the document, two hyphenated pairs, words with a -word
    and with NOT, a phrase with a -word, NEAR and ADJ, +word, upper-case
    AND/OR/NOT nestings and a negated phrase (qids "phr-...").
    Deterministic: documents evenly spread."""
    shapes = ('"{0} {1}"', "{0}-{1}", '{3} "{0} {1} {2}" {4}',
              "{0}-{1} {2}-{3}", "{0} {1} -{3}", "{0} {2} NOT {4}",
              '"{0} {1}" -{4}', "{0} NEAR {2}", "{3} {1} NEAR/3 {0}",
              "{0} ADJ/4 {2}", "+{0} {1} {3}", "{0} OR {1} AND {2}",
              "({0} OR {3}) AND NOT {4}", '"{0} {1}" OR {3} AND {2}',
              '{3} {4} -"{0} {1}"', "{0}-{1} OR {4} AND NOT {3}")
    out = []
    with open(docs, encoding="utf-8") as f:
        lines = f.readlines()
    every = max(1, len(lines) // (2 * limit))
    for n, line in enumerate(lines):
        if n % every or "\t" not in line:
            continue
        words = re.findall(r"[a-z]{3,}", line.split("\t", 1)[1].lower())
        if len(words) < 12:
            continue
        mid = len(words) // 2
        shape = shapes[len(out) % len(shapes)]
        w = words[mid:mid + 3] + [words[1], words[-2]]
        if len(set(w)) < len(w):   # NEAR refuses a repeated term
            continue
        out.append("phr-%d\t%s\n" % (len(out), shape.format(*w)))
        if len(out) == limit:
            break
    with open(dst, "w", encoding="utf-8") as o:
        o.writelines(out)
    return len(out)


ENGINE = "cpu"
MEMBER = "auto"   # the GPU engine's AND membership test
LIST_CACHE = 0    # KiB: force the GPU engine's LRU list cache
IMPACTS = False   # export with impacts (the default) and check they are
                  # used; otherwise --no-impacts: the exact OR path
CAND_MIN = 0      # the GPU engine's least candidate room (0: its default)


RSS_PROBE = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
_, status, ru = os.wait4(pid, 0)
sys.stderr.write("peak-rss-kib %d\\n" % ru.ru_maxrss)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def run_rss(cmd):
    """Run cmd (FAIL on a nonzero exit); its own peak RSS in KiB.  Linux
    carries the forking process's peak across exec, so the command is
    started from a fresh small Python (~10 MB), not from this one (which
    holds every MSet compared: hundreds of MB)."""
    p = subprocess.run([sys.executable, "-c", RSS_PROBE, *cmd],
                       capture_output=True, text=True)
    m = re.search(r"peak-rss-kib (\d+)", p.stderr)
    if p.returncode or not m:
        sys.exit("FAIL: %s exited %d:\n%s%s" % (" ".join(cmd), p.returncode,
                                                 p.stdout, p.stderr))
    return int(m.group(1))


def parse_ks(text):
    """"1-20,1000" -> [1, ..., 20, 1000]."""
    ks = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        ks.update(range(int(lo), int(hi or lo) + 1))
    return sorted(ks)


KS = parse_ks("1-20,1000")
MAX_CPU = 0.02    # --engine gpu: the most (fraction) the CPU matcher answers
                  # of the queries within the GPU's limits


def op_ks(ks, op):
    """AND-then-OR is compared at fewer k (1, 2, 5, 10, 20 and those above
    20): stock is asked for each of them."""
    return [k for k in ks if op != "andor" or k > 20 or k in (1, 2, 5, 10, 20)]


QUIRKS = []       # (name, op, k, qid): stock's MSet at k is not its top k


def compare(name, binary, db, queries, ops=("or", "and", "andor"), ks=None,
            stock_every_k=False):
    """Returns (compared, unsupported); exits on the first difference.
    compared counts (query, op, k) MSets.  The searches run two at a time
    (the suite runs alone: is_parallel false)."""
    all_ks = ks or KS
    compared = unsupported = 0
    jobs = {}
    for op in ops:
        ks = op_ks(all_ks, op)
        # Stock's MSets: k = 20 (whose prefixes are its smaller k's) and
        # 1000, 1 and 10 to check the prefix rule.  AND-then-OR depends on
        # k (OR when AND finds fewer than k), and Xapian's pruning on a
        # database with deleted documents can miss a document of its top
        # k (see QUIRKS): there stock is asked for every k.
        every = stock_every_k or op == "andor"
        for k in set(ks) | {1000} | (set() if every else {1, 10, 20}):
            if every or k > 20 or k in (1, 10, 20):
                jobs[("xapian", op, k)] = None
        for k in ks:
            jobs[(ENGINE, op, k)] = None
    with ThreadPoolExecutor(2) as pool:
        futs = {key: pool.submit(search, binary, db, queries, *key)
                for key in jobs}
        res = {key: f.result() for key, f in futs.items()}
    for op in ops:
        ks = op_ks(all_ks, op)
        # Stock's top k at the other k is read off its top 20.  Where its
        # top 1 or 10 is not the prefix of its top 20, its pruning depends
        # on k (a phrase in an AND's OR moves with it): the engine must then
        # give the full ranking's top k at every k, counted apart.
        pruned_by_k = set()
        for k in (1, 10):
            if ("xapian", op, k) not in res or ("xapian", op, 20) not in res \
                    or op == "andor":
                continue
            for r, r20 in zip(res[("xapian", op, k)], res[("xapian", op, 20)]):
                if "error" not in r and r["results"] != r20["results"][:k]:
                    pruned_by_k.add(r["qid"])
        top = res[("xapian", op, 1000)]
        for k in ks:
            ref = res.get(("xapian", op, k)) or res[("xapian", op, 20)]
            got = res[(ENGINE, op, k)]
            if len(ref) != len(got):
                sys.exit("FAIL %s op=%s k=%d: %d vs %d answers" %
                         (name, op, k, len(ref), len(got)))
            for i, (r, g, t) in enumerate(zip(ref, got, top)):
                if r["qid"] != g["qid"]:
                    sys.exit("FAIL %s: qid order differs" % name)
                if "error" in r:
                    # QueryParser rejected it: both engines must agree.
                    if "error" not in g:
                        sys.exit("FAIL %s qid %s: xapian error %r, %s answered"
                                 % (name, r["qid"], r["error"], ENGINE))
                    continue
                if "error" in g:
                    if not g["error"].startswith("unsupported: ") or \
                            r["qid"].startswith(("plain-", "phr-")):
                        sys.exit("FAIL %s qid %s: %s error %r" %
                                 (name, r["qid"], ENGINE, g["error"]))
                    unsupported += 1
                    continue
                want = r["results"][:k]
                tops = [t["results"][:k]]
                if r["qid"] in pruned_by_k:
                    if g["results"] != tops[0]:
                        sys.exit("FAIL %s op=%s k=%d qid %s: stock's top k "
                                 "depends on k, and %s's is not its full "
                                 "ranking's" % (name, op, k, r["qid"], ENGINE))
                    QUIRKS.append((name, op, k, r["qid"]))
                    compared += 1
                    continue
                if op == "andor":   # the AND or the OR form's top k
                    tops = [x[i]["results"][:k] for x in
                            (res[("xapian", o, 1000)] for o in ("or", "and")
                             if ("xapian", o, 1000) in res)
                            if "results" in x[i]]
                if want != g["results"] and want not in tops and \
                        g["results"] in tops:
                    # Stock's own MSet at k is not its top k: Xapian 1.4
                    # pruned a document it returns when asked for more.
                    # The engine gave the true top k; reported, not failed.
                    QUIRKS.append((name, op, k, r["qid"]))
                    compared += 1
                    continue
                if want != g["results"]:
                    i = next((i for i, (a, b) in enumerate(
                        zip(want, g["results"])) if a != b),
                        min(len(want), len(g["results"])))
                    sys.exit("FAIL %s op=%s k=%d qid %s: MSets differ at rank "
                             "%d: xapian %s %s %s (lengths %d/%d)" %
                             (name, op, k, r["qid"], i + 1,
                              want[i:i + 1], ENGINE, g["results"][i:i + 1],
                              len(want), len(g["results"])))
                # Xapian's estimate is exact when it returned fewer than k.
                if len(want) < k and \
                        r["matches_estimated"] != g["matches_estimated"]:
                    sys.exit("FAIL %s op=%s k=%d qid %s: match count %d vs %d"
                             % (name, op, k, r["qid"], r["matches_estimated"],
                                g["matches_estimated"]))
                compared += 1
    return compared, unsupported


def gpu_extra():
    extra = ["--member", MEMBER]
    if LIST_CACHE:
        extra += ["--list-cache", str(LIST_CACHE)]
    if CAND_MIN:
        extra += ["--cand-min", str(CAND_MIN)]
    if IMPACTS:
        extra += ["--impacts", "auto"]
    return extra


def check_members(name, stdout):
    """The GPU engine's membership tests of an AND run, from ab's line
    "membership tests (AND lists probed): binary N, lr N, ...": some
    lists were probed, and with --member M forced, all by M."""
    m = re.search(r"^membership tests \(AND lists probed\): (.*); behind a "
                  r"Bloom filter (\d+)$", stdout, re.M)
    if not m:
        sys.exit("FAIL %s: ab printed no membership line:\n%s" % (name, stdout))
    counts = {k: int(v) for k, v in
              (kv.strip().split() for kv in m.group(1).split(","))}
    probed = sum(counts.values())
    if probed == 0:
        sys.exit("FAIL %s op=and: the GPU engine probed no AND list (%s)"
                 % (name, m.group(1)))
    if MEMBER != "auto" and counts.get(MEMBER, 0) != probed:
        sys.exit("FAIL %s op=and: --member %s asked for, but the lists were "
                 "probed by %s" % (name, MEMBER, m.group(1)))
    return "members: " + ", ".join("%s %d" % kv for kv in counts.items() if kv[1])


def check_routing(name, binary, db, queries, work, ops=("or", "and")):
    """xapian-gpu ab --engines xapian,ENGINE --json: no MSet differs, and
    the engine asked for answered every query it serves (its "routing"):
    for cpu, the CPU matcher all of them; for gpu, the GPU engine all but
    at most MAX_CPU of them (the CPU matcher the rest, reported), stock
    none.  Returns a note for the ok line."""
    notes = []
    for op in ops:
        out = os.path.join(work, "routing.json")
        stdout = run([binary, "ab", "--db", db, "--queries", queries,
                      "--engines", "xapian," + ENGINE, "--op", op, "-k", "10",
                      "--json=" + out,
                      *(gpu_extra() if ENGINE == "gpu" else [])])
        if ENGINE == "gpu" and op == "and":
            notes.append(check_members(name, stdout))
        with open(out) as f:
            rep = json.load(f)
        served = rep["queries"] - rep["unsupported"] - rep["rejected"]
        eng = rep["engines"][1]
        rt = eng["routing"]
        if eng["engine"] != ENGINE or rep["different"] or served <= 0 or \
                rep["identical"] != served:
            sys.exit("FAIL %s op=%s: ab --engines xapian,%s: %d queries, %d "
                     "identical, %d different, %d unsupported, %d rejected" %
                     (name, op, ENGINE, rep["queries"], rep["identical"],
                      rep["different"], rep["unsupported"], rep["rejected"]))
        # What the GPU engine cannot serve by design goes to the CPU
        # matcher: more than XG_GPU_MAX_GROUPS (32) AND operands or
        # XG_GPU_MAX_LEAVES (64) leaves (gpu/query/engine_types.h); each
        # plain word is a leaf and, with AND, an operand.
        with open(queries, encoding="utf-8") as f:
            words = [len(l.split("\t", 1)[1].split()) for l in f if "\t" in l]
        limit = 32 if op == "and" else 64
        over = sum(w > limit for w in words)
        cpu_ok = 0 if ENGINE == "cpu" else over + int(MAX_CPU * served)
        if rt.get("xapian", 0) or rt.get(ENGINE, 0) + (
                rt.get("cpu", 0) if ENGINE == "gpu" else 0) != served or \
                (ENGINE == "gpu" and rt.get("cpu", 0) > cpu_ok):
            sys.exit("FAIL %s op=%s: engine %s asked for, but the routing of "
                     "the %d queries it serves is %s (the CPU matcher may "
                     "answer at most %d: %d over the GPU's %d-%s limit, and "
                     "%g of the rest)" % (name, op, ENGINE, served, rt,
                                          cpu_ok, over, limit,
                                          "operand" if op == "and" else "leaf",
                                          MAX_CPU))
        notes.append("%s %d/%d%s" % (op, rt[ENGINE], served,
                                     " (cpu %d; %d over the GPU's limits)" %
                                     (rt["cpu"], over)
                                     if ENGINE == "gpu" and rt["cpu"] else ""))
    return "answered by %s: %s" % (ENGINE, ", ".join(notes))


def check_phrases_on_gpu(name, binary, db, phrases, work):
    """With the positions resident (no list cache), the GPU engine answers
    the phrase and hyphen queries that are ANDs of terms itself (their
    filters decided on the device, or by the twins), identical to stock:
    at least a quarter of the quoted and hyphenated pairs' queries."""
    if ENGINE != "gpu" or LIST_CACHE:
        return ""
    with open(phrases, encoding="utf-8") as f:
        texts = [l.split("\t", 1)[1] for l in f if "\t" in l]
    pairs = sum(1 for t in texts if re.fullmatch(r'"\w+ \w+"\s*|\w+-\w+\s*', t))
    out = os.path.join(work, "phrases.json")
    run([binary, "ab", "--db", db, "--queries", phrases, "--engines",
         "xapian,gpu", "--op", "and", "-k", "10", "--json=" + out,
         *gpu_extra()])
    with open(out) as f:
        rep = json.load(f)
    gpu = rep["engines"][1]["routing"].get("gpu", 0)
    if rep["different"] or gpu < max(1, pairs // 4):
        sys.exit("FAIL %s: phrases with --op and: %d different; the GPU "
                 "answered %d (of %d quoted or hyphenated pairs)"
                 % (name, rep["different"], gpu, pairs))
    return "; phrase ANDs on the GPU %d/%d" % (gpu, len(texts))


def check_bench_own_threads(name, binary, db, queries, work):
    """bench's engine path (--engines xapian,auto; gpu with a device):
    the queries no engine batch takes (without a device, all of them;
    with one, phrases in ORs and the general form) are answered by the
    thread that prepared them, and more than a window of 1,024 of them in
    a row must not stall the batch runners.  Every MSet identical, every
    query routed."""
    with open(queries, encoding="utf-8") as f:
        lines = [l for l in f if "\t" in l]
    if not lines:
        sys.exit("FAIL %s: no queries for bench" % name)
    many = os.path.join(work, "bench-own-threads.tsv")
    with open(many, "w", encoding="utf-8") as o:
        for i in range(3000):
            o.write("b%d\t%s" % (i, lines[i % len(lines)].split("\t", 1)[1]))
    engine = "gpu" if ENGINE == "gpu" else "auto"
    out = run([binary, "bench", "--db", db, "--queries", many, "--engines",
               "xapian," + engine, "--op", "or", "-k", "10", "--threads", "4",
               "--repeat", "1", *(gpu_extra() if ENGINE == "gpu" else [])],
              timeout=600)
    m = re.search(r"compared (\d+) MSets, identical (\d+), different (\d+)",
                  out)
    rt = re.search(r"^%s +(\d+) +(\d+) +(\d+)$" % engine, out, re.M)
    if not m or not rt or m.group(3) != "0" or m.group(1) != m.group(2) or \
            sum(int(x) for x in rt.groups()) != int(m.group(1)):
        sys.exit("FAIL %s: bench --engines xapian,%s over %d queries:\n%s"
                 % (name, engine, 3000, out))
    return "; bench %s: %s identical, routed xapian/cpu/gpu %s" % (
        engine, m.group(1), "/".join(rt.groups()))


def check_and_maybe_skip(binary, work):
    """Stock's top 1 misses the document its full ranking puts first:
    ab reports the query apart, not as a difference, and the engine
    returns the full ranking's document."""
    os.makedirs(work, exist_ok=True)
    tsv = os.path.join(work, "and-maybe-skip.tsv")
    qs = os.path.join(work, "and-maybe-skip-queries.tsv")
    db = os.path.join(work, "and-maybe-skip")
    write_and_maybe_skip(tsv)
    with open(qs, "w") as f:
        f.write("skip\tp r e\n")
    build(binary, tsv, db)
    want = "stock's top 1 differs from its own full ranking: 1 MSets"
    r = run_any([binary, "ab", "--db", db, "--queries", qs, "-k", "1",
                 "--stem", "none", "--engines", "xapian," + ENGINE])
    out = r.stdout
    if r.returncode != 0 or want not in out or "different 0" not in out:
        sys.exit("FAIL: stock's AND_MAYBE skip: ab exit %d, stdout %r" %
                 (r.returncode, out[:400]))
    # k 2 holds both documents: stock agrees with itself.
    r = run_any([binary, "ab", "--db", db, "--queries", qs, "-k", "2",
                 "--stem", "none", "--engines", "xapian," + ENGINE])
    out = r.stdout
    if r.returncode != 0 or "identical 1" not in out or "full ranking" in out:
        sys.exit("FAIL: stock's AND_MAYBE skip at k 2: %r" % out[:400])
    print("ok stock's AND_MAYBE skip: top 1 reported apart, %s returns the "
          "full ranking's; top 2 identical" % ENGINE)


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
                    help="export with impacts (export's default) and check they "
                    "are used; without it the indexes have none")
    ap.add_argument("--cand-min", type=int, default=0, metavar="N",
                    help="the GPU engine's least candidate room (small: the "
                    "selection narrows even on small collections)")
    ap.add_argument("--ks", default="1-20,1000",
                    help="the k compared on the first collection's first "
                    "variant (default 1-20,1000)")
    ap.add_argument("--other-ks", default=None,
                    help="the k compared on every other variant and "
                    "collection (default: --ks; the slower GPU-twin suites "
                    "pass 10,1000)")
    ap.add_argument("--max-cpu", type=float, default=0.02,
                    help="--engine gpu: the largest fraction of the queries "
                    "within the GPU's limits that the CPU matcher may "
                    "answer (those over them always may)")
    a = ap.parse_args()
    global ENGINE, MEMBER, LIST_CACHE, IMPACTS, CAND_MIN, KS, MAX_CPU
    IMPACTS = a.impacts
    CAND_MIN = a.cand_min
    ENGINE = a.engine
    MEMBER = a.member
    LIST_CACHE = a.list_cache
    MAX_CPU = a.max_cpu
    KS = parse_ks(a.ks)
    other_ks = parse_ks(a.other_ks) if a.other_ks else KS
    print("engine under test: %s%s%s%s; k %s" % (
        a.engine, " (CPU twins of the kernels)"
        if os.environ.get("XG_GPU_TWINS") == "1" else "",
        ", membership %s (checked from ab's counts)" % a.member
        if a.engine == "gpu" else "",
        ", impacts" if a.impacts else "", a.ks))
    ir_data = resolve_ir_data(a.ir_data)
    why = skip_reason(a.bin, ir_data, a.work, a.engine)
    if why:
        # As every GPU test does without a device.
        print("SKIP: %s" % why)
        return 77
    check_and_maybe_skip(a.bin, a.work)
    colls = collections(ir_data, a.only, strict=True)
    passed = 0
    total_cmp = 0
    for c in colls:
        docs = os.path.join(ir_data, c, "docs.tsv")
        queries = os.path.join(ir_data, c, "queries.tsv")
        variants = [("", [])]
        if c in ("cacm", "cranfield"):
            variants += [("-2shards", ["--shards", "2"]),
                         ("-deleted", ["--delete-every", "7"]),
                         ("-3shards-deleted", ["--shards", "3",
                                               "--delete-every", "5"])]
        for suffix, opts in variants:
            name = c + suffix
            ks = KS if c == colls[0] and not suffix else other_ks
            db = os.path.join(a.work, name)
            t = time.time()
            build(a.bin, docs, db, *opts,
                  export=["--impacts"] if IMPACTS else ["--no-impacts"])
            # The queries as given, then their plain-word versions (qids
            # "plain-..."), which must all be served.
            both = os.path.join(a.work, c + "-queries+plain.tsv")
            fold_queries(queries, both, append_original=True)
            if word_queries(queries, both) < 50:
                sys.exit("FAIL %s: too few one-word queries" % c)
            # And phrases from the text, which every engine must serve.
            phr = os.path.join(a.work, c + "-phrases.tsv")
            if phrase_queries(docs, phr) < 30:
                sys.exit("FAIL %s: too few phrase queries" % c)
            with open(both, "a", encoding="utf-8") as o, \
                    open(phr, encoding="utf-8") as f:
                o.write(f.read())
            plain = os.path.join(a.work, c + "-plain-queries.tsv")
            fold_queries(queries, plain)
            if LIST_CACHE:
                check_cache_used(a.bin, db, queries)
            if IMPACTS and a.engine == "gpu":
                check_impacts_used(a.bin, db, queries)
            if a.engine == "gpu" and c == colls[0] and not suffix:
                check_one_term_paths(a.bin, db, plain, a.work)
            n, u = compare(name, a.bin, db, both, ks=ks,
                           stock_every_k="deleted" in name)
            if n == 0:
                sys.exit("FAIL %s: no query was compared" % name)
            routed = check_routing(name, a.bin, db, plain, a.work)
            # The kernels' own choice: not on their CPU twins, whose
            # finish always looks the wdfs up.
            if a.engine == "gpu" and os.environ.get("XG_GPU_TWINS") != "1":
                routed += check_finish_ways(name, a.bin, db, plain)
            routed += check_phrases_on_gpu(name, a.bin, db, phr, a.work)
            # Once per suite; not on the kernels' CPU twins, where the
            # engine is slow and ab_ir_data's auto run covers the path.
            if c == colls[0] and not suffix and \
                    os.environ.get("XG_GPU_TWINS") != "1":
                routed += check_bench_own_threads(name, a.bin, db, both,
                                                  a.work)
            print("ok %-24s %5d MSets identical (queries and their plain "
                  "words), %4d unsupported (none plain); k %s; %s (%.1fs)" %
                  (name, n, u, "%d-%d,%s" % (ks[0], min(ks[-1], 20), ks[-1])
                   if len(ks) > 2 else ks, routed, time.time() - t))
            passed += 1
            total_cmp += n

    # Sparse docids: up to 10^4 documents, last docid near 2*10^8.
    lines = []
    for c in colls:
        with open(os.path.join(ir_data, c, "docs.tsv"), encoding="utf-8") as f:
            for line in f:
                if "\t" in line:
                    lines.append(line.split("\t", 1)[1])
                if len(lines) == 10000:
                    break
        if len(lines) == 10000:
            break
    if len(lines) < 1000:
        sys.exit("FAIL sparse: only %d documents in %s" % (len(lines), colls))
    scale = 200000000 // len(lines)
    tsv = os.path.join(a.work, "sparse.tsv")
    with open(tsv, "w", encoding="utf-8") as f:
        for i, text in enumerate(lines):
            f.write("%d\t%s" % (i + 1, text if text.endswith("\n")
                                else text + "\n"))
    db = os.path.join(a.work, "sparse")
    shutil.rmtree(db, ignore_errors=True)
    index_kb = run_rss([a.bin, "index", "--quiet", "--docid-scale",
                        str(scale), tsv, db])
    rss_kb = run_rss([a.bin, "export", "--quiet",
                      *(["--impacts"] if IMPACTS else ["--no-impacts"]), db])
    size = os.path.getsize(os.path.join(db, "xapian-gpu.idx"))
    # A dense array over 2*10^8 docids would be 800 MB of uint32.
    if size > 16 << 20:
        sys.exit("FAIL sparse: index is %d bytes" % size)
    if max(rss_kb, index_kb) > 400 * 1024:
        sys.exit("FAIL sparse: peak RSS %d KiB (index), %d KiB (export)" %
                 (index_kb, rss_kb))
    qc = "cacm" if "cacm" in colls else colls[0]
    qfile = os.path.join(ir_data, qc, "queries.tsv")
    n, u = compare("sparse", a.bin, db, qfile, ks=other_ks)
    if n == 0:
        sys.exit("FAIL sparse: no query was compared")
    print("ok %-24s %5d MSets identical, %4d unsupported; %d documents from "
          "%s, docids up to %d (step %d), %s queries; index %d bytes, peak RSS "
          "%d KiB" % ("sparse-docids", n, u, len(lines), ",".join(colls),
                      len(lines) * scale, scale, qc, size, rss_kb))
    passed += 1
    total_cmp += n
    if total_cmp == 0:
        sys.exit("FAIL: 0 MSets compared")
    if QUIRKS:
        print("note: %d MSets where stock Xapian's answer at k is not its own "
              "top k (it returns a heavier document when asked for more: its "
              "pruning on a database with deleted documents); the engine gave "
              "the true top k.  First: %s" % (len(QUIRKS), QUIRKS[:5]))
    print("%d MSets compared in all (collections: %s)" %
          (total_cmp, ", ".join(colls)))
    print("%d passed, 0 failed" % passed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
