#!/usr/bin/env python3
"""A/B test on a database built by Debian's omindex, queried as Omega does.

Proves DESIGN.md's exactness contract on the index real sites have: the
Cranfield collection is written out as one small HTML file per document
(its first sentence the <title>, so omindex makes S and ZS title terms
beside the body's plain and Z terms), indexed with
`omindex --db DB --url / DIR`, exported, and then `xapian-gpu ab --omega`
(Omega's default QueryParser set-up, docs/cli.md) must find no MSet that
differs from stock Xapian's, at k 10 and 100, for the CPU matcher and for
the GPU pipeline on its CPU twins (XG_GPU_TWINS=1).  Most queries must be
compared, not reported unsupported.  The same queries with Omega's size:
ranges (value slot 2) must all but 1% be served by the CPU matcher, and
identical.

Where Omega's CGI is installed too, each query's top 10 from Omega itself
(its default template's settings, hits printed as `$id $weight`) must
equal stock Xapian's answer to the `--omega` query: the same docids in
the same order and the same weights at Omega's `%f` precision.

On the GPU machine, which has no omindex, `--prebuilt DB` takes the
database this test built elsewhere (it stays in WORK/db) and
`--engine gpu` compares the device itself, and the plugin routing to it,
instead of the twins.

Skips (exit 77) when omindex is absent; uses the bundled sample
tests/sample/cranfield where ../shared/ir-data is absent.
"""
import argparse
import html
import json
import os
import re
import shutil
import sys
import time

from testlib import resolve_ir_data, run, size_range_texts

OMEGA_CGI = "/usr/lib/cgi-bin/omega/omega"
AB_LINE = re.compile(r"queries (\d+): compared (\d+) MSets, identical (\d+), "
                     r"different (\d+); unsupported (\d+)")
# At least this share of the queries must be served (Cranfield's 225,
# Omega's phrases and NOTs among them, all are).
MIN_COMPARED = 0.99


def write_site(tsv, site):
    """One HTML file per document: the title, then the rest as body."""
    os.makedirs(site)
    n = 0
    with open(tsv, encoding="utf-8") as f:
        for line in f:
            if "\t" not in line:
                continue
            docid, text = line.rstrip("\n").split("\t", 1)
            title, _, body = text.partition(" . ")
            with open(os.path.join(site, "d%05d.html" % int(docid)), "w",
                      encoding="utf-8") as o:
                o.write("<html><head><title>%s</title></head>"
                        "<body><p>%s</p></body></html>\n" %
                        (html.escape(title), html.escape(body)))
            n += 1
    return n


def size_range_queries(queries, out):
    """testlib.size_range_texts of queries, one per line of out."""
    with open(out, "w", encoding="utf-8") as o:
        for i, t in enumerate(size_range_texts(queries)):
            o.write("%d\t%s\n" % (i + 1, t))
    return out


def ab(binary, db, queries, k, engines, env=None, min_compared=None):
    out = run([binary, "ab", "--db", db, "--queries", queries, "--omega",
               "-k", str(k), "--engines", engines], env=env)
    m = AB_LINE.search(out)
    if not m:
        sys.exit("FAIL: no summary line in ab's output:\n" + out)
    n, compared, identical, different, unsupported = map(int, m.groups())
    print("   %-12s k %-4d %s" % (engines, k, m.group(0)))
    if different != 0 or identical != compared:
        sys.exit("FAIL: ab found different MSets:\n" + out)
    if compared < (min_compared or MIN_COMPARED) * n:
        sys.exit("FAIL: only %d of %d queries compared:\n%s" %
                 (compared, n, out))


def omega_hits(work, db, text, params=()):
    """Omega's top 10 for P=text and the CGI parameters params (B=TERM,
    N=TERM) as [(docid, '%f' weight)]."""
    env = dict(os.environ, OMEGA_CONFIG_FILE=os.path.join(work, "omega.conf"))
    out = run([OMEGA_CGI, "P=" + text, "FMT=hits"] + list(params), env=env)
    hits = []
    for line in out.splitlines():
        m = re.fullmatch(r"HIT (\d+) (\S+)", line.strip())
        if m:
            hits.append((int(m.group(1)), m.group(2)))
    return hits


# Omega's boolean filters (B=) and exclusions (N=) beside the query text,
# as `search --filter` and `--exclude` give them: omindex's terms for the
# MIME type and extension (every page), and pages' URL terms.
FILTER_SETS = (
    (("B", "Ttext/html"), ("B", "Ehtml")) +
    tuple(("N", "U/d%05d.html" % d) for d in range(1, 51)),
    (("B", "Ttext/html"),) +
    tuple(("B", "U/d%05d.html" % d) for d in range(20, 1201, 20)),
)


