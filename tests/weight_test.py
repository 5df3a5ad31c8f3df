#!/usr/bin/env python3
"""xapian-gpu weight --db: every posting's weight must be, bit for bit, the
weight stock Xapian gives that document for the one-term query (compared
on a sample of terms, every posting of each), on 1 and 2 shards and with
non-default BM25 parameters; the binary form must hold exactly the TSV's
records; bad output paths leave nothing behind.  `weight --tsv` on a
docs.tsv must give byte for byte the output of `weight --db` on the
database stock Xapian's TermGenerator builds from it without a stemmer
(`xapian-gpu index --stem none`), on every collection and on lines made of
the tokenizer's edge cases: the tokenizer is Xapian's, whose weights the
--db check above ties to Xapian's own.

usage: weight_test.py --bin XAPIAN_GPU --ir-data DIR --work DIR
                      --term-weights TERM_WEIGHTS"""
import argparse
import glob
import json
import math
import random
import os
import re
import shutil
import struct
import sys

from testlib import compare_term_weights, resolve_ir_data, run, run_any


def check(a, db, bm25, label):
    out = os.path.join(a.work, "weights.tsv")
    extra = ["--bm25", bm25] if bm25 else []
    run([a.bin, "weight", "--quiet", "--db", db, "-o", out, *extra])
    by_term = {}
    with open(out, encoding="utf-8") as f:
        for line in f:
            term, docid, w = line.rstrip("\n").split("\t")
            by_term.setdefault(term, {})[int(docid)] = w
    # Every term (stems, prefixes, short words, digits, the rare and the
    # frequent), every posting: Xapian's own one-term query weights.
    n_cmp, postings = compare_term_weights(label, by_term, db, bm25,
                                          a.term_weights)
    # The binary form holds exactly the same records (docs/weight.md).
    binf = os.path.join(a.work, "weights.bin")
    run([a.bin, "weight", "--quiet", "--format", "bin", "--db", db, "-o",
         binf, *extra])
    with open(binf, "rb") as f:
        data = f.read()
    magic, version, flags, n_terms, n_rec, dict_off = struct.unpack_from(
        "<8sIIQQQ", data, 0)
    if (magic != b"XGWEIGHT" or version != 1 or n_terms != len(by_term) or
            dict_off != 40 + 16 * n_rec):
        sys.exit("FAIL %s: binary header %r" % (label, (magic, version,
                                                        n_terms, n_rec)))
    terms, at = [], dict_off
    for _ in range(n_terms):
        (n,) = struct.unpack_from("<I", data, at)
        terms.append(data[at + 4:at + 4 + n].decode("utf-8"))
        at += 4 + n
    if at != len(data) or terms != sorted(by_term, key=lambda t: t.encode()):
        sys.exit("FAIL %s: binary dictionary" % label)
    from_bin = {}
    for i in range(n_rec):
        tid, docid, w = struct.unpack_from("<IId", data, 40 + 16 * i)
        from_bin.setdefault(terms[tid], {})[docid] = "%.17g" % w
    if from_bin != by_term:
        sys.exit("FAIL %s: binary records differ from the TSV" % label)
    print("ok %-28s %d terms, %d postings written; all %d terms, %d "
          "postings equal to Xapian's one-term weights" %
          (label, len(by_term), sum(len(v) for v in by_term.values()),
           n_cmp, postings))


