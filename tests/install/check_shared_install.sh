#!/usr/bin/env bash
# Builds libconvgrad as a shared library (the library and the CLI only) in BUILD_DIR and runs
# check_install.sh --shared on it.   usage: check_shared_install.sh BUILD_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cmake -S "$root" -B "$1" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON -DCONVGRAD_BUILD_TESTS=OFF \
  -DCONVGRAD_BUILD_BENCH=OFF -DCONVGRAD_BUILD_EXAMPLES=ON >/dev/null
cmake --build "$1" -j"$(nproc)"
"$1/examples/dcgan_backward" >/dev/null  # the example links the shared library: public API only
"$here/check_install.sh" "$1" --shared