def check_omega(binary, work, db, queries):
    """Omega's own answers equal stock Xapian's on the --omega query, also
    with B= filters and N= exclusions (FILTER_SETS)."""
    os.makedirs(os.path.join(work, "omega-data"))
    os.makedirs(os.path.join(work, "omega-templates"))
    os.symlink(os.path.abspath(db), os.path.join(work, "omega-data", "default"))
    with open(os.path.join(work, "omega.conf"), "w") as f:
        f.write("database_dir %s\ntemplate_dir %s\nlog_dir %s\n" %
                (os.path.join(work, "omega-data"),
                 os.path.join(work, "omega-templates"), work))
    # The settings lines of Omega's default template (templates/query),
    # then one line per hit.
    with open(os.path.join(work, "omega-templates", "hits"), "w") as f:
        f.write("$set{flag_spelling,$ne{$cgi{SPELL},0}}\n"
                "$set{thousand,$.}$set{decimal,.}\n"
                "$setmap{prefix,,$split{ S B F},title,S,author,A,topic,B}\n"
                "$hitlist{HIT $id $weight\n}\n")
    texts = {}
    with open(queries, encoding="utf-8") as f:
        for line in f:
            if "\t" in line:
                qid, text = line.rstrip("\n").split("\t", 1)
                texts[qid] = text
    for fs in ((),) + FILTER_SETS:
        flags = [x for k, t in fs
                 for x in ("--filter" if k == "B" else "--exclude", t)]
        out = run([binary, "search", "--db", db, "--engine", "xapian",
                   "--omega", "-k", "10", "--json", "--queries", queries] +
                  flags)
        n = 0
        for line in out.splitlines():
            r = json.loads(line)
            if "error" in r:
                continue
            ours = [(h["docid"], "%f" % h["weight"]) for h in r["results"]]
            theirs = omega_hits(work, db, texts[r["qid"]],
                                ["%s=%s" % kt for kt in fs])
            if ours != theirs:
                sys.exit("FAIL: query %s (%r) with %d filters: Omega gives "
                         "%s, stock Xapian on the --omega query %s" %
                         (r["qid"], texts[r["qid"]], len(fs), theirs, ours))
            n += 1
        print("   Omega's own top 10 equals the --omega query's for %d "
              "queries%s" % (n, " with %d B= and %d N=" %
                             (sum(k == "B" for k, _ in fs),
                              sum(k == "N" for k, _ in fs)) if fs else ""))


def omega_page(conf, text, minhits, defaultop):
    env = dict(os.environ, OMEGA_CONFIG_FILE=conf)
    args = [OMEGA_CGI, "P=" + text]
    if minhits:
        args.append("MINHITS=" + minhits)
    if defaultop:
        args.append("DEFAULTOP=" + defaultop)
    return run(args, env=env)


# The lines of Omega's default result page that may differ between two
# servers: the time taken, and (stock estimating, serve counting exactly,
# docs/server.md) the number of matches.
TOOK = re.compile(r"Search took [0-9.]+ seconds")
COUNT = re.compile(r"(of about [0-9,]+ matches|of exactly [0-9,]+ matches|"
                   r"All [0-9,]+ matches)")


