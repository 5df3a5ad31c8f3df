#!/bin/bash
# The one script to run on the GPU machine (device tool), from the repo
# root.  It uses a release build made beforehand on a machine with Xapian
# (build-dev/: `meson setup build-dev --buildtype=release && ninja -C
# build-dev`), Debian's libxapian30 unpacked in .xapian-rt/, and the test
# collections copied into .device-carry/ir-data/ (the device machine has no
# Xapian and no ../shared).  Stages, in the order given:
#   kernels        every kernel against its CPU twin: one test per kernel
#                  (tests/gpu/test_kernel_*.c: decode, intersect, merge,
#                  accumulate, topk, finish), then test_lanes on the GPU
#                  (one engine, two slots, three threads); fails if any
#                  fails
#   ab             --engine gpu against stock Xapian on every collection
#   bench N [Q]    synthetic collection of N docs, Q queries (10000): export,
#                  then xapian/cpu (all cores) vs gpu, OR, AND and AND+OR,
#                  top 10 ($XG_ON_OPTS: more bench options, e.g. --engines)
#   latency N      one query at a time (GPU batch of 1) on that collection
#   members N      AND with each membership test (Bloom: see kbench)
#   cache N        the LRU list cache at 1/2 and 1/8 of the index's size,
#                  against all lists resident (2000 queries, OR and AND)
#   abcache        ab --engine gpu with a 48 KiB list cache (cacm, med)
#   plugbench N    the plugin under 64 application threads (bench_plugin):
#                  stock vs plugin-gpu vs plugin-auto, after calibrate, on
#                  the N-doc synthetic collection and on the real-text one
#                  (.device-carry/realtext: Debian documentation, TREC 2005
#                  efficiency queries)
#   weigh          xapian-gpu weight's GPU engine against its CPU twin
#                  (tests/gpu/test_weigh.c: random inputs, every collection;
#                  again through the arena), then tests/weight_test.py with
#                  the GPU engine (--tsv against TermGenerator's database)
#   weighbench     the same end to end on seed 000 synthetic text: in core
#                  (100-500 MB) and out of core (500 MB under a 128 MB
#                  budget, 2 GB under 500 MB)
#   qlm            xapian-gpu qlm's and qlm-search's GPU engines against
#                  their CPU twins (tests/gpu/test_qlm.c: random inputs,
#                  every collection, sigma 1,2,4,8, many chunks), then the
#                  CLI tests qlm_test.py / qlm_search_test.py (auto = GPU)
#                  and vocab_test.py (--vocabulary, engine gpu)
#   qlmbench [MB,...] [SIGMAS]  the same end to end on seed 000 synthetic
#                  text (default 100,300 MB at sigma 2,4,8): GPU vs the
#                  twin on all cores, steps, doubling vs the key sort
#                  (both qlm stages use $QLM_BUILD, default $XG_BUILD)
#   prep N [syn|rt]  build, export and calibrate abplug's collections
#   abplug N [syn|rt] [or|and]  issue 4's acceptance run: `xapian-gpu ab --engines
#                  xapian,plugin-gpu,plugin --threads 64` on the N-doc
#                  synthetic collection (OR, AND; 50,000 queries) and on the
#                  real-text one (all 50,000 TREC 2005 efficiency queries),
#                  after calibrate; JSON, HTML and the HTML's plots as SVG
#                  files in $OUT
#   coverage       tests/coverage_test.py with the GPU engine and the plugin
#                  on it: every collection's queries, the TREC logs,
#                  operators and as-typed queries on its plain database
#                  (at least 99% answered, every MSet stock's)
#   omega          the omindex test on the device: the Cranfield database
#                  omindex built (.device-carry/omindex-cranfield, from
#                  tests/omindex_test.py), ab --omega with the GPU
#   plugin         the application-style plugin test on the GPU (every
#                  collection, 1 and 2 shards, 16 threads, fallbacks)
#   kbench         decode and intersection kernel throughput (random lists)
#   abimpacts      ab --engine gpu from indexes exported with --impacts
#                  (every collection, candidate room 64)
#   oldnew N      bench (OR, AND, top 10, every engine) with the build named
#                  by $XG_OLD and with this one, in turns, on the N-doc
#                  synthetic collection and the real-text one
#                  ($XG_COLLS: syn, rt or both; $XG_TURNS: turns, 2;
#                  $XG_ON_OPTS: more bench options, e.g. --batch 1)
#   knobs          the real-text bench (OR, AND, top 10, 16 threads, median
#                  of 3 passes) with each of $XG_KNOBS (NAME:VAR=VALUE,...;
#                  NAME:- for none) in turns, $XG_TURNS (2) times, and the
#                  build in $XG_OLD as "old" if set: what a knob (an
#                  optimisation turned off, gpu/runtime/knobs.h) buys;
#                  $XG_ON_OPTS: more bench options; $XG_KQN: queries
#                  (10000, of 50000); $XG_POPS: operators ("or and")
#   overhead       the planner's cost on queries it leaves to stock: the
#                  real-text database copied with a cost model whose GPU
#                  batch costs 100 s (every query stock:cheaper), then
#                  bench --engines xapian,plugin (OR, AND, top 10; 1, 16
#                  and 64 threads; the median of 3 passes, of 9 for AND
#                  at 16 and 64 threads over all 50,000 queries;
#                  $XG_TURNS (2) turns; the build in $XG_OLD too, in
#                  turns, if set)
#   fronts         every front on the real text (calibrated): bench
#                  --engines $XG_FENG (xapian,gpu,plugin-gpu,plugin,server)
#                  at $XG_FTHREADS (64) threads ("1 16 64": one thread runs
#                  batches of one), ops $XG_POPS (or and), top $XG_FK (10),
#                  median of 3 passes over $XG_FQ queries (50,000 at 64
#                  threads, else 10,000); q/s, p50, host CPU a query, the
#                  dispatchers' batches; the build in $XG_OLD too, and
#                  each of $XG_KNOBS (as knobs: NAME:VAR=VALUE,...), in
#                  turns, $XG_TURNS (1) times
#   split          the server as deployments run it, its clients on other
#                  machines: `serve --engine auto` on the first half of
#                  the host's cores and bench's clients (--server) on the
#                  other half; the engine and the plugin on the first
#                  half; real text, ops $XG_POPS (or and), top 10, at
#                  $XG_FTHREADS (64) threads, median of 3 passes over
#                  $XG_FQ queries (as fronts); the server's own CPU a
#                  search from /proc.  $XG_SRV_CPUS and $XG_CLI_CPUS
#                  name other core sets (0-15 for both: the clients'
#                  and the server's CPU apart on a shared host)
#   kprof          each kernel's time: ncu over OR batches of $XG_KPB ("1
#                  16") queries ($XG_KPN TREC queries, 64, one thread;
#                  $XG_KPOP: the op; $XG_KPCOLL=syn:N: synthetic queries
#                  on the N-doc collection; tests/gpu/kernel_table.py); the
#                  build in $XG_OLD too
#   phrases        phrase-heavy real text (issue 23): how many of the 50,000
#                  TREC queries each engine serves (ab, OR and AND), then
#                  bench (16 threads, median of 3) of stock, the CPU
#                  matcher, the GPU engine, the plugin (GPU forced
#                  and auto, through Enquire) and serve on the TREC queries that
#                  QueryParser turns into phrases and on 5,000 queries of
#                  hyphenated terms from the text
#                  (tests/gpu/phrase_queries.py), every MSet compared
#   general        the postlist-tree matcher (general form, Omega's
#                  phrases) on real text: ab of the 50,000 TREC queries in
#                  --omega form, then bench (16 threads, median of 3) of
#                  stock, the CPU matcher, the plugin (GPU forced, auto)
#                  and serve (auto) on 5,000 queries of every
#                  default QueryParser operator (OR, AND, --omega) and on
#                  10,000 TREC queries in --omega form, 5,000 with
#                  wildcards (OR, --omega) and 5,000 as typed (--partial)
#   servebench     xapian-gpu serve (engine gpu, auto) against
#                  xapian-tcpsrv on the real-text collection: 1, 16, 64
#                  C++ clients (tests/bench_remote.cc) and python3-xapian
#                  client processes (tests/bench_remote.py), OR and AND, top
#                  10 ($XG_SQ queries, 3000; one Python client $XG_SQ1,
#                  6000; $XG_PY_PASSES turns, 3); the engine's own
#                  one-at-a-time and 64-thread figures; one client over a
#                  Unix socket (connect stub) and TCP
#   servebatches   where `serve --engine gpu`'s time goes: one server per
#                  setting ($XG_SB_RUNS: OP:CLIENTS,...; or:16,or:64,
#                  and:64), its batches (count, mean size) and the
#                  batch thread's host steps and device time, from the
#                  line it prints when it stops; $XG_SB_OPTS: serve options
#   serveauto      serve --engine auto's planner settings against
#                  xapian-tcpsrv on one operator ($XG_SA_OP, and):
#                  $XG_SA_VARIANTS NAME:ENV:OPTION,... (OPTION's _ for a
#                  space); C++ clients 1, 16, 64 ($XG_CLIENTS; $XG_SA_REPS
#                  times, 1), Python 1 and 64
#   serve          tests/serve_test.py with --engine gpu: the sample in
#                  depth (bytes, shards weighed with global statistics,
#                  faults) and every collection against xapian-tcpsrv,
#                  through unchanged python3-xapian clients (Debian's
#                  Python 3.11 and bindings from .device-carry/xapian-rt.tar.xz)
#   mgprep rt|syn N  split the real-text (or N-doc synthetic) collection
#                  into one shard per GPU (xapian-gpu split) and export each
#   multigpu rt|syn N  issue 25: g = 1 .. all GPUs, shards 0 .. g-1 (the
#                  same size per GPU), one `serve --engine gpu` per shard
#                  on its own GPU against g xapian-tcpsrv on the same
#                  shards, combined by the client (bench_remote): 1, 16, 64
#                  clients, OR and AND, top 10; with 2+ GPUs also all g
#                  servers on GPU 0.  Equal digests: identical MSets.
#   soak [Q]       tests/test_soak.c on the device: 16 threads x Q queries
#                  (100000) through one context with GPU faults injected
#                  throughout; every MSet stock's, the resident set steady
#   impacts N [Q]  the N-doc synthetic collection exported with --impacts:
#                  Q OR queries (10000) on the GPU with the impacts and
#                  without (--impacts off), each 3 times in turns; then
#                  1000 of them against stock Xapian (every MSet compared)
#   peers [syn N]  issue 22's side-by-side run on the real-text collection
#                  (TREC 2005 efficiency queries), or on the N-doc
#                  synthetic one (its queries, no stemming; the peers
#                  index `synth text`; logs in $OUT/syn): stock Xapian, --engine
#                  gpu, the plugin (auto) and the server (serve --engine
#                  auto) through `xapian-gpu bench` (every MSet compared
#                  with stock's), then Tantivy and PISA (tests/gpu/peers.py;
#                  their wheels carried in .whl), at 1, 16 and 64
#                  application threads, OR and AND, top 10 and 1000:
#                  queries/s, p50, p99, index size and time.  One thread:
#                  one query at a time (GPU batch 1), $XG_PQ1_OR (2000)
#                  and $XG_PQ1_AND (10000) queries; 16 and 64: $XG_PQ_OR
#                  (10000) and $XG_PQ_AND (50000) (synthetic: 200, 500,
#                  2000, 4000); ours timed $XG_PREPEAT (3) times.
#                  $XG_PTHREADS ("1 16 64") and $XG_POPS ("or and")
#                  narrow a run (one call has 10 minutes).  $XG_PEERS:
#                  ours, theirs, both (default), or index (only build
#                  the collection and the peers' indexes, which later
#                  runs on the machine reuse).  Bar charts in
#                  $OUT/peers-rt-*.svg, $OUT/syn/peers-syn-*.svg
#                  (tests/gpu/peers_plot.py)
# XG_BUILD names another build folder than build-dev.
# Logs go to $OUT; a short table is printed last.
set -o pipefail
OUT=${OUT:-/tmp/xg-out}
mkdir -p "$OUT"
# Debian's libxapian30 (and Python, xapian-tools) from the carried archive.
[ -d .xapian-rt/usr/lib ] || [ ! -f .device-carry/xapian-rt.tar.xz ] ||
    tar -xJf .device-carry/xapian-rt.tar.xz
