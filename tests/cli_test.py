#!/usr/bin/env python3
"""The command line as Xapian's own tools have it (quest, xapian-delve,
xapian-compact), issue 20 point 5, docs/cli.md:

- every subcommand takes -h/--help (usage on stdout, exit 0) and
  -v/--version ("xapian-gpu CMD - xapian-gpu VERSION", exit 0);
- -d is --db wherever a subcommand takes --db;
- an unknown option and an option missing its value are bad usage: exit 2
  and one stderr line naming the subcommand, a different message for each.

Also: `synth text` writes the documents `synth docs` indexes (each
document's words and counts equal its termlist's terms and wdfs).
"""
import argparse
import os
import shutil
import subprocess
import sys

CHECKS = 0

# Each subcommand with an option that takes a value, and whether it takes
# --db.
COMMANDS = [
    ("index", "--shards", False),
    ("split", "--shards", False),
    ("export", "--bloom-hashes", False),
    ("search", "--index", True),
    ("ab", "--queries", True),
    ("bench", "--queries", True),
    ("calibrate", "--model", True),
    ("weight", "--tsv", True),
    ("qlm", "--sigma", True),
    ("qlm-search", "--qlm", False),
    ("synth docs", "--docs", False),
    ("synth text", "--docs", False),
    ("synth queries", "--queries", False),
    ("serve", "--port", False),
]


def run(cmd, timeout=120):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def ok(what, detail=""):
    global CHECKS
    CHECKS += 1
    print("ok %-44s %s" % (what, detail))


