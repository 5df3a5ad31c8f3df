#!/usr/bin/env python3
"""xapian-gpu serve and connect (docs/server.md) against stock xapian-tcpsrv
on the bundled sample, through python3-xapian, and its faults.

- Every MSet field an application reads is identical between serve
  --engine cpu (TCP and a `remote :xapian-gpu connect SOCK` stub) and
  xapian-tcpsrv: the sample's 225 queries, OR and AND, k 10 and 100,
  first 0, 7 and 95, check_at_least 0 and k+1: docids, weights,
  percentages, get_termweight of each query term, termfreqs, matching
  terms, max_possible, max_attained, and matches_lower/estimated/upper
  (exact from serve where stock's are estimates, within stock's bounds).
  So are documents, values, termlists, positions, postlists and allterms;
  every reply byte of 160 searches recorded through a proxy (stock's
  counts made exact); and the routes line counts every search of a shape
  the engines serve as theirs.  Xapian's `quest`, unchanged, prints the
  same through a stub file to serve as to xapian-tcpsrv (documents
  included; counts exact where stock's are estimates).  `--engine auto`
  without a GPU answers an OR on the CPU matcher with its exact count
  (every byte equal where stock's counts are exact), or with
  XG_NO_CPU_OR=1 stock's way in-process (every byte equal, estimates
  too), and an AND on the exact CPU matcher.  The same on
  every ../shared/ir-data collection (--ir-data); three shard servers;
  the database updated under a running server.
- Faults: a malformed length, a length over the limit, a truncated frame
  (end of input and a stall past --timeout), a client gone mid-message
  and mid-request, a child killed, --max-connections, a burst of 1,000
  connections held idle, a writable open refused as by xapian-tcpsrv, and
  SIGTERM with a request in flight (it finishes; exit status 0; children
  reaped).  After each fault the server still answers.
"""
import argparse
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

from ab_test import phrase_queries
from testlib import (add_values, partial_texts, resolve_ir_data,
                     size_range_texts, write_and_maybe_skip)

try:
    import xapian
except ImportError:
    # The Debian bindings live in the system interpreter's dist-packages.
    if os.path.exists("/usr/bin/python3") and sys.executable != "/usr/bin/python3" \
            and not os.environ.get("XG_SERVE_TEST_REEXEC"):
        os.environ["XG_SERVE_TEST_REEXEC"] = "1"
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    print("SKIP: python3-xapian not installed")
    sys.exit(77)

CHECKS = 0
MSG_ALLTERMS, MSG_QUERY, MSG_GETMSET, MSG_SHUTDOWN = 0, 8, 26, 27
REPLY_UPDATE, REPLY_DONE, REPLY_RESULTS = 0, 2, 18


def ok(what, detail=""):
    global CHECKS
    CHECKS += 1
    print("ok %-44s %s" % (what, detail))
    sys.stdout.flush()


def fail(msg):
    sys.exit("FAIL " + msg)


def enc_len(n):
    if n < 255:
        return bytes([n])
    out, n = bytearray([0xff]), n - 255
    while True:
        b, n = n & 0x7f, n >> 7
        if not n:
            out.append(b | 0x80)
            return bytes(out)
        out.append(b)


def dec_len(data, i):
    """Xapian's encode_length at data[i:]: (value, index after it), or None
    when data ends first."""
    if i >= len(data):
        return None
    n = data[i]
    i += 1
    if n != 0xff:
        return n, i
    n, shift = 0, 0
    while True:
        if i >= len(data):
            return None
        c = data[i]
        i += 1
        n |= (c & 0x7f) << shift
        shift += 7
        if c & 0x80:
            return n + 255, i


def frames(data):
    """Split bytes into (type, payload) frames (all must be whole)."""
    out, i = [], 0
    while i < len(data):
        n, at = dec_len(data, i + 1)
        out.append((data[i], data[at:at + n]))
        i = at + n
    return out


def recv_frame(s, timeout=30):
    """One whole frame from socket s: (type, payload), or None at EOF."""
    s.settimeout(timeout)
    buf = b""
    # Only this frame's bytes are read: the next stays in the socket.
    while True:
        head = dec_len(buf, 1)
        want = 1 + len(buf) if not head else head[1] + head[0]
        if len(buf) == want and head:
            return buf[0], buf[head[1]:]
        got = s.recv(min(65536, want - len(buf)) if head else 1)
        if not got:
            return None
        buf += got


def at_eof(s, timeout=10):
    """Whether the server closes s (reading and dropping what comes)."""
    s.settimeout(timeout)
    try:
        while True:
            if not s.recv(65536):
                return True
    except socket.timeout:
        return False
    except ConnectionResetError:
        return True


class Server:
    """xapian-gpu serve, its stderr in a file."""

    def __init__(self, binary, work, name, db, *opts, env=None):
        self.log = os.path.join(work, name + ".log")
        self.sock = os.path.join(work, name + ".sock")
        self.err = open(self.log, "w")
        self.p = subprocess.Popen([binary, "serve", "--host", "127.0.0.1",
                                   "--port", "0", "--unix", self.sock, *opts, db],
                                  stdout=subprocess.DEVNULL, stderr=self.err,
                                  env=dict(os.environ, **(env or {})))
        end = time.time() + 30
        while "ready:" not in self.text():
            if self.p.poll() is not None or time.time() > end:
                fail("%s did not start: %r" % (name, self.text()))
            time.sleep(0.02)
        self.port = int(self.text().split(" port ")[1].split(",")[0])

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        """A server a failed check left running is killed."""
        if self.p.poll() is None:
            self.p.kill()

    def text(self):
        with open(self.log) as f:
            return f.read()

    def wait_log(self, needle, timeout=10):
        end = time.time() + timeout
        while needle not in self.text():
            if time.time() > end:
                fail("no %r in the server's log: %r" % (needle, self.text()[-800:]))
            time.sleep(0.02)

    def unix(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(self.sock)
        return s

    def tcp(self):
        return socket.create_connection(("127.0.0.1", self.port), timeout=30)

    def children(self):
        out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(self.p.pid)],
                             capture_output=True, text=True).stdout
        return [int(x) for x in out.split()]

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        rc = self.p.wait(timeout=60)
        self.err.close()
        return rc


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def parser(op):
    """QueryParser as test_plugin_app sets it up: "in:word" filters on the
    term word, as Omega's boolean prefixes do."""
    qp = xapian.QueryParser()
    qp.set_stemmer(xapian.Stem("english"))
    qp.set_stemming_strategy(xapian.QueryParser.STEM_SOME)
    qp.set_default_op(op)
    qp.add_boolean_prefix("in", "")
    # Omega's size: ranges on value slot 2.
    qp.add_rangeprocessor(xapian.NumberRangeProcessor(2, "size:"))
    return qp


def mset_fields(db, query, k, first=0, check_at_least=0):
    """Every field of an MSet an application reads, and apart from them
    the match counts (lower, estimated, upper).  Matching terms come from
    each document's termlist, one round trip per item over the remote
    protocol: the first ten items and every tenth after them keep a deep
    MSet's relay checked without a round trip for each of its items."""
    e = xapian.Enquire(db)
    e.set_query(query)
    m = e.get_mset(first, k, check_at_least)
    terms = sorted(set(query))
    items = [(it.docid, it.weight, it.percent, it.rank,
              tuple(e.matching_terms(it)) if i < 10 or i % 10 == 0 else ())
             for i, it in enumerate(m)]
    return ((items, [(t, m.get_termweight(t), m.get_termfreq(t)) for t in terms],
             m.get_max_possible(), m.get_max_attained(), m.size(),
             m.get_firstitem()),
            (m.get_matches_lower_bound(), m.get_matches_estimated(),
             m.get_matches_upper_bound()))


def counts_agree(got, ref):
    """docs/server.md: where stock's counts are estimates (lower < upper),
    serve may give the exact count as all three, within stock's bounds.
    Returns None (they disagree), "same" or "exact"."""
    if got == ref:
        return "same"
    if ref[0] < ref[2] and got[0] == got[1] == got[2] and ref[0] <= got[0] <= ref[2]:
        return "exact"
    return None


# What the engines serve (docs/server.md, docs/cli.md): terms under any
# nesting of OR, AND, AND_NOT, AND_MAYBE, FILTER, SYNONYM and scale
# weights, wildcards (within the engines' 1,024 leaves), phrases and NEARs
# of distinct terms, and value ranges.  XOR and the rest go to stock.
LEAF_TERM = 100     # Xapian::Query::LEAF_TERM
_SERVED_OPS = (xapian.Query.OP_OR, xapian.Query.OP_AND,
               xapian.Query.OP_AND_NOT, xapian.Query.OP_AND_MAYBE,
               xapian.Query.OP_FILTER, xapian.Query.OP_SCALE_WEIGHT,
               xapian.Query.OP_SYNONYM)


