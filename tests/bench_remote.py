#!/usr/bin/env python3
"""Throughput and latency of Xapian remote servers as python3-xapian
applications see them: N client processes (a web site's workers), each
with its own connection, QueryParser and Enquire, taking queries from a
shared counter.  The Python twin of tests/bench_remote.cc, with the same
output line and the same digest (docid, weight and percentage of every
MSet item, FNV-1a over their little-endian bytes, in query order), so a
Python run and a C++ run of the same queries and server must print equal
digests.

usage: bench_remote.py --queries FILE [--clients 1,16,64] [--op or|and]
       [-k K] [--stem english|none] [--max N] [--warmup N]
       NAME=HOST:PORT[,HOST:PORT...]... | NAME=STUBFILE...

Every client connects before the clock starts.  Servers take turns within
each client count.
"""
import argparse
import multiprocessing as mp
import struct
import sys
import time

import xapian

FNV_START = 14695981039346656037
FNV_PRIME = 1099511628211
MASK = (1 << 64) - 1


def fnv(h, data):
    for b in data:
        h = ((h ^ b) * FNV_PRIME) & MASK
    return h


def open_db(spec):
    if "/" in spec:
        return xapian.Database(spec)
    db = xapian.Database()
    for hp in spec.split(","):
        host, port = hp.rsplit(":", 1)
        db.add_database(xapian.remote_open(host, int(port)))
    return db


def client(spec, a, texts, counter, ready, go, out):
    """One application process: connect, wait for the start, answer
    queries until none are left; send back (index, seconds, digest)."""
    try:
        db = open_db(spec)
    except xapian.Error as e:
        out.put(("error", "connect: %s" % e))
        return
    qp = xapian.QueryParser()
    if a.stem == "english":
        qp.set_stemmer(xapian.Stem("english"))
        qp.set_stemming_strategy(xapian.QueryParser.STEM_SOME)
    qp.set_default_op(xapian.Query.OP_AND if a.op == "and" else xapian.Query.OP_OR)
    enq = xapian.Enquire(db)
    # Warm, as a long-running application's connection is: the last
    # queries of the list, untimed.
    for w in range(a.warmup):
        try:
            enq.set_query(qp.parse_query(texts[len(texts) - 1 - (w % len(texts))]))
            enq.get_mset(0, a.k)
        except xapian.Error:
            pass
    ready.release()
    go.wait()
    got = []
    while True:
        with counter.get_lock():
            i = counter.value
            counter.value += 1
        if i >= len(texts):
            break
        try:
            q = qp.parse_query(texts[i])
        except xapian.QueryParserError:
            continue
        t0 = time.perf_counter()
        try:
            enq.set_query(q)
            m = enq.get_mset(0, a.k)
            items = [(it.docid, it.weight, it.percent) for it in m]
        except xapian.Error as e:
            out.put(("error", str(e)))
            return
        dt = time.perf_counter() - t0
        h = FNV_START
        for did, w, pc in items:
            h = fnv(h, struct.pack("<Idi", did, w, pc))
        got.append((i, dt, h))
    out.put(("done", got))


def run(a, name, spec, clients, texts):
    counter = mp.Value("l", 0)
    ready = mp.Semaphore(0)
    go = mp.Event()
    out = mp.Queue()
    procs = [mp.Process(target=client,
                        args=(spec, a, texts, counter, ready, go, out))
             for _ in range(clients)]
    for p in procs:
        p.start()
    for _ in procs:
        ready.acquire()
    t0 = time.perf_counter()
    go.set()
    lat = {}
    digest = [0] * len(texts)
    for _ in procs:
        kind, val = out.get()
        if kind == "error":
            sys.exit("bench_remote.py: %s: %s" % (name, val))
        for i, dt, h in val:
            lat[i] = dt
            digest[i] = h
    wall = time.perf_counter() - t0
    for p in procs:
        p.join()
    total = FNV_START
    for h in digest:
        total = fnv(total, struct.pack("<Q", h))
    ls = sorted(lat.values())
    pct = (lambda p: ls[min(len(ls) - 1, int(p * len(ls)))] if ls else 0.0)
    print("%-12s %3s clients %3u  queries %6d  %9.0f q/s  mean %7.3f  "
          "p50 %7.3f  p99 %7.3f ms  digest %016x" %
          (name, a.op, clients, len(ls), len(ls) / wall,
           1e3 * sum(ls) / len(ls) if ls else 0, 1e3 * pct(0.5),
           1e3 * pct(0.99), total), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", required=True)
    ap.add_argument("--clients", default="1,16,64")
    ap.add_argument("--op", choices=("or", "and"), default="or")
    ap.add_argument("-k", type=int, default=10)
    ap.add_argument("--stem", choices=("english", "none"), default="english")
    ap.add_argument("--max", type=int, default=0)
    ap.add_argument("--warmup", type=int, default=0,
                    help="queries each client runs untimed first")
    ap.add_argument("servers", nargs="+", metavar="NAME=SPEC")
    a = ap.parse_args()
    texts = []
    with open(a.queries, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            texts.append(line.split("\t", 1)[1] if "\t" in line else line)
            if a.max and len(texts) == a.max:
                break
    servers = []
    for s in a.servers:
        name, eq, spec = s.partition("=")
        if not eq or not spec:
            ap.error("want NAME=HOST:PORT[,HOST:PORT...] or NAME=STUBFILE: %r" % s)
        servers.append((name, spec))
    mp.set_start_method("fork")
    for clients in [int(c) for c in a.clients.split(",")]:
        for name, spec in servers:
            run(a, name, spec, clients, texts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