export LD_LIBRARY_PATH=$PWD/.xapian-rt/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
BD=${XG_BUILD:-build-dev}     # the build to run (helpers: their own)
# Each benchmark client run is cut off after $XG_CLIENT_TIMEOUT seconds
# (180): a hung server costs one run, not the call.
CT="timeout ${XG_CLIENT_TIMEOUT:-180}"
B=$PWD/$BD/plugin/xapian-gpu
SUMMARY=$OUT/summary.txt
: > "$SUMMARY"
note() { echo "$*" | tee -a "$SUMMARY"; }

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader \
    | tee "$OUT/device.txt"
note "device: $(head -1 "$OUT/device.txt"); cores: $(nproc)"

# The two plugin benchmark collections (the N-doc synthetic one in $db,
# the real-text one in $rt), their query files, and each one's cost model
# from calibrate (written beside its index, where the plugin reads it).
# prepare_collections N [syn|rt]: both unless one is named.
prepare_collections() {
    local n=$1 which=${2:-syn rt}
    db=/tmp/xg-syn-$n
    rt=/tmp/xg-realtext
    case " $which " in *" syn "*)
        [ -d "$db" ] || $B synth docs --docs "$n" --quiet "$db" || return 1
        [ -f "$db/xapian-gpu.idx" ] || $B export --quiet "$db" || return 1
        [ -f /tmp/xg-q.tsv ] || $B synth queries --queries 50000 /tmp/xg-q.tsv
        head -500 /tmp/xg-q.tsv > /tmp/xg-q500.tsv
        if [ ! -f "$db/xapian-gpu.model" ]; then
            $B calibrate --db "$db" --queries /tmp/xg-q500.tsv --stem none \
                --samples "$OUT/calibrate-syn.tsv" > "$OUT/calibrate-syn.log" 2>&1
            cp "$db/xapian-gpu.model" "$OUT/syn.model"
            note "calibrate, synthetic $n: $(grep -E '^(stock|cpu matcher|gpu|with)' "$OUT/calibrate-syn.log" | tr '\n' ';')"
        fi ;;
    esac
    case " $which " in *" rt "*)
        if [ ! -d "$rt" ]; then
            xz -dc .device-carry/realtext/all.tsv.xz > /tmp/realtext.tsv
            $B index --quiet /tmp/realtext.tsv "$rt" && $B export --quiet "$rt" \
                || return 1
        fi
        head -10000 .device-carry/realtext/trec-tb-2005-efficiency.tsv > /tmp/xg-trec10k.tsv
        head -500 /tmp/xg-trec10k.tsv > /tmp/xg-trec500.tsv
        if [ ! -f "$rt/xapian-gpu.model" ]; then
            $B calibrate --db "$rt" --queries /tmp/xg-trec500.tsv \
                --samples "$OUT/calibrate-rt.tsv" > "$OUT/calibrate-rt.log" 2>&1
            cp "$rt/xapian-gpu.model" "$OUT/rt.model"
            note "calibrate, real text: $(grep -E '^(stock|cpu matcher|gpu|with)' "$OUT/calibrate-rt.log" | tr '\n' ';')"
        fi ;;
    esac
    return 0
}

# Debian's Python 3.11 with python3-xapian and xapian-tools, unpacked into
# .xapian-rt (the device's own Python has no Xapian bindings): $PY runs it.
debian_python() {
    [ -x .xapian-rt/usr/bin/python3.11 ] ||
        tar -xJf .device-carry/xapian-rt.tar.xz || return 1
    local r=$PWD/.xapian-rt/usr
    PY="env PYTHONHOME=$r PYTHONPATH=$r/lib/python3/dist-packages PATH=$r/bin:$PATH $r/bin/python3.11"
}

# The collection multigpu runs on ($1: rt, or syn with $2 docs), split
# into one shard per GPU under $mg: $mg/shard0 ...
multigpu_shards() {
    ngpu=$(nvidia-smi -L | wc -l)
    if [ "$1" = rt ]; then
        prepare_collections 0 rt || return 1
        src=$rt
        mgq=.device-carry/realtext/trec-tb-2005-efficiency.tsv
        mgstem=english
    else
        # Built sharded (synth docs --shards): the stub over the shards is
        # the whole collection, with the unsharded collection's docids.
        src=/tmp/xg-mg-syn$2
        if [ ! -d "$src" ]; then
            local t=$(date +%s)
            $B synth docs --docs "$2" --shards "$ngpu" --quiet "$src" || return 1
            note "synth $2 docs in $ngpu shards: $(( $(date +%s) - t )) s"
        fi
        [ -f /tmp/xg-q.tsv ] || $B synth queries --queries 50000 /tmp/xg-q.tsv
        mgq=/tmp/xg-q.tsv
        mgstem=none
    fi
    mg=/tmp/xg-mg-$1$2
    [ "$ngpu" -ge 2 ] || { mg=$src; return 0; }
    if [ ! -f "$mg/XAPIANDB" ]; then
        local t=$(date +%s)
        $B split --quiet --shards "$ngpu" "$src" "$mg" || return 1
        note "split $1$2 into $ngpu shards: $(( $(date +%s) - t )) s"
    fi
    for s in $(seq 0 $(( ngpu - 1 ))); do
        [ -f "$mg/shard$s/xapian-gpu.idx" ] || $B export --quiet "$mg/shard$s" &
    done
    [ -f "$src/xapian-gpu.idx" ] || $B export --quiet "$src" &
    wait
}

# The N-doc synthetic collection in $db, generated once per machine.
synth_db() {
    db=/tmp/xg-syn-$1
    local t=$(date +%s)
    [ -d "$db" ] || $B synth docs --docs "$1" --quiet "$db" || return 1
    note "synth $1 docs: $(( $(date +%s) - t )) s"
}

