#!/usr/bin/env bash
# Installs a built convgrad into a temporary prefix and uses it from outside the tree, as another
# project would: the CLI, a consumer program built with find_package(convgrad), and the same
# program built with `pkg-config --cflags --libs convgrad`. With --shared, also checks the
# shared library: its SONAME carries the version and it exports the public API only.
#   usage: check_install.sh BUILD_DIR [--shared]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
shared=0; [[ "${2:-}" == "--shared" ]] && shared=1
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
fail() { echo "check_install: FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$prefix" >"$work/install.log"
for h in convgrad.hpp graph.hpp version.hpp export.hpp; do
  [[ -f "$prefix/include/convgrad/$h" ]] || fail "header include/convgrad/$h not installed"
done
[[ -x "$prefix/bin/convgrad" ]] || fail "the convgrad CLI is not installed"
version=$(sed -n 's/^#define CONVGRAD_VERSION_STRING "\(.*\)"$/\1/p' "$prefix/include/convgrad/version.hpp")
[[ -n "$version" ]] || fail "no CONVGRAD_VERSION_STRING in the installed version.hpp"
got=$("$prefix/bin/convgrad" --version)
[[ "$got" == "convgrad $version" ]] || fail "convgrad --version printed '$got', want 'convgrad $version'"
echo "installed CLI: $got"

if ((shared)); then
  lib=$(find "$prefix" -name 'libconvgrad.so.*.*.*' | head -n 1)
  [[ -n "$lib" ]] || fail "no versioned libconvgrad.so installed"
  soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
  want_soname="libconvgrad.so.${version%.*}"
  [[ "$soname" == "$want_soname" ]] || fail "SONAME is '$soname', want '$want_soname'"
  exported=$(nm -DC --defined-only "$lib")
  internal=$(grep -c 'convgrad::detail' <<<"$exported" || true)
  ((internal == 0)) || fail "$internal convgrad::detail symbols exported: $(grep -m3 'convgrad::detail' <<<"$exported")"
  public=$(grep -c ' convgrad::' <<<"$exported" || true)
  ((public > 20)) || fail "only $public convgrad:: symbols exported"
  echo "shared library: $(basename "$lib"), SONAME $soname, $public public symbols, no internal ones"
else
  [[ -n "$(find "$prefix" -name libconvgrad.a)" ]] || fail "no libconvgrad.a installed"
fi
libdir=$(dirname "$(find "$prefix" -name 'libconvgrad.*' | head -n 1)")
# The benchdnn rewrite parser belongs to the CLI (tools/rewrite.*), not to the library.
for l in $(find "$prefix" -name 'libconvgrad.a' -o -name 'libconvgrad.so.*.*.*'); do
  syms=$(nm -C "$l" 2>/dev/null || true)  # (a stripped shared library has no symbol table)
  if grep -q 'apply_rewrite' <<<"$syms"; then fail "$(basename "$l") carries the rewrite parser (apply_rewrite)"; fi
done
# The consumer uses the compiler convgrad was built with: the OpenMP flags in the package
# (-fopenmp for g++, -fopenmp=libomp for clang) belong to that compiler.
cxx=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
[[ -n "$cxx" ]] || cxx=c++

echo "--- consumer with find_package(convgrad)"
cmake -S "$here/consumer" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Release >"$work/consumer-configure.log" || { cat "$work/consumer-configure.log"; fail "configure"; }
cmake --build "$work/cmake-build" >"$work/consumer-build.log" || { cat "$work/consumer-build.log"; fail "build"; }
"$work/cmake-build/consumer"

echo "--- consumer with pkg-config"
pc_dir=$(dirname "$(find "$prefix" -name convgrad.pc | head -n 1)")
flags=$(PKG_CONFIG_PATH="$pc_dir" pkg-config --cflags --libs convgrad)
echo "pkg-config --cflags --libs convgrad: $flags"
# shellcheck disable=SC2086  # the flags are words
# The public headers need C++17, which clang 14 does not default to (the .pc file leaves the
# standard to the consumer: a -std in it would override a newer one of the consumer's).
"$cxx" -std=c++17 -O1 "$here/consumer/main.cpp" $flags -o "$work/pc-consumer"
LD_LIBRARY_PATH="$libdir" "$work/pc-consumer"
echo "check_install: pass"