# Value ranges, on a slot the index holds.
_RANGE_OPS = (xapian.Query.OP_VALUE_RANGE, xapian.Query.OP_VALUE_GE,
              xapian.Query.OP_VALUE_LE)


def _subqueries(q):
    return [q.get_subquery(i) for i in range(q.get_num_subqueries())]


def _phrase_of_terms(q):
    subs = _subqueries(q)
    return (q.get_type() in (xapian.Query.OP_PHRASE, xapian.Query.OP_NEAR)
            and all(c.get_type() == LEAF_TERM for c in subs) and
            (q.get_type() == xapian.Query.OP_PHRASE or
             len(set(str(c) for c in subs)) == len(subs)))


def served_shape(q):
    if q.empty():
        return False
    t = q.get_type()
    if (t == LEAF_TERM or _phrase_of_terms(q) or t in _RANGE_OPS or
            t == xapian.Query.OP_WILDCARD):
        return True
    return t in _SERVED_OPS and all(served_shape(c) for c in _subqueries(q))


def read_queries(sample, operators=False):
    """The sample's queries, then with operators the general form's:
    ab_test's operator shapes from the sample's text (phrases, NEAR,
    +/-, NOT, nested AND/OR) and boolean filters ("in:word")."""
    queries = []
    with open(os.path.join(sample, "queries.tsv")) as f:
        for line in f:
            qid, _, text = line.rstrip("\n").partition("\t")
            if text:
                queries.append(text)
    if operators:
        fd, path = tempfile.mkstemp(suffix=".tsv")
        os.close(fd)
        try:
            phrase_queries(os.path.join(sample, "docs.tsv"), path, 64)
            with open(path) as f:
                ops = [l.rstrip("\n").split("\t", 1)[1] for l in f]
        finally:
            os.unlink(path)
        queries += ops
        queries += ["%s in:%s" % (" ".join(w[:-1]), w[-1]) for w in
                    (re.findall(r"[a-z]{3,}", t) for t in ops[::4])
                    if len(w) >= 3]
    return queries


# (k, first, check_at_least): compare()'s settings on the sample, and the
# lighter set for every ir-data collection.
SETTINGS = ((10, 0, 0), (10, 0, 11), (100, 0, 101), (10, 95, 0))
COLLECTION_SETTINGS = ((10, 0, 0), (100, 0, 101))


def stock_disagrees(refdb, q, k, first, got, ref):
    """Stock's top k is not its own full ranking's (the AND_MAYBE skip,
    docs/architecture.md) and serve's MSet items are the full ranking's."""
    full, _ = mset_fields(refdb, q, k, first, refdb.get_doccount())
    return full[0] == got[0] and full[0] != ref[0]


def compare(a, refdb, dbs, sample, settings=SETTINGS, operators=False,
            texts=None, flags=xapian.QueryParser.FLAG_DEFAULT):
    """Returns the searches each client made: (served, not served).
    texts: these queries instead of the sample's (a text is parsed with
    flags; a Query is searched as it is)."""
    queries = texts if texts is not None else read_queries(sample, operators)
    served = unserved = 0
    for opname, op in (("OR", xapian.Query.OP_OR), ("AND", xapian.Query.OP_AND)):
        qp = parser(op)
        if flags != xapian.QueryParser.FLAG_DEFAULT:
            qp.set_database(refdb)      # as Omega sets it
        for k, first, cal in settings:
            nonempty = exact = apart = 0
            for text in queries:
                q = qp.parse_query(text, flags) if isinstance(text, str) \
                    else text
                ref, ref_counts = mset_fields(refdb, q, k, first, cal)
                nonempty += ref[4] > 0
                if served_shape(q):
                    served += 1
                else:
                    unserved += 1
                for name, db in dbs:
                    got, got_counts = mset_fields(db, q, k, first, cal)
                    how = counts_agree(got_counts, ref_counts)
                    if got != ref and stock_disagrees(refdb, q, k, first, got, ref):
                        apart += 1
                        print("   %s k %d %r: stock's top k differs from its own "
                              "full ranking; %s returns the full ranking's" %
                              (opname, k, text, name))
                        continue
                    if got != ref or not how:
                        fail("%s k %d first %d check_at_least %d %r: %s differs "
                             "from xapian-tcpsrv:\n%r %r\n%r %r" %
                             (opname, k, first, cal, str(text), name, got, got_counts,
                              ref, ref_counts))
                    exact += how == "exact"
            ok("%s k=%d first=%d check_at_least=%d, %d queries" %
               (opname, k, first, cal, len(queries)),
               "%d with matches; serve tcp and unix == xapian-tcpsrv (%d exact "
               "counts where stock's are estimates%s)" %
               (nonempty, exact, ", %d where stock's top k is not its own full "
                "ranking's, apart" % apart if apart else ""))
    return served, unserved


def doc_fields(db, did, termfreq=True):
    """A document as an application reads it; termfreq False leaves out
    its terms' termfreqs (a combined database's termlist gives the
    document's own shard's)."""
    d = db.get_document(did)
    tl = []
    for t in d.termlist():
        tl.append((t.term, t.wdf, t.termfreq if termfreq else None,
                   tuple(db.positionlist(did, t.term))))
    vals = [(v.num, v.value) for v in d.values()]
    return d.get_data(), tl, vals, db.get_doclength(did), db.get_unique_terms(did)


def db_fields(db):
    terms = [(t.term, t.termfreq) for t in db.allterms()]
    post = [(p.docid, p.wdf, p.doclength) for p in db.postlist("Zflow")]
    return (db.get_doccount(), db.get_lastdocid(), db.get_avlength(),
            db.get_doclength_lower_bound(), db.get_doclength_upper_bound(),
            db.has_positions(), db.get_total_length(), db.get_uuid(), terms, post,
            db.get_collection_freq("Zflow"), db.get_termfreq("Zflow"))