def check_impacts(a, db, bm25, label):
    """weight --db --impacts: the index's IMPACTS section (docs/format.md)
    brackets every posting's weight, as written by weight --db itself:
    tw * (c - 1) * scale <= w <= tw * c * scale, tw the term's BM25 weight
    for wqf 1; each list with a nonzero weight has code 255."""
    k1 = float(bm25.split(",")[0]) if bm25 else 1.0
    extra = ["--bm25", bm25] if bm25 else []
    out = os.path.join(a.work, "weights-impacts.tsv")
    idx = os.path.join(a.work, "impacts.idx")
    run([a.bin, "weight", "--quiet", "--db", db, "-o", out, "--impacts",
         "--index", idx, *extra])
    by_term = {}
    with open(out, encoding="utf-8") as f:
        for line in f:
            term, docid, w = line.rstrip("\n").split("\t")
            by_term.setdefault(term, []).append((int(docid), float(w)))
    with open(idx, "rb") as f:
        data = f.read()
    flags, = struct.unpack_from("<I", data, 20)
    n_shards, = struct.unpack_from("<I", data, 32)
    n_docs, = struct.unpack_from("<Q", data, 40)
    n_terms, n_postings = struct.unpack_from("<QQ", data, 72)
    sec = 512 + 64 * n_shards
    t_off, = struct.unpack_from("<Q", data, sec + 32 * 2)
    i_off, i_len = struct.unpack_from("<QQ", data, sec + 32 * 10)
    if not flags & 2 or i_len != 16 * n_terms + n_postings or \
            n_terms != len(by_term):
        sys.exit("FAIL %s: IMPACTS section: flags %d, %d bytes for %d terms"
                 % (label, flags, i_len, n_terms))
    # The index keeps the database's positions (docs/format.md): the flag
    # and (n_blocks + 1) offsets at least.
    n_blocks, = struct.unpack_from("<Q", data, 88)
    p_len, = struct.unpack_from("<Q", data, sec + 32 * 11 + 8)
    if not flags & 4 or p_len <= 8 * (n_blocks + 1):
        sys.exit("FAIL %s: POSITIONS section: flags %d, %d bytes"
                 % (label, flags, p_len))
    codes = data[i_off + 16 * n_terms:i_off + i_len]
    worst = 0.0
    for tid, term in enumerate(sorted(by_term, key=lambda t: t.encode())):
        df, = struct.unpack_from("<I", data, t_off + 64 * tid)
        at, scale = struct.unpack_from("<Qd", data, i_off + 16 * tid)
        posts = sorted(by_term[term])
        if df != len(posts):
            sys.exit("FAIL %s: term %r: df %d vs %d weights" %
                     (label, term, df, len(posts)))
        tw = (n_docs - df + 0.5) / (df + 0.5)
        if tw < 2:
            tw = tw * 0.5 + 1
        tw = math.log(tw) * (k1 + 1)
        top = 0
        for j, (docid, w) in enumerate(posts):
            c = codes[at + j]
            top = max(top, c)
            hi, lo = tw * c * scale, tw * (c - 1) * scale
            if not (w <= hi * (1 + 1e-12) and w >= lo * (1 - 1e-12)):
                sys.exit("FAIL %s: term %r doc %d: weight %r outside [%r, %r]"
                         " (code %d, scale %r)" % (label, term, docid, w, lo,
                                                   hi, c, scale))
            if hi > 0:
                worst = max(worst, (hi - w) / (tw * scale))
        if top != 255 and any(w > 0 for _, w in posts):
            sys.exit("FAIL %s: term %r: top code %d" % (label, term, top))
    print("ok %-28s impacts bracket all %d weights (largest gap %.3f of a "
          "step)" % (label, n_postings, worst))


def ref_weights(docs, formula, k1, b):
    """An independent single-threaded reference: docs is a list of word
    lists; Xapian's BM25Weight (xapian-notes.md section 1) or seed 000 eq. 1,
    in the same operation order (Python floats are IEEE doubles)."""
    n = len(docs)
    total = sum(len(d) for d in docs)
    df, out = {}, {}
    for d in docs:
        for t in set(d):
            df[t] = df.get(t, 0) + 1
    avlen = total / n
    for i, d in enumerate(docs, 1):
        tf = {}
        for t in d:
            tf[t] = tf.get(t, 0) + 1
        for t, f in tf.items():
            if formula == "seed":
                idf = math.log((n + 0.5) / (df[t] + 0.5))
                kd = k1 * ((1 - b) + b * (len(d) / avlen))
                w = (idf * ((k1 + 1) * f)) / (kd + f)
            else:
                tw = (n - df[t]) + 0.5
                tw = tw / (df[t] + 0.5)
                if tw < 2:
                    tw = tw * 0.5 + 1
                termweight = math.log(tw) * 1.0
                termweight *= (1 + 1) * 1.0 / (1 + 1.0)
                termweight *= (k1 + 1)
                lf = 1 / avlen if b != 0 and k1 != 0 else 0
                normlen = max(len(d) * lf, 0.5)
                kd = k1 * (normlen * b + (1 - b))
                w = termweight * (f / (kd + f))
            out[(t, i)] = "%.17g" % w
    return out


