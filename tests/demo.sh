#!/bin/sh
# The main job: install dependencies, build, index the bundled Cranfield
# sample with Xapian, export the GPU index, answer every sample query with
# the stock matcher, the CPU matcher, the plugin (planner: GPU or stock)
# and, when a GPU is usable, the GPU engine, and print the A/B summary.
set -e
cd "$(dirname "$0")/.."
sh tests/deps.sh
[ -f build/build.ninja ] || meson setup build --buildtype=release >/dev/null
ninja -C build >/dev/null
work=build/demo
rm -rf "$work"
mkdir -p "$work"
sample=tests/sample/cranfield
echo "== index $sample/docs.tsv with Xapian (TermGenerator, english stemmer)"
build/plugin/xapian-gpu index --quiet "$sample/docs.tsv" "$work/db"
echo "== export the GPU index"
build/plugin/xapian-gpu export "$work/db"
for op in or and; do
    echo "== A/B: $(wc -l < "$sample/queries.tsv") queries, --op $op, top 10"
    build/plugin/xapian-gpu ab --db "$work/db" --queries "$sample/queries.tsv" \
        --op "$op" -k 10
done