while [ $# -gt 0 ]; do
    stage=$1; shift
    case $stage in
    kernels)
        t=$(date +%s)
        : > "$OUT/kernels.log"
        kfail=0
        for k in decode intersect merge accumulate topk finish; do
            [ -x $BD/tests/test_kernel_$k ] || { note "kernel_$k: not built"; kfail=1; continue; }
            $BD/tests/test_kernel_$k 2>&1 | tee -a "$OUT/kernels.log" "$OUT/kernel_$k.log"
            rc=${PIPESTATUS[0]}
            note "kernel_$k: $(tail -1 "$OUT/kernel_$k.log") (exit $rc)"
            [ "$rc" = 0 ] || kfail=1
        done
        # One engine's two slots on two streams, from three threads.
        $BD/tests/test_lanes tests/sample/cranfield /tmp/xg-lanes gpu \
            > "$OUT/lanes.log" 2>&1
        rc=$?
        note "lanes (GPU): $(tail -1 "$OUT/lanes.log") (exit $rc)"
        [ "$rc" = 0 ] || kfail=1
        note "kernels: $([ $kfail = 0 ] && echo all passed || echo FAILED) ($(( $(date +%s) - t )) s)"
        ;;
    kbench)
        $BD/tests/bench_kernels 2>&1 | tee "$OUT/kbench.log"
        grep '^bench' "$OUT/kbench.log" | sed 's/^/    /' | tee -a "$SUMMARY"
        ;;
    members)
        n=$1; shift
        db=/tmp/xg-syn-$n
        head -2000 /tmp/xg-q.tsv > /tmp/xg-q2k.tsv
        note "AND membership methods, $n docs, 2000 queries (GPU device time):"
        for m in binary lr hashseg merge block auto; do
            for bl in off; do   # Bloom: measured by kbench
                $B bench --db "$db" --queries /tmp/xg-q2k.tsv --stem none -k 10 \
                    --op and --engines gpu --member $m --bloom $bl \
                    > "$OUT/member-$m-$bl.log" 2>&1
                note "    member $m bloom $bl: $(grep '^gpu engine' "$OUT/member-$m-$bl.log" | sed 's/.*batches, //')"
            done
        done
        ;;
    cache)
        n=$1; shift
        db=/tmp/xg-syn-$n
        head -2000 /tmp/xg-q.tsv > /tmp/xg-q2k.tsv
        size=$(stat -c %s "$db/xapian-gpu.idx")
        note "list cache, $n docs (index $size bytes), 2000 queries:"
        for op in or and; do
            for div in 0 2 8; do
                lc=""
                [ $div = 0 ] || lc="--list-cache $(( size / div / 1024 ))"
                $B bench --db "$db" --queries /tmp/xg-q2k.tsv --stem none -k 10 \
                    --op $op --engines xapian,gpu $lc \
                    > "$OUT/cache-$op-$div.log" 2>&1
                note "    op $op, cache ${lc:-none}: $(grep -E '^gpu +[0-9]' "$OUT/cache-$op-$div.log" | awk '{print $3" q/s, ratio "$NF}')"
                grep -E '^(list cache|queries|gpu engine)' "$OUT/cache-$op-$div.log" \
                    | sed 's/^/        /' | tee -a "$SUMMARY"
            done
        done
        ;;
    abcache)
        t=$(date +%s)
        python3 tests/ab_test.py --bin "$B" --ir-data .device-carry/ir-data \
            --work /tmp/xg-abc --engine gpu --only cacm,med --list-cache 48 \
            2>&1 | tee "$OUT/abcache.log"
        note "ab --engine gpu --list-cache 48: $(tail -1 "$OUT/abcache.log"); $(grep 'MSets compared' "$OUT/abcache.log") ($(( $(date +%s) - t )) s)"
        ;;
    weigh)
        t=$(date +%s)
        $BD/tests/test_weigh --ir-data .device-carry/ir-data 2>&1 \
            | tee "$OUT/weigh.log"
        note "weigh: $(tail -1 "$OUT/weigh.log") ($(( $(date +%s) - t )) s)"
        # Runs in chunks through the arena and the host's gather, as where
        # the device cannot place the postings (wt_cuda_place.c).
        t=$(date +%s)
        XG_WT_NO_PLACE=1 $BD/tests/test_weigh --ir-data .device-carry/ir-data 2>&1 \
            | tee "$OUT/weigh-arena.log"
        note "weigh, XG_WT_NO_PLACE=1: $(tail -1 "$OUT/weigh-arena.log") ($(( $(date +%s) - t )) s)"
        # The CLI with the GPU engine (auto): --tsv against TermGenerator's
        # database, --db against Xapian's one-term weights.
        t=$(date +%s)
        python3 tests/weight_test.py --bin "$B" --ir-data .device-carry/ir-data \
            --term-weights $BD/tests/term_weights \
            --work /tmp/xg-weight 2>&1 | tee "$OUT/weight_test.log"
        note "weight_test.py (GPU engine): $(tail -1 "$OUT/weight_test.log") ($(( $(date +%s) - t )) s)"
        ;;
    weighbench)
        t=$(date +%s)
        { $BD/tests/test_weigh --bench 100,200,300,400,500 &&
          $BD/tests/test_weigh --bench 500 --budget 128000000 &&
          $BD/tests/test_weigh --bench 2000 --budget 500000000; } 2>&1 \
            | tee "$OUT/weighbench.log"
        note "weighbench ($(( $(date +%s) - t )) s):"
        tail -40 "$OUT/weighbench.log" | sed 's/^/    /' >> "$SUMMARY"
        ;;
    qlm)
        t=$(date +%s)
        QB=${QLM_BUILD:-$BD}
        { $QB/tests/test_qlm --ir-data .device-carry/ir-data &&
          python3 tests/qlm_test.py --bin $QB/plugin/xapian-gpu \
              --ir-data .device-carry/ir-data --work /tmp/xg-qlm-work &&
          python3 tests/qlm_search_test.py --bin $QB/plugin/xapian-gpu \
              --work /tmp/xg-qlm-search-work &&
          python3 tests/vocab_test.py --bin $QB/plugin/xapian-gpu --engine gpu \
              --work /tmp/xg-vocab-work; } 2>&1 | tee "$OUT/qlm.log"
        st=${PIPESTATUS[0]}
        note "qlm: $(grep -E '^[0-9]+ passed' "$OUT/qlm.log" | tail -1); exit $st; $(tail -1 "$OUT/qlm.log") ($(( $(date +%s) - t )) s)"
        ;;
    qlmbench)
        sizes=100,300; sigmas=2,4,8
        case $1 in [0-9]*) sizes=$1; shift ;; esac
        case $1 in [0-9]*) sigmas=$1; shift ;; esac
        t=$(date +%s)
        ${QLM_BUILD:-$BD}/tests/test_qlm --bench "$sizes" --sigmas "$sigmas" 2>&1 \
            | tee "$OUT/qlmbench.log"
        note "qlmbench $sizes at sigma $sigmas ($(( $(date +%s) - t )) s):"
        sed -n '/end to end, host memory/,$p' "$OUT/qlmbench.log" | sed 's/^/    /' >> "$SUMMARY"
        ;;
    prep)
        n=$1; shift
        colls="syn rt"
        case $1 in syn|rt) colls=$1; shift ;; esac
        t=$(date +%s)
        prepare_collections "$n" "$colls" || exit 1
        note "prepared the plugin collections ($(( $(date +%s) - t )) s)"
        ;;
    abplug)
        n=$1; shift
        colls="syn rt"
        case $1 in syn|rt) colls=$1; shift ;; esac
        ops="or and"
        case $1 in or|and) ops=$1; shift ;; esac
        prepare_collections "$n" "$colls" || exit 1
        for coll in $colls; do
            if [ $coll = syn ]; then d=$db; q=/tmp/xg-q.tsv; st="--stem none"
            else d=$rt; q=.device-carry/realtext/trec-tb-2005-efficiency.tsv; st=""; fi
            # Every engine three times in turns (seven on real text, whose
            # passes last about 0.2 s), the median pass reported: run-to-run
            # noise is several percent at 10^4-10^5 queries/s.
            rep=3; [ $coll = rt ] && rep=7
            for op in $ops; do
                t=$(date +%s)
                name=ab-$coll-$op
                $B ab --db "$d" --queries "$q" $st --op $op -k 10 \
                    --engines xapian,plugin-gpu,plugin --threads 64 --repeat $rep \
                    --json="$OUT/$name.json" --html "$OUT/$name.html" \
                    --samples "$OUT/$name.tsv" \
                    > "$OUT/$name.log" 2>&1
                rc=$?
                note "ab $coll op $op, 64 threads ($(( $(date +%s) - t )) s, exit $rc):"
                grep -E '^(queries|engine|xapian|plugin|planner)' "$OUT/$name.log" \
                    | sed 's/^/    /' | tee -a "$SUMMARY"
                python3 - "$OUT/$name.html" "$OUT/$name" <<'PY'
import re, sys
svgs = re.findall(r"<svg.*?</svg>", open(sys.argv[1]).read(), re.S)
for i, s in enumerate(svgs):
    open("%s-plot%d.svg" % (sys.argv[2], i + 1), "w").write(s + "\n")
