// Counters shared by the benchmarks: GFLOP/s over wall time, and GFLOP per CPU-second of the
// whole process (all threads), which stays meaningful when other jobs share the cores.
#pragma once

#include <benchmark/benchmark.h>

#include <ctime>

namespace convgrad::bench {

inline double process_cpu_seconds() {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

/// Times `run` in the benchmark loop and sets the counters for `flops` per run.
template <class F>
void timed_loop(benchmark::State &state, double flops, F &&run) {
    run();  // warm-up
    const double cpu0 = process_cpu_seconds();
    for (auto _ : state) run();
    const double cpu = process_cpu_seconds() - cpu0;
    state.counters["GFLOP/s"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
    state.counters["GFLOP/cpu_s"] = cpu > 0 ? flops * 1e-9 * double(state.iterations()) / cpu : 0;
}

}  // namespace convgrad::bench
