#!/usr/bin/env bash
# CI hardening jobs (issue 11), after scripts/test.sh. Each step prints its name and duration:
#   asan_ubsan  clang 14 -O1 with AddressSanitizer + UndefinedBehaviorSanitizer on everything
#               (library, reference, the kernel objects this CPU runs, tests, tool; see the
#               uninstrumented units below), plus libFuzzer's
#               coverage instrumentation so that the fuzz step reuses this build: every test
#               except the oneDNN harness/round-trip sweeps and the address-space-cap tests (ASan's
#               shadow memory cannot live under `ulimit -v`). The kernel sweep runs under the
#               lowest and the highest ISA cap (the highest runs every inventory row this CPU
#               can; the caps between, label cap_between, add dispatch under those caps, which
#               scripts/test.sh checks, as it checks the AMX tests' caps, label amx_cap), and
#               every error path (API, readers, CLI) is in the set.
#   tsan        clang with ThreadSanitizer and LLVM's libomp with its TSan support (libarcher),
#               after a self-check that the setup sees a planted race between OpenMP threads:
#               the concurrency, threading and determinism tests on 2 OpenMP threads (their
#               own test binary, convgrad_thread_tests, not all 53 test files).
#   clang       clang 14 release build of the library and convgrad_tests: the same test
#               selection plus the address-space-cap tests, without the command-line tool and
#               the examples (their code runs under clang in asan_ubsan and with g++ in
#               scripts/test.sh; the full suite runs with g++ there).
#   fuzz        the four libFuzzer targets of tests/fuzz (in build-asan: ASan+UBSan on
#               everything), each for FUZZ_SECONDS (default 60) from its seed corpus, two at a
#               time.
# Usage: scripts/ci-hardening.sh [STEP...]   (default: all four, in that order)
# Build dirs: build-asan (also the fuzzers), build-tsan, build-clang. One sanitized build
# serves tests and fuzzers: a second one would cost about a quarter of the script's time.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --hardening

JOBS=${JOBS:-$(nproc)}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
CLANG=${CLANG:-clang++-14}
LLVM_LIB=/usr/lib/llvm-14/lib
# Sweeps of oneDNN's case files: long, and they exercise no error path the selection lacks.
SWEEPS='onednn_harness|run_roundtrip'
ASAN_OPTS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1

# The kernel units this CPU cannot run (their instruction sets, as the units need them): the
# sanitizer builds compile them without instrumentation, which nothing here would execute
# (src/CMakeLists.txt, CONVGRAD_UNINSTRUMENTED_ISAS). On a Zen 3 machine (AVX2) the AVX-512 and
# AVX512_BF16 units instrumented took 1031 of the ASan build's 2199 s of compiling; without, 75.
cpu_flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
cpu_has() { local f; for f; do [[ "$cpu_flags" == *" $f "* ]] || return 1; done; }
unrunnable=()
cpu_has avx2 fma f16c || unrunnable+=(avx2)
avx512=(avx512f avx512bw avx512vl avx512dq fma f16c)
cpu_has "${avx512[@]}" || unrunnable+=(avx512)
cpu_has "${avx512[@]}" avx512_bf16 || unrunnable+=(avx512_bf16)
cpu_has amx_tile amx_bf16 || unrunnable+=(amx)
echo "kernel units this CPU cannot run, not instrumented: ${unrunnable[*]:-none}"
# The AVX-512 kernels' source on the emulated vector traits (avx512_emu, test-only) is the same
# kernel source as the native AVX-512 unit's: where that one is instrumented and runs, the
# emulation adds no access or arithmetic to check, and instrumented it took 249 of the ASan
# build's 1795 s of kernel units on a Zen 4 machine. Where the CPU lacks AVX-512 it is the only
# instance of that source that runs, and stays instrumented.
uninstrumented=("${unrunnable[@]}")
[[ " ${unrunnable[*]} " == *" avx512 "* ]] || uninstrumented+=(avx512_emu)
echo "kernel units compiled without instrumentation: ${uninstrumented[*]:-none}"

