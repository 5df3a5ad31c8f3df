#!/usr/bin/env python3
"""Phrase-heavy query files for the real-text benchmark (run.sh phrases):

- trec-phrases.tsv: the TREC queries that QueryParser turns into phrases
  (a quote, or letters/digits joined by - . / @: "e-mail", "x86-64");
- hyphen-queries.tsv: 5,000 queries of 1-3 hyphenated technical terms
  from the collection's own text ("command-line", "read-only", seen at
  least 5 times), half of them with one common word added.

Deterministic (seed 1).  usage: phrase_queries.py DOCS.tsv TREC.tsv OUTDIR
"""
import collections
import os
import random
import re
import sys


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    docs, trec, out = sys.argv[1:]
    n = 0
    with open(trec, encoding="utf-8", errors="replace") as f, \
            open(os.path.join(out, "trec-phrases.tsv"), "w") as o:
        for line in f:
            if "\t" not in line:
                continue
            q = line.rstrip("\n").split("\t", 1)[1]
            if re.search(r"[A-Za-z0-9][-./@][A-Za-z0-9]", q) or '"' in q:
                o.write("%s\n" % line.rstrip("\n"))
                n += 1
    hyphened, words = collections.Counter(), collections.Counter()
    with open(docs, encoding="utf-8", errors="replace") as f:
        for line in f:
            text = line.split("\t", 1)[-1]
            for t in re.findall(r"\b[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)+\b",
                                text):
                hyphened[t.lower()] += 1
            words.update(re.findall(r"\b[a-z]{4,}\b", text))
    terms = sorted(t for t, c in hyphened.items() if c >= 5)
    common = [w for w, _ in words.most_common(3000)]
    r = random.Random(1)
    with open(os.path.join(out, "hyphen-queries.tsv"), "w") as o:
        for i in range(5000):
            parts = r.sample(terms, r.choice((1, 1, 2, 2, 3)))
            if r.random() < 0.5:
                parts.insert(r.randrange(len(parts) + 1), r.choice(common))
            o.write("%d\t%s\n" % (i, " ".join(parts)))
    print("%d TREC queries with phrases; 5000 queries of %d hyphenated "
          "terms" % (n, len(terms)))


if __name__ == "__main__":
    main()