PY
            done
        done
        ;;
    coverage)
        # Which queries the GPU engine and the plugin on it answer: every
        # collection's queries, the TREC logs, operators, as typed, on
        # the plain database (omindex is not on the device: the omega
        # stage runs Omega's form on a database built beforehand).
        t=$(date +%s)
        python3 tests/coverage_test.py --bin "$B" --ir-data .device-carry/ir-data \
            --work /tmp/xg-cov --engines gpu,plugin-gpu > "$OUT/coverage.log" 2>&1
        rc=$?
        note "coverage, gpu and plugin-gpu (exit $rc, $(( $(date +%s) - t )) s): $(grep -E '^[0-9]+ runs' "$OUT/coverage.log")"
        grep -E '^FAIL' "$OUT/coverage.log" | cut -c1-300 | tee -a "$SUMMARY"
        ;;
    omega)
        t=$(date +%s)
        python3 tests/omindex_test.py --bin "$B" --ir-data .device-carry/ir-data \
            --work /tmp/xg-om --prebuilt .device-carry/omindex-cranfield \
            --engine gpu 2>&1 | tee "$OUT/omega.log"
        note "omindex ab --omega on the GPU: $(tail -1 "$OUT/omega.log") ($(( $(date +%s) - t )) s)"
        grep -E '^ +xapian' "$OUT/omega.log" | sed 's/^/    /' | tee -a "$SUMMARY"
        ;;
    plugbench)
        n=$1; shift
        prepare_collections "$n" || exit 1
        for op in or and; do
            $BD/tests/bench_plugin --db "$db" --queries /tmp/xg-q.tsv \
                --stem none --threads 64 --op $op > "$OUT/plugbench-syn-$op.log" 2>&1
            note "plugin bench, synthetic $n docs, 10000 queries, 64 threads, op $op:"
            sed 's/^/    /' "$OUT/plugbench-syn-$op.log" | tee -a "$SUMMARY"
            $BD/tests/bench_plugin --db "$rt" --queries /tmp/xg-trec10k.tsv \
                --threads 64 --op $op > "$OUT/plugbench-rt-$op.log" 2>&1
            note "plugin bench, real text ($(wc -l < /tmp/realtext.tsv 2>/dev/null || echo ?) docs), TREC 2005 efficiency 10000 queries, 64 threads, op $op:"
            sed 's/^/    /' "$OUT/plugbench-rt-$op.log" | tee -a "$SUMMARY"
        done
        ;;
    plugin)
        t=$(date +%s)
        python3 tests/plugin_test.py --bin "$B" \
            --app $BD/tests/test_plugin_app --ir-data .device-carry/ir-data \
            --work /tmp/xg-plugin --engine gpu 2>&1 | tee "$OUT/plugin.log"
        note "plugin --engine gpu: $(tail -1 "$OUT/plugin.log") ($(( $(date +%s) - t )) s)"
        grep '^ok' "$OUT/plugin.log" | cut -c1-160 | sed 's/^/    /' | tee -a "$SUMMARY"
        ;;
    ab)
        t=$(date +%s)
        python3 tests/ab_test.py --bin "$B" --ir-data .device-carry/ir-data \
            --work /tmp/xg-ab --engine gpu 2>&1 | tee "$OUT/ab.log"
        note "ab --engine gpu: $(tail -1 "$OUT/ab.log"); $(grep 'MSets compared' "$OUT/ab.log") ($(( $(date +%s) - t )) s)"
        ;;
    abimpacts)
        t=$(date +%s)
        python3 tests/ab_test.py --bin "$B" --ir-data .device-carry/ir-data \
            --work /tmp/xg-abi --engine gpu --impacts --cand-min 64 2>&1 \
            | tee "$OUT/abimpacts.log"
        note "ab --engine gpu --impacts: $(tail -1 "$OUT/abimpacts.log"); $(grep 'MSets compared' "$OUT/abimpacts.log") ($(( $(date +%s) - t )) s)"
        ;;
    impacts)
        n=$1; shift
        q=10000
        case ${1:-} in [0-9]*) q=$1; shift;; esac
        synth_db "$n" || exit 1
        $B export --impacts "$db" 2>&1 | tee "$OUT/export-impacts-$n.log"
        grep -E 'exported|^index|sections' "$OUT/export-impacts-$n.log" \
            | sed 's/^/    /' | tee -a "$SUMMARY"
        [ -f /tmp/xg-q.tsv ] || $B synth queries --queries 50000 /tmp/xg-q.tsv
        head -"$q" /tmp/xg-q.tsv > /tmp/xg-qi.tsv
        note "impacts, $n docs, $q OR queries, top 10, GPU (device time, q/s):"
        for r in 1 2 3; do
            for mode in auto off; do
                $B bench --db "$db" --queries /tmp/xg-qi.tsv --stem none -k 10 \
                    --op or --engines gpu --impacts $mode \
                    > "$OUT/impacts-$n-$mode-$r.log" 2>&1
                note "    run $r impacts $mode: $(grep -E '^gpu ' "$OUT/impacts-$n-$mode-$r.log" | tr -s ' ' | cut -c1-80); $(grep '^gpu engine' "$OUT/impacts-$n-$mode-$r.log" | sed 's/.*batches, //'); $(grep -E '^(candidates|impacts):' "$OUT/impacts-$n-$mode-$r.log" | tr '\n' ' ')"
            done
        done
        head -1000 /tmp/xg-qi.tsv > /tmp/xg-qi1k.tsv
        $B bench --db "$db" --queries /tmp/xg-qi1k.tsv --stem none -k 10 \
            --op or --engines xapian,gpu --threads "$(nproc)" --impacts auto \
            > "$OUT/impacts-$n-vs-stock.log" 2>&1
        note "    vs stock, 1000 queries: exit $?; $(grep -E '^(gpu |impacts:|routing)' "$OUT/impacts-$n-vs-stock.log" | tr -s ' ' | tr '\n' ';')"
        ;;
    bench)
        n=$1; shift
        q=10000
        case ${1:-} in [0-9]*) q=$1; shift;; esac
        synth_db "$n" || exit 1
        XG_EXPORT_TIMING=1 $B export --scan-baseline "$db" 2>&1 \
            | tee "$OUT/export-$n.log"
        grep -E 'bare|exported|phases|^index' "$OUT/export-$n.log" | sed 's/^/    /' \
            | tee -a "$SUMMARY"
        $B synth queries --queries "$q" /tmp/xg-q.tsv
        for op in or and andor; do
            $B bench --db "$db" --queries /tmp/xg-q.tsv --stem none -k 10 \
                --op $op --json="$OUT/bench-$n-$op.json" ${XG_ON_OPTS:-} 2>&1 \
                | tee "$OUT/bench-$n-$op.log"
            note "bench $n docs, $q queries, op $op:"
            grep -E '^(queries|engine|xapian|cpu|gpu|threads)' \
                "$OUT/bench-$n-$op.log" | sed 's/^/    /' | tee -a "$SUMMARY"
        done
        ;;
    latency)
        n=$1; shift
        db=/tmp/xg-syn-$n
        head -2000 /tmp/xg-q.tsv > /tmp/xg-q2k.tsv
        for op in or and; do
            $B bench --db "$db" --queries /tmp/xg-q2k.tsv --stem none -k 10 \
                --op $op --batch 1 --threads 1 --engines xapian,gpu 2>&1 \
                | tee "$OUT/latency-$n-$op.log"
            note "latency $n docs, 2000 queries one at a time, op $op:"
            grep -E '^(engine|xapian|gpu)' "$OUT/latency-$n-$op.log" \
                | sed 's/^/    /' | tee -a "$SUMMARY"
        done
        ;;
    oldnew)
        # The same bench with another build's binary ($XG_OLD, e.g. the
        # last release) and this one, in turns on the same machine and the
        # same databases: the figures side by side, each run's MSets
        # compared with stock Xapian's by bench itself.
        n=$1; shift
        old=${XG_OLD:?XG_OLD names the other build\'s xapian-gpu}
        case " ${XG_COLLS:-syn rt} " in *" syn "*)
            synth_db "$n" || exit 1
            [ -f "$db/xapian-gpu.idx" ] || $B export --quiet "$db" || exit 1
            [ -f /tmp/xg-q10k.tsv ] || $B synth queries --queries 10000 /tmp/xg-q10k.tsv
        esac
        rt=/tmp/xg-realtext
        if [ ! -d "$rt" ] && [ "${XG_COLLS:-syn rt}" != syn ]; then
            t=$(date +%s)
            xz -dc .device-carry/realtext/all.tsv.xz > /tmp/realtext.tsv
            $B index --quiet /tmp/realtext.tsv "$rt" && $B export --quiet "$rt" \
                || exit 1
            note "real text: $(wc -l < /tmp/realtext.tsv) docs indexed and exported in $(( $(date +%s) - t )) s"
        fi
        head -10000 .device-carry/realtext/trec-tb-2005-efficiency.tsv > /tmp/xg-trec10k.tsv
        for coll in ${XG_COLLS:-syn rt}; do
            if [ $coll = syn ]; then d=$db; q=/tmp/xg-q10k.tsv; st="--stem none"
            else d=$rt; q=/tmp/xg-trec10k.tsv; st=""; fi
            for op in or and; do
                note "old vs new, $coll, 10000 queries, op $op, top 10:"
                for turn in $(seq ${XG_TURNS:-2}); do
                    for which in old new; do
                        bin=$B; [ $which = old ] && bin=$old
                        log="$OUT/oldnew-$coll-$op-$which-$turn.log"
                        $bin bench --db "$d" --queries "$q" $st -k 10 --op $op \
                            ${XG_ON_OPTS:-} > "$log" 2>&1
                        note "    $which $turn: rc $? $(awk '/^engine +queries/ {on=1; next} /^routing/ {on=0} on && $2 ~ /^[0-9]+$/ {printf "%s %s q/s p50 %s; ", $1, $3, $5}' "$log")$(grep -o 'different [0-9]*' "$log"); $(grep -o '[0-9]* batches, [0-9.]* s device time' "$log")"
                    done
                done
            done
        done
        ;;
    knobs)
        # The same bench under each knob setting (and the old build), in
        # turns on one machine and database; bench compares every MSet
        # with stock Xapian's.
        prepare_collections 0 rt || exit 1
        kq=/tmp/xg-trec-k${XG_KQN:=10000}.tsv
        head -$XG_KQN .device-carry/realtext/trec-tb-2005-efficiency.tsv > $kq
        variants=${XG_KNOBS:-base:-}
        [ -n "${XG_OLD:-}" ] && variants="old:-,$variants"
        for op in ${XG_POPS:-or and}; do
            note "knobs, rt, $XG_KQN queries, op $op, top 10, median of 3 passes:"
            for turn in $(seq ${XG_TURNS:-2}); do
                for v in ${variants//,/ }; do
                    name=${v%%:*}; kv=${v#*:}
                    bin=$B; [ "$name" = old ] && bin=$XG_OLD
                    log="$OUT/knobs-$op-$name-$turn.log"
                    if [ "$kv" = - ]; then envs=(); else envs=("$kv"); fi
                    env "${envs[@]}" $bin bench --db "$rt" --queries $kq \
                        -k 10 --op $op --repeat 3 ${XG_ON_OPTS:-} > "$log" 2>&1
                    note "    $name $turn: rc $? $(awk '/^engine +queries/ {on=1; next} /^routing/ {on=0} on && $2 ~ /^[0-9]+$/ {printf "%s %s q/s p50 %s; ", $1, $3, $5}' "$log")$(grep -o 'different [0-9]*' "$log"); $(grep -o '[0-9]* batches, [0-9.]* s device time' "$log"); $(grep -o 'build [0-9.]* s, device run [0-9.]* s, finish [0-9.]* s' "$log")"
                done
            done
        done
        ;;
    fronts)
        # Every front an application reaches, on the real text: stock, the
        # engine, the plugin (GPU forced and auto) and the server, through
        # bench (every MSet compared with stock's), this build and the one
        # in $XG_OLD in turns.
        prepare_collections 0 rt || exit 1
        export PATH=$PWD/.xapian-rt/usr/bin:$PATH   # serve's xapian-progsrv
        trec=.device-carry/realtext/trec-tb-2005-efficiency.tsv
        variants=${XG_KNOBS:-new:-}
        [ -n "${XG_OLD:-}" ] && variants="old:-,$variants"
        for op in ${XG_POPS:-or and}; do
            for th in ${XG_FTHREADS:-64}; do
                fq=${XG_FQ:-50000}; [ "$th" -ge 64 ] || fq=${XG_FQ:-10000}
                head -"$fq" $trec > /tmp/xg-fq.tsv
                bopt=; [ "$th" = 1 ] && bopt="--batch 1"
                note "fronts, rt, $fq queries, op $op, top ${XG_FK:-10}, $th threads, median of 3 passes:"
                for turn in $(seq ${XG_TURNS:-1}); do
                    for v in ${variants//,/ }; do
                        which=${v%%:*}; kv=${v#*:}
                        bin=$B; [ $which = old ] && bin=$XG_OLD
                        if [ "$kv" = - ]; then envs=(); else envs=("$kv"); fi
                        log="$OUT/fronts-$op-$th-$which-$turn.log"
                        env "${envs[@]}" $CT $bin bench --db "$rt" --queries /tmp/xg-fq.tsv \
                            -k ${XG_FK:-10} --op $op --threads $th $bopt \
                            --repeat 3 --engines ${XG_FENG:-xapian,gpu,plugin-gpu,plugin,server} \
                            > "$log" 2>&1
                        note "    $which $turn: rc $? $(awk '/^routing/ {exit} $1 ~ /^(xapian|cpu|gpu|plugin-gpu|plugin-cpu|plugin|server)$/ && $2 ~ /^[0-9]+$/ {printf "%s %s (p50 %s) ", $1, $3, $5}' "$log")| $(grep -o 'identical [0-9]*, different [0-9]*' "$log" | head -1); $(grep -c "full ranking;" "$log") MSets where stock's top k is not its own full ranking"
                        note "      host CPU a query: $(grep '^host CPU' "$log" | sed 's/.*included)://')"
                        note "      $(grep '^plugin routes (planner)' "$log" | head -1)"
                        note "      $(grep -o '^gpu engine: .*device time' "$log" | sed 's/.*served on the device, //')"
                        grep -E '^(plugin-gpu|plugin|xapian-gpu serve): gpu batches' "$log" \
                            | sed 's/ on average; the batch threads//' | awk '{l[$1]=$0} END {for (e in l) print "      " l[e]}' \
                            | tee -a "$SUMMARY"
                    done
                done
            done
        done
        ;;
    split)
        # The server on half the cores, its clients on the other half;
        # the in-process fronts (engine, plugin) on the server's half.
        prepare_collections 0 rt || exit 1
        export PATH=$PWD/.xapian-rt/usr/bin:$PATH   # serve's xapian-progsrv
        trec=.device-carry/realtext/trec-tb-2005-efficiency.tsv
        nc=$(nproc); half=$((nc / 2))
        srv_cpus=${XG_SRV_CPUS:-0-$((half - 1))}
        cli_cpus=${XG_CLI_CPUS:-$half-$((nc - 1))}
        sock=/tmp/xg-split.sock stub=/tmp/xg-split.stub
        echo "remote :$B connect $sock" > $stub
        for op in ${XG_POPS:-or and}; do
            for th in ${XG_FTHREADS:-64}; do
                fq=${XG_FQ:-50000}; [ "$th" -ge 64 ] || fq=${XG_FQ:-10000}
                head -"$fq" $trec > /tmp/xg-fq.tsv
                bopt=; [ "$th" = 1 ] && bopt="--batch 1"
                note "split, rt, $fq queries, op $op, top 10, $th threads, median of 3 passes; serve and the in-process fronts on cores $srv_cpus, serve's clients on $cli_cpus:"
                log="$OUT/split-$op-$th-inproc.log"
                $CT taskset -c $srv_cpus $B bench --db "$rt" --queries /tmp/xg-fq.tsv \
                    -k 10 --op $op --threads $th $bopt --repeat 3 \
                    --engines xapian,gpu,plugin > "$log" 2>&1
                note "    in process: rc $? $(awk '/^routing/ {exit} $1 ~ /^(xapian|gpu|plugin)$/ && $2 ~ /^[0-9]+$/ {printf "%s %s (p50 %s) ", $1, $3, $5}' "$log")| $(grep -o 'identical [0-9]*, different [0-9]*' "$log" | head -1)"
                note "      host CPU a query: $(grep '^host CPU' "$log" | sed 's/.*included)://')"
                rm -f $sock
                taskset -c $srv_cpus $B serve --engine auto --unix $sock "$rt" \
                    2> "$OUT/split-$op-$th-serve.err" &
                spid=$!
                for i in $(seq 300); do
                    grep -q 'ready:' "$OUT/split-$op-$th-serve.err" && break
                    sleep 0.1
                done
                if ! grep -q 'ready:' "$OUT/split-$op-$th-serve.err"; then
                    note "    serve did not start: $(tail -1 "$OUT/split-$op-$th-serve.err")"
                    kill $spid 2>/dev/null; wait $spid
                    continue
                fi
                t0=$(awk '{print $14 + $15}' /proc/$spid/stat)
                log="$OUT/split-$op-$th-server.log"
                $CT taskset -c $cli_cpus $B bench --db "$rt" --queries /tmp/xg-fq.tsv \
                    -k 10 --op $op --threads $th --repeat 3 \
                    --engines xapian,server --server $stub > "$log" 2>&1
                rc=$?
                t1=$(awk '{print $14 + $15}' /proc/$spid/stat)
                kill $spid; wait $spid
                n=$(grep -o 'routes: .*' "$OUT/split-$op-$th-serve.err" | awk '{s = 0; for (i = 3; i <= NF; i += 2) s += $i; print s}')
                note "    server: rc $rc $(awk '/^routing/ {exit} $1 ~ /^(xapian|server)$/ && $2 ~ /^[0-9]+$/ {printf "%s %s (p50 %s) ", $1, $3, $5}' "$log")| $(grep -o 'identical [0-9]*, different [0-9]*' "$log" | head -1)"
                note "      serve: $(grep -o 'routes: .*' "$OUT/split-$op-$th-serve.err"); its CPU $(awk -v t=$((t1 - t0)) -v n=${n:-0} -v hz=$(getconf CLK_TCK) 'BEGIN {if (n) printf "%.1f us a search (%d searches)", t / hz / n * 1e6, n}'); clients' $(grep '^host CPU' "$log" | sed 's/.*included)://')"
            done
        done
        ;;
    kprof)
        # Each kernel's time under ncu (serialized, caches flushed: compare
        # builds, not seconds with the bench's) for batches of each size
        # in $XG_KPB ("1 16") over $XG_KPN (64) TREC queries from the
        # 2,001st, one thread; this build and the one in $XG_OLD.
        # XG_KPCOLL=syn:N: the N-document synthetic collection and $XG_KPN
        # (64) of its synthetic queries from the 2,001st instead.
        kn=${XG_KPN:-64}
        case ${XG_KPCOLL:-rt} in
        syn:*)
            prepare_collections ${XG_KPCOLL#syn:} syn || exit 1
            kdb=$db; kstem="--stem none"
            sed -n 2001,$((2000 + kn))p /tmp/xg-q.tsv > /tmp/xg-q64.tsv ;;
        *)
            prepare_collections 0 rt || exit 1
            kdb=$rt; kstem=
            sed -n 2001,$((2000 + kn))p .device-carry/realtext/trec-tb-2005-efficiency.tsv > /tmp/xg-q64.tsv ;;
        esac
        for which in ${XG_OLD:+old} new; do
            bin=$B; [ $which = old ] && bin=$XG_OLD
            for bs in ${XG_KPB:-1 16}; do
                f="$OUT/kprof-$which-$bs"
                ncu --clock-control none --csv --metrics \
                    gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active \
                    $bin bench --db "$kdb" --queries /tmp/xg-q64.tsv -k 10 $kstem \
                    --op ${XG_KPOP:-or} --threads 1 --batch "$bs" --repeat 1 \
                    --engines gpu > "$f.csv" 2> "$f.err"
                python3 tests/gpu/kernel_table.py "$f.csv" \
                    "$which: ncu, ${XG_KPOP:-or} batches of $bs ($kn queries, ${XG_KPCOLL:-rt})" | tee -a "$SUMMARY"
            done
        done
        ;;
    phrases)
        prepare_collections 0 rt || exit 1
        python3 tests/gpu/phrase_queries.py /tmp/realtext.tsv \
            .device-carry/realtext/trec-tb-2005-efficiency.tsv /tmp \
            | tee -a "$SUMMARY"
        for op in or and; do
            $CT $B ab --db "$rt" --op "$op" --threads 16 \
                --queries .device-carry/realtext/trec-tb-2005-efficiency.tsv \
                --engines xapian,cpu > "$OUT/phrases-cover-$op.log" 2>&1
            note "TREC 50,000, $op: $(grep -m1 '^queries' "$OUT/phrases-cover-$op.log")"
        done
        # bench's server engine starts `serve`, which relays to
        # xapian-progsrv (xapian-tools, in .xapian-rt).
        export PATH=$PWD/.xapian-rt/usr/bin:$PATH
        for qf in trec-phrases hyphen-queries; do
            for op in or and; do
                $CT $B bench --db "$rt" --queries "/tmp/$qf.tsv" -k 10 \
                    --op "$op" --threads 16 --repeat 3 \
                    --engines xapian,cpu,gpu,plugin-gpu,plugin,server \
                    > "$OUT/phrases-$qf-$op.log" 2>&1
                note "$qf, $op (exit $?):"
                grep -E '^(xapian|cpu|gpu|auto|plugin|plugin-gpu|server) |identical|differ|unsupported|routes' \
                    "$OUT/phrases-$qf-$op.log" | sed 's/^/    /' \
                    | tee -a "$SUMMARY"
            done
        done
        ;;
    general)
        # The postlist-tree matcher on real text: Omega's form of the TREC
        # queries (phrases become ORs of phrases in the AND), queries of
        # every default QueryParser operator drawn from the documents
        # (ab_test.phrase_queries), and TREC queries with wildcards and
        # as typed (--partial), against stock at 16 threads.
        prepare_collections 0 rt || exit 1
        python3 -c "import sys; sys.path.insert(0, 'tests'); import ab_test
