#!/usr/bin/env python3
"""Bad input: each gives one line on stderr naming the file and the fault,
a nonzero exit, never a crash, a hang, or results from a stale index.

DESIGN.md, reliability rules: "Bad input gets a clear one-line error naming
the file and what is wrong, a nonzero exit, and nothing half-written", and
"stale or corrupt index ... means the stock matcher answers".
"""
import argparse
import os
import shutil
import stat
import struct
import subprocess
import sys

CHECKS = 0


def run(cmd, timeout=60):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def expect_fault(what, cmd, needles, code=1):
    """The command fails with exit `code` and one stderr line holding every
    needle."""
    global CHECKS
    p = run(cmd)
    err = p.stderr.strip()
    if p.returncode != code:
        sys.exit("FAIL %s: exit %d (want %d), stderr %r" %
                 (what, p.returncode, code, err))
    if len(err.splitlines()) != 1:
        sys.exit("FAIL %s: want one stderr line, got %r" % (what, err))
    for n in needles:
        if n not in err:
            sys.exit("FAIL %s: %r not in %r" % (what, n, err))
    if p.stdout.strip() and code == 1 and "results" in p.stdout:
        sys.exit("FAIL %s: printed results: %r" % (what, p.stdout[:200]))
    CHECKS += 1
    print("ok %-36s %s" % (what, err))


