#!/bin/sh
# docs/qlm.md's quality table: MAP and nDCG@10 (depth 1000) of qlm-search
# (sigma 1 and 2, lambda 0.5, the documented default) against stock Xapian
# BM25 (search --engine xapian) and LMWeight (tests/lm_search), through
# ab_report.c's metrics (tests/qlm_eval).
# usage: tests/qlm_quality.sh BUILD IR_DATA WORK [COLLECTION...]
set -e
b=$1 ir=$2 w=$3
shift 3
[ $# -gt 0 ] || set -- cranfield cacm med
mkdir -p "$w"
for c in "$@"; do
  d=$ir/$c o=$w/$c
  mkdir -p "$o"
  rm -rf "$o/db"
  "$b/plugin/xapian-gpu" index --quiet "$d/docs.tsv" "$o/db"
  "$b/plugin/xapian-gpu" search --db "$o/db" --engine xapian --json -k 1000 \
    --queries "$d/queries.tsv" > "$o/bm25.jsonl"
  "$b/tests/lm_search" "$o/db" "$d/queries.tsv" 1000 > "$o/lm.jsonl"
  "$b/tests/lm_search" "$o/db" "$d/queries.tsv" 1000 jm:0.5 > "$o/lm-jm.jsonl"
  for s in 1 2; do
    "$b/plugin/xapian-gpu" qlm --quiet --tsv "$d/docs.tsv" -o "$o/s$s.bin" \
      --format bin --counts --sigma $s
    "$b/plugin/xapian-gpu" qlm-search --qlm "$o/s$s.bin" --json -k 1000 \
      --queries "$d/queries.tsv" > "$o/qlm$s.jsonl"
  done
  "$b/tests/qlm_eval" "$d/qrels.txt" "$o/bm25.jsonl" "$o/lm.jsonl" \
    "$o/lm-jm.jsonl" "$o/qlm1.jsonl" "$o/qlm2.jsonl"
done
