#!/bin/sh
# The main job: install dependencies, build, index the bundled Cranfield
# sample with Xapian, export the GPU index, answer every sample query with
# the stock matcher, the CPU matcher, the plugin (planner: GPU or stock)
# and, when a GPU is usable, the GPU engine, and print the A/B summary.
# Then the drop-in: `xapian-gpu serve` on the sample, an unchanged
# python3-xapian search through a stub file, and who answered.
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

echo "== the drop-in: xapian-gpu serve, and a python3-xapian search through a stub file"
bin=$(pwd)/build/plugin/xapian-gpu
engine=cpu
"$bin" search -d "$work/db" --engine gpu flow >/dev/null 2>&1 && engine=gpu
sock=$(pwd)/$work/serve.sock
"$bin" serve --engine "$engine" --unix "$sock" "$work/db" 2> "$work/serve.log" &
pid=$!
i=0
until grep -q ready "$work/serve.log" 2>/dev/null; do
    i=$((i + 1))
    if [ $i -gt 100 ] || ! kill -0 $pid 2>/dev/null; then
        cat "$work/serve.log"
        exit 1
    fi
    sleep 0.1
done
echo "remote :$bin connect $sock" > "$work/serve.stub"
echo "   stub file $work/serve.stub: $(cat "$work/serve.stub")"
rc=0
/usr/bin/python3 tests/demo_client.py "$work/serve.stub" "$work/db" \
    "$sample/queries.tsv" 5 || rc=1
kill -TERM $pid
wait $pid || rc=1
sed -n 's/^xapian-gpu serve: /   serve: /p' "$work/serve.log" | grep -E 'ready|routes'
exit $rc
