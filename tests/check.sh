#!/bin/sh
# The tests: install dependencies, build warning-free, run every suite
# (cpu, ab, bad; gpu tests skip without a device).
set -e
cd "$(dirname "$0")/.."
sh tests/deps.sh
[ -f build-check/build.ninja ] || \
    meson setup build-check --werror >/dev/null
ninja -C build-check
meson test -C build-check --print-errorlogs --num-processes 2