def expect(what, cmd, code, stdout=None, stderr_has=(), stderr_lacks=()):
    """cmd exits `code`; with code 2, one stderr line holding every needle
    and none of stderr_lacks, and nothing on stdout; else an empty stderr
    and stdout starting with `stdout`.  Returns the stderr line."""
    p = run(cmd)
    err = p.stderr.strip()
    if p.returncode != code:
        sys.exit("FAIL %s: %s exited %d (want %d), stderr %r" %
                 (what, " ".join(cmd[1:]), p.returncode, code, err))
    if code == 2:
        if len(err.splitlines()) != 1:
            sys.exit("FAIL %s: want one stderr line, got %r" % (what, err))
        if p.stdout:
            sys.exit("FAIL %s: printed %r on stdout" % (what, p.stdout[:200]))
    elif err:
        sys.exit("FAIL %s: stderr %r" % (what, err))
    if stdout is not None and not p.stdout.startswith(stdout):
        sys.exit("FAIL %s: stdout %r, want it to start %r" %
                 (what, p.stdout[:200], stdout))
    for n in stderr_has:
        if n not in err:
            sys.exit("FAIL %s: %r not in %r" % (what, n, err))
    for n in stderr_lacks:
        if n in err:
            sys.exit("FAIL %s: %r in %r" % (what, n, err))
    ok(what, err if code == 2 else p.stdout.splitlines()[0])
    return err


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--sample", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    b = a.bin
    w = a.work
    shutil.rmtree(w, ignore_errors=True)
    os.makedirs(w)

    # The command itself.
    p = run([b, "--version"])
    if p.returncode != 0 or not p.stdout.startswith("xapian-gpu "):
        sys.exit("FAIL xapian-gpu --version: %d %r" % (p.returncode, p.stdout))
    version = p.stdout.split()[-1]
    ok("xapian-gpu --version", p.stdout.strip())
    expect("xapian-gpu -v", [b, "-v"], 0, "xapian-gpu %s\n" % version)
    expect("xapian-gpu --help", [b, "--help"], 0, "usage: xapian-gpu ")
    expect("xapian-gpu -h", [b, "-h"], 0, "usage: xapian-gpu ")
    p = run([b])   # the usage, as quest without a query, on stderr
    if p.returncode != 2 or p.stdout or "usage: xapian-gpu" not in p.stderr:
        sys.exit("FAIL xapian-gpu without a command: %d %r" % (p.returncode, p.stdout))
    ok("xapian-gpu without a command", "exit 2, the usage on stderr")
    expect("xapian-gpu frobnicate", [b, "frobnicate"], 2,
           stderr_has=["unknown command 'frobnicate'"])

    for name, valued, takes_db in COMMANDS:
        cmd = [b] + name.split()
        tag = "xapian-gpu %s: " % name
        for o in ("--help", "-h"):
            expect("%s %s" % (name, o), cmd + [o], 0, "usage: xapian-gpu %s" % name)
        for o in ("--version", "-v"):
            expect("%s %s" % (name, o), cmd + [o], 0,
                   "xapian-gpu %s - xapian-gpu %s\n" % (name, version))
        unknown = expect("%s --frobnicate" % name, cmd + ["--frobnicate"], 2,
                         stderr_has=[tag, "unknown option '--frobnicate'"],
                         stderr_lacks=["needs a value"])
        expect("%s --frobnicate=1" % name, cmd + ["--frobnicate=1"], 2,
               stderr_has=[tag, "unknown option '--frobnicate'"])
        expect("%s -Z" % name, cmd + ["-Z"], 2,
               stderr_has=[tag, "unknown option '-Z'"])
        missing = expect("%s %s (no value)" % (name, valued), cmd + [valued], 2,
                         stderr_has=[tag, "option '%s' needs a value" % valued],
                         stderr_lacks=["unknown"])
        if unknown.replace("--frobnicate", "") == missing.replace(valued, ""):
            sys.exit("FAIL %s: the same message for an unknown option and a "
                     "missing value: %r" % (name, unknown))
        expect("%s --help=1" % name, cmd + ["--help=1"], 2,
               stderr_has=[tag, "option '--help' takes no value"])
        if takes_db:
            expect("%s -d (no value)" % name, cmd + ["-d"], 2,
                   stderr_has=[tag, "option '-d' needs a value"])
            expect("%s --db (no value)" % name, cmd + ["--db"], 2,
                   stderr_has=[tag, "option '--db' needs a value"])
        else:
            expect("%s -d (not an option)" % name, cmd + ["-d", "x"], 2,
                   stderr_has=[tag, "unknown option '-d'"])
    expect("synth --help", [b, "synth", "--help"], 0, "usage: xapian-gpu synth")
    expect("synth --version", [b, "synth", "--version"], 0,
           "xapian-gpu synth - xapian-gpu %s\n" % version)
    expect("synth --frobnicate", [b, "synth", "--frobnicate"], 2,
           stderr_has=["xapian-gpu synth: ", "unknown option '--frobnicate'"])

    # -d is --db: the same answers.
    db = os.path.join(w, "db")
    docs = os.path.join(a.sample, "docs.tsv")
    queries = os.path.join(a.sample, "queries.tsv")
    if run([b, "index", "--quiet", docs, db]).returncode or \
       run([b, "export", "--quiet", db]).returncode:
        sys.exit("FAIL: cannot build the sample database")
    q = "boundary layer"
    for long_db, short_db in (
            (["search", "--db", db, "--json", q], ["search", "-d", db, "--json", q]),
            (["search", "--db=" + db, "-k", "3", q], ["search", "-d" + db, "-k", "3", q])):
        pl, ps = run([b] + long_db), run([b] + short_db)
        if pl.returncode or ps.returncode or pl.stdout != ps.stdout:
            sys.exit("FAIL %s: %d %d %r %r" % (" ".join(short_db), pl.returncode,
                                               ps.returncode, pl.stderr, ps.stderr))
        ok(" ".join(short_db[:3]).replace(db, "DB") + " = --db")
    for name, extra in (("weight", []), ("qlm", ["--engine", "cpu"])):
        outs = []
        for o in ("--db", "-d"):
            out = os.path.join(w, "%s%s.tsv" % (name, o))
            p = run([b, name, o, db, "-o", out, "--quiet"] + extra, timeout=300)
            if p.returncode:
                sys.exit("FAIL %s %s: %r" % (name, o, p.stderr))
            outs.append(open(out, "rb").read())
        if outs[0] != outs[1] or not outs[0]:
            sys.exit("FAIL %s -d: output differs from --db" % name)
        ok("%s -d DB = --db" % name)
    p = run([b, "ab", "-d", db, "--queries", queries, "--engines", "xapian,cpu"],
            timeout=300)
    if p.returncode or "different" not in p.stdout:
        sys.exit("FAIL ab -d: %d %r" % (p.returncode, p.stderr))
    ok("ab -d DB")
    # calibrate and bench take -d as --db: the check after it speaks.
    for name in ("calibrate", "bench"):
        expect("%s -d DB" % name, [b, name, "-d", db, q], 2,
               stderr_has=["xapian-gpu %s: " % name, "--queries FILE is required"])

    check_synth_text(b, w)
    print("%d passed, 0 failed" % CHECKS)
    return 0


def check_synth_text(b, w):
    """synth text and synth docs, with the same options, give the same
    documents: words and counts against the database's termlists."""
    import collections
    from testlib import xapian_module
    xapian = xapian_module()
    opts = ["--docs", "60", "--vocab", "3000", "--mu", "4", "--seed", "7"]
    db_path, tsv = os.path.join(w, "synth-db"), os.path.join(w, "synth.tsv")
    for cmd in (["docs", "--quiet"] + opts + [db_path], ["text"] + opts + [tsv]):
        p = run([b, "synth"] + cmd)
        if p.returncode:
            sys.exit("FAIL synth %s: %r" % (cmd[0], p.stderr))
    db = xapian.Database(db_path)
    lines = open(tsv).read().splitlines()
    if len(lines) != db.get_doccount() or len(lines) != 60:
        sys.exit("FAIL synth text: %d lines for %d documents" %
                 (len(lines), db.get_doccount()))
    for line in lines:
        docid, _, text = line.partition("\t")
        words = collections.Counter(text.split(" "))
        terms = {t.term.decode(): t.wdf
                 for t in db.get_document(int(docid)).termlist()}
        if words != terms:
            sys.exit("FAIL synth text: document %s differs from its termlist"
                     % docid)
        if len(text.split(" ")) != db.get_doclength(int(docid)):
            sys.exit("FAIL synth text: document %s length" % docid)
    ok("synth text = synth docs' termlists", "60 documents")


if __name__ == "__main__":
    sys.exit(main())