def read_tsv(path):
    got = {}
    with open(path, "rb") as f:
        for line in f:
            t, d, w = line.rstrip(b"\n").split(b"\t")
            got[(t.decode("utf-8"), int(d))] = w.decode()
    return got


def weigh(a, args, out):
    run([a.bin, "weight", "--quiet", *args, "-o", out])
    return read_tsv(out)


# The tokenizer's rules (docs/weight.md) against TermGenerator's: initials,
# infixes, separators between digits, suffixes, zero-width characters,
# case, the 64-byte limit, CJK (no n-grams), an empty document.
EDGE_LINES = [
    "1\tP.T.O. don't it's c++ c# f## x+++ 1,000.5 3.14 rock'n'roll AT&T",
    "2\tcaf\u00e9 na\u00efve \u03a9mega \u0141\u00d3D\u0179 e\u2027g zero\u200bwidth "
    "half\u00adhyphen hyphenated-words under_score 'quoted'",
    "3\t" + "a" * 64 + " " + "b" * 65 + " " + "\u00e9" * 32 + " " + "\u00e9" * 33 + " end",
    "4\t\u4e2d\u6587 \u65e5\u672c\u8a9e mixed\u4e2d\u6587text emoji\U0001f600word",
    "5\tU.S.A. u.s.a U.S e.g. i.e. A.B.C.D.E.F.G.H. 1.2.3 10:30 $100 50% #tag @user",
    "6\tit\u2019s rock\u201bn Mc\u00b7Gee shalom\u05f3x a\u2027b 1\u066b5 2\u066c000",
    "7\t",
    "8\tThe THE the ThE \u0130stanbul \u01c5emal \u00df STRASSE \ufb01ne",
    "9\tdigits 123abc abc123 1e10 0x1F 3,,4 5..6 7;8 9.;0",
]


def check_tsv_xapian(a):
    """weight --tsv, in core and in chunks (--device-memory 2M: with a
    device, placed by it), against the database TermGenerator builds
    without a stemmer, read back by weight --db: identical bytes."""
    w = os.path.join(a.work, "tsv-xapian")
    os.makedirs(w, exist_ok=True)
    edge = os.path.join(w, "edge.tsv")
    with open(edge, "w", encoding="utf-8") as f:
        f.write("\n".join(EDGE_LINES) + "\n")
    inputs = [("edge cases", edge)]
    for name in ("adi", "cranfield", "med", "cacm", "cisi", "time", "lisa"):
        p = os.path.join(a.ir_data, name, "docs.tsv")
        if os.path.isfile(p):
            inputs.append((name, p))
    if len(inputs) == 1:
        sys.exit("FAIL --tsv: no collection in %s" % a.ir_data)
    for name, tsv in inputs:
        db = os.path.join(w, "db")
        shutil.rmtree(db, ignore_errors=True)
        run([a.bin, "index", "--quiet", "--stem", "none", tsv, db])
        for bm25 in (None, "1.2,0,1,0.75,0.5"):
            extra = ["--bm25", bm25] if bm25 else []
            outs = []
            for src in (["--db", db], ["--tsv", tsv],
                        ["--tsv", tsv, "--device-memory", "2M"]):
                o = os.path.join(w, "o%d.tsv" % len(outs))
                run([a.bin, "weight", "--quiet", *src, *extra, "-o", o])
                with open(o, "rb") as f:
                    outs.append(f.read().splitlines())
            # --tsv's own records against Xapian's one-term weights on
            # TermGenerator's database: every term (not only through --db).
            tsv_terms = {}
            for line in outs[1]:
                term, docid, wt = line.decode("utf-8").split("\t")
                tsv_terms.setdefault(term, {})[int(docid)] = wt
            n_x, p_x = compare_term_weights("--tsv %s (bm25 %s)" % (name, bm25),
                                            tsv_terms, db, bm25,
                                            a.term_weights)
            for k, how in ((1, "in core"), (2, "in chunks")):
                got, want = outs[k], outs[0]
                if got == want:
                    continue
                i = next((i for i, (x, y) in enumerate(zip(got, want)) if x != y),
                         min(len(got), len(want)))
                sys.exit("FAIL --tsv %s against Xapian's database, %s (bm25 %s): "
                         "%d and %d records, first difference at %d: %r, %r" %
                         (how, name, bm25, len(got), len(want), i,
                          got[i] if i < len(got) else None,
                          want[i] if i < len(want) else None))
        print("ok --tsv %-10s %d records (%d terms), each Xapian's one-term "
              "weight on TermGenerator's database (STEM_NONE); in core and in "
              "chunks identical to --db; default and 1.2/0.75" %
              (name, len(outs[0]), n_x))
    # That database's weights are Xapian's own one-term weights too.
    db = os.path.join(w, "db-cranfield")
    shutil.rmtree(db, ignore_errors=True)
    run([a.bin, "index", "--quiet", "--stem", "none",
         os.path.join(a.ir_data, "cranfield", "docs.tsv"), db])
    check(a, db, None, "cranfield, no stemmer")


