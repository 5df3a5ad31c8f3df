#!/usr/bin/env python3
"""Tantivy and PISA on the collection and queries xapian-gpu is measured
on: index time and size, then queries/s (and, one query at a time, p50
and p99 latency) for OR and AND, top 10 and top 1000, at each number of
application threads.  The peers' wheels travel to the device (run.sh
stage `peers`); this script only imports them.

Each peer indexes the same text (docs.tsv: id TAB text) with its own
English analysis (Tantivy `en_stem`, PISA porter2, no stopwords; with
`--stem none`, for the synthetic collection of `xapian-gpu synth text`,
Tantivy's `default` tokenizer and no PISA stemmer) and ranks with its own
BM25 (Tantivy k1 1.2 b 0.75, PISA k1 0.9 b 0.4):
their MSets are not Xapian's, their speed is what a user would get.
  Tantivy: OR is a disjunction of the query's words, AND their
  conjunction (`conjunction_by_default`), top k by block-max WAND, no
  match count (`count=False`, else it visits every match); N application
  threads are N processes (one Searcher each), each with its share of the
  queries, timed between a barrier and the last one's end.
  PISA (its Python module `_pisathon`, without PyTerrier): block_simdbp
  postings with block-max data; OR by block_max_wand, AND by ranked_and;
  N threads are its own retrieve(threads=N) over the query list.
One query at a time: each query searched alone in one thread, its wall
time from the call to the answer (Python's call included: an
application pays it too).

usage: peers.py --docs TSV --queries TSV --work DIR [--queries-n N]
                [--threads 1,16,64] [--k 10,1000] [--peers tantivy,pisa]
                [--stem porter2|none] [--index-only] [--json OUT]
Prints one line per (peer, op, k, threads) and writes them as JSON.  An
index built before in DIR (same documents, same stemming) is reused, its
build time and size as first measured; --index-only builds and stops."""
import argparse
import json
import multiprocessing as mp
import os
import re
import shutil
import statistics
import sys
import tempfile
import threading
import time

WORD = re.compile(r"[0-9a-z]+")


def words(text):
    """The query's words, lower case: both peers get the same terms (their
    query languages would read ':', '"', '-' and such as operators)."""
    return WORD.findall(text.lower())


def each_tsv(path):
    """(id, text) for each line of an id TAB text file, read as needed: the
    10^6-document synthetic text is 3.3 GB."""
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            a, sep, b = line.rstrip("\n").partition("\t")
            if sep:
                yield a, b


def read_tsv(path):
    return list(each_tsv(path))


def dir_bytes(path, keep=None):
    n = 0
    for root, _, files in os.walk(path):
        for f in files:
            if keep is None or keep(f):
                n += os.path.getsize(os.path.join(root, f))
    return n


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] if xs else 0.0


# ---- Tantivy -------------------------------------------------------------

def tantivy_index(docs, path, threads, stem):
    import tantivy
    sb = tantivy.SchemaBuilder()
    sb.add_unsigned_field("id", stored=True)
    sb.add_text_field("body", stored=False, tokenizer_name=(
        "en_stem" if stem == "porter2" else "default"), index_option="freq")
    schema = sb.build()
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    t0 = time.perf_counter()
    index = tantivy.Index(schema, path=path)
    w = index.writer(heap_size=256 * 1024 * 1024 * threads,
                     num_threads=threads)
    for i, (_, text) in enumerate(docs):
        w.add_document(tantivy.Document(id=i, body=text))
    w.commit()
    w.wait_merging_threads()
    return time.perf_counter() - t0, dir_bytes(path)


def tantivy_query(index, ws, op):
    return index.parse_query(" ".join(ws), ["body"],
                             conjunction_by_default=(op == "and"))


