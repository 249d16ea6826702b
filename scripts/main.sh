#!/usr/bin/env bash
# Installs what is missing (oneDNN included, as the comparison baseline), builds, and runs the
# main job: the DCGAN example.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --with-onednn
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
./build/examples/dcgan_backward