# The kernel units are compiled without debug information (-g0; a report's frames in them keep
# their function names, not their lines). With line tables, clang 14 ran its debug-value
# analysis over the sanitized kernels' huge instrumented functions: on Zen 5 the AVX-512 unit
# took 1247 s of CPU with ASan, UBSan and fuzzer coverage, 463 of them in that pass alone, and
# 726 s with -g0.
# Configure flags shared by the sanitizer builds: no benchmarks or examples.
# The Python module is built and tested by the g++ build of scripts/test.sh: an instrumented or
# libomp-linked module inside Debian's Python (whose torch brings libgomp) would test the mix,
# not convgrad.
common=(-DCONVGRAD_BUILD_BENCH=OFF -DCONVGRAD_BUILD_EXAMPLES=OFF -DCONVGRAD_BUILD_PYTHON=OFF
        -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCONVGRAD_KERNEL_UNIT_FLAGS=-g0
        "-DCONVGRAD_UNINSTRUMENTED_ISAS=$(IFS=';'; echo "${uninstrumented[*]}")")

step() {
    local name=$1
    shift
    echo "=== hardening: $name"
    local t0=$SECONDS
    "$@"
    echo "=== hardening: $name done in $((SECONDS - t0)) s"
}

# -gline-tables-only: the reports' stack traces need file and line only; full debug information
# made the sanitized kernel units take about 12% longer to compile.
configure_asan() {
    local flags="-O1 -gline-tables-only -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all"
    cmake -S . -B build-asan "${common[@]}" -DCONVGRAD_BUILD_FUZZERS=ON -DCMAKE_CXX_COMPILER="$CLANG" \
        -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$flags" >/dev/null
}

asan_ubsan() {
    configure_asan
    cmake --build build-asan -j"$JOBS"
    # allocator_may_return_null: a failed allocation returns null / throws std::bad_alloc as it
    # does without ASan (the out-of-memory paths are under test), instead of ASan aborting.
    ASAN_OPTIONS=$ASAN_OPTS UBSAN_OPTIONS=print_stacktrace=1 \
        ctest --test-dir build-asan --output-on-failure -j"$JOBS" -LE "$SWEEPS|rlimit|install|cap_between|amx_cap"
}

tsan() {
    local flags="-O1 -gline-tables-only -fsanitize=thread"
    cmake -S . -B build-tsan "${common[@]}" -DCONVGRAD_BUILD_TOOLS=OFF -DCMAKE_CXX_COMPILER="$CLANG" \
        -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$flags" >/dev/null
    cmake --build build-tsan -j"$JOBS" --target convgrad_thread_tests
    # libarcher makes LLVM's OpenMP runtime announce its synchronization to TSan; with it,
    # ignore_noninstrumented_modules is Archer's documented setting (the runtime itself is not
    # instrumented; its synchronization reaches TSan through Archer). No suppressions: any
    # report fails the step.
    local env=(OMP_TOOL_LIBRARIES=$LLVM_LIB/libarcher.so OMP_NUM_THREADS=2
               TSAN_OPTIONS="ignore_noninstrumented_modules=1:halt_on_error=1:exitcode=66")
    # Self-check: the setup must see a planted race between OpenMP threads, and no false one.
    "$CLANG" $flags -fopenmp tests/sanitizers/omp_race.cpp -o build-tsan/omp_race
    env "${env[@]}" build-tsan/omp_race
    # TSan's exit code for a report is 66 (TSAN_OPTIONS above); any other code is a failure of
    # the check itself.
    local rc=0
    env "${env[@]}" build-tsan/omp_race planted >/dev/null 2>&1 || rc=$?
    if [[ $rc -ne 66 ]]; then
        echo "tsan: the planted race was not reported (exit code $rc, not 66): the TSan/OpenMP setup is blind"
        return 1
    fi
    env "${env[@]}" ARCHER_OPTIONS="verbose=1" \
        build-tsan/tests/convgrad_thread_tests --gtest_filter='Concurrency.*:Threading.*:Determinism.*'
}