def tantivy_worker(path, qs, op, k, part, parts, barrier, out):
    import tantivy
    index = tantivy.Index.open(path)
    searcher = index.searcher()
    mine = qs[part::parts]
    for ws in mine[:50]:                       # warm, as a running app is
        searcher.search(tantivy_query(index, ws, op), k, count=False)
    barrier.wait()
    t0 = time.perf_counter()
    lat = []
    for ws in mine:
        a = time.perf_counter()
        searcher.search(tantivy_query(index, ws, op), k, count=False)
        lat.append(time.perf_counter() - a)
    out.put((t0, time.perf_counter(), lat))


def tantivy_run(path, qs, op, k, n):
    ctx = mp.get_context("fork")
    barrier, out = ctx.Barrier(n), ctx.Queue()
    procs = [ctx.Process(target=tantivy_worker,
                         args=(path, qs, op, k, i, n, barrier, out))
             for i in range(n)]
    for p in procs:
        p.start()
    res = [out.get() for _ in procs]
    for p in procs:
        p.join()
        if p.exitcode:
            raise RuntimeError("a tantivy worker failed (exit %d)"
                               % p.exitcode)
    wall = max(r[1] for r in res) - min(r[0] for r in res)
    lat = [x for r in res for x in r[2]]
    return len(qs) / wall, lat


# ---- PISA ----------------------------------------------------------------

def pisa_module():
    # The wheel's package imports PyTerrier; its extension stands alone.
    import importlib.util
    for d in sys.path:
        pkg = os.path.join(d or ".", "pyterrier_pisa")
        if os.path.isdir(pkg):
            sys.path.insert(0, pkg)
            break
    if importlib.util.find_spec("_pisathon") is None:
        raise ImportError("no _pisathon (wheel pyterrier-pisa)")
    import _pisathon
    if hasattr(_pisathon, "log_level"):
        _pisathon.log_level(0)
    return _pisathon


def pisa_stemmer(stem):
    return "porter2" if stem == "porter2" else ""


def pisa_index(docs, path, threads, stem):
    pisa = pisa_module()
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as d:
        fifo = os.path.join(d, "fifo")
        os.mkfifo(fifo)

        def feed():
            with open(fifo, "w", encoding="utf-8") as f:
                for i, (_, text) in enumerate(docs):
                    f.write("%d %s\n" % (i, text.replace("\n", " ")))
        t = threading.Thread(target=feed, daemon=True)
        t.start()
        pisa.index(fifo, path, pisa_stemmer(stem), 100000, threads)
        t.join()
    ctx = pisa_context(pisa, path, stem)   # compresses, block-max data
    elapsed = time.perf_counter() - t0
    # What retrieval reads: the compressed postings, the block-max data,
    # the lexicons (not the uncompressed inverted files it starts from).
    size = dir_bytes(path, lambda f: f.endswith("lex") or
                     not f.startswith(("inv", "fwd")))
    return elapsed, size, ctx


def pisa_context(pisa, path, stem):
    ctx = pisa.RetrievalContext()
    pisa.prepare_index(ctx, path, "block_simdbp", "bm25", pisa_stemmer(stem),
                       stop_fname="")
    return ctx


def pisa_retrieve(pisa, ctx, batch, op, k, threads):
    import numpy as np
    n = len(batch) * k
    qidx = np.empty(n, dtype=np.int32)
    docnos = np.empty(n, dtype=object)
    ranks = np.empty(n, dtype=np.int32)
    scores = np.empty(n, dtype=np.float32)
    return pisa.retrieve(ctx, "block_max_wand" if op == "or" else
                         "ranked_and", batch, k=k, threads=threads,
                         query_weighted=0, pretokenised=False,
                         result_qidxs=qidx, result_docnos=docnos,
                         result_ranks=ranks, result_scores=scores)


def pisa_run(pisa, ctx, qs, op, k, n):
    batch = [(i, " ".join(ws)) for i, ws in enumerate(qs)]
    pisa_retrieve(pisa, ctx, batch[:200], op, k, n)      # warm
    lat = []
    if n == 1:
        t0 = time.perf_counter()
        for q in batch:
            a = time.perf_counter()
            pisa_retrieve(pisa, ctx, [q], op, k, 1)
            lat.append(time.perf_counter() - a)
        return len(qs) / (time.perf_counter() - t0), lat
    t0 = time.perf_counter()
    pisa_retrieve(pisa, ctx, batch, op, k, n)
    return len(qs) / (time.perf_counter() - t0), lat