def section_table(data, n=12):
    n_shards = struct.unpack_from("<I", data, 32)[0]
    base = 512 + 64 * n_shards
    secs = []
    for i in range(n):
        off, length, crc, sid = struct.unpack_from("<QQII", data, base + 32 * i)
        secs.append((off, length))
    return secs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--sample", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--fuzz", help="fuzz_format binary to run on the index")
    a = ap.parse_args()
    b = a.bin
    w = a.work
    shutil.rmtree(w, ignore_errors=True)
    os.makedirs(w)
    db = os.path.join(w, "db")
    docs = os.path.join(a.sample, "docs.tsv")
    queries = os.path.join(a.sample, "queries.tsv")
    assert run([b, "index", "--quiet", docs, db]).returncode == 0
    assert run([b, "export", "--quiet", db]).returncode == 0
    idx = os.path.join(db, "xapian-gpu.idx")
    good = open(idx, "rb").read()
    q = "boundary layer"

    if a.fuzz:
        # Mutated indexes (CRCs recomputed) are refused cleanly or read
        # without a crash.
        global CHECKS
        p = run([a.fuzz, idx, "1500"], timeout=240)
        if p.returncode != 0:
            sys.exit("FAIL fuzz_format: %s %s" % (p.stdout, p.stderr))
        CHECKS += 1
        print("ok %-36s %s" % ("fuzzed index reader",
                               p.stdout.strip().splitlines()[-2]))

    # Databases that are not there or not Xapian.
    missing = os.path.join(w, "no-such-db")
    expect_fault("missing database", [b, "search", "--db", missing, q],
                 [missing])
    expect_fault("export of missing database", [b, "export", missing],
                 [missing])
    notdb = os.path.join(w, "not-a-db")
    os.makedirs(notdb)
    open(os.path.join(notdb, "junk"), "w").write("hello\n")
    expect_fault("directory that is not Xapian", [b, "search", "--db", notdb, q],
                 [notdb])
    junkfile = os.path.join(w, "junk.db")
    open(junkfile, "wb").write(b"\x00\x01 not a stub \xff\n")
    expect_fault("file that is not Xapian", [b, "export", junkfile], [junkfile])

    # Indexes that cannot be trusted.
    def bad_index(name, data, needles):
        path = os.path.join(w, name + ".idx")
        open(path, "wb").write(data)
        expect_fault(name, [b, "search", "--db", db, "--index", path,
                            "--engine", "cpu", q], [path] + needles)

    bad_index("missing index", b"", ["truncated"])
    os.remove(os.path.join(w, "missing index.idx"))
    expect_fault("index file absent", [b, "search", "--db", db, "--index",
                 os.path.join(w, "absent.idx"), q],
                 [os.path.join(w, "absent.idx"), "cannot open"])
    bad_index("truncated-header", good[:300], ["truncated"])
    bad_index("truncated-half", good[:len(good) // 2], ["truncated"])
    bad_index("truncated-last-byte", good[:-1], ["truncated"])
    bad_index("bad-magic", b"XXXXXXXX" + good[8:], ["magic"])
    v = bytearray(good)
    struct.pack_into("<I", v, 8, 99)
    bad_index("wrong-version", bytes(v), ["version 99"])
    e = bytearray(good)
    struct.pack_into("<I", e, 12, 0x04030201)
    bad_index("wrong-endianness", bytes(e), ["byte order"])
    h = bytearray(good)
    h[44] ^= 0x10  # n_docs
    bad_index("flipped-header-byte", bytes(h), ["header checksum"])
    names = ["DICT", "DICT_INDEX", "TERMS", "SHARD_DF", "SKIP", "POSTINGS",
             "BLOOM", "HASHSEG", "DOCIDS", "DOCLENS", "IMPACTS", "POSITIONS"]
    for i, (off, length) in enumerate(section_table(good)):
        if length == 0:
            continue
        f = bytearray(good)
        f[off + length // 2] ^= 0x01
        bad_index("flipped-byte-" + names[i], bytes(f),
                  ["checksum mismatch in section " + names[i]])

    # Values changed with every checksum recomputed (fuzz_format
    # --fix-crcs): refused at open, before any answer is printed; the
    # stock matcher answers under --engine auto.
    if a.fuzz:
        secs = dict(zip(names, section_table(good)))
        n_terms = struct.unpack_from("<Q", good, 72)[0]

        def tampered(name, mutate, needles, base=good):
            d = bytearray(base)
            mutate(d)
            path = os.path.join(w, name + ".idx")
            open(path, "wb").write(d)
            if run([a.fuzz, "--fix-crcs", path]).returncode != 0:
                sys.exit("FAIL fuzz_format --fix-crcs %s" % path)
            expect_fault(name, [b, "search", "--db", db, "--index", path,
                                "--engine", "cpu", "--json", "--queries",
                                queries], [path] + needles)
            p = run([b, "search", "--db", db, "--index", path, "--engine",
                     "cpu", "--json", "--queries", queries])
            if p.stdout:
                sys.exit("FAIL %s: printed before the error: %r" %
                         (name, p.stdout[:200]))
            p = run([b, "search", "--db", db, "--index", path, "--engine",
                     "auto", q])
            if p.returncode != 0 or "docid" not in p.stdout:
                sys.exit("FAIL %s: --engine auto did not answer from stock: "
                         "%r" % (name, p.stderr))

        def zero(sec):
            def f(d):
                off, length = secs[sec]
                d[off:off + length] = bytes(length)
            return f

        def mid_postings(d):
            off, length = secs["POSTINGS"]
            d[off + length // 2] ^= 0x40

        def k_plus_one(d):
            struct.pack_into("<I", d, 100, struct.unpack_from("<I", d, 100)[0] + 1)

        def no_lr_slack(d):
            off, _ = secs["TERMS"]
            lr = off + 64 * n_terms
            d[lr:lr + 8 * n_terms] = bytes(8 * n_terms)

        tampered("tampered-hash-segments", zero("HASHSEG"),
                 ["hash-segment starts"])
        tampered("tampered-bloom-hashes", k_plus_one, ["Bloom filter misses"])
        tampered("tampered-regression", no_lr_slack, ["regression window"])
        tampered("tampered-block", mid_postings, ["term "])
        impidx = os.path.join(w, "impacts.idx")
        assert run([b, "export", "--quiet", "--impacts", db, "-o",
                    impidx]).returncode == 0
        imp = open(impidx, "rb").read()
        isecs = dict(zip(names, section_table(imp)))

        def low_codes(d):
            off, length = isecs["IMPACTS"]
            codes = off + 16 * n_terms
            d[codes:off + length] = bytes(off + length - codes)
        tampered("tampered-impacts", low_codes, ["impact code"], base=imp)

        # Positions (tests/test_positions.cc has the other faults): the
        # last varint of the data runs past its end; block offsets that
        # do not span the data.
        n_blocks = struct.unpack_from("<Q", good, 88)[0]

        def cut_last_position(d):
            off, length = secs["POSITIONS"]
            d[off + length - 1] |= 0x80

        def short_offsets(d):
            off, _ = secs["POSITIONS"]
            at = off + 8 * n_blocks
            struct.pack_into("<Q", d, at, struct.unpack_from("<Q", d, at)[0] - 1)
        tampered("tampered-positions", cut_last_position,
                 ["term ", "positions: a position is cut off"])
        tampered("tampered-position-offsets", short_offsets,
                 ["section POSITIONS", "do not span"])

    # Stale: the database changed after the export.
    assert run(["xapian-metadata", "set", db, "touched", "1"]).returncode == 0
    expect_fault("stale index (revision)", [b, "search", "--db", db,
                 "--engine", "cpu", q], [idx, "stale", "revision"])
    # The stock matcher still answers.
    p = run([b, "search", "--db", db, "--engine", "xapian", q])
    if p.returncode != 0 or "matches" not in p.stdout:
        sys.exit("FAIL stock matcher on stale index: %r" % p.stderr)
    # A rebuilt database has another uuid.
    db2 = os.path.join(w, "db2")
    assert run([b, "index", "--quiet", docs, db2]).returncode == 0
    expect_fault("stale index (uuid)", [b, "search", "--db", db2, "--index",
                 idx, "--engine", "cpu", q], [idx, "stale", "uuid"])
    p = run([b, "ab", "--db", db, "--queries", queries])
    if p.returncode != 1 or "stale" not in p.stderr:
        sys.exit("FAIL ab on stale index: %d %r" % (p.returncode, p.stderr))

    # Export is atomic: a failing export leaves nothing behind.
    outdir = os.path.join(w, "ro")
    os.makedirs(outdir)
    target = os.path.join(outdir, "sub", "x.idx")
    expect_fault("export to a missing directory", [b, "export", "--quiet",
                 db2, "-o", target], [target])
    if os.listdir(outdir):
        sys.exit("FAIL export left files: %r" % os.listdir(outdir))

    # Bad options and query files.
    expect_fault("unknown option", [b, "search", "--db", db, "--frobnicate",
                 q], ["search"], code=2)
    expect_fault("unknown command", [b, "frobnicate"], ["frobnicate"], code=2)
    expect_fault("bad engine", [b, "search", "--db", db, "--engine", "quantum",
                 q], ["quantum"], code=2)
    expect_fault("bad -k", [b, "search", "--db", db, "-k", "ten", q], ["ten"],
                 code=2)
    expect_fault("bad --bloom-hashes", [b, "export", "--bloom-hashes", "99",
                 db2], ["99"], code=2)
    badq = os.path.join(w, "bad-queries.tsv")
    open(badq, "w").write("1\tfine query\nno tab here\n")
    expect_fault("query file without tab", [b, "search", "--db", db2,
                 "--engine", "xapian", "--queries", badq], [badq + ":2"])
    fifo = os.path.join(w, "fifo.idx")
    os.mkfifo(fifo)
    # Opening it must not wait for a writer: cpu refuses it, auto answers
    # with stock (run() times out, and fails, on a hang).
    expect_fault("a FIFO as the index", [b, "search", "--db", db2, "--index",
                 fifo, "--engine", "cpu", "flow"], [fifo, "not a regular file"])
    p = run([b, "search", "--db", db2, "--index", fifo, "--engine", "auto",
             "flow"], timeout=30)
    if p.returncode or "docid" not in p.stdout:
        sys.exit("FAIL a FIFO as the index, engine auto: exit %d %r" %
                 (p.returncode, p.stderr))
    print("ok a FIFO as the index, engine auto: stock answered")
    # A query QueryParser rejects is reported, and the next one answered,
    # by every engine (auto used to stop there with exit 1).
    rq = os.path.join(w, "rejected-queries.tsv")
    open(rq, "w").write("1\tflow\n2\tNOT AND\n3\tboundary layer\n")
    assert run([b, "export", "--quiet", db2]).returncode == 0
    for eng in ("xapian", "cpu", "auto"):
        p = run([b, "search", "--db", db2, "--engine", eng, "--queries", rq,
                 "-k", "1"])
        if (p.returncode or "query 2: error: query: Syntax" not in p.stdout or
                "query 3: " not in p.stdout or "query 1: " not in p.stdout):
            sys.exit("FAIL a rejected query, engine %s: exit %d %r %r" %
                     (eng, p.returncode, p.stdout, p.stderr))
    print("ok a rejected query: reported, the next answered (xapian, cpu, auto)")
    expect_fault("ab --op andor with the plugin", [b, "ab", "--db", db2,
                 "--queries", rq, "--engines", "xapian,plugin", "--op",
                 "andor"], ["plugin", "andor"], code=2)
    # An output path naming a device or a FIFO is refused, never replaced
    # by a regular file (run as root against /dev/null this broke the
    # machine); a copy of /dev/null stands in for it.
    devnull = os.path.join(w, "null-device")
    try:
        os.mknod(devnull, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        devnull = None
        print("(not root: the device case is checked with a FIFO only)")
    outfifo = os.path.join(w, "out-fifo")
    os.mkfifo(outfifo)
    for target in [t for t in (devnull, outfifo) if t]:
        kind = stat.S_IFMT(os.stat(target).st_mode)
        expect_fault("weight -o a non-regular file", [b, "weight", "--quiet",
                     "--tsv", docs, "-o", target], [target, "not a regular file"])
        expect_fault("export -o a non-regular file", [b, "export", "--quiet",
                     db2, "-o", target], [target, "not a regular file"])
        expect_fault("ab --json= a non-regular file", [b, "ab", "--db", db2,
                     "--queries", rq, "--engines", "xapian", "--json=" + target],
                     [target, "not a regular file"])
        if stat.S_IFMT(os.stat(target).st_mode) != kind:
            sys.exit("FAIL %s was replaced" % target)
    # A run killed before its rename leaves PATH.tmp.PID.XXXXXX: the next
    # run writing PATH removes those whose PID is gone, never a live run's.
    gone = subprocess.Popen(["true"])
    gone.wait()
    out_idx = os.path.join(w, "again.idx")
    for cmd in ([b, "export", "--quiet", db2, "-o", out_idx],
                [b, "weight", "--quiet", "--tsv", docs, "-o", out_idx]):
        stale = out_idx + ".tmp.%d.abcdef" % gone.pid
        live = out_idx + ".tmp.%d.ghijkl" % os.getpid()
        for f in (stale, live):
            open(f, "wb").write(b"x" * 4096)
        p = run(cmd)
        if p.returncode or os.path.exists(stale) or not os.path.exists(live):
            sys.exit("FAIL %s: a killed run's temporary %s (exit %d): %r" %
                     (cmd[1], "kept" if os.path.exists(stale) else
                      "fine, but a live run's removed", p.returncode,
                      os.listdir(w)))
        os.remove(live)
        CHECKS += 1
        print("ok %-36s %s" % (cmd[1] + ": killed run's temporary",
                               "removed; a live run's kept"))
    nulq = os.path.join(w, "nul-queries.tsv")
    open(nulq, "wb").write(b"1\tfine query\n2\tbroken\0 query\n3\tlast query\n")
    expect_fault("query file with a NUL byte", [b, "search", "--db", db2,
                 "--engine", "xapian", "--queries", nulq], [nulq + ":2", "NUL"])
    for v in ("nan,0,1,0.5,0.5", "1,inf,1,0.5,0.5", "1,0,1,nan,0.5"):
        expect_fault("--bm25 " + v, [b, "search", "--db", db2, "--bm25", v,
                     "flow"], [v], code=2)
    badtsv = os.path.join(w, "bad-docs.tsv")
    open(badtsv, "w").write("1\tgood doc\nx\tbad docid\n")
    expect_fault("index of a malformed TSV", [b, "index", "--quiet", badtsv,
                 os.path.join(w, "never")], [badtsv + ":2"])
    if os.path.exists(os.path.join(w, "never")):
        sys.exit("FAIL: failed index left a database behind")
    never = os.path.join(w, "never-split")
    expect_fault("split of a missing database", [b, "split", "--shards", "2",
                 os.path.join(w, "no-such-db"), never], ["no-such-db"])
    expect_fault("split onto an existing path", [b, "split", "--shards", "2",
                 db, db], [db, "already exists"])
    expect_fault("split --shards 1", [b, "split", "--shards", "1", db, never],
                 ["--shards"], code=2)
    if [f for f in os.listdir(w) if f.startswith("never")]:
        sys.exit("FAIL: a failed split left something behind: %r" %
                 os.listdir(w))
    print("%d passed, 0 failed" % CHECKS)
    return 0


if __name__ == "__main__":
    sys.exit(main())