def same_database(refdb, dbs):
    """Everything but searches, through each client, as through
    xapian-tcpsrv: statistics, allterms, a postlist, documents."""
    ref = db_fields(refdb)
    for name, db in dbs:
        if db_fields(db) != ref:
            fail("database statistics, allterms or a postlist differ via %s" % name)
    ok("stats, allterms, postlist", "%d terms identical" % len(ref[8]))
    n = refdb.get_lastdocid()
    dids = sorted(set(list(range(1, n + 1, max(1, n // 60))) + [n]))
    for did in dids:
        ref = doc_fields(refdb, did)
        for name, db in dbs:
            if doc_fields(db, did) != ref:
                fail("document %d differs via %s" % (did, name))
    ok("documents, termlists, positions", "%d documents identical" % len(dids))


class Recorder:
    """A TCP proxy that records the bytes of one connection each way."""

    def __init__(self, port):
        self.up = port
        self.ls = socket.socket()
        self.ls.bind(("127.0.0.1", 0))
        self.ls.listen(1)
        self.port = self.ls.getsockname()[1]
        self.sent, self.got = bytearray(), bytearray()
        self.t = threading.Thread(target=self.run)
        self.t.start()

    def pump(self, src, dst, rec):
        while True:
            try:
                d = src.recv(65536)
            except OSError:
                d = b""
            if not d:
                try:
                    dst.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
                return
            rec += d
            dst.sendall(d)

    def run(self):
        c, _ = self.ls.accept()
        u = socket.create_connection(("127.0.0.1", self.up))
        t = threading.Thread(target=self.pump, args=(c, u, self.sent))
        t.start()
        self.pump(u, c, self.got)
        t.join()
        c.close()
        u.close()
        self.ls.close()


def record_search(port, text, op=xapian.Query.OP_OR, first=0, k=10,
                  exact=True, query=None):
    """The bytes of one search each way (of text, or of query where
    given); with `exact`, check_at_least is the database's size, so
    stock's counts are exact and every reply byte must agree."""
    r = Recorder(port)
    db = xapian.remote_open("127.0.0.1", r.port)
    e = xapian.Enquire(db)
    e.set_query(query if query is not None else parser(op).parse_query(text))
    e.get_mset(first, k, db.get_doccount() if exact else 0)
    db.close()
    r.t.join(30)
    return bytes(r.sent), bytes(r.got)


# The engine the servers under test run (--engine): cpu in CI, gpu on the
# device (where a query the GPU cannot serve exactly goes to the CPU
# matcher, also an engine route).
ENGINE = "cpu"


def engine_routes(r, served, unserved, general=False, **extra):
    """Whether routes r are every served search on the engine (gpu + cpu,
    the GPU answering some under --engine gpu unless every search is of
    the general form, which the GPU engine leaves to the CPU matcher),
    every other one stock's unsupported, plus the counts in extra."""
    got = dict(r)
    on_engine = got.pop("gpu", 0) + got.pop("cpu", 0)
    if ENGINE == "gpu" and served and not general and not r.get("gpu"):
        return False
    want = dict(extra)
    if unserved:
        want["stock:unsupported"] = unserved
    return on_engine == served and got == want


def stopped_routes(srv, what, served, unserved=0, general=False, **extra):
    """Stop srv (exit status 0) and check its routes (engine_routes);
    returns them."""
    if srv.stop() != 0:
        fail("%s: exit status" % what)
    r = routes(srv)
    if not engine_routes(r, served, unserved, general, **extra):
        fail("%s: routes %r, expected %d on the engine" % (what, r, served))
    return r


def routes(srv):
    """The counts of the routes line serve logs when it stops."""
    line = [l for l in srv.text().splitlines() if " routes:" in l][-1]
    w = line.split(" routes:")[1].split()
    return {w[i]: int(w[i + 1]) for i in range(0, len(w), 2)}


def ahead_counts(srv):
    """(sent, answered again) from the line serve logs when it stops about
    searches answered ahead of their MSG_GETMSET; (0, 0) without it."""
    line = [l for l in srv.text().splitlines()
            if "answered ahead of their MSG_GETMSET" in l]
    if not line:
        return 0, 0
    w = line[-1].split("MSG_GETMSET:")[1].split()
    return int(w[0]), int(w[2])


def same_mset(got, want):
    """mset_fields results equal, counts as counts_agree allows."""
    return got[0] == want[0] and counts_agree(got[1], want[1])


def add_docs(path, terms, wdf):
    """Another process indexes: 30 documents holding `terms`."""
    w = xapian.WritableDatabase(path, xapian.DB_OPEN)
    for i in range(30):
        d = xapian.Document()
        for t in terms:
            d.add_term(t, wdf + i)
        w.add_document(d)
    w.commit()
    w.close()


def threads_cap(binary, work, dbpath, sample):
    """--threads 1: 8 clients at once, every MSet stock's, and at most one
    search on the host's CPU at a time (the server's own count).  The CPU
    matcher's engine, whatever the run's: searches the GPU answers never
    take a host slot, and the cap must be reached to be tested."""
    with Server(binary, work, "threads", dbpath, "--engine", "cpu",
                "--threads", "1") as srv:
        texts = read_queries(sample)[:40]
        bad = []

        def client(op):
            # Xapian objects are not shared between threads: each its own.
            db = xapian.remote_open("127.0.0.1", srv.port)
            local = xapian.Database(dbpath)
            qp = parser(op)
            for t in texts:
                q = qp.parse_query(t)
                if mset_fields(db, q, 10)[0] != mset_fields(local, q, 10)[0]:
                    bad.append(t)
            db.close()

        ts = [threading.Thread(target=client, args=(
            xapian.Query.OP_AND if i % 2 else xapian.Query.OP_OR,))
            for i in range(8)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        if bad:
            fail("--threads 1: %d MSets differ from stock's, first %r" %
                 (len(bad), bad[0]))
        if srv.stop() != 0:
            fail("--threads 1: exit status")
        m = re.search(r"on the host's CPU at once: at most (\d+) \(--threads 1\)",
                      srv.text())
        if not m or int(m.group(1)) != 1:
            fail("--threads 1: %r" % (m.group(0) if m else srv.text()[-400:]))
        ok("--threads 1", "8 clients at once, %d searches, every MSet stock's; "
           "at most 1 on the host's CPU at a time" % (8 * len(texts)))


def and_maybe_skip(binary, work):
    """Stock's top 1 misses the document its own full ranking puts first
    (testlib.write_and_maybe_skip): serve answers from the engine with the
    full ranking's document, xapian-tcpsrv with stock's; told apart."""
    tsv = os.path.join(work, "skip.tsv")
    db = os.path.join(work, "skip")
    write_and_maybe_skip(tsv)
    subprocess.run([binary, "index", "--quiet", tsv, db], check=True)
    subprocess.run([binary, "export", "--quiet", db], check=True)
    with Server(binary, work, "skip", db, "--engine", ENGINE) as srv:
        q = xapian.Query(xapian.Query.OP_OR, [xapian.Query(t) for t in "pre"])
        local = xapian.Database(db)
        ref, _ = mset_fields(local, q, 1)
        got, _ = mset_fields(xapian.remote_open("127.0.0.1", srv.port), q, 1)
        if [i[0] for i in ref[0]] != [1]:
            fail("and_maybe_skip: stock's top 1 is %r, not document 1: this "
                 "Xapian has no AND_MAYBE skip" % ref[0])
        if [i[0] for i in got[0]] != [4] or not stock_disagrees(local, q, 1, 0, got, ref):
            fail("and_maybe_skip: serve's top 1 %r is not the full ranking's "
                 "document 4" % got[0])
        r = stopped_routes(srv, "and_maybe_skip", 1)
        ok("stock's AND_MAYBE skip", "top 1: xapian-tcpsrv document 1, serve "
           "the full ranking's document 4 (routes %r)" % r)


def value_ranges(binary, work, coll):
    """Omega's size: ranges (OP_VALUE_RANGE, _GE, _LE on slot 2) on a
    database of the collection at coll whose documents hold values
    (testlib.add_values): its queries with a range and each range alone, every field equal
    to stock's, percentages included (a range counts itself among the top
    document's matching subqueries, so they can pass 100 before Xapian
    caps them); routes as predicted."""
    db = os.path.join(work, "values")
    subprocess.run([binary, "index", "--quiet", os.path.join(coll, "docs.tsv"),
                    db], check=True)
    add_values(db)
    subprocess.run([binary, "export", "--quiet", db], check=True)
    # An empty range (size:B..A) empties the query: the client never
    # sends it.
    qp = parser(xapian.Query.OP_OR)
    texts = [t for t in size_range_texts(os.path.join(coll, "queries.tsv"))
             if not qp.parse_query(t).empty()]
    with Server(binary, work, "values", db, "--engine", ENGINE) as srv:
        got = xapian.remote_open("127.0.0.1", srv.port)
        served, unserved = compare(None, xapian.Database(db),
                                   [("serve tcp", got)], coll,
                                   COLLECTION_SETTINGS, texts=texts)
        got.close()
        r = stopped_routes(srv, "value ranges", served, unserved,
                           general=True)
        ok("value ranges: routes as predicted", "routes %r" % r)


def indexed_tcpsrv(binary, coll, db):
    """Index the collection at coll into db with `xapian-gpu index`,
    export its GPU index and start xapian-tcpsrv on it: (the process, a
    remote Database on it, its port)."""
    subprocess.run([binary, "index", "--quiet", os.path.join(coll, "docs.tsv"),
                    db], check=True)
    subprocess.run([binary, "export", "--quiet", db], check=True)
    port = free_port()
    tcp = subprocess.Popen(["xapian-tcpsrv", "--interface", "127.0.0.1",
                            "--port", str(port), db],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           start_new_session=True)
    end = time.time() + 30
    while True:
        try:
            return tcp, xapian.remote_open("127.0.0.1", port), port
        except xapian.NetworkError:
            if time.time() > end:
                tcp.kill()
                fail("xapian-tcpsrv on %s did not start" % db)
            time.sleep(0.1)


def synonym_queries(coll, refdb, local, op):
    """The collection's queries with Xapian's synonym forms: as typed so
    far (FLAG_PARTIAL: the last word's 100 most frequent completions), a
    wildcard on a prefix of the last word (FLAG_WILDCARD: OP_SYNONYM of
    every completion; for every tenth, two overlapping ones), and an
    explicit OP_SYNONYM of the first two terms.
    Returns (Query, wide) pairs: wide where a wildcard's completions in
    local pass the engines' 1,024 leaves (stock answers)."""
    qp = parser(op)
    qp.set_database(refdb)
    queries = os.path.join(coll, "queries.tsv")
    out = [(qp.parse_query(t, xapian.QueryParser.FLAG_DEFAULT |
                           xapian.QueryParser.FLAG_PARTIAL), False)
           for t in partial_texts(queries)]
    with open(queries) as f:
        texts = [l.rstrip("\n").split("\t", 1)[1] for l in f if "\t" in l]
    for i, t in enumerate(texts):
        w = re.findall(r"[a-z]+", t.lower())
        if w and len(w[-1]) >= 4:
            prefix = w[-1][:4 + i % 3]
            n = sum(1 for _ in local.allterms(prefix))
            out.append((qp.parse_query(" ".join(w[:-1] + [prefix + "*"]),
                                       xapian.QueryParser.FLAG_DEFAULT |
                                       xapian.QueryParser.FLAG_WILDCARD),
                        n + len(w) - 1 > 1024))
            if i % 10 == 0 and len(w[-1]) >= 5:
                # Two wildcards whose terms overlap: the results'
                # statistics hold each term once.
                out.append((qp.parse_query(
                    "%s* %s*" % (w[-1][:4], w[-1][:5]),
                    xapian.QueryParser.FLAG_DEFAULT |
                    xapian.QueryParser.FLAG_WILDCARD), n > 512))
        terms = list(qp.parse_query(t))
        if len(terms) >= 3:
            out.append((xapian.Query(op, [xapian.Query(
                xapian.Query.OP_SYNONYM, terms[:2])] + terms[2:]), False))
    return [(q, wide) for q, wide in out if not q.empty()]


def synonyms(binary, work, coll):
    """Wildcards, partial matching and OP_SYNONYM (synonym_queries) on the
    collection at coll, against xapian-tcpsrv: every field equal at k 10,
    and every sixth search's bytes both ways equal at k 10 (REPLY_STATS
    without the wildcards' terms, REPLY_RESULTS's statistics with every
    term the expansion registers, MOST_FREQUENT's dropped ones included);
    routes as predicted."""
    db = os.path.join(work, "synonyms")
    tcp, ref, port = indexed_tcpsrv(binary, coll, db)
    try:
        local = xapian.Database(db)
        with Server(binary, work, "synonyms", db, "--engine", ENGINE) as srv:
            got = xapian.remote_open("127.0.0.1", srv.port)
            served = unserved = n_bytes = 0
            for op in (xapian.Query.OP_OR, xapian.Query.OP_AND):
                qs = synonym_queries(coll, ref, local, op)
                n_wide = sum(wide for _, wide in qs)
                settings = ((10, 0, 0),)
                s, u = compare(None, ref, [("serve tcp", got)], coll,
                               settings, texts=[q for q, _ in qs])
                # compare() searches each query under OR and AND alike.
                served += s - 2 * len(settings) * n_wide
                unserved += u + 2 * len(settings) * n_wide
                for q, wide in qs[::6]:
                    want = record_search(port, None, query=q)
                    have = record_search(srv.port, None, query=q)
                    if have != want:
                        fail("synonyms: %s differs in its bytes from "
                             "xapian-tcpsrv's:\n%r\n%r" % (q, have, want))
                    n_bytes += 1
                    unserved += wide
                    served += not wide
            got.close()
            r = stopped_routes(srv, "synonyms", served, unserved,
                               general=True)
        ok("synonyms, wildcards, partial: %d searches byte for byte" % n_bytes,
           "routes %r" % r)
        ref.close()
    finally:
        tcp.terminate()
        tcp.wait()


def spare_counts(srv):
    """The stopped server's spare children line: (taken, replaced)."""
    m = re.search(r"spare children: (\d+) connections took one; (\d+) replaced",
                  srv.text())
    if not m:
        fail("no spare children line in the log: %r" % srv.text()[-500:])
    return int(m.group(1)), int(m.group(2))


def spares(binary, work, dbpath):
    """Spare children: connections opened one after another take them;
    spares killed while they wait are never handed over (each counted as
    replaced), and every answer is stock's.  A commit making them stale:
    updated()."""
    with Server(binary, work, "spares", dbpath, "--engine", ENGINE,
                "--spare-children", "2") as srv:
        end = time.time() + 30
        while len(srv.children()) < 2:
            if time.time() > end:
                fail("spares: 2 spare children did not start: %r" % srv.children())
            time.sleep(0.02)
        kids = srv.children()
        for k in kids:
            os.kill(k, signal.SIGKILL)
        # Dead (zombies, not yet reaped) before the next connection comes.
        while not all("Z" in open("/proc/%d/stat" % k).read().split(")")[-1][:3]
                      for k in kids):
            if time.time() > end:
                fail("spares: the killed spares did not die")
            time.sleep(0.01)
        q = parser(xapian.Query.OP_OR).parse_query("boundary layer flow")
        want = mset_fields(xapian.Database(dbpath), q, 10)
        for i in range(20):
            db = xapian.remote_open("127.0.0.1", srv.port)
            if not same_mset(mset_fields(db, q, 10), want):
                fail("spares: connection %d's MSet differs from stock's" % i)
            if db.get_doccount() != xapian.Database(dbpath).get_doccount():
                fail("spares: connection %d's document count differs" % i)
            db.close()
            time.sleep(0.05)
        if srv.stop() != 0:
            fail("spares: exit status")
        taken, replaced = spare_counts(srv)
        if taken < 10 or replaced < 2:
            fail("spares: took %d, replaced %d (want >= 10 taken, the 2 "
                 "killed replaced)" % (taken, replaced))
        ok("spare children", "%d of 20 connections took one; the 2 killed "
           "never handed over (%d replaced)" % (taken, replaced))


def updated(binary, work, dbpath):
    """The database updated under a running serve: a connection opened
    before keeps its revision (the index's: the engine answers); one
    opened after, and the first after its reopen(), get stock's answer at
    the new revision, as from the database itself; never a stale one."""
    path = os.path.join(work, "updated")
    shutil.copytree(dbpath, path)
    srv = Server(binary, work, "updated", path, "--engine", ENGINE)
    q = parser(xapian.Query.OP_OR).parse_query("boundary layer flow")
    same = same_mset
    try:
        before = xapian.remote_open("127.0.0.1", srv.port)
        old = mset_fields(xapian.Database(path), q, 10)
        if not same(mset_fields(before, q, 10), old):
            fail("updated: a search before the update differs from stock's")
        add_docs(path, ("boundary", "layer", "flow"), 50)
        new = mset_fields(xapian.Database(path), q, 10)
        if new[0] == old[0]:
            fail("updated: the update did not change the MSet")
        after = xapian.remote_open("127.0.0.1", srv.port)
        if not same(mset_fields(after, q, 10), new):
            fail("updated: a connection opened after the update got a stale MSet")
        if not same(mset_fields(before, q, 10), old):
            fail("updated: the earlier connection lost its revision")
        before.reopen()
        if not same(mset_fields(before, q, 10), new):
            fail("updated: a search after reopen() got a stale MSet")
        before.close()
        after.close()
        if srv.stop() != 0:
            fail("updated: exit status")
        taken, replaced = spare_counts(srv)
        if replaced < 1:
            fail("updated: no spare child found stale after the commit "
                 "(took %d, replaced %d)" % (taken, replaced))
        r = routes(srv)
        if not engine_routes(r, 2, 0, **{"stock:stale": 2}):
            fail("updated: routes %r, expected cpu 2 and stock:stale 2" % r)
        ok("database updated under serve", "before: the engine; after, and "
           "after reopen(): stock at the new revision (routes %r)" % r)
    finally:
        if srv.p.poll() is None:
            srv.p.kill()


def reexported(binary, work, dbpath):
    """serve --reexport: the database updated under it, the server writes
    a new index by itself; a connection opened before keeps its revision
    and the engine; new ones get the engine again at the new revision,
    with stock's MSet there, and the index file is the new one."""
    path = os.path.join(work, "reexport")
    shutil.copytree(dbpath, path)
    # Options the re-export must keep: impacts, 4 Bloom bits a posting.
    idx = os.path.join(path, "xapian-gpu.idx")
    os.remove(idx)
    subprocess.run([binary, "export", "--quiet", "--impacts",
                    "--bloom-bits-per-posting", "4", path], check=True)
    srv = Server(binary, work, "reexport", path, "--engine", ENGINE,
                 "--reexport-every", "0.2")
    q = parser(xapian.Query.OP_OR).parse_query("boundary layer flow")

    same = same_mset
    try:
        before = xapian.remote_open("127.0.0.1", srv.port)
        old = mset_fields(before, q, 10)
        if not same(old, mset_fields(xapian.Database(path), q, 10)):
            fail("reexport: a search before the update differs from stock's")
        add_docs(path, ("Zboundari", "Zlayer", "Zflow"), 40)
        new = mset_fields(xapian.Database(path), q, 10)
        if new[0] == old[0]:
            fail("reexport: the update did not change the MSet")
        srv.wait_log("new connections search the new index", timeout=60)
        with open(idx, "rb") as f:
            head = f.read(100)
        flags, = struct.unpack_from("<I", head, 20)
        bits, = struct.unpack_from("<I", head, 96)
        if not flags & 2 or bits != 4:
            fail("reexport: the new index lost the export options (flags %d, "
                 "Bloom bits %d)" % (flags, bits))
        after = xapian.remote_open("127.0.0.1", srv.port)
        if not same(mset_fields(after, q, 10), new):
            fail("reexport: a new connection's search differs from stock's at "
                 "the new revision")
        if mset_fields(before, q, 10) != old:
            fail("reexport: the old connection's answers changed")
        before.close()
        after.close()
        # The old connection's two searches and the new one's, all on the
        # engine; none stale.
        r = stopped_routes(srv, "reexport", 3)
        ok("serve --reexport", "a new index written by the server itself; "
           "new connections on the engine at the new revision (routes %r)" % r)
    finally:
        if srv.p.poll() is None:
            srv.p.kill()


def collections_ab(binary, work, ir_data):
    """Every ../shared/ir-data collection: serve --engine cpu against
    xapian-tcpsrv on the database `xapian-gpu index` builds (k 10 and 100,
    first 0 and 7, check_at_least 0 and k+1), one TCP client; routes as
    predicted.  Then serve --engine auto at k 10 (where no GPU is usable:
    stock's match in-process for an OR, the CPU matcher for an AND)."""
    from testlib import collections
    for name in collections(ir_data):
        coll = os.path.join(ir_data, name)
        db = os.path.join(work, "coll-" + name)
        tcp, ref, _ = indexed_tcpsrv(binary, coll, db)
        srv = Server(binary, work, "coll-" + name, db, "--engine", ENGINE)
        try:
            got = xapian.remote_open("127.0.0.1", srv.port)
            print("%s:" % name)
            served, unserved = compare(None, ref, [("serve tcp", got)], coll,
                                       COLLECTION_SETTINGS)
            # --engine auto: with no GPU, stock's match run in-process for
            # an OR, the CPU matcher for an AND.
            au = Server(binary, work, "auto-" + name, db, "--engine", "auto")
            try:
                compare(None, ref, [("serve auto", xapian.remote_open(
                    "127.0.0.1", au.port))], coll, ((10, 0, 0),))
            finally:
                if au.stop() != 0:
                    fail("%s: serve --engine auto's exit status" % name)
            got.close()
            ref.close()
            if srv.stop() != 0:
                fail("%s: serve's exit status" % name)
            r = routes(srv)
            if not engine_routes(r, served, unserved):
                fail("%s: routes %r, expected %d on the engine and %d "
                     "stock:unsupported" % (name, r, served, unserved))
            # One client asks every query at one top k, then at the next:
            # each search after the first is answered ahead of its
            # MSG_GETMSET, and again where the top k changed (the bytes
            # compared above either way).
            sent, again = ahead_counts(srv)
            if not (sent > 0 and again > 0 and sent + again < served):
                fail("%s: %d searches answered ahead and sent, %d answered "
                     "again, of %d served" % (name, sent, again, served))
            ok("%s: routes as predicted" % name, "routes %r; answered ahead "
               "%d, again %d" % (r, sent, again))
        finally:
            if srv.p.poll() is None:
                srv.p.kill()
            tcp.terminate()
            tcp.wait()


def within_stock(got, ref, exact):
    """A merged MSet's counts where shards answered with exact counts:
    inside stock's bounds, and bounding the true count."""
    return (ref[0] <= got[0] <= got[1] <= got[2] <= ref[2] and
            got[0] <= exact <= got[2])


def quest_check(binary, work, dbpath, tcpsrv_port, sample):
    """Xapian's own `quest`, unchanged, through a stub file to serve (a
    `remote :xapian-gpu connect` line, as a site would write it) and to
    xapian-tcpsrv (`remote HOST:PORT`): the same output, but where stock's
    match counts are estimates (serve's exact count then lies between
    them, the one difference allowed)."""
    srv = Server(binary, work, "quest", dbpath, "--engine", ENGINE)
    stubs = {"serve": os.path.join(work, "quest-serve.stub"),
             "tcpsrv": os.path.join(work, "quest-tcpsrv.stub")}
    with open(stubs["serve"], "w") as f:
        f.write("remote :%s connect %s\n" % (binary, srv.sock))
    with open(stubs["tcpsrv"], "w") as f:
        f.write("remote 127.0.0.1:%d\n" % tcpsrv_port)
    counts = re.compile(r"^(?:Between (\d+) and (\d+) matches, best estimate "
                        r"is (\d+)|Exactly (\d+) matches)$")
    runs = estimated = 0
    try:
        for text in read_queries(sample)[:30]:
            for opts in (["-o", "or", "-m", "10"],
                         ["-o", "and", "-m", "100", "-c", "101"]):
                out = {}
                for name, stub in stubs.items():
                    p = subprocess.run(["quest", "-d", stub] + opts + [text],
                                       capture_output=True, text=True,
                                       timeout=60)
                    if p.returncode:
                        fail("quest %s on %r: %r" % (name, text, p.stderr))
                    out[name] = p.stdout.splitlines()
                got, ref = out["serve"], out["tcpsrv"]
                runs += 1
                if len(got) != len(ref) or len(ref) < 3:
                    fail("quest %s %r: %r against %r" % (opts, text, got, ref))
                for i, (g, r) in enumerate(zip(got, ref)):
                    if g == r:
                        continue
                    mg, mr = counts.match(g), counts.match(r)
                    if not (i == 1 and mg and mr and mg.group(4) and
                            mr.group(1) and int(mr.group(1)) <=
                            int(mg.group(4)) <= int(mr.group(2))):
                        fail("quest %s %r, line %d: %r against %r" %
                             (opts, text, i + 1, g, r))
                    estimated += 1
    finally:
        if srv.stop() != 0:
            fail("quest's serve: exit status")
    r = routes(srv)
    if not r.get("gpu", 0) + r.get("cpu", 0):
        fail("quest through serve: no search on the engine (%r)" % r)
    ok("quest through a stub file", "%d searches, output as through "
       "xapian-tcpsrv (%d with exact counts where stock's are estimates); "
       "routes %r" % (runs, estimated, r))


def record_sharded(ports, text, op, k=10):
    """The bytes of shard 0's connection for one search over three remote
    shards, with check_at_least the collection's size (stock's counts
    exact, so every byte must agree)."""
    r = Recorder(ports[0])
    db = xapian.Database()
    db.add_database(xapian.remote_open("127.0.0.1", r.port))
    for port in ports[1:]:
        db.add_database(xapian.remote_open("127.0.0.1", port))
    e = xapian.Enquire(db)
    e.set_query(parser(op).parse_query(text))
    e.get_mset(0, k, db.get_doccount())
    db.close()
    r.t.join(30)
    return bytes(r.sent), bytes(r.got)


def shards(binary, work, sample):
    """Three shard servers against three xapian-tcpsrv on the same shards,
    through Xapian's own client merging, and two of each with the third
    shard local: identical MSets.  Each serve gets the client's global
    statistics and weighs with them on its engine: counted, and every
    reply byte of shard 0 equal to xapian-tcpsrv's."""
    # docs/server.md's recipe: split the database, export each shard.
    whole = os.path.join(work, "whole")
    subprocess.run([binary, "index", "--quiet", os.path.join(sample, "docs.tsv"),
                    whole], check=True)
    split = os.path.join(work, "split")
    subprocess.run([binary, "split", "--quiet", "--shards", "3", whole, split],
                   check=True)
    src, dst = xapian.Database(whole), xapian.Database(split)
    for did in range(1, src.get_lastdocid() + 1):
        if doc_fields(src, did, False) != doc_fields(dst, did, False):
            fail("split: document %d differs from the source's" % did)
    if [(t.term, t.termfreq) for t in src.allterms()] != \
            [(t.term, t.termfreq) for t in dst.allterms()]:
        fail("split: the shards' terms or termfreqs differ from the source's")
    ok("split --shards 3", "%d documents, docids, terms, positions and data, "
       "and every term's termfreq as the source's" % src.get_doccount())
    # synth docs --shards: the same numbering, built sharded.
    syn = os.path.join(work, "syn")
    syn3 = os.path.join(work, "syn3")
    for path, extra in ((syn, []), (syn3, ["--shards", "3", "--threads", "4"])):
        subprocess.run([binary, "synth", "docs", "--quiet", "--docs", "2000",
                        "--mu", "4"] + extra + [path], check=True)
    whole, sharded = xapian.Database(syn), xapian.Database(syn3)
    if (whole.get_doccount() != sharded.get_doccount() or
            [(t.term, t.termfreq) for t in whole.allterms()] !=
            [(t.term, t.termfreq) for t in sharded.allterms()] or
            any(doc_fields(whole, d, False) != doc_fields(sharded, d, False)
                for d in range(1, whole.get_lastdocid() + 1))):
        fail("synth docs --shards 3 differs from the unsharded collection")
    ok("synth docs --shards 3", "2000 documents as the unsharded "
       "collection's, docids kept")
    paths, servers, tcps = [], [], []
    try:
        for i in range(3):
            p = os.path.join(split, "shard%d" % i)
            subprocess.run([binary, "export", "--quiet", p], check=True)
            paths.append(p)
            servers.append(Server(binary, work, "shard%d" % i, p, "--engine", ENGINE))
            port = free_port()
            tcps.append((port, subprocess.Popen(
                ["xapian-tcpsrv", "--interface", "127.0.0.1", "--port", str(port), p],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True)))
        time.sleep(0.5)
        ref, got = xapian.Database(), xapian.Database()
        mixed, mixed_ref = xapian.Database(), xapian.Database()
        for i in range(3):
            end = time.time() + 30
            while True:
                try:
                    ref.add_database(xapian.remote_open("127.0.0.1", tcps[i][0]))
                    break
                except xapian.NetworkError:
                    if time.time() > end:
                        fail("xapian-tcpsrv on shard %d did not start" % i)
                    time.sleep(0.1)
            got.add_database(xapian.remote_open("127.0.0.1", servers[i].port))
            mixed.add_database(xapian.remote_open("127.0.0.1", servers[i].port)
                               if i < 2 else xapian.Database(paths[i]))
            mixed_ref.add_database(xapian.remote_open("127.0.0.1", tcps[i][0])
                                   if i < 2 else xapian.Database(paths[i]))
        size = ref.get_doccount()
        # Searches each shard server gets: [served shape, not served].
        sent = [[0, 0] for _ in servers]
        n = exact = 0
        for op in (xapian.Query.OP_OR, xapian.Query.OP_AND):
            qp = parser(op)
            for text in read_queries(sample)[:60]:
                q = qp.parse_query(text)
                shape = 0 if served_shape(q) else 1
                true_count = xapian.Enquire(ref)
                true_count.set_query(q)
                true_count = true_count.get_mset(0, 0, size).get_matches_estimated()
                for name, db, base, reach in (("three serve", got, ref, 3),
                                              ("two serve + local", mixed,
                                               mixed_ref, 2)):
                    want, want_counts = mset_fields(base, q, 10)
                    have, have_counts = mset_fields(db, q, 10)
                    if have != want or not within_stock(have_counts, want_counts,
                                                        true_count):
                        fail("shards, %r: %s differs from xapian-tcpsrv:\n%r %r\n"
                             "%r %r" % (text, name, have, have_counts, want,
                                        want_counts))
                    exact += have_counts != want_counts
                    for i in range(reach):
                        sent[i][shape] += 1
                n += 1
        ok("3 shards: serve == xapian-tcpsrv, and with a local shard",
           "%d queries; %d with exact counts where stock's are estimates"
           % (n, exact))
        texts = read_queries(sample)[:30]
        n_frames = 0
        for op in (xapian.Query.OP_OR, xapian.Query.OP_AND):
            for text in texts:
                want = record_sharded([t[0] for t in tcps], text, op)
                have = record_sharded([s.port for s in servers], text, op)
                kinds = [t for t, _ in frames(have[1])]
                if have != want or REPLY_RESULTS not in kinds:
                    fail("sharded search %r differs in shard 0's bytes from "
                         "xapian-tcpsrv's:\n%r\n%r" % (text, have, want))
                n_frames += len(kinds)
                shape = 0 if served_shape(parser(op).parse_query(text)) else 1
                for i in range(3):
                    sent[i][shape] += 1
        ok("%d sharded searches, shard 0's bytes both ways" % (2 * len(texts)),
           "%d reply frames identical to xapian-tcpsrv's, global statistics "
           "weighed on the engine" % n_frames)
        for i, srv in enumerate(servers[1:], 1):
            if srv.stop() != 0:
                fail("a shard server's exit status")
            r = routes(srv)
            if not engine_routes(r, sent[i][0], sent[i][1]):
                fail("shard server %d routes %r, expected %r: every sharded "
                     "search of a served shape on the engine" % (i, r, sent[i]))
        ok("sharded searches routed as expected",
           "shard 1 and 2: %r" % [s[0] for s in sent[1:]])
        # The first shard's servers killed (serve, and xapian-tcpsrv with
        # its children): the client gets the same error from either.
        servers[0].p.kill()
        servers[0].p.wait()
        os.killpg(tcps[0][1].pid, signal.SIGKILL)
        tcps[0][1].wait()
        q = parser(xapian.Query.OP_OR).parse_query("boundary layer flow")
        errors = []
        for db in (got, ref):
            try:
                mset_fields(db, q, 10)
                errors.append(None)
            except xapian.Error as e:
                errors.append(type(e).__name__)
        if errors[0] is None or errors[0] != errors[1]:
            fail("a killed shard server: the client got %r, with xapian-tcpsrv %r"
                 % tuple(errors))
        ok("a shard server killed", "the client gets %s, as from xapian-tcpsrv"
           % errors[0])
        for db in (ref, got, mixed, mixed_ref):
            db.close()
    finally:
        for srv in servers:
            if srv.p.poll() is None:
                srv.p.kill()
        for _, t in tcps:
            if t.poll() is None:
                t.terminate()
                t.wait()


def serve_alive(srv, what):
    """A fresh client still gets answers (TCP and Unix)."""
    db = xapian.remote_open("127.0.0.1", srv.port)
    e = xapian.Enquire(db)
    e.set_query(xapian.Query("Zflow"))
    n = e.get_mset(0, 10).size()
    stub = xapian.Database(srv.stub)
    if n != 10 or stub.get_doccount() != db.get_doccount():
        fail("after %s: the server answers wrongly" % what)
    db.close()
    stub.close()


def odd_messages(a, srv):
    """Messages a client should not send (an unknown type, a MSG_QUERY
    whose query or settings Xapian cannot read, a MSG_GETMSET with no
    query): serve answers each exactly as xapian-tcpsrv does (its reply
    bytes, or its closing the connection), and still serves others."""
    def exchange(connect, frame):
        s = connect()
        recv_frame(s)
        s.sendall(frame)
        try:
            got = recv_frame(s, 10)
        except OSError:
            got = None
        s.close()
        return got

    def tcpsrv():
        return socket.create_connection(("127.0.0.1", a.tcpsrv_port), timeout=30)

    q = [m for m in frames(a.conversation) if m[0] == MSG_QUERY][0][1]
    bad_query = enc_len(5) + b"\xff\x00zz\x01" + q[1 + q[0]:]
    cases = [("unknown type 99", bytes([99]) + enc_len(0)),
             ("a garbled MSG_QUERY", bytes([MSG_QUERY]) + enc_len(3) + b"abc"),
             ("an unreadable query", bytes([MSG_QUERY]) + enc_len(len(bad_query)) +
              bad_query),
             ("MSG_GETMSET with no query", bytes([MSG_GETMSET]) + enc_len(3) +
              b"\x00\x0a\x0a")]
    for what, frame in cases:
        got, want = exchange(srv.unix, frame), exchange(tcpsrv, frame)
        if got != want:
            fail("%s: serve answers %r, xapian-tcpsrv %r" % (what, got, want))
        serve_alive(srv, what)
    ok("odd messages answered as xapian-tcpsrv answers them",
       ", ".join(w for w, _ in cases))

    # A raw client asking for 2^32 - 2 items: serve answers with every
    # match (the engines' arrays are sized by the database, not by it)
    # and goes on serving.
    g = [m for m in frames(a.conversation) if m[0] == MSG_GETMSET][0][1]
    at = 0
    for _ in range(3):          # first, maxitems, check_at_least
        _, at = dec_len(g, at)
    huge = enc_len(0) + enc_len(2 ** 32 - 2) + enc_len(0) + g[at:]
    s = srv.unix()
    recv_frame(s)
    s.sendall(bytes([MSG_QUERY]) + enc_len(len(q)) + q)
    recv_frame(s)
    s.sendall(bytes([MSG_GETMSET]) + enc_len(len(huge)) + huge)
    res = recv_frame(s, 30)
    s.close()
    if not res or res[0] != REPLY_RESULTS:
        fail("MSG_GETMSET for 2^32 - 2 items: %r" % (res,))
    serve_alive(srv, "a huge maxitems")
    ok("MSG_GETMSET for 2^32 - 2 items", "answered (%d bytes), still serving"
       % len(res[1]))


def faults(a, srv, binary, dbpath, work):
    odd_messages(a, srv)
    s = srv.unix()
    if recv_frame(s)[0] != REPLY_UPDATE:
        fail("no greeting")
    s.sendall(b"\x08\xff" + b"\x7f" * 12)
    if not at_eof(s):
        fail("a malformed length did not close the connection")
    srv.wait_log("malformed message length")
    serve_alive(srv, "a malformed length")
    ok("malformed length: closed, logged")

    s = srv.unix()
    recv_frame(s)
    s.sendall(bytes([MSG_QUERY]) + enc_len(1 << 40))
    if not at_eof(s):
        fail("a message over the limit did not close the connection")
    srv.wait_log("exceeds the")
    serve_alive(srv, "an over-long message")
    ok("length over the limit: closed, logged")

    s = srv.tcp()
    recv_frame(s)
    s.sendall(bytes([MSG_QUERY]) + enc_len(100) + b"x" * 10)
    s.shutdown(socket.SHUT_WR)
    if not at_eof(s):
        fail("a truncated frame did not close the connection")
    srv.wait_log("mid-message")
    ok("truncated frame then end of input: closed")

    s = srv.unix()
    recv_frame(s)
    s.sendall(bytes([MSG_QUERY]) + enc_len(300) + b"x" * 20)
    s.close()
    time.sleep(0.2)
    serve_alive(srv, "a client gone mid-message")
    ok("client gone mid-message: others served")

    s = srv.unix()
    recv_frame(s)
    s.sendall(bytes([MSG_ALLTERMS]) + enc_len(0))
    s.close()
    time.sleep(0.2)
    serve_alive(srv, "a client gone mid-request")
    ok("client gone mid-request: others served")

    before = set(srv.children())
    s = srv.unix()
    recv_frame(s)
    end = time.time() + 10
    new = []
    while not new and time.time() < end:
        new = sorted(set(srv.children()) - before)
        time.sleep(0.02)
    if len(new) != 1:
        fail("cannot find the connection's child: %r" % new)
    os.kill(new[0], signal.SIGKILL)
    if not at_eof(s):
        fail("a killed child did not close its connection")
    srv.wait_log("killed by signal 9")
    serve_alive(srv, "a child killed")
    ok("child killed: its connection closed, logged")

    # A burst of 1,000 connections, all connecting at the same moment
    # (non-blocking connects, half TCP, half Unix): every one greeted, and
    # with all of them open and idle a search is still answered.
    t0 = time.time()
    conns = []
    for i in range(1000):
        c = socket.socket(*((socket.AF_INET, socket.SOCK_STREAM) if i % 2
                            else (socket.AF_UNIX, socket.SOCK_STREAM)))
        c.setblocking(False)
        try:
            c.connect(("127.0.0.1", srv.port) if i % 2 else srv.sock)
        except (BlockingIOError, InterruptedError):
            pass
        conns.append(c)
    for c in conns:
        c.setblocking(True)
        f = recv_frame(c, timeout=60)
        if not f or f[0] != REPLY_UPDATE:
            fail("a connection of the burst got no greeting")
    greeted = time.time() - t0
    serve_alive(srv, "1,000 idle connections")
    for c in conns:
        c.close()
    ok("a burst of 1,000 connections, held idle", "all greeted in %.2f s; "
       "searches answered meanwhile" % greeted)

    # Writable access is refused as xapian-tcpsrv refuses it.
    errs = []
    for port in (srv.port, a.tcpsrv_port):
        try:
            xapian.remote_open_writable("127.0.0.1", port)
            errs.append(None)
        except xapian.Error as e:
            errs.append((type(e).__name__, e.get_msg()))
    if errs[0] is None or errs[0] != errs[1]:
        fail("writable open: serve %r, xapian-tcpsrv %r" % tuple(errs))
    ok("writable open refused", "%s: %s" % errs[0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--sample", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--ir-data", help="also every collection here "
                    "(../shared/ir-data), when it exists")
    ap.add_argument("--engine", choices=("cpu", "gpu"), default="cpu",
                    help="the engine of the servers under test (gpu: on a "
                    "machine with one)")
    a = ap.parse_args()
    global ENGINE
    ENGINE = a.engine
    for prog in ("xapian-tcpsrv", "xapian-progsrv"):
        if not shutil.which(prog):
            print("SKIP: %s not installed" % prog)
            return 77
    binary = os.path.abspath(a.bin)
    work = os.path.abspath(a.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    dbpath = os.path.join(work, "db")
    subprocess.run([binary, "index", "--quiet",
                    os.path.join(a.sample, "docs.tsv"), dbpath], check=True)
    subprocess.run([binary, "export", "--quiet", dbpath], check=True)

    # The command line.
    for cmd in ("serve", "connect"):
        p = subprocess.run([binary, cmd, "--help"], capture_output=True, text=True)
        if p.returncode or not p.stdout.startswith("usage: xapian-gpu %s" % cmd):
            fail("%s --help" % cmd)
        p = subprocess.run([binary, cmd, "-v"], capture_output=True, text=True)
        if p.returncode or not p.stdout.startswith("xapian-gpu %s - xapian-gpu " % cmd):
            fail("%s -v" % cmd)
        p = subprocess.run([binary, cmd, "--frobnicate"], capture_output=True, text=True)
        if p.returncode != 2 or "unknown option '--frobnicate'" not in p.stderr:
            fail("%s --frobnicate" % cmd)
    p = subprocess.run([binary, "serve", "--port", "0", os.path.join(work, "nodb")],
                       capture_output=True, text=True, timeout=30)
    if p.returncode != 1 or len(p.stderr.strip().splitlines()) != 1:
        fail("serve of a missing database: %d %r" % (p.returncode, p.stderr))
    p = subprocess.run([binary, "connect", os.path.join(work, "none.sock")],
                       capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    if p.returncode != 1 or "none.sock" not in p.stderr:
        fail("connect to no socket: %d %r" % (p.returncode, p.stderr))
    ok("serve/connect usage and errors")

    a.tcpsrv_port = free_port()
    tcpsrv = subprocess.Popen(["xapian-tcpsrv", "--interface", "127.0.0.1",
                               "--port", str(a.tcpsrv_port), dbpath],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              # On SIGTERM it signals its whole process group.
                              start_new_session=True)
    # Every search through serve --engine cpu: the CPU matcher (the GPU
    # engine's exact twin) answers the shapes it serves, counted.
    au = None
    served = unserved = 0
    eng = Server(binary, work, "engine", dbpath, "--engine", ENGINE,
                 "--verbose")
    eng.stub = os.path.join(work, "engine.stub")
    with open(eng.stub, "w") as f:
        f.write("remote :%s connect %s\n" % (binary, eng.sock))
    # No spare children here: the faults find a connection's child as the
    # one process that appears when it connects (spares() tests them).
    srv = Server(binary, work, "serve", dbpath, "--timeout", "60",
                 "--engine", ENGINE, "--spare-children", "0")
    srv.stub = os.path.join(work, "serve.stub")
    with open(srv.stub, "w") as f:
        f.write("remote :%s connect %s\n" % (binary, srv.sock))
    try:
        end = time.time() + 30
        while True:
            try:
                refdb = xapian.remote_open("127.0.0.1", a.tcpsrv_port)
                break
            except xapian.NetworkError:
                if time.time() > end or tcpsrv.poll() is not None:
                    fail("xapian-tcpsrv did not start")
                time.sleep(0.1)
        # xapian-gpu ab with engine server through the stub: every MSet
        # as stock's on the database itself, at k 10 and 100.
        for op, k in (("or", 10), ("and", 100)):
            out = subprocess.run([binary, "ab", "--db", dbpath, "--queries",
                                  os.path.join(a.sample, "queries.tsv"),
                                  "--engines", "xapian,server", "--server",
                                  eng.stub, "--threads", "2", "--op", op, "-k",
                                  str(k)], capture_output=True, text=True,
                                 timeout=300)
            m = re.search(r"compared (\d+) MSets, identical (\d+), different "
                          r"(\d+); unsupported (\d+)", out.stdout)
            nq = len(read_queries(a.sample))
            if (out.returncode or not m or m.group(1) != m.group(2) or
                    int(m.group(3)) or int(m.group(1)) + int(m.group(4)) != nq):
                fail("ab --engines xapian,server (%s, k %d): %r %r" %
                     (op, k, out.stdout[-400:], out.stderr[-400:]))
            qp = parser(xapian.Query.OP_OR if op == "or" else xapian.Query.OP_AND)
            n_served = sum(served_shape(qp.parse_query(t))
                           for t in read_queries(a.sample))
            served += n_served
            unserved += nq - n_served
        ok("ab --engines xapian,server", "OR k 10 and AND k 100 through the "
           "stub: every MSet identical")
        quest_check(binary, work, dbpath, a.tcpsrv_port, a.sample)
        # Without --server, ab starts `serve --engine auto` itself on a
        # Unix socket, compares through it, and stops it: its routes line
        # on stderr, nothing left in /tmp.
        before = set(os.listdir("/tmp"))
        out = subprocess.run([binary, "ab", "--db", dbpath, "--queries",
                              os.path.join(a.sample, "queries.tsv"),
                              "--engines", "xapian,server", "--threads", "2"],
                             capture_output=True, text=True, timeout=300)
        m = re.search(r"compared (\d+) MSets, identical (\d+), different 0",
                      out.stdout)
        r = re.search(r"serve: routes: (.*)", out.stderr)
        left = [f for f in set(os.listdir("/tmp")) - before
                if f.startswith("xapian-gpu-ab-")]
        if out.returncode or not m or m.group(1) != m.group(2) or not r or left:
            fail("ab --engines xapian,server without --server: %r %r %r" %
                 (out.stdout[-400:], out.stderr[-400:], left))
        ok("ab starts its own server", "%s MSets identical; its routes: %s"
           % (m.group(1), r.group(1)))
        dbs = [("serve tcp", xapian.remote_open("127.0.0.1", eng.port)),
               ("serve unix stub", xapian.Database(eng.stub))]
        c_served, c_unserved = compare(a, refdb, dbs, a.sample,
                                       operators=True)
        same_database(refdb, dbs)
        served += 2 * c_served      # two clients
        unserved += 2 * c_unserved
        for _, db in dbs:
            db.close()
        # The stub's client got its socket handed to the server by
        # connect (fd_pass.h); with pipes, connect copies bytes instead.
        if "(unix, handed over)" not in eng.text():
            fail("connect did not hand the stub client's socket over: %r"
                 % eng.text()[-600:])
        greeting = recv_frame(eng.unix())
        p = subprocess.Popen([binary, "connect", eng.sock], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE)
        got = p.stdout.read(2 + len(greeting[1]))
        p.stdin.close()
        rest = p.stdout.read()
        if (p.wait(timeout=30) != 0 or rest or
                frames(got) != [greeting]):
            fail("connect over pipes: %d %r %r" % (p.returncode, got, rest))
        ok("connect", "a stub's socket handed to the server; pipes bridged")
        texts = read_queries(a.sample)[:40]
        n_frames = 0
        for op in (xapian.Query.OP_OR, xapian.Query.OP_AND):
            for first in (0, 3):
                for text in texts:
                    ref = record_search(a.tcpsrv_port, text, op, first)
                    got = record_search(eng.port, text, op, first)
                    kinds = [t for t, _ in frames(got[1])]
                    if got != ref or REPLY_RESULTS not in kinds:
                        fail("search %r (first %d) differs in its bytes from "
                             "xapian-tcpsrv's:\n%r\n%r" % (text, first, got, ref))
                    n_frames += len(kinds)
                    if served_shape(parser(op).parse_query(text)):
                        served += 1
                    else:
                        unserved += 1
        ok("%d searches, bytes both ways" % (4 * len(texts)),
           "%d reply frames identical to xapian-tcpsrv's" % n_frames)
        if eng.stop() != 0:
            fail("serve --engine cpu's exit status")
        r = routes(eng)
        if not engine_routes(r, served, unserved):
            fail("routes %r, expected %d on the engine, %d stock: every search "
                 "of a shape the engines serve answered by the engine, the "
                 "rest by stock" % (r, served, unserved))
        ok("every search routed as expected", "routes %r" % r)

        # --engine auto where no GPU is usable, with no flat OR on the CPU
        # matcher (XG_NO_CPU_OR=1): the router gives each OR to stock,
        # which serve computes in-process as xapian-progsrv would (every
        # byte equal, estimates included), and each AND to the exact CPU
        # matcher, faster than stock there (every byte equal where
        # stock's counts are exact).
        au = Server(binary, work, "auto", dbpath, "--engine", "auto",
                    env={"XG_NO_CPU_OR": "1"})
        recorded = []
        for op in (xapian.Query.OP_OR, xapian.Query.OP_AND):
            exact = op == xapian.Query.OP_AND
            for first in (0, 3):
                for text in texts:
                    recorded.append((text, first,
                                     record_search(a.tcpsrv_port, text, op, first,
                                                   exact=exact),
                                     record_search(au.port, text, op, first,
                                                   exact=exact)))
        if au.stop() != 0:
            fail("serve --engine auto's exit status")
        r = routes(au)
        if r.get("gpu"):
            print("(a GPU answered under --engine auto: in-process stock "
                  "not checked byte by byte)")
        else:
            for text, first, ref, got in recorded:
                if got != ref:
                    fail("--engine auto without a GPU: search %r (first %d) "
                         "differs in its bytes from xapian-tcpsrv's" % (text, first))
            if not r.get("stock:no-device") or not r.get("cpu"):
                fail("--engine auto without a GPU: routes %r" % r)
            ok("%d searches: OR in-process as stock, estimates too; AND on "
               "the CPU matcher" % len(recorded),
               "bytes identical to xapian-tcpsrv's; routes %r" % r)
        # By default the cost model gives these short ORs to the CPU
        # matcher's top k with its count: every byte equal where stock's
        # counts are exact.
        au = Server(binary, work, "auto-or", dbpath, "--engine", "auto")
        recorded = [(text, first,
                     record_search(a.tcpsrv_port, text, xapian.Query.OP_OR,
                                   first),
                     record_search(au.port, text, xapian.Query.OP_OR, first))
                    for first in (0, 3) for text in texts]
        if au.stop() != 0:
            fail("serve --engine auto's exit status")
        r = routes(au)
        if not r.get("gpu"):
            for text, first, ref, got in recorded:
                if got != ref:
                    fail("--engine auto without a GPU, an OR: search %r "
                         "(first %d) differs in its bytes from "
                         "xapian-tcpsrv's" % (text, first))
            if r.get("cpu", 0) < len(recorded) // 2:
                fail("--engine auto without a GPU: ORs on the CPU matcher: "
                     "routes %r" % r)
            ok("%d OR searches on the CPU matcher with the count" %
               len(recorded), "bytes identical to xapian-tcpsrv's (counts "
               "exact); routes %r" % r)
        text = "boundary layer flow in a supersonic wind tunnel"
        ref = record_search(a.tcpsrv_port, text)
        got = record_search(srv.port, text)
        if got != ref:
            fail("a recorded search differs in its bytes from xapian-tcpsrv's")
        a.conversation = got[0]
        faults(a, srv, binary, dbpath, work)

        # SIGTERM with a search in flight: MSG_QUERY answered with
        # REPLY_STATS, then the signal, then MSG_GETMSET still answered with
        # xapian-tcpsrv's REPLY_RESULTS; the connection then closes and the
        # server exits 0 with no child left.
        msgs = frames(a.conversation)
        q = [m for m in msgs if m[0] == MSG_QUERY][0]
        g = [m for m in msgs if m[0] == MSG_GETMSET][0]
        want = [m for m in frames(ref[1]) if m[0] == REPLY_RESULTS][0]
        other = srv.unix()
        recv_frame(other)
        s = srv.unix()
        recv_frame(s)
        s.sendall(bytes([MSG_QUERY]) + enc_len(len(q[1])) + q[1])
        stats = recv_frame(s)
        kids = srv.children()
        srv.p.send_signal(signal.SIGTERM)
        srv.wait_log("stopping on signal 15")
        s.sendall(bytes([MSG_GETMSET]) + enc_len(len(g[1])) + g[1])
        res = recv_frame(s)
        if not stats or not res or res != want:
            fail("the search in flight at SIGTERM did not finish as "
                 "xapian-tcpsrv answers it")
        if not at_eof(s) or not at_eof(other):
            fail("connections stay open after SIGTERM")
        rc = srv.p.wait(timeout=60)
        alive = [k for k in kids if os.path.exists("/proc/%d" % k) and
                 "zombie" not in open("/proc/%d/status" % k).read().lower()]
        if rc != 0 or alive or os.path.exists(srv.sock):
            fail("after SIGTERM: exit %d, children alive %r, socket left %r" %
                 (rc, alive, os.path.exists(srv.sock)))
        ok("SIGTERM with a search in flight", "REPLY_RESULTS as xapian-tcpsrv's, "
           "exit 0, %d children reaped" % len(kids))
        srv.err.close()

        # A stalled message meets --timeout; --max-connections refuses.
        s2 = Server(binary, work, "small", dbpath, "--timeout", "1",
                    "--max-connections", "2")
        c1, c2 = s2.unix(), s2.tcp()
        recv_frame(c1)
        recv_frame(c2)
        c3 = s2.unix()
        if not at_eof(c3, 10):
            fail("a third connection over --max-connections 2 stayed open")
        s2.wait_log("refused: 2 connections")
        ok("--max-connections 2: the third closed, logged")
        c1.sendall(bytes([MSG_QUERY]) + enc_len(100) + b"x" * 10)
        t0 = time.time()
        if not at_eof(c1, 10) or not at_eof(c2, 10):
            fail("--timeout 1 did not close a stalled and an idle connection")
        s2.wait_log("message cut short")
        s2.wait_log("idle timeout")
        ok("--timeout 1: stalled and idle closed", "in %.1f s" % (time.time() - t0))
        if s2.stop() != 0:
            fail("the second server's exit status")
        spares(binary, work, dbpath)
        threads_cap(binary, work, dbpath, a.sample)
        and_maybe_skip(binary, work)
        # ../shared/ir-data's Cranfield where it is there, else the sample.
        ranged = os.path.join(resolve_ir_data(a.ir_data), "cranfield") \
            if a.ir_data and os.path.isdir(a.ir_data) else a.sample
        value_ranges(binary, work, ranged if os.path.isdir(ranged) else a.sample)
        synonyms(binary, work, ranged if os.path.isdir(ranged) else a.sample)
        updated(binary, work, dbpath)
        reexported(binary, work, dbpath)
        shards(binary, work, a.sample)
        if a.ir_data and os.path.isdir(a.ir_data):
            collections_ab(binary, work, resolve_ir_data(a.ir_data))
    finally:
        for p in (eng.p, srv.p) + ((au.p,) if au else ()):
            if p.poll() is None:
                p.kill()
        tcpsrv.terminate()
        tcpsrv.wait()
    print("%d checks passed" % CHECKS)
    return 0


if __name__ == "__main__":
    sys.exit(main())