# ---- main ----------------------------------------------------------------

BUILT = "xg-built.json"     # an index built before: its time and size


def built_before(path, n_docs, stem):
    try:
        with open(os.path.join(path, BUILT)) as f:
            b = json.load(f)
        return b if (b.get("documents"), b.get("stem")) == (n_docs, stem) \
            else None
    except (OSError, ValueError):
        return None


def built_now(path, n_docs, stem, seconds, size):
    b = dict(documents=n_docs, stem=stem, seconds=seconds, bytes=size)
    with open(os.path.join(path, BUILT), "w") as f:
        json.dump(b, f)
    return b


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", required=True)
    ap.add_argument("--queries", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--queries-n", type=int, default=5000)
    ap.add_argument("--threads", default="1,16,64")
    ap.add_argument("--k", default="10,1000")
    ap.add_argument("--ops", default="or,and")
    ap.add_argument("--peers", default="tantivy,pisa")
    ap.add_argument("--stem", choices=("porter2", "none"), default="porter2")
    ap.add_argument("--index-only", action="store_true")
    ap.add_argument("--json")
    a = ap.parse_args()
    try:
        n_docs = sum(1 for _ in each_tsv(a.docs))
        texts = read_tsv(a.queries)
    except OSError as e:
        sys.exit("peers.py: %s: %s" % (e.filename, e.strerror))
    if not n_docs:
        sys.exit("peers.py: %s: no documents (expected id TAB text)" % a.docs)
    qs = [ws for ws in (words(t) for _, t in texts) if ws]
    qs = qs[:a.queries_n]
    if not qs:
        sys.exit("peers.py: %s: no queries" % a.queries)
    threads = [int(x) for x in a.threads.split(",")]
    ks = [int(x) for x in a.k.split(",")]
    ops = a.ops.split(",")
    cores = os.cpu_count() or 1
    rows = []

    def row(peer, what, **kv):
        r = dict(peer=peer, what=what, **kv)
        rows.append(r)
        print(" ".join("%s=%s" % (x, ("%.6g" % y) if isinstance(y, float)
                                  else y) for x, y in r.items()), flush=True)

    print("%d documents, %d queries, %d cores" % (n_docs, len(qs), cores),
          flush=True)
    for peer in a.peers.split(","):
        path = os.path.join(a.work, peer)
        built = built_before(path, n_docs, a.stem)
        docs = each_tsv(a.docs)
        if peer == "tantivy":
            if not built:
                built = built_now(path, n_docs, a.stem, *tantivy_index(
                    docs, path, min(cores, 8), a.stem))
            run = lambda op, k, n: tantivy_run(path, qs, op, k, n)
        elif peer == "pisa":
            pisa = pisa_module()
            if built:
                ctx = pisa_context(pisa, path, a.stem)
            else:
                secs, size, ctx = pisa_index(docs, path, cores, a.stem)
                built = built_now(path, n_docs, a.stem, secs, size)
            run = lambda op, k, n: pisa_run(pisa, ctx, qs, op, k, n)
        else:
            sys.exit("peers.py: unknown peer %s" % peer)
        row(peer, "index", seconds=built["seconds"], bytes=built["bytes"])
        if a.index_only:
            continue
        for op in ops:
            for k in ks:
                for n in threads:
                    qps, lat = run(op, k, n)
                    extra = {}
                    if lat:
                        extra = dict(p50_ms=1e3 * statistics.median(lat),
                                     p99_ms=1e3 * pct(lat, 0.99))
                    row(peer, "search", op=op, k=k, threads=n, qps=qps,
                        **extra)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(dict(documents=n_docs, queries=len(qs), cores=cores,
                           rows=rows), f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
