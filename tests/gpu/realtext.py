#!/usr/bin/env python3
"""Build a real-text collection (docid<TAB>text) from the HTML of Debian
packages' documentation: each paragraph, list item or table cell of at
least MIN_WORDS words is one document.  Deterministic: files are read in
sorted order.  Used for the plugin's device benchmark (docs/benchmarks.md
names the packages and the document count).

usage: realtext.py OUT.tsv DIR... [--min-words N] [--max-docs N]"""
import html.parser
import os
import re
import sys


class Blocks(html.parser.HTMLParser):
    """Text of the block elements of one page."""
    BLOCK = {"p", "li", "td", "dd", "pre", "h1", "h2", "h3", "h4", "dt"}
    SKIP = {"script", "style", "nav", "head"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.out, self.cur, self.skip = [], [], 0

    def handle_starttag(self, tag, attrs):
        if tag in self.SKIP:
            self.skip += 1
        elif tag in self.BLOCK:
            self.flush()

    def handle_endtag(self, tag):
        if tag in self.SKIP and self.skip:
            self.skip -= 1
        elif tag in self.BLOCK:
            self.flush()

    def handle_data(self, data):
        if not self.skip:
            self.cur.append(data)

    def flush(self):
        text = re.sub(r"\s+", " ", "".join(self.cur)).strip()
        if text:
            self.out.append(text)
        self.cur = []


def main():
    args = sys.argv[1:]
    min_words, max_docs = 5, 10 ** 9
    if "--min-words" in args:
        i = args.index("--min-words")
        min_words = int(args[i + 1])
        del args[i:i + 2]
    if "--max-docs" in args:
        i = args.index("--max-docs")
        max_docs = int(args[i + 1])
        del args[i:i + 2]
    out, dirs = args[0], args[1:]
    n = 0
    with open(out, "w", encoding="utf-8") as f:
        for d in dirs:
            for root, subdirs, files in os.walk(d):
                subdirs.sort()
                for name in sorted(files):
                    if not name.endswith((".html", ".htm")):
                        continue
                    p = Blocks()
                    with open(os.path.join(root, name), encoding="utf-8",
                              errors="replace") as h:
                        p.feed(h.read())
                    p.flush()
                    for text in p.out:
                        if len(text.split()) >= min_words and n < max_docs:
                            n += 1
                            f.write("%d\t%s\n" % (n, text.replace("\t", " ")))
    print("%s: %d documents" % (out, n))


if __name__ == "__main__":
    sys.exit(main())