def check_text(a):
    """--text/--tsv through the pipeline's CPU twin: an independent Python
    reference on every collection and on random inputs, 1 vs N threads,
    chunked vs in core, and every malformed input."""
    rng = random.Random(5)
    w = os.path.join(a.work, "text")
    os.makedirs(w, exist_ok=True)
    sets = []
    for name in ("adi", "cranfield", "med", "cacm", "cisi", "time", "lisa"):
        p = os.path.join(a.ir_data, name, "docs.tsv")
        if os.path.isfile(p):
            with open(p, encoding="utf-8") as f:
                docs = [re.findall(r"[a-z0-9]+", l.split("\t", 1)[1].lower())
                        for l in f if "\t" in l]
            sets.append((name, [d for d in docs if d]))
    for k in range(4):
        vocab = ["w%d%s" % (i, "\u00e9" * (i % 3)) for i in range(rng.randint(1, 300))]
        docs = [[rng.choice(vocab) for _ in range(rng.randint(1, 60))]
                for _ in range(rng.randint(1, 200))]
        sets.append(("random%d" % k, docs))
    # Terms sharing their first 8 bytes, or one a prefix of another (the
    # ranking sorts 8-byte keys first and compares only the ties).
    vocab = sorted({p + "".join(rng.choice("a0z~\u00e9") for _ in range(rng.randint(0, 12)))
                    for p in ("abcdefgh", "abcdefg", "abcdefghi", "q", "ab\u00e9cdef")
                    for _ in range(60)})
    docs = [[rng.choice(vocab) for _ in range(rng.randint(1, 60))] for _ in range(100)]
    sets.append(("prefixes", docs))
    for name, docs in sets:
        text = os.path.join(w, name + ".txt")
        with open(text, "w", encoding="utf-8") as f:
            f.write("\n\n".join("\n".join(d) for d in docs) + "\n")
        for formula, k1, b in (("xapian", 1.0, 0.5), ("seed", 1.2, 0.75),
                               ("xapian", 1.2, 0.75)):
            want = ref_weights(docs, formula, k1, b)
            args = ["--text", text, "--engine", "cpu", "--formula", formula,
                    "--k1", str(k1), "--b", str(b)]
            got1 = weigh(a, args + ["--threads", "1"], os.path.join(w, "o1.tsv"))
            if got1 != want:
                bad = [x for x in want if got1.get(x) != want[x]][:3]
                sys.exit("FAIL text %s %s: %d vs %d postings, e.g. %s" % (
                    name, formula, len(got1), len(want),
                    [(x, want[x], got1.get(x)) for x in bad]))
            # Terms in byte order (term ids are ranks in byte order).
            with open(os.path.join(w, "o1.tsv"), "rb") as f1:
                seq = [l.split(b"\t", 1)[0] for l in f1]
            runs = [t for i, t in enumerate(seq) if i == 0 or seq[i - 1] != t]
            if runs != sorted(set(runs)):
                sys.exit("FAIL text %s %s: terms not in byte order" % (name, formula))
            o2 = os.path.join(w, "o2.tsv")
            run([a.bin, "weight", "--quiet", *args, "--threads", "3",
                 "--device-memory", "2M", "-o", o2])
            with open(os.path.join(w, "o1.tsv"), "rb") as f1, open(o2, "rb") as f2:
                if f1.read() != f2.read():
                    sys.exit("FAIL text %s %s: 3 threads, chunked differs" %
                             (name, formula))
        print("ok text %-10s %d docs, equal to the Python reference "
              "(xapian, seed, k1 1.2); 3 threads + chunks identical" %
              (name, len(docs)))
    # The GPU engine: a clear error where there is none; auto falls back.
    text = os.path.join(w, "random0.txt")
    p = run_any([a.bin, "weight", "--quiet", "--text", text, "--engine", "gpu",
                 "-o", os.path.join(w, "g.tsv")])
    if p.returncode == 0:
        print("note: --engine gpu ran (a device is present)")
    elif os.path.exists(os.path.join(w, "g.tsv")) or "GPU" not in p.stderr:
        sys.exit("FAIL --engine gpu without device: %r" % p.stderr)
    run([a.bin, "weight", "--quiet", "--text", text, "-o", os.path.join(w, "a.tsv")])
    # Malformed inputs: one line naming the file, nonzero, no output.
    cases = [("empty", b"", "no words"), ("blank", b"\n\n\n", "no words"),
             ("utf8", b"ok\nbad\xff\n", "invalid UTF-8"),
             ("cr", b"a\r\nb\r\n", "control character"),
             ("tab", b"a\tb\n", "control character"),
             ("long", b"a\n" + b"x" * (1 << 20) + b"\n", "word of 1048576 bytes")]
    tsv_cases = [("nodocid", b"abc def\n", "expected docid"),
                 ("dup", b"2\ta\n1\tb\n2\tc\n", "appears twice"),
                 ("utf8", b"1\tgood\n2\tba\xc3d\n", "invalid UTF-8"),
                 ("empty", b"", "no documents")]
    # Each: one line on stderr naming the file and the fault, a nonzero
    # exit, and no output (nor its temporary) left behind.
    for flag, ext, group in (("--text", "txt", cases), ("--tsv", "tsv", tsv_cases)):
        for label, data, msg in group:
            path = os.path.join(w, "bad-%s.%s" % (label, ext))
            with open(path, "wb") as f:
                f.write(data)
            o = os.path.join(w, "bad.tsv")
            p = run_any([a.bin, "weight", "--quiet", flag, path, "-o", o])
            lines = p.stderr.strip().splitlines()
            if p.returncode == 0 or len(lines) != 1 or msg not in lines[0] or \
                    path not in lines[0] or os.path.exists(o) or \
                    glob.glob(o + ".tmp*"):
                sys.exit("FAIL malformed %s %s: rc %d, %r" %
                         (flag, label, p.returncode, p.stderr))
    # Documented behaviours: no final newline, leading and repeated blank
    # lines, an empty TSV document (counted in N), TSV docids out of order.
    same = os.path.join(w, "same.txt")
    with open(same, "wb") as f:
        f.write(b"\n\nb\na\n\n\n\na\nc")
    got = weigh(a, ["--text", same, "--engine", "cpu"], os.path.join(w, "s.tsv"))
    if got != ref_weights([["b", "a"], ["a", "c"]], "xapian", 1.0, 0.5):
        sys.exit("FAIL blank lines / no final newline: %r" % got)
    tsv = os.path.join(w, "order.tsv")
    with open(tsv, "wb") as f:
        f.write(b"7\tA b, B.\n3\ta\n5\t...\n")
    got = weigh(a, ["--tsv", tsv], os.path.join(w, "t.tsv"))
    want = ref_weights([["a"], [], ["a", "b", "b"]], "xapian", 1.0, 0.5)
    want = {(t, {1: 3, 2: 5, 3: 7}[d]): v for (t, d), v in want.items()}
    if got != want:
        sys.exit("FAIL tsv order/empty doc: %r != %r" % (got, want))
    # Forced hash collisions (8-bit hashes) change nothing.
    t0 = os.path.join(w, "cranfield.txt")
    if os.path.exists(t0):
        o1 = weigh(a, ["--text", t0], os.path.join(w, "h1.tsv"))
        o2 = weigh(a, ["--text", t0, "--hash-mask", "0xff"], os.path.join(w, "h2.tsv"))
        if o1 != o2:
            sys.exit("FAIL 8-bit hashes changed the output")
    # Write failure: nothing left behind.
    bad = os.path.join(w, "no-such-dir", "w.tsv")
    p = run_any([a.bin, "weight", "--quiet", "--text", text, "-o", bad])
    if p.returncode == 0 or os.path.exists(os.path.dirname(bad)):
        sys.exit("FAIL text unwritable output: rc %d" % p.returncode)
    print("ok text malformed inputs refused with one line, documented cases, "
          "8-bit hashes, GPU engine error/fallback, write failure")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--ir-data", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--term-weights", required=True,
                    help="tests/term_weights (stock Xapian's reference)")
    a = ap.parse_args()
    a.ir_data = resolve_ir_data(a.ir_data)
    docs = os.path.join(a.ir_data, "cranfield", "docs.tsv")
    if not os.path.isfile(docs):
        sys.exit("FAIL: %s not found" % docs)
    os.makedirs(a.work, exist_ok=True)
    for shards in ("1", "2"):
        db = os.path.join(a.work, "db-" + shards)
        shutil.rmtree(db, ignore_errors=True)
        run([a.bin, "index", "--quiet", "--shards", shards, docs, db])
        check(a, db, None, "cranfield, %s shard(s)" % shards)
    check(a, os.path.join(a.work, "db-1"), "1.2,0,1,0.75,0.5",
          "cranfield, BM25 1.2/0.75")
    check(a, os.path.join(a.work, "db-1"), "1,1,1,0.5,0.5",
          "cranfield, BM25 k2 = 1")
    for shards in ("1", "2"):
        check_impacts(a, os.path.join(a.work, "db-" + shards), None,
                      "impacts, %s shard(s)" % shards)
    check_impacts(a, os.path.join(a.work, "db-1"), "1.2,0,1,0.75,0.5",
                  "impacts, BM25 1.2/0.75")
    # Bad output: one line naming the file, nonzero, nothing left behind.
    bad_dir = os.path.join(a.work, "no-such-dir")
    out = os.path.join(bad_dir, "w.tsv")
    p = run_any([a.bin, "weight", "--quiet", "--db",
                 os.path.join(a.work, "db-1"), "-o", out])
    lines = p.stderr.strip().splitlines()
    if p.returncode == 0 or len(lines) != 1 or "w.tsv" not in lines[0] or \
            os.path.exists(bad_dir):
        sys.exit("FAIL unwritable output: rc %d, stderr %r" %
                 (p.returncode, p.stderr))
    p = run_any([a.bin, "weight", "--quiet", "--db",
                 os.path.join(a.work, "nodb"), "-o",
                 os.path.join(a.work, "x.tsv")])
    if p.returncode == 0 or os.path.exists(os.path.join(a.work, "x.tsv")):
        sys.exit("FAIL missing database: rc %d" % p.returncode)
    print("ok bad output path and missing database refused, nothing "
          "written: %s" % lines[0])
    # --impacts with k2 != 0: refused before any file is written.
    k2_out = os.path.join(a.work, "k2.tsv")
    k2_idx = os.path.join(a.work, "k2.idx")
    p = run_any([a.bin, "weight", "--quiet", "--db", os.path.join(a.work, "db-1"),
                 "-o", k2_out, "--impacts", "--index", k2_idx,
                 "--bm25", "1,1,1,0.5,0.5"])
    if p.returncode == 0 or os.path.exists(k2_out) or os.path.exists(k2_idx) \
            or len(p.stderr.strip().splitlines()) != 1:
        sys.exit("FAIL --impacts with k2 = 1: rc %d, stderr %r" %
                 (p.returncode, p.stderr))
    print("ok --impacts with k2 = 1 refused, nothing written")
    check_text(a)
    check_tsv_xapian(a)
    print("weight: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
