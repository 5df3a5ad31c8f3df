#!/usr/bin/env python3
"""xapian-gpu qlm (issue 6, seed 002 eq. 2) on the CPU twin.

Proves, for sigma 1, 2, 4 and 8:
- every row (n-gram, docid, probability and the four counts) equals an
  independent brute-force reference written here (hash-map counting of
  every n-gram per document and per collection; eq. 2 in the documented
  operation order, so the doubles are bit-equal), on random inputs and on
  ../shared/ir-data collections;
- the counts sum: for each document and n, f(t_1^n, d) over its rows is
  the number of n-grams of length n in it (len - n + 1);
- 1 vs 3 threads, in core vs chunked (--device-memory), --sort compare vs
  doubling, and --tsv vs --text give identical bytes;
- the binary form holds exactly the TSV's records;
- malformed inputs and options fail with one line naming the fault and
  leave no output.

usage: qlm_test.py --bin XAPIAN_GPU --ir-data DIR --work DIR [--only a,b]"""
import argparse
import glob
import os
import random
import re
import struct
import sys

from testlib import collections, resolve_ir_data, run, run_any

SIGMAS = (1, 2, 4, 8)


def reference(docs, docids, sigma, lam):
    """Rows (n, words, docid, prob, x, y, z, w), sorted as the tool writes
    them.  docs: word lists (non-empty), docids: their external ids."""
    coll = {}                       # word tuple (n >= 1) -> f(x, C)
    per_doc = []                    # per document: tuple -> f(x, d)
    for d in docs:
        c = {}
        for n in range(1, sigma + 1):
            for i in range(len(d) - n + 1):
                g = tuple(d[i:i + n])
                c[g] = c.get(g, 0) + 1
        per_doc.append(c)
        for g, f in c.items():
            coll[g] = coll.get(g, 0) + f
    total = sum(len(d) for d in docs)
    rows = []
    for d, c, docid in zip(docs, per_doc, docids):
        for g, x in c.items():
            n = len(g)
            y = len(d) if n == 1 else c[g[:-1]]
            z = coll[g]
            w = total if n == 1 else coll[g[:-1]]
            # qlm_formula.h: quotients, products, sum; no fma in Python.
            p = lam * (x / y) + (1.0 - lam) * (z / w)
            rows.append((n, tuple(t.encode() for t in g), docid, p, x, y, z, w))
    rows.sort(key=lambda r: (r[0], r[1], r[2]))
    return ["%s\t%d\t%.17g\t%d\t%d\t%d\t%d" %
            (b" ".join(r[1]).decode(), r[2], r[3], r[4], r[5], r[6], r[7])
            for r in rows]


def qlm(a, args, out):
    run([a.bin, "qlm", "--quiet", *args, "-o", out])
    with open(out, "rb") as f:
        return f.read()


def write_text(path, docs, rng=None):
    """The seed format; with rng, irregular separators (several blank
    lines, leading blank lines, no final newline)."""
    with open(path, "w", encoding="utf-8") as f:
        if rng is None:
            f.write("\n\n".join("\n".join(d) for d in docs) + "\n")
            return
        f.write("\n" * rng.randint(0, 2))
        for i, d in enumerate(docs):
            if i:
                f.write("\n" * rng.randint(2, 4))
            f.write("\n".join(d))
        if rng.random() < 0.5:
            f.write("\n")


def check_sums(text, label):
    """For each document and n: the f(t_1^n, d) of its rows add up to the
    number of its n-grams; the history counts are consistent."""
    sums, lens = {}, {}
    for line in text.decode().splitlines():
        words, docid, _, x, y, z, w = line.split("\t")
        n = len(words.split(" "))
        key = (int(docid), n)
        sums[key] = sums.get(key, 0) + int(x)
        if n == 1:
            lens[int(docid)] = int(y)
        if not (0 < int(x) <= int(y) and int(x) <= int(z) <= int(w)):
            sys.exit("FAIL %s: counts out of order: %r" % (label, line))
    for (docid, n), s in sums.items():
        if s != lens[docid] - n + 1:
            sys.exit("FAIL %s: doc %d n %d: f(t_1^n, d) sum to %d, %d n-grams" %
                     (label, docid, n, s, lens[docid] - n + 1))
    return len(sums)


def _crc32c_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


CRC32C = _crc32c_table()


