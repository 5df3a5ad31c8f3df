#!/usr/bin/env python3
"""The peers stage's figures as SVG bar charts (no plotting library on
either machine): one chart per operator and k, queries/s on a log scale
for each engine at each number of application threads.

usage: peers_plot.py --dir OUT --out-dir docs/img [--prefix peers-rt]
OUT holds run.sh peers' JSON: peers-ours-OP-K-N.json (xapian-gpu bench)
and peers-OP-N.json (tests/gpu/peers.py)."""
import argparse
import json
import math
import os
import sys

THREADS = (1, 16, 64)
ENGINES = (("xapian", "stock Xapian", "#888888"),
           ("gpu", "--engine gpu", "#1b7837"),
           ("plugin", "plugin (auto)", "#7fbf7b"),
           ("server", "serve (auto)", "#2166ac"),
           ("tantivy", "Tantivy", "#d6604d"),
           ("pisa", "PISA", "#b2182b"))


def figures(d, op, k):
    """{(engine, threads): q/s} from one operator's and k's files."""
    out = {}
    for n in THREADS:
        p = os.path.join(d, "peers-ours-%s-%d-%d.json" % (op, k, n))
        if os.path.exists(p):
            with open(p) as f:
                for e in json.load(f)["engines"]:
                    out[(e["engine"], n)] = e["qps"]
        p = os.path.join(d, "peers-%s-%d.json" % (op, n))
        if os.path.exists(p):
            with open(p) as f:
                for r in json.load(f)["rows"]:
                    if r.get("what") == "search" and r["k"] == k:
                        out[(r["peer"], n)] = r["qps"]
    return out


def svg(fig, title):
    W, H, L, B, T = 720, 360, 70, 50, 40
    lo = 10 ** math.floor(math.log10(min(fig.values())))
    hi = 10 ** math.ceil(math.log10(max(fig.values())))

    def y(v):
        return H - B - (H - B - T) * (math.log10(v) - math.log10(lo)) / \
            (math.log10(hi) - math.log10(lo))
    group = (W - L - 20) / len(THREADS)
    bar = group / (len(ENGINES) + 1)
    s = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
         'font-family="sans-serif" font-size="11">' % (W, H + 40),
         '<text x="%d" y="20" font-size="14">%s</text>' % (L, title)]
    e = lo
    while e <= hi:
        s.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>'
                 '<text x="%d" y="%.1f" text-anchor="end">%s</text>'
                 % (L, W - 20, y(e), y(e), L - 6, y(e) + 4, "{:,}".format(e)))
        e *= 10
    for gi, n in enumerate(THREADS):
        x0 = L + gi * group + bar / 2
        for ei, (key, _, colour) in enumerate(ENGINES):
            v = fig.get((key, n))
            if not v:
                continue
            x = x0 + ei * bar
            s.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" '
                     'fill="%s"><title>%s: %.0f q/s</title></rect>'
                     % (x, y(v), bar * 0.9, H - B - y(v), colour, key, v))
        s.append('<text x="%.1f" y="%d" text-anchor="middle">%d thread%s'
                 '</text>' % (L + gi * group + group / 2, H - B + 18, n,
                              "" if n == 1 else "s"))
    s.append('<text x="16" y="%d" transform="rotate(-90 16 %d)">queries/s '
             '(log)</text>' % (H // 2, H // 2))
    for ei, (_, label, colour) in enumerate(ENGINES):
        x = L + ei * 105
        s.append('<rect x="%d" y="%d" width="10" height="10" fill="%s"/>'
                 '<text x="%d" y="%d">%s</text>'
                 % (x, H + 8, colour, x + 14, H + 17, label))
    s.append("</svg>")
    return "\n".join(s) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--prefix", default="peers-rt")
    a = ap.parse_args()
    wrote = 0
    for op in ("or", "and"):
        for k in (10, 1000):
            try:
                fig = figures(a.dir, op, k)
            except (OSError, ValueError, KeyError) as e:
                sys.exit("peers_plot.py: %s: %s" % (a.dir, e))
            if not fig:
                continue
            path = os.path.join(a.out_dir, "%s-%s-k%d.svg" % (a.prefix, op, k))
            with open(path, "w") as f:
                f.write(svg(fig, "%s, top %d: queries/s by application "
                            "threads" % (op.upper(), k)))
            wrote += 1
    if not wrote:
        sys.exit("peers_plot.py: %s: no peers JSON" % a.dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
