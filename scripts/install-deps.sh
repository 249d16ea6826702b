#!/usr/bin/env bash
# Installs the Debian 12 packages convgrad needs to build, test and benchmark (only the missing
# ones). With --with-onednn also oneDNN 2.6.3, the baseline the benchmark compares against;
# with --hardening also what the sanitizer, clang and fuzzing jobs need; with --ccache, ccache
# (CI: .ci/run). Options combine.
set -euo pipefail
pkgs=(g++ cmake make pkg-config libgtest-dev libbenchmark-dev nlohmann-json3-dev libcli11-dev)
# The Python module and its tests/benchmark (Debian's /usr/bin/python3).
pkgs+=(python3-dev pybind11-dev libdlpack-dev python3-numpy python3-torch python3-pytest
       python3-matplotlib python3-setuptools python3-venv python3-pip)
for opt in "$@"; do
  case $opt in
    # Debian's dnnl-config.cmake looks for OpenCL (oneDNN's GPU runtime) and fails without its
    # headers, which libdnnl-dev only recommends.
    --with-onednn) pkgs+=(libdnnl-dev ocl-icd-opencl-dev) ;;
    # clang 14 with its sanitizer and libFuzzer runtimes and LLVM's OpenMP (with libarcher, its
    # ThreadSanitizer support), for scripts/ci-hardening.sh.
    --hardening) pkgs+=(clang-14 libclang-rt-14-dev libomp-14-dev) ;;
    --ccache) pkgs+=(ccache) ;;
    *) echo "install-deps.sh: unknown option '$opt' (--with-onednn, --hardening, --ccache)" >&2; exit 2 ;;
  esac
done
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