print(ab_test.phrase_queries('/tmp/realtext.tsv', '/tmp/xg-ops.tsv', 5000))" \
            > "$OUT/general-ops.log" 2>&1
        note "general form, real text: $(cat "$OUT/general-ops.log") operator queries"
        $CT $B ab --db "$rt" --omega --threads 16 \
            --queries .device-carry/realtext/trec-tb-2005-efficiency.tsv \
            --engines xapian,cpu > "$OUT/general-cover-omega.log" 2>&1
        note "TREC 50,000, --omega: $(grep -m1 '^queries' "$OUT/general-cover-omega.log")"
        head -10000 .device-carry/realtext/trec-tb-2005-efficiency.tsv > /tmp/xg-trec10k.tsv
        # Wildcards: the first 5,000 TREC queries, every third word of four
        # letters or more cut to its first four and a '*' (as
        # tests/test_match_tree.cc does), with --wildcard.
        head -5000 .device-carry/realtext/trec-tb-2005-efficiency.tsv | \
            python3 -c "import sys
for l in sys.stdin:
    q, t = l.rstrip('\n').split('\t', 1)
    w = t.split()
    print(q + '\t' + ' '.join(x[:4] + '*' if i % 3 == 1 and len(x) >= 4 and x[3].isalpha() else x for i, x in enumerate(w)))" \
            > /tmp/xg-wild.tsv
        # Search as you type: the same 5,000, the last word cut to its
        # first 2 to 5 letters, with --partial (its 100 most frequent
        # completions).
        head -5000 .device-carry/realtext/trec-tb-2005-efficiency.tsv | \
            python3 -c "import sys
