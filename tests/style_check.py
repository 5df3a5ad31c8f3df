#!/usr/bin/env python3
"""Style check (docs/style.md via ../shared/docs/style.md): every source file
opens with a `@file` brief, lines stay within 100 columns, and every
non-static function defined in C/C++/CUDA sources is prefixed `xg_` (main
and C++ class members excepted)."""
import os
import re
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else "."
DIRS = ["gpu", "shim", "plugin", "tests"]
EXTS = (".c", ".h", ".cc", ".cu", ".cuh", ".cpp")
MAX_COLS = 100
# A definition at column 0: return type(s), name, '(' ... and no ';'.
DEF = re.compile(r"^(?!static\b)(?!typedef\b)(?:[A-Za-z_][\w\s\*]*?[\s\*])"
                 r"([A-Za-z_]\w*)\s*\([^;]*$")

problems = []
checked = 0
for d in DIRS:
    base = os.path.join(ROOT, d)
    for dirpath, _, files in os.walk(base):
        for name in sorted(files):
            if not name.endswith(EXTS):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, ROOT)
            with open(path, encoding="utf-8") as f:
                lines = f.read().split("\n")
            checked += 1
            if not lines or not lines[0].startswith("/** @file " + name):
                problems.append("%s:1: must open with '/** @file %s'" %
                                (rel, name))
            for i, line in enumerate(lines, 1):
                if len(line) > MAX_COLS:
                    problems.append("%s:%d: line longer than %d columns" %
                                    (rel, i, MAX_COLS))
            if name.endswith((".h", ".cuh")) or d == "tests":
                continue
            in_extern_c = name.endswith((".c", ".cu"))
            for i, line in enumerate(lines, 1):
                m = DEF.match(line)
                if not m or line.startswith((" ", "\t", "#", "}", "/")):
                    continue
                fn = m.group(1)
                if fn in ("main", "if", "for", "while", "switch", "return"):
                    continue
                is_c_linkage = in_extern_c or 'extern "C"' in line
                if is_c_linkage and not fn.startswith("xg_"):
                    problems.append("%s:%d: non-static function '%s' lacks "
                                    "the xg_ prefix" % (rel, i, fn))
for p in problems:
    print(p)
print("style: %d files checked, %d problems" % (checked, len(problems)))
print("%d passed, %d failed" % (1 if not problems else 0,
                                1 if problems else 0))
sys.exit(1 if problems else 0)
