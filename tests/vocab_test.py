#!/usr/bin/env python3
"""--vocabulary of xapian-gpu weight and qlm (gpu/text/vocab.h): with a fixed
vocabulary, every word the vocabulary lacks counts as <unk>.  The reference
is written here: Python rewrites the input's unknown words to <unk> and the
tool runs on that text without --vocabulary; both outputs must be the same
bytes (weight --text and --tsv, qlm --text at sigma 3), in core and in
chunks, on texts large enough for many rewrite threads.  Errors: a
vocabulary listing <unk>, a missing file, --vocabulary with weight --db;
no output file is left by any of them.

usage: vocab_test.py --bin XAPIAN_GPU --work DIR [--engine auto|cpu|gpu]"""
import argparse
import os
import random
import shutil
import sys

from testlib import run, run_any


def words_text(docs):
    return "".join("".join(w + "\n" for w in d) + "\n" for d in docs)


def check_same(a, label, cmd_vocab, cmd_ref, out_v, out_r):
    run(cmd_vocab)
    run(cmd_ref)
    if open(out_v, "rb").read() != open(out_r, "rb").read():
        sys.exit("FAIL %s: output with --vocabulary differs from the reference" % label)
    print("ok   %s" % label)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--engine", default="cpu")
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    rng = random.Random(20261123)
    lexicon = ["w%d" % i for i in range(3000)] + ["a", "b", "zz", "\u00e9t\u00e9"]
    for trial, (n_docs, vocab_share) in enumerate([(40, 0.5), (4000, 0.2), (3000, 0.9)]):
        vocab = sorted(w for w in lexicon if rng.random() < vocab_share)
        docs = [[rng.choice(lexicon[:200]) if rng.random() < 0.6 else rng.choice(lexicon)
                 for _ in range(rng.randint(1, 60))] for _ in range(n_docs)]
        known = set(vocab)
        ref_docs = [[w if w in known else "<unk>" for w in d] for d in docs]
        p = lambda name: os.path.join(a.work, "%d-%s" % (trial, name))
        open(p("vocab"), "w").write("".join(w + "\n" for w in vocab) + "\n" + vocab[0] + "\n")
        open(p("in.txt"), "w").write("\n" + words_text(docs))
        open(p("ref.txt"), "w").write(words_text(ref_docs))
        # ASCII words: TermGenerator keeps them as they are.
        open(p("in.tsv"), "w").write("".join(
            "%d\t%s\n" % (i + 1, " ".join(w for w in d if w.isascii()) or "a")
            for i, d in enumerate(docs)))
        ref_tsv_docs = [[w if w in known else "<unk>" for w in d if w.isascii()] or ["a"]
                        for d in docs]
        open(p("ref-tsv.txt"), "w").write(words_text(ref_tsv_docs))
        common = ["--quiet", "--engine", a.engine]
        for budget in ([], ["--device-memory", "300K"]):
            tag = "trial %d (%d documents)%s" % (trial, n_docs, ", chunks" if budget else "")
            check_same(a, "weight --text " + tag,
                       [a.bin, "weight", "--text", p("in.txt"), "--vocabulary", p("vocab"),
                        "-o", p("w.tsv"), *common, *budget],
                       [a.bin, "weight", "--text", p("ref.txt"), "-o", p("wr.tsv"), *common,
                        *budget], p("w.tsv"), p("wr.tsv"))
            check_same(a, "weight --tsv " + tag,
                       [a.bin, "weight", "--tsv", p("in.tsv"), "--vocabulary", p("vocab"),
                        "-o", p("wt.tsv"), *common, *budget],
                       [a.bin, "weight", "--text", p("ref-tsv.txt"), "-o", p("wtr.tsv"),
                        *common, *budget], p("wt.tsv"), p("wtr.tsv"))
            check_same(a, "qlm --text sigma 3 " + tag,
                       [a.bin, "qlm", "--text", p("in.txt"), "--vocabulary", p("vocab"),
                        "--sigma", "3", "-o", p("q.tsv"), *common, *budget],
                       [a.bin, "qlm", "--text", p("ref.txt"), "--sigma", "3", "-o",
                        p("qr.tsv"), *common, *budget], p("q.tsv"), p("qr.tsv"))
        if "<unk>" not in open(p("w.tsv")).read():
            sys.exit("FAIL trial %d: no <unk> in the output" % trial)
    # Errors: one line naming the file, exit nonzero, no output.
    bad = os.path.join(a.work, "bad-vocab")
    open(bad, "w").write("a\n<unk>\n")
    text = os.path.join(a.work, "0-in.txt")
    cases = [
        ("a vocabulary listing <unk>", ["weight", "--text", text, "--vocabulary", bad],
         "lists <unk>"),
        ("qlm: a vocabulary listing <unk>", ["qlm", "--text", text, "--vocabulary", bad],
         "lists <unk>"),
        ("a missing vocabulary", ["weight", "--text", text, "--vocabulary",
                                  os.path.join(a.work, "none")], "cannot open"),
        ("--vocabulary with --db", ["weight", "--db", a.work, "--vocabulary", bad],
         "--vocabulary needs --text or --tsv"),
    ]
    for label, args, want in cases:
        out = os.path.join(a.work, "err-out.tsv")
        r = run_any([a.bin, *args, "-o", out])
        if r.returncode == 0 or want not in r.stderr or os.path.exists(out):
            sys.exit("FAIL %s: exit %d, stderr %r, output left: %s" %
                     (label, r.returncode, r.stderr, os.path.exists(out)))
        print("ok   error: %s" % label)
    print("vocab: all checks passed")


if __name__ == "__main__":
    main()
