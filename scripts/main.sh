#!/usr/bin/env bash
# Installs what is missing (oneDNN included, as the comparison baseline), builds, and runs the
# main job: the benchmark suite (`convgrad bench`: real network layers, the three backward ops
# and their forward siblings, each checked against the reference, then timed side by side with
# oneDNN), after the DCGAN example (about a second).
#   scripts/main.sh           the whole suite (a few minutes)
#   scripts/main.sh --quick   three small suite layers, checked, with oneDNN (under a minute):
#                             the smoke test CI runs so that this command cannot break unseen
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
case "${1:-}" in
  "") ;;
  --quick) quick=1 ;;
  *) echo "usage: scripts/main.sh [--quick]" >&2; exit 2 ;;
esac
scripts/install-deps.sh --with-onednn
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
./build/examples/dcgan_backward
./build/tools/convgrad info
if ((quick)); then
  ./build/tools/convgrad bench --require-onednn --budget-ms=100 --json=build/bench-quick.json \
    --layers=resnet50_res4_3x3,dcgan_g_256to128,unet3d_upconv_2x2x2s2 --mb=2
else
  ./build/tools/convgrad bench --require-onednn --json=build/bench.json
fi
