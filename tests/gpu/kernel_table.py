#!/usr/bin/env python3
"""Per-kernel times from an ncu CSV (`ncu --csv --metrics
gpu__time_duration.sum[,sm__warps_active.avg.pct_of_peak_sustained_active]`):
one line per kernel, the largest total first, after a line with the
launches and the total.  Usage: kernel_table.py FILE TITLE"""
import collections
import csv
import statistics
import sys


def ncu(rows):
    h = rows[0]
    ki, vi = h.index("Kernel Name"), h.index("Metric Value")
    ui, mi = h.index("Metric Unit"), h.index("Metric Name")
    t, occ = collections.defaultdict(list), collections.defaultdict(list)
    for r in rows[1:]:
        if len(r) <= max(ki, vi, ui, mi):
            continue
        name = r[ki].split("(")[0][:40]
        v = float(r[vi].replace(",", ""))
        if r[mi] != "gpu__time_duration.sum":
            occ[name].append(v)
            continue
        scale = {"nsecond": 1e-3, "ns": 1e-3, "msecond": 1e3, "ms": 1e3}
        t[name].append(v * scale.get(r[ui], 1.0))
    return {k: (len(v), statistics.median(v), sum(v),
                statistics.median(occ[k]) if occ[k] else None)
            for k, v in t.items()}


def main():
    path, title = sys.argv[1], sys.argv[2]
    text = open(path, errors="replace").read().splitlines()
    # ncu prints lines of its own before the CSV's header.
    start = next((i for i, l in enumerate(text) if '"Kernel Name"' in l),
                 None)
    if start is None:
        print("%s: no kernel table in %s" % (title, path))
        return 1
    rows = list(csv.reader(text[start:]))
    k = ncu(rows)
    print("%s: %d launches, %.1f us of kernels in all"
          % (title, sum(v[0] for v in k.values()),
             sum(v[2] for v in k.values())))
    for name, (n, med, tot, occ) in sorted(k.items(), key=lambda kv: -kv[1][2]):
        print("  %-40s n %6d  median %7.1f us  total %9.1f us%s"
              % (name, n, med, tot,
                 "" if occ is None else "  warps active %5.1f%%" % occ))
    return 0


if __name__ == "__main__":
    sys.exit(main())