for i, l in enumerate(sys.stdin):
    q, t = l.rstrip('\n').split('\t', 1)
    w = t.split()
    print(q + '\t' + ' '.join(w[:-1] + [w[-1][:2 + i % 4]]) if w else l.rstrip('\n'))" \
            > /tmp/xg-part.tsv
        # bench's server engine starts `serve`, which relays to
        # xapian-progsrv (xapian-tools, in .xapian-rt).
        export PATH=$PWD/.xapian-rt/usr/bin:$PATH
        # (not `set --`: the stage loop reads the positional parameters)
        for spec in xg-ops:or xg-ops:and xg-ops:omega xg-trec10k:omega \
                    xg-wild:wor xg-wild:womega xg-part:por; do
            qf=${spec%:*} form=${spec#*:}
            mode="--op $form"; [ "$form" = omega ] && mode=--omega
            [ "$form" = wor ] && mode="--op or --wildcard"
            [ "$form" = womega ] && mode="--omega --wildcard"
            [ "$form" = por ] && mode="--op or --partial"
            $CT $B bench --db "$rt" --queries "/tmp/$qf.tsv" -k 10 $mode \
                --threads 16 --repeat 3 \
                --engines xapian,cpu,plugin-gpu,plugin,server \
                > "$OUT/general-$qf-$form.log" 2>&1
            note "$qf, $form (exit $?):"
            grep -E '^(xapian|cpu|plugin|plugin-gpu|server) |identical|differ|unsupported|routes' \
                "$OUT/general-$qf-$form.log" | sed 's/^/    /' | tee -a "$SUMMARY"
        done
        ;;
    overhead)
        # The plugin with a GPU present, its planner consulted for every
        # query and sending each to stock, against stock alone.  A pass
        # of 10,000 ANDs takes stock 35 ms at 16 threads, where the
        # machine's drift between passes was 10-30%: the ANDs run all
        # 50,000 queries, 9 passes in turns.
        prepare_collections 0 rt || exit 1
        ov=/tmp/xg-rt-stockonly
        rm -rf "$ov" && cp -a "$rt" "$ov" || exit 1
        sed 's/^gpu_batch .*/gpu_batch 100/' "$rt/xapian-gpu.model" > "$ov/xapian-gpu.model"
        head -10000 .device-carry/realtext/trec-tb-2005-efficiency.tsv > /tmp/xg-trec10k.tsv
        head -2000 /tmp/xg-trec10k.tsv > /tmp/xg-trec2k.tsv
        builds=new; [ -n "${XG_OLD:-}" ] && builds="old new"
        note "planner overhead on stock-routed queries (plugin / stock, the median pass of each; builds: $builds):"
        for op in or and; do
            for n in 1 16 64; do
                case $op-$n in
                    or-1) q=/tmp/xg-trec2k.tsv rep=3 ;;
                    or-*) q=/tmp/xg-trec10k.tsv rep=3 ;;
                    and-1) q=/tmp/xg-trec10k.tsv rep=5 ;;
                    *) q=.device-carry/realtext/trec-tb-2005-efficiency.tsv rep=9 ;;
                esac
                for turn in $(seq ${XG_TURNS:-2}); do
                    for build in $builds; do
                        bin=$B; [ $build = old ] && bin=$XG_OLD
                        log="$OUT/overhead-$op-$n-$turn-$build.log"
                        $bin bench --db "$ov" --queries $q -k 10 --op $op --threads $n \
                            --repeat $rep --engines xapian,plugin > "$log" 2>&1
                        note "    $op threads $n turn $turn $build: rc $? $(awk '/^routing/ {exit} $1 ~ /^(xapian|plugin)$/ && $2 ~ /^[0-9]+$/ {q[$1]=$3; p[$1]=$5} END {printf "stock %s q/s (p50 %s ms), plugin %s (p50 %s), ratio %.3f", q["xapian"], p["xapian"], q["plugin"], p["plugin"], q["xapian"] ? q["plugin"]/q["xapian"] : 0}' "$log"); $(grep -o 'plugin routes.*' "$log")"
                    done
                done
            done
        done
        ;;
    servebench)
        # xapian-gpu serve (--engine gpu and auto) against xapian-tcpsrv on
        # the real-text collection, C++ clients over TCP loopback
        # (tests/bench_remote.cc): 1, 16 and 64 clients, OR and AND, top
        # 10, $XG_SQ TREC queries (3000).  Each line's digest covers every
        # MSet's docids, weights and percentages: equal digests, identical
        # answers.  Xapian's tools come from .xapian-rt (xapian-tools).
        t=$(date +%s)
        prepare_collections 0 rt || exit 1
        rtbin=$PWD/.xapian-rt/usr/bin
        head -${XG_SQ:-3000} .device-carry/realtext/trec-tb-2005-efficiency.tsv > /tmp/xg-sq.tsv
        # Every server in a session of its own, as a daemon runs (where
        # the kernel groups tasks by session for fairness, a server in
        # the clients' session would share their CPU share).
        setsid $rtbin/xapian-tcpsrv --port 42001 --interface 127.0.0.1 "$rt" \
            > "$OUT/tcpsrv.log" 2>&1 &
        tpid=$!
        setsid $B serve --engine gpu --port 42002 --host 127.0.0.1 --progsrv \
            $rtbin/xapian-progsrv "$rt" 2> "$OUT/serve-gpu.log" &
        gpid=$!
        setsid $B serve --engine auto --port 42003 --host 127.0.0.1 --progsrv \
            $rtbin/xapian-progsrv "$rt" 2> "$OUT/serve-auto.log" &
        apid=$!
        # The GPU server on a Unix socket too, through a connect stub.
        rm -f /tmp/xg-gpu.sock
        setsid $B serve --engine gpu --unix /tmp/xg-gpu.sock --progsrv \
            $rtbin/xapian-progsrv "$rt" 2> "$OUT/serve-gpu-unix.log" &
        upid=$!
        echo "remote :$B connect /tmp/xg-gpu.sock" > /tmp/xg-gpu.stub
        # ... and one whose waiting thread sleeps at once (--gpu-spin 0).
        rm -f /tmp/xg-gpu0.sock
        setsid $B serve --engine gpu --gpu-spin 0 --unix /tmp/xg-gpu0.sock --progsrv \
            $rtbin/xapian-progsrv "$rt" 2> "$OUT/serve-gpu-unix0.log" &
        u0pid=$!
        echo "remote :$B connect /tmp/xg-gpu0.sock" > /tmp/xg-gpu0.stub
        for i in $(seq 100); do
            grep -q ready "$OUT/serve-gpu.log" && grep -q ready "$OUT/serve-auto.log" &&
                grep -q ready "$OUT/serve-gpu-unix.log" &&
                grep -q ready "$OUT/serve-gpu-unix0.log" && break
            sleep 0.2
        done
        note "servebench: $(grep ready "$OUT/serve-gpu.log")"
        # The engine itself, one query at a time and with 64 threads (the
        # figures serve is held to: its latency plus 0.2 ms over a Unix
        # socket, 80% of its throughput at 64 clients).
        for op in or and; do
            $B bench --db "$rt" --queries /tmp/xg-sq.tsv -k 10 --op $op \
                --batch 1 --threads 1 --engines gpu > "$OUT/engine1-$op.log" 2>&1
            $B bench --db "$rt" --queries /tmp/xg-sq.tsv -k 10 --op $op \
                --threads 64 --engines gpu > "$OUT/engine64-$op.log" 2>&1
            # The first "gpu" row is the timing table's (the routing
            # table's follows).
            note "engine gpu $op: one at a time $(grep -m1 -E '^gpu ' "$OUT/engine1-$op.log" | awk '{print $3" q/s, p50 "$5" ms"}'); 64 threads $(grep -m1 -E '^gpu ' "$OUT/engine64-$op.log" | awk '{print $3" q/s"}')"
        done
        for op in or and; do
            $CT $BD/tests/bench_remote --queries /tmp/xg-sq.tsv --op $op --clients 1 \
                serve-gpu-unix=/tmp/xg-gpu.stub serve-gpu-tcp=127.0.0.1:42002 \
                serve-gpu-unix-nospin=/tmp/xg-gpu0.stub \
                2>&1 | tee -a "$OUT/servebench.log" "$SUMMARY"
        done
        # Each connection warm first (20 queries), as a long-running
        # application's is.
        for op in or and; do
            $CT $BD/tests/bench_remote --queries /tmp/xg-sq.tsv --op $op --warmup 20 \
                --clients ${XG_CLIENTS:-1,16,64} tcpsrv=127.0.0.1:42001 \
                serve-gpu=127.0.0.1:42002 serve-auto=127.0.0.1:42003 \
                2>&1 | tee -a "$OUT/servebench.log" "$SUMMARY"
        done
        # A connection per search, as Omega's CGI or a PHP page makes.
        for op in or and; do
            $CT $BD/tests/bench_remote --queries /tmp/xg-sq.tsv --op $op --max 1000 \
                --connect-each --clients 1,16 tcpsrv=127.0.0.1:42001 \
                serve-auto=127.0.0.1:42003 2>&1 | sed 's/^/connect each: /' \
                | tee -a "$OUT/servebench.log" "$SUMMARY"
        done
        # Match counts too: stock counts every match (check_at_least = the
        # database's size), so its counts are exact and must equal serve's.
        for op in or and; do
            $CT $BD/tests/bench_remote --queries /tmp/xg-sq.tsv --op $op --max 1000 \
                --clients 16 --exact-counts tcpsrv=127.0.0.1:42001 \
                serve-gpu=127.0.0.1:42002 2>&1 | sed 's/^/exact counts: /' \
                | tee -a "$OUT/servebench.log" "$SUMMARY"
        done
        # python3-xapian applications: one process per client (Debian's
        # Python 3.11 and bindings); the digests are bench_remote.cc's.
        # Processes compete with the servers for the cores, and one pass
        # at 64 of them moved by 2x between passes: $XG_PY_PASSES (3),
        # in turns.
        # One client gets $XG_SQ1 queries (6000): at AND's ~8,000 q/s the
        # 2,000 of the rest last a quarter of a second, too short to tell
        # the servers apart from a pause of the machine.
        head -${XG_SQ1:-6000} .device-carry/realtext/trec-tb-2005-efficiency.tsv > /tmp/xg-sq1.tsv
        if debian_python; then
            for pass in $(seq ${XG_PY_PASSES:-3}); do
                for op in or and; do
                    for c in $(echo ${XG_CLIENTS:-1,16,64} | tr , ' '); do
                        qf=/tmp/xg-sq.tsv
                        [ "$c" = 1 ] && qf=/tmp/xg-sq1.tsv
                        $CT $PY tests/bench_remote.py --queries $qf --op $op \
                            --warmup 20 --clients $c py-tcpsrv=127.0.0.1:42001 \
                            py-serve-auto=127.0.0.1:42003 2>&1 | sed "s/^/pass $pass: /" \
                            | tee -a "$OUT/servebench.log" "$SUMMARY"
                    done
                done
            done
        fi
        kill -TERM $gpid $apid $upid $u0pid
        wait $gpid $apid $upid $u0pid
        kill -TERM $tpid
        note "serve-gpu $(grep -o 'routes:.*' "$OUT/serve-gpu.log")"
        note "serve-auto $(grep -o 'routes:.*' "$OUT/serve-auto.log")"
        note "serve-gpu-unix $(grep -o 'routes:.*' "$OUT/serve-gpu-unix.log")"
        note "serve-auto $(grep -o 'spare children:.*' "$OUT/serve-auto.log")"
        note "servebench: $(( $(date +%s) - t )) s"
        ;;
    servebatches)
        prepare_collections 0 rt || exit 1
        rtbin=$PWD/.xapian-rt/usr/bin
        head -${XG_SQ:-2000} .device-carry/realtext/trec-tb-2005-efficiency.tsv > /tmp/xg-sq.tsv
        port=42100
        for spec in $(echo "${XG_SB_RUNS:-or:16,or:64,and:64}" | tr , ' '); do
            op=${spec%:*}
            clients=${spec#*:}
            port=$((port + 1))
            log=$OUT/servebatches-$op-$clients.log
            $B serve --engine gpu --port $port --host 127.0.0.1 ${XG_SB_OPTS:-} \
                --progsrv $rtbin/xapian-progsrv "$rt" 2> "$log" &
            pid=$!
            for i in $(seq 100); do grep -q ready "$log" && break; sleep 0.1; done
            $CT $BD/tests/bench_remote --queries /tmp/xg-sq.tsv --op $op \
                --clients $clients serve-gpu=127.0.0.1:$port 2>&1 | tee -a "$SUMMARY"
            kill -TERM $pid
            wait $pid
            note "    $(grep -o 'gpu batches.*' "$log")"
        done
        ;;
    serveauto)
        # serve --engine auto's planner settings against xapian-tcpsrv on
        # one operator ($XG_SA_OP, and): each variant ($XG_SA_VARIANTS,
        # NAME:ENV:OPTION,...; ENV and OPTION may be empty or - for none)
        # a server of its own, so that its route counts are this
        # operator's alone; C++ clients 1, 16, 64, then $XG_PY_PASSES
        # passes of Python at 1 ($XG_SQ1 queries) and 64 processes.
        t=$(date +%s)
        prepare_collections 0 rt || exit 1
        debian_python || { note "serveauto: no Debian Python"; exit 1; }
        rtbin=$PWD/.xapian-rt/usr/bin
        op=${XG_SA_OP:-and}
        head -${XG_SQ:-2000} .device-carry/realtext/trec-tb-2005-efficiency.tsv > /tmp/xg-sq.tsv
        head -${XG_SQ1:-6000} .device-carry/realtext/trec-tb-2005-efficiency.tsv > /tmp/xg-sq1.tsv
        setsid $rtbin/xapian-tcpsrv --port 42201 --interface 127.0.0.1 "$rt" \
            > "$OUT/sa-tcpsrv.log" 2>&1 &
        pids=$!
        specs="tcpsrv=127.0.0.1:42201"
        port=42201
        for v in $(echo "${XG_SA_VARIANTS:-auto:-:-,nopressure:XG_NO_PRESSURE=1:-}" | tr , ' '); do
            name=${v%%:*}; rest=${v#*:}; env=${rest%%:*}; opt=${rest#*:}
            [ "$env" = - ] && env=
            [ "$opt" = - ] && opt=
            port=$((port + 1))
            setsid env $env $B serve --engine auto --port $port --host 127.0.0.1 \
                ${opt//_/ } --progsrv $rtbin/xapian-progsrv "$rt" 2> "$OUT/sa-$name.log" &
            pids="$pids $!"
            specs="$specs $name=127.0.0.1:$port"
            for i in $(seq 100); do grep -q ready "$OUT/sa-$name.log" && break; sleep 0.2; done
        done
        for rep in $(seq ${XG_SA_REPS:-1}); do
            $CT $BD/tests/bench_remote --queries /tmp/xg-sq.tsv --op $op ${XG_SA_WARMUP:+--warmup $XG_SA_WARMUP} \
                --clients ${XG_CLIENTS:-1,16,64} $specs 2>&1 \
                | tee -a "$OUT/serveauto.log" "$SUMMARY"
        done
        for pass in $(seq ${XG_PY_PASSES:-3}); do
            $CT $PY tests/bench_remote.py --queries /tmp/xg-sq1.tsv --op $op --clients 1 \
                $(echo $specs | sed 's/\([^ =]*\)=/py-\1=/g') 2>&1 | sed "s/^/pass $pass: /" \
                | tee -a "$OUT/serveauto.log" "$SUMMARY"
            $CT $PY tests/bench_remote.py --queries /tmp/xg-sq.tsv --op $op --clients 64 \
                $(echo $specs | sed 's/\([^ =]*\)=/py-\1=/g') 2>&1 | sed "s/^/pass $pass: /" \
                | tee -a "$OUT/serveauto.log" "$SUMMARY"
        done
        kill -TERM $pids
        wait $pids
        for f in "$OUT"/sa-*.log; do
            grep -q routes "$f" && note "$(basename $f .log): $(grep -o 'routes:.*' "$f"); $(grep -o 'gpu batches: [^;]*' "$f")"
        done
        note "serveauto: $(( $(date +%s) - t )) s"
        ;;
    serve)
        t=$(date +%s)
        debian_python || { note "serve: no Debian Python"; exit 1; }
        PYTHONUNBUFFERED=1 $PY tests/serve_test.py --bin "$B" \
            --sample tests/sample/cranfield --ir-data .device-carry/ir-data \
            --work /tmp/xg-serve --engine gpu 2>&1 | tee "$OUT/serve.log"
        rc=$?
        note "serve --engine gpu: $(grep -c '^ok' "$OUT/serve.log") ok, $(grep -c '^FAIL' "$OUT/serve.log") failed, exit $rc ($(( $(date +%s) - t )) s)"
        grep -E '^(ok|FAIL)' "$OUT/serve.log" | grep -E 'shard|routes|FAIL' \
            | cut -c1-160 | sed 's/^/    /' | tee -a "$SUMMARY"
        ;;
    peers)
        # peers [syn N]: the real-text collection, or the N-doc synthetic
        # one (its text from `synth text`, searched without stemming).
        t=$(date +%s)
        coll=rt pdir=$OUT stem=porter2 ourstem=english qsrc=.device-carry/realtext/trec-tb-2005-efficiency.tsv
        if [ "${1:-}" = syn ]; then
            coll=syn$2 pdir=$OUT/syn stem=none ourstem=none qsrc=/tmp/xg-q.tsv
            shift 2
            prepare_collections "${coll#syn}" syn || exit 1
            pdb=$db docs=/tmp/xg-$coll.tsv
            # The peers' text; ours search the Xapian database alone.
            [ -f "$docs" ] || [ "${XG_PEERS:-both}" = ours ] ||
                $B synth text --docs "${coll#syn}" "$docs" || exit 1
            mkdir -p "$pdir"
        else
            prepare_collections 0 rt || exit 1
            pdb=$rt docs=/tmp/realtext.tsv
            [ -f "$docs" ] || xz -dc .device-carry/realtext/all.tsv.xz > "$docs"
        fi
        note "prepared $coll: $(( $(date +%s) - t )) s"
        part=${XG_PEERS:-both}
        if [ $part != ours ]; then
            rm -rf /tmp/site
            python3 -m pip install -q --no-index --no-deps --no-compile \
                --no-cache-dir --target /tmp/site .whl/*.whl \
                > "$OUT/peers-pip.log" 2>&1 || { note "peers: wheels do not install (.whl carried?)"; exit 1; }
            # PISA's module needs the tbb wheel's libtbb.so.2, a data
            # file pip --target does not always place: taken from the
            # wheel itself.
            python3 -c 'import glob, zipfile
z = zipfile.ZipFile(glob.glob(".whl/tbb-*.whl")[0])
n = [n for n in z.namelist() if n.endswith("/libtbb.so.2")][0]
open("/tmp/site/libtbb.so.2", "wb").write(z.read(n))' ||
                { note "peers: no libtbb.so.2 (wheel tbb)"; exit 1; }
        fi
        peers_py() {
            PYTHONPATH=/tmp/site LD_LIBRARY_PATH=/tmp/site:$LD_LIBRARY_PATH \
                $CT python3 tests/gpu/peers.py --docs "$docs" --stem $stem \
                --work /tmp/xg-peers-$coll "$@"
        }
        if [ $part = index ]; then
            peers_py --queries "$qsrc" --index-only > "$pdir/peers-index.log" 2>&1
            note "    peers' indexes, $coll (exit $?): $(grep '^peer=' "$pdir/peers-index.log" | tr '\n' ';')"
            note "peers: $(( $(date +%s) - t )) s"
            continue
        fi
        # bench starts its own `serve --engine auto` (engine server),
        # which relays to xapian-progsrv.
        export PATH=$PWD/.xapian-rt/usr/bin:$PATH
        note "peers, $coll (q/s, p50 ms, p99 ms; ours: the median of ${XG_PREPEAT:-3} passes, every MSet against stock's):"
        for n in ${XG_PTHREADS:-1 16 64}; do
            for op in ${XG_POPS:-or and}; do
                # Enough queries for about a second of stock's time.
                case $coll-$op-$n in
                    rt-or-1) qn=${XG_PQ1_OR:-2000} ;;
                    rt-and-1) qn=${XG_PQ1_AND:-10000} ;;
                    rt-or-*) qn=${XG_PQ_OR:-10000} ;;
                    rt-*) qn=${XG_PQ_AND:-50000} ;;
                    *-or-1) qn=${XG_PQ1_OR:-200} ;;
                    *-and-1) qn=${XG_PQ1_AND:-500} ;;
                    *-or-*) qn=${XG_PQ_OR:-2000} ;;
                    *) qn=${XG_PQ_AND:-4000} ;;
                esac
                qf=/tmp/xg-pq-$coll-$op-$n.tsv
                head -$qn "$qsrc" > $qf
                batch=256
                [ $n = 1 ] && batch=1
                for k in 10 1000; do
                    [ $part = theirs ] && break
                    log="$pdir/peers-ours-$op-$k-$n.log"
                    $CT $B bench --db "$pdb" --queries $qf -k $k --op $op \
                        --stem $ourstem --threads $n --batch $batch \
                        --repeat ${XG_PREPEAT:-3} \
                        --engines xapian,gpu,plugin,server \
                        --json="$pdir/peers-ours-$op-$k-$n.json" > "$log" 2>&1
                    rc=$?
                    note "    $op k $k threads $n, $qn queries (exit $rc): $(awk '/^routing/ {exit} $1 ~ /^(xapian|gpu|plugin|server)$/ && $2 ~ /^[0-9]+$/ {printf "%s %s %s %s; ", $1, $3, $5, $6}' "$log")$(grep -o "stock's top [0-9]* differs[^,]*" "$log" | head -1)"
                done
                [ $part = ours ] && continue
                peers_py --queries $qf --queries-n $qn --ops $op --threads $n \
                    --json "$pdir/peers-$op-$n.json" > "$pdir/peers-$op-$n.log" 2>&1
                note "    peers $op threads $n (exit $?): $(grep '^peer=' "$pdir/peers-$op-$n.log" | grep -v what=index | sed 's/what=search //' | tr '\n' ';')"
            done
        done
        [ $part = ours ] ||
            note "    index: $(grep -h '^peer=.*what=index' "$pdir"/peers-*.log | sort -u | tr '\n' ';')"
        note "    Xapian: $(du -sb "$pdb" | cut -f1) bytes with the GPU index, which is $(stat -c %s "$pdb/xapian-gpu.idx") bytes"
        python3 tests/gpu/peers_plot.py --dir "$pdir" --out-dir "$pdir" \
            --prefix peers-${coll%%[0-9]*} || note "peers: no plots"
        note "peers: $(( $(date +%s) - t )) s"
        ;;
    soak)
        q=100000
        case ${1:-} in [0-9]*) q=$1; shift;; esac
        t=$(date +%s)
        $BD/tests/test_soak tests/sample/cranfield /tmp/xg-soak 16 "$q" \
            --device > "$OUT/soak-device.log" 2>&1
        rc=$?
        note "soak on the device, 16 x $q: exit $rc ($(( $(date +%s) - t )) s)"
        grep -E '^(ok|FAIL|routes|resident)' "$OUT/soak-device.log" | head -8 \
            | sed 's/^/    /' | tee -a "$SUMMARY"
        ;;
    mgprep)
        which=$1; shift
        n=; [ "$which" = syn ] && { n=$1; shift; }
        multigpu_shards "$which" $n || { note "mgprep: failed"; exit 1; }
        ;;
    multigpu)
        which=$1; shift
        n=; [ "$which" = syn ] && { n=$1; shift; }
        t=$(date +%s)
        multigpu_shards "$which" $n || { note "multigpu: no shards"; exit 1; }
        rtbin=$PWD/.xapian-rt/usr/bin
        head -${XG_SQ:-3000} "$mgq" > /tmp/xg-mgq.tsv
        for g in $(seq 1 "$ngpu"); do
            pids=; tcp=; srv=; one=
            for s in $(seq 0 $(( g - 1 ))); do
                sh=$mg/shard$s; [ "$ngpu" -ge 2 ] || sh=$mg
                # Its own session: on SIGTERM xapian-tcpsrv kills its
                # process group, which would otherwise be this script.
                setsid $rtbin/xapian-tcpsrv --port $(( 43000 + 10 * g + s )) --interface 127.0.0.1 \
                    "$sh" > "$OUT/mg-tcpsrv-$g-$s.log" 2>&1 &
                pids="$pids $!"
                CUDA_VISIBLE_DEVICES=$s $B serve --engine ${XG_MG_ENGINE:-gpu} --port $(( 43100 + 10 * g + s )) \
                    --host 127.0.0.1 --progsrv $rtbin/xapian-progsrv "$sh" \
                    2> "$OUT/mg-serve-$g-$s.log" &
                pids="$pids $!"
                tcp="$tcp,127.0.0.1:$(( 43000 + 10 * g + s ))"
                srv="$srv,127.0.0.1:$(( 43100 + 10 * g + s ))"
                if [ "$g" -ge 2 ]; then
                    CUDA_VISIBLE_DEVICES=0 $B serve --engine ${XG_MG_ENGINE:-gpu} --port $(( 43200 + 10 * g + s )) \
                        --host 127.0.0.1 --progsrv $rtbin/xapian-progsrv "$sh" \
                        2> "$OUT/mg-serve1-$g-$s.log" &
                    pids="$pids $!"
                    one="$one,127.0.0.1:$(( 43200 + 10 * g + s ))"
                fi
            done
            whole=
            if [ "$g" = 1 ] && [ "$ngpu" -ge 2 ]; then
                # Strong scaling's baseline: the whole collection on one GPU.
                setsid $rtbin/xapian-tcpsrv --port 43300 --interface 127.0.0.1 \
                    "$src" > "$OUT/mg-tcpsrv-whole.log" 2>&1 &
                pids="$pids $!"
                CUDA_VISIBLE_DEVICES=0 $B serve --engine ${XG_MG_ENGINE:-gpu} --port 43301 \
                    --host 127.0.0.1 --progsrv $rtbin/xapian-progsrv "$src" \
                    2> "$OUT/mg-serveW-$g-0.log" &
                pids="$pids $!"
                whole="tcpsrv-whole=127.0.0.1:43300 serve-whole-1gpu=127.0.0.1:43301"
            fi
            want=$(( g >= 2 ? 2 * g : g + (ngpu >= 2) ))
            for i in $(seq 150); do
                [ $(cat "$OUT"/mg-serve*-$g-*.log | grep -c ready) -ge $want ] && break
                sleep 0.2
            done
            sleep 1
            note "multigpu $which$n: $g GPU(s), $(grep -h -o 'ready.*' "$OUT/mg-serve-$g-0.log")"
            for op in or and; do
                $CT $BD/tests/bench_remote --queries /tmp/xg-mgq.tsv --op $op \
                    --stem $mgstem --clients ${XG_CLIENTS:-1,16,64} \
                    tcpsrv-x$g=${tcp#,} serve-${g}gpu=${srv#,} \
                    ${one:+serve-$g-on-1gpu=${one#,}} $whole \
                    2>&1 | tee -a "$OUT/multigpu.log" "$SUMMARY"
            done
            kill -TERM $pids 2>/dev/null
            wait $pids 2>/dev/null
            for f in "$OUT"/mg-serve*-$g-*.log; do
                note "    $(basename "$f" .log): $(grep -o 'routes:.*' "$f")"
            done
        done
        note "multigpu $which$n: $(( $(date +%s) - t )) s"
        ;;
    *) echo "unknown stage $stage"; exit 2;;
    esac
done
# The device tool brings back only a few files: every log but the summary
# travels in one archive.
(cd "$OUT" && ls | grep -v -e '^summary.txt$' -e '^logs.tar.xz$' > /tmp/xg-logs.list &&
    [ -s /tmp/xg-logs.list ] && tar -cJf logs.tar.xz -T /tmp/xg-logs.list &&
    xargs rm -rf < /tmp/xg-logs.list)
echo "==== summary"
cat "$SUMMARY"