clang_build() {
    cmake -S . -B build-clang -DCMAKE_BUILD_TYPE=Release -DCONVGRAD_BUILD_BENCH=OFF -DCONVGRAD_BUILD_PYTHON=OFF \
        -DCONVGRAD_BUILD_TOOLS=OFF -DCONVGRAD_BUILD_EXAMPLES=OFF -DCMAKE_CXX_COMPILER="$CLANG" >/dev/null
    cmake --build build-clang -j"$JOBS"
    ctest --test-dir build-clang --output-on-failure -j"$JOBS" -LE "$SWEEPS"
}

# One fuzzer for FUZZ_SECONDS from its seed corpus (new inputs go to $work/corpus/$t; the seeds
# in the tree are only read), its log in $work/fuzz_$t.log.
fuzz_one() {
    local t=$1 work=build-asan/fuzz
    mkdir -p $work/corpus/$t
    ASAN_OPTIONS=$ASAN_OPTS OMP_NUM_THREADS=2 \
        build-asan/tests/fuzz/fuzz_$t -max_total_time="$FUZZ_SECONDS" -rss_limit_mb=4096 \
        -timeout=30 -print_final_stats=1 -artifact_prefix=$work/crashes/fuzz_${t}- \
        $work/corpus/$t tests/fuzz/corpus/$t >$work/fuzz_$t.log 2>&1 || true
}

# The four fuzzers two at a time, one per core: the readers' fuzzers are single-threaded, and
# one after another they left a core idle for 3 of the step's 4 minutes. (fuzz_op runs its
# kernels on 2 OpenMP threads, beside fuzz_rewrite.)
fuzz() {
    configure_asan
    cmake --build build-asan -j"$JOBS" --target fuzz_json fuzz_npy fuzz_rewrite fuzz_op
    local work=build-asan/fuzz
    mkdir -p $work/crashes
    for pair in "json npy" "rewrite op"; do
        local t
        echo "--- fuzz_${pair% *} and fuzz_${pair#* } for ${FUZZ_SECONDS} s each, side by side"
        for t in $pair; do fuzz_one $t & done
        wait
        for t in $pair; do
            echo "--- fuzz_$t"
            grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|^#[0-9]+ +DONE|ERROR|SUMMARY" \
                $work/fuzz_$t.log || true
            # Failures are crashes (sanitizer reports included), leaks, out-of-memory and units
            # over -timeout. libFuzzer also saves units over 10 s as slow-unit-*: reported, not
            # failed.
            if ls $work/crashes/fuzz_${t}-slow-unit-* >/dev/null 2>&1; then
                echo "fuzz_$t: slow units (over 10 s, under the 30 s timeout): $(ls $work/crashes/fuzz_${t}-slow-unit-*)"
            fi
            local found
            found=$(find $work/crashes -name "fuzz_${t}-crash-*" -o -name "fuzz_${t}-leak-*" \
                    -o -name "fuzz_${t}-oom-*" -o -name "fuzz_${t}-timeout-*")
            if [[ -n "$found" ]]; then
                tail -n 60 $work/fuzz_$t.log
                echo "fuzz_$t found a failure: $found"
                return 1
            fi
        done
    done
}

steps=("$@")
((${#steps[@]})) || steps=(asan_ubsan tsan clang fuzz)
total0=$SECONDS
for s in "${steps[@]}"; do
    case $s in
        asan_ubsan) step asan_ubsan asan_ubsan ;;
        tsan) step tsan tsan ;;
        clang) step clang clang_build ;;
        fuzz) step fuzz fuzz ;;
        *) echo "unknown step '$s' (asan_ubsan, tsan, clang, fuzz)"; exit 2 ;;
    esac
done
echo "=== hardening: all steps done in $((SECONDS - total0)) s"
