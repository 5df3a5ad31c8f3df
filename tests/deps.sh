#!/bin/sh
# Install what building and testing xapian-gpu needs on Debian bookworm
# (run as root).  Idempotent: skips apt when everything is present.
set -e
need=""
for p in build-essential g++ meson ninja-build pkg-config libxapian-dev \
         xapian-tools xapian-omega python3 python3-xapian \
         clang libclang-rt-dev; do
    dpkg -s "$p" >/dev/null 2>&1 || need="$need $p"
done
if [ -n "$need" ]; then
    echo "installing:$need"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends $need >/dev/null
fi