def check_omega_serve(binary, work, db, queries):
    """Omega's CGI with its default template, through a stub file in its
    database_dir: the result pages of `xapian-gpu serve --engine cpu` and
    of xapian-tcpsrv on the same database are identical except "Search
    took" (Omega's MINHITS at the database's size, so stock's counts are
    exact), and except the match count too at Omega's default MINHITS.
    The pages show each hit's document data (read through the server's
    child) and percentage; serve's routes show the engine answered."""
    import signal
    import socket
    import subprocess
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    tcp = subprocess.Popen(["xapian-tcpsrv", "--interface", "127.0.0.1",
                            "--port", str(port), db], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, start_new_session=True)
    sock = os.path.join(work, "omega-serve.sock")
    log = os.path.join(work, "omega-serve.log")
    with open(log, "w") as err:
        srv = subprocess.Popen([binary, "serve", "--engine", "cpu", "--unix",
                                sock, db], stderr=err)
    try:
        end = time.time() + 30
        while "ready:" not in open(log).read():
            if srv.poll() is not None or time.time() > end:
                sys.exit("FAIL: serve did not start: %s" % open(log).read())
            time.sleep(0.05)
        time.sleep(0.5)     # xapian-tcpsrv's listen
        confs = {}
        for name, stub in (("serve", "remote :%s connect %s" % (binary, sock)),
                           ("tcpsrv", "remote 127.0.0.1:%d" % port)):
            d = os.path.join(work, "omega-" + name)
            os.makedirs(os.path.join(d, "data"))
            with open(os.path.join(d, "data", "default"), "w") as f:
                f.write(stub + "\n")
            confs[name] = os.path.join(d, "omega.conf")
            with open(confs[name], "w") as f:
                f.write("database_dir %s\ntemplate_dir "
                        "/usr/share/xapian-omega/templates\nlog_dir %s\n" %
                        (os.path.join(d, "data"), d))
        texts = []
        with open(queries, encoding="utf-8") as f:
            for line in f:
                if "\t" in line:
                    texts.append(line.rstrip("\n").split("\t", 1)[1])
        texts = texts[:60]
        hits = 0
        for minhits in ("1000000", None):
            for op in (None, "or"):     # Omega's default (AND), and OR
                for text in texts:
                    got, want = (TOOK.sub("", omega_page(confs[n], text, minhits, op))
                                 for n in ("serve", "tcpsrv"))
                    if not minhits:
                        # The count's branch of the template also differs
                        # in its blank lines.
                        got, want = (re.sub(r"\s+", " ", COUNT.sub("", x))
                                     for x in (got, want))
                    if got != want:
                        sys.exit("FAIL: Omega's page for %r (MINHITS %s, "
                                 "DEFAULTOP %s) through serve differs from "
                                 "xapian-tcpsrv's" % (text, minhits, op))
                    hits += got.count("<tr><td valign=top>")
        if hits == 0:
            sys.exit("FAIL: Omega's pages showed no hit")
    finally:
        srv.send_signal(signal.SIGTERM)
        srv.wait(timeout=60)
        tcp.terminate()
        tcp.wait()
    m = re.search(r"routes: gpu (\d+) cpu (\d+)", open(log).read())
    if not m or int(m.group(2)) == 0:
        sys.exit("FAIL: serve's routes: %s" % open(log).read()[-300:])
    print("   Omega's default pages through serve equal xapian-tcpsrv's for %d "
          "queries x 2 MINHITS x AND/OR (%d hits shown); routes cpu %s" %
          (len(texts), hits, m.group(2)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--ir-data", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--prebuilt", help="an omindex database built before "
                    "(exported), instead of running omindex")
    ap.add_argument("--engine", choices=("twins", "gpu"), default="twins",
                    help="the GPU pipeline on its CPU twins, or the device")
    a = ap.parse_args()
    a.ir_data = resolve_ir_data(a.ir_data)
    coll = os.path.join(a.ir_data, "cranfield")
    queries = os.path.join(coll, "queries.tsv")
    if not a.prebuilt and not shutil.which("omindex"):
        print("SKIP: omindex is not installed (Debian: xapian-omega)")
        return 77
    if not os.path.exists(os.path.join(coll, "docs.tsv")):
        sys.exit("FAIL: %s has no cranfield collection" % a.ir_data)
    t0 = time.time()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    if a.prebuilt:
        db = a.prebuilt
        print("== omindex database %s (built beforehand)" % db)
    else:
        site = os.path.join(a.work, "site")
        db = os.path.join(a.work, "db")
        n = write_site(os.path.join(coll, "docs.tsv"), site)
        run(["omindex", "--db", db, "--url", "/", "--empty-docs=index", site])
        run([a.bin, "export", "--quiet", db])
        print("== omindex: %d files indexed, exported" % n)
    env = dict(os.environ, XG_GPU_TWINS="1") if a.engine == "twins" else None
    for k in (10, 100):
        ab(a.bin, db, queries, k, "xapian,cpu")
        ab(a.bin, db, queries, k, "xapian,gpu", env=env)
        ab(a.bin, db, queries, k, "xapian,plugin-gpu", env=env)
    # Omega's size: ranges (OP_VALUE_RANGE, _GE, _LE on slot 2), read from
    # the index's values: all served by the CPU matcher (through the GPU
    # engine too, which hands the general form to it), Omega's phrases
    # beside them included.
    ranged = size_range_queries(queries, os.path.join(a.work, "ranges.tsv"))
    for k in (10, 100):
        ab(a.bin, db, ranged, k, "xapian,cpu", min_compared=0.99)
        ab(a.bin, db, ranged, k, "xapian,gpu", env=env, min_compared=0.99)
    if not a.prebuilt and os.access(OMEGA_CGI, os.X_OK):
        check_omega(a.bin, a.work, db, queries)
        if shutil.which("xapian-tcpsrv") and shutil.which("xapian-progsrv"):
            check_omega_serve(a.bin, a.work, db, queries)
        else:
            print("   (no xapian-tcpsrv: Omega through serve not checked)")
    elif not a.prebuilt:
        print("   (no %s: Omega's own answers not checked)" % OMEGA_CGI)
    print("PASS in %.1f s" % (time.time() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