def crc32c(data):
    """CRC32C (Castagnoli, reflected), written here from its definition."""
    c = 0xFFFFFFFF
    for b in data:
        c = CRC32C[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def check_binary(a, args, tsv, label):
    """The binary form's records and dictionary equal the TSV's rows."""
    out = os.path.join(a.work, "o.bin")
    data = qlm(a, args + ["--format", "bin"], out)
    magic, sigma, flags, n_terms, n_rec, dict_off, lam, crc, zero = \
        struct.unpack_from("<8sIIQQQdII", data, 0)
    if magic != b"XGQLM002" or flags != 1 or zero:
        sys.exit("FAIL %s: binary header %r" % (label, (magic, sigma, flags)))
    if crc32c(data[56:]) != crc:
        sys.exit("FAIL %s: the header's CRC32C is not the body's" % label)
    terms, at = [], dict_off
    for _ in range(n_terms):
        (n,) = struct.unpack_from("<I", data, at)
        terms.append(data[at + 4:at + 4 + n])
        at += 4 + n
    if at != len(data) or terms != sorted(terms):
        sys.exit("FAIL %s: binary dictionary" % label)
    lines, at = [], 56
    for _ in range(n_rec):
        (n,) = struct.unpack_from("<I", data, at)
        ids = struct.unpack_from("<%dI" % n, data, at + 4)
        docid, p, x, y, z, w = struct.unpack_from("<Id4Q", data, at + 4 + 4 * n)
        lines.append("%s\t%d\t%.17g\t%d\t%d\t%d\t%d" % (
            b" ".join(terms[i] for i in ids).decode(), docid, p, x, y, z, w))
        at += 4 + 4 * n + 4 + 8 + 32
    if at != dict_off or "\n".join(lines) + "\n" != tsv.decode():
        sys.exit("FAIL %s: binary records differ from the TSV" % label)


def check_set(a, name, docs, rng, lams):
    w = os.path.join(a.work, name)
    os.makedirs(w, exist_ok=True)
    text = os.path.join(w, "in.txt")
    write_text(text, docs, rng)
    words = sum(len(d) for d in docs)
    for sigma in SIGMAS:
        for lam in lams:
            base = ["--text", text, "--sigma", str(sigma), "--lambda", repr(lam),
                    "--counts"]
            got = qlm(a, base + ["--threads", "1", "--engine", "cpu"],
                      os.path.join(w, "o1.tsv"))
            want = "\n".join(reference(docs, range(1, len(docs) + 1), sigma, lam))
            want = (want + "\n").encode() if want else b""
            if got != want:
                g, e = got.decode().splitlines(), want.decode().splitlines()
                bad = [(x, y) for x, y in zip(g, e) if x != y][:3]
                sys.exit("FAIL %s sigma %d lambda %r: %d rows, reference %d; "
                         "first differences %r" % (name, sigma, lam, len(g),
                                                    len(e), bad))
            pairs = check_sums(got, "%s sigma %d" % (name, sigma))
            # Same bytes from every engine configuration.
            for extra in (["--threads", "3"], ["--engine", "auto"],
                          ["--sort", "compare"],
                          ["--sort", "compare", "--threads", "2"],
                          ["--device-memory", str(48 * max(words // 5, 64))],
                          ["--device-memory", str(48 * max(map(len, docs))),
                           "--threads", "3"]):
                o = qlm(a, base + extra, os.path.join(w, "o2.tsv"))
                if o != got:
                    sys.exit("FAIL %s sigma %d: %s differs from 1 thread in core" %
                             (name, sigma, " ".join(extra)))
        if sigma in (1, 4):
            check_binary(a, base, got, "%s sigma %d" % (name, sigma))
    print("ok %-12s %5d docs %7d words: sigma 1,2,4,8 equal to the reference "
          "(%d doc x n sums); threads, chunks, compare sort identical" %
          (name, len(docs), words, pairs))


def check_tsv(a, rng):
    """--tsv: docids out of order and sparse, tokenized text that is
    already plain lowercase words: the same rows under those docids."""
    w = os.path.join(a.work, "tsv")
    os.makedirs(w, exist_ok=True)
    vocab = ["t%d" % i for i in range(40)]
    docs = [[rng.choice(vocab) for _ in range(rng.randint(1, 30))]
            for _ in range(150)]
    ids = rng.sample(range(1, 100000), len(docs))
    with open(os.path.join(w, "in.tsv"), "w") as f:
        for i in rng.sample(range(len(docs)), len(docs)):
            f.write("%d\t%s\n" % (ids[i], " ".join(docs[i])))
        f.write("100001\t, ; .\n")      # no terms: no rows
    order = sorted(range(len(docs)), key=lambda i: ids[i])
    for sigma in (2, 4):
        got = qlm(a, ["--tsv", os.path.join(w, "in.tsv"), "--sigma", str(sigma),
                      "--counts"], os.path.join(w, "o.tsv"))
        want = reference([docs[i] for i in order], [ids[i] for i in order],
                         sigma, 0.5)
        if got.decode() != "\n".join(want) + "\n":
            sys.exit("FAIL tsv sigma %d: differs from the reference" % sigma)
    print("ok tsv: sparse, shuffled docids and an empty document")


def check_bad(a):
    w = os.path.join(a.work, "bad")
    os.makedirs(w, exist_ok=True)
    o = os.path.join(w, "out.tsv")
    good = os.path.join(w, "good.txt")
    with open(good, "w") as f:
        f.write("a\nb\n\nc\nd\ne\n")
    cases = [("utf8", b"ok\nbad\xff\n", "invalid UTF-8"),
             ("control", b"ok\nb\tc\n", "control character"),
             ("long", b"x" * 300 + b"\n", "word of 300 bytes"),
             ("empty", b"\n\n", "no words")]
    for label, data, msg in cases:
        path = os.path.join(w, label + ".txt")
        with open(path, "wb") as f:
            f.write(data)
        p = run_any([a.bin, "qlm", "--quiet", "--text", path, "-o", o])
        if (p.returncode != 1 or msg not in p.stderr or path not in p.stderr or
                len(p.stderr.strip().splitlines()) != 1 or os.path.exists(o) or
                glob.glob(o + ".tmp*")):
            sys.exit("FAIL malformed %s: rc %d, %r" % (label, p.returncode, p.stderr))
    for label, data, msg in [("nodocid", b"abc def\n", "expected docid"),
                             ("twice", b"3\ta\n3\tb\n", "docid 3 appears twice"),
                             ("noterms", b"1\t, .\n", "no words")]:
        path = os.path.join(w, label + ".tsv")
        with open(path, "wb") as f:
            f.write(data)
        p = run_any([a.bin, "qlm", "--quiet", "--tsv", path, "-o", o])
        if p.returncode != 1 or msg not in p.stderr or os.path.exists(o):
            sys.exit("FAIL malformed tsv %s: rc %d, %r" % (label, p.returncode, p.stderr))
    usage = [["--sigma", "9"], ["--sigma", "0"], ["--lambda", "1.5"],
             ["--lambda", "x"], ["--sort", "radix"], ["--format", "csv"],
             ["--device-memory", "0"], ["--engine", "tpu"]]
    for extra in usage:
        p = run_any([a.bin, "qlm", "--quiet", "--text", good, "-o", o, *extra])
        if p.returncode != 2 or os.path.exists(o):
            sys.exit("FAIL usage %s: rc %d, %r" % (extra, p.returncode, p.stderr))
    # --engine gpu without a device (or in a build without CUDA): one line,
    # exit 1, no output; with one it must give the CPU twin's bytes.
    p = run_any([a.bin, "qlm", "--quiet", "--text", good, "-o", o, "--engine", "gpu"])
    if p.returncode == 0:
        gpu_out = open(o, "rb").read()
        os.unlink(o)
        run_any([a.bin, "qlm", "--quiet", "--text", good, "-o", o, "--engine", "cpu"])
        if open(o, "rb").read() != gpu_out:
            sys.exit("FAIL --engine gpu: output differs from --engine cpu")
        os.unlink(o)
    elif (p.returncode != 1 or p.stderr.count("\n") != 1 or os.path.exists(o) or
          ("no CUDA device" not in p.stderr and "no GPU engine in this build" not in p.stderr)):
        sys.exit("FAIL --engine gpu: rc %d, %r" % (p.returncode, p.stderr))
    p = run_any([a.bin, "qlm", "--quiet", "--text", good, "-o", o,
                 "--device-memory", "100"])
    if p.returncode != 1 or "does not fit" not in p.stderr or os.path.exists(o):
        sys.exit("FAIL tiny budget: rc %d, %r" % (p.returncode, p.stderr))
    p = run_any([a.bin, "qlm", "--quiet", "--text", good, "-o",
                 os.path.join(w, "no", "such", "dir.tsv")])
    if p.returncode != 1 or "cannot write" not in p.stderr:
        sys.exit("FAIL bad output path: rc %d, %r" % (p.returncode, p.stderr))
    print("ok malformed inputs, bad options, --engine gpu, tiny budget, bad path")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--ir-data", required=True)
    ap.add_argument("--work", required=True)
    # XG_QLM_ONLY: fewer collections (the sanitizer run, tests/check.sh).
    ap.add_argument("--only",
                    default=os.environ.get("XG_QLM_ONLY", "adi,med,cacm"))
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    rng = random.Random(6)
    print("seed 6")
    check_bad(a)
    check_tsv(a, rng)
    for k in range(5):
        # Small vocabularies make long repeated n-grams; short documents
        # (some of one word) test the ends of documents.
        vocab = ["w%d%s" % (i, "\u00e9" * (i % 3))
                 for i in range(rng.choice((1, 2, 3, 8, 60)))]
        docs = [[rng.choice(vocab) for _ in range(rng.choice((1, 2, 3, 9, 40)))]
                for _ in range(rng.randint(1, 90))]
        check_set(a, "random%d" % k, docs, rng, (0.5, 0.3, 1.0))
    a.ir_data = resolve_ir_data(a.ir_data)
    done = 0
    for name in collections(a.ir_data, a.only):
        p = os.path.join(a.ir_data, name, "docs.tsv")
        if not os.path.isfile(p):
            print("skip %s: no %s" % (name, p))
            continue
        done += 1
        with open(p, encoding="utf-8") as f:
            docs = [re.findall(r"[a-z0-9]+", l.split("\t", 1)[1].lower())
                    for l in f if "\t" in l]
        check_set(a, name, [d for d in docs if d], None, (0.5,))
    if not done:
        sys.exit("FAIL: none of the collections %s in %s" % (a.only, a.ir_data))


if __name__ == "__main__":
    main()
