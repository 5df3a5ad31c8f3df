#!/bin/sh
# The tests: install dependencies, build warning-free, run every suite
# (cpu, ab, bad; gpu tests skip without a device), then the same code
# under AddressSanitizer and UndefinedBehaviorSanitizer: the unit tests
# and the command-line suites that reach the index reader (with its
# fuzzer), the text readers and the weight and n-gram paths; last the
# soak (test_soak.c) with leak detection, and the libFuzzer targets of
# tests/fuzz (clang, ASan+UBSan), 15 s each.  The
# slowest suites (the A/B comparisons, serve, the emulated GPU pipelines)
# run only in the first build, to keep the whole within CI's time.
set -e
cd "$(dirname "$0")/.."
sh tests/deps.sh
[ -f build-check/build.ninja ] || \
    meson setup build-check --werror >/dev/null
ninja -C build-check
meson test -C build-check --print-errorlogs --num-processes 2

[ -f build-san/build.ninja ] || \
    meson setup build-san -Dgpu=disabled -Db_sanitize=address,undefined \
        -Db_lundef=false --buildtype=debug >/dev/null
ninja -C build-san
# The n-gram test on adi only here: cacm under ASan was 4 of the
# sanitizer run's 10 minutes, and the first build runs all three.
XG_QLM_ONLY=adi \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ASAN_OPTIONS=detect_leaks=0 \
    meson test -C build-san --print-errorlogs --num-processes 2 \
    crc32c pfor bloom listmeta list_cache dict impact wire synth wt_plan \
    wt_dict cost_model excess threads staging big_alloc cpu_load ab_report \
    engine_faults router bad_input cli qlm weight_db qlm_search vocab \
    positions phrase
# The soak with LeakSanitizer on: 16 threads through one context, GPU
# faults injected throughout (the first build ran 16 x 3,000 queries).
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ASAN_OPTIONS=detect_leaks=1 \
    build-san/tests/test_soak tests/sample/cranfield build-san/soak-work 16 600

sh tests/fuzz/run.sh 15 "$PWD/build-fuzz/work"
