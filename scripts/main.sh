#!/usr/bin/env bash
# Installs what is missing (oneDNN included, as the comparison baseline), builds, and runs the
# main job: the benchmark suite (`convgrad bench`: real network layers, the three backward ops
# and their forward siblings, each checked against the reference, then timed), after the DCGAN
# example (about a second).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --with-onednn
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
./build/examples/dcgan_backward
./build/tools/convgrad info
./build/tools/convgrad bench --json=build/bench.json
