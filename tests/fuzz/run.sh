#!/bin/sh
# Build the libFuzzer targets with ASan+UBSan (clang) and run each over its
# corpus for SECONDS, all four at once.  New inputs go to WORK/<target>
# (the corpus in tests/fuzz/corpus is only read); a crash, leak, timeout or
# sanitizer report leaves WORK/<target>-crash-* and fails the run.  Last, one
# line per target: seconds, executions, new inputs kept, findings.
#   tests/fuzz/run.sh SECONDS [WORK]     (CI: 30; once: 3600 or more)
# Environment: XG_FUZZ_BUILD (build folder, default build-fuzz),
# XG_FUZZ_NICE (nice level for long runs beside other work, default 0).
set -e
cd "$(dirname "$0")/../.."
secs=${1:?usage: tests/fuzz/run.sh SECONDS [WORK]}
work=${2:-${TMPDIR:-/tmp}/xg-fuzz}
build=${XG_FUZZ_BUILD:-build-fuzz}
targets="index qlm_table text queries"
[ -f "$build/build.ninja" ] || \
    CC=clang CXX=clang++ meson setup "$build" -Dgpu=disabled -Dfuzz=true \
        -Db_sanitize=address,undefined -Db_lundef=false \
        --buildtype=debugoptimized >/dev/null
ninja -C "$build" $(for t in $targets; do printf 'tests/fuzz/fuzz_%s ' "$t"; done)
mkdir -p "$work"
for t in $targets; do
    mkdir -p "$work/$t"
    rm -f "$work/$t"-crash-* "$work/$t"-leak-* "$work/$t"-timeout-* \
          "$work/$t"-oom-*
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    LSAN_OPTIONS=suppressions=$PWD/tests/fuzz/lsan.supp \
        nice -n "${XG_FUZZ_NICE:-0}" "$build/tests/fuzz/fuzz_$t" \
        -max_total_time="$secs" -timeout=30 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$work/$t-" \
        "$work/$t" "tests/fuzz/corpus/$t" >"$work/$t.log" 2>&1 &
done
fail=0
wait || true
printf '%-10s %8s %12s %8s %s\n' target seconds executions new findings
for t in $targets; do
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$t.log")
    took=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$work/$t.log")
    found=$(ls "$work/$t"-* 2>/dev/null | grep -c -- '-\(crash\|leak\|timeout\|oom\)-' || true)
    printf '%-10s %8s %12s %8s %s\n' "$t" "${took:-?}" "${runs:-?}" \
        "$(ls "$work/$t" | wc -l)" "$found"
    if [ "$found" != 0 ] || [ -z "$runs" ]; then
        fail=1
        echo "FAIL fuzz_$t: see $work/$t.log" >&2
        grep -m3 -E 'ERROR|bad refusal|differ|SUMMARY' "$work/$t.log" >&2 || true
    fi
done
exit $fail
