#include "fma_peak.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>

#include "dispatch/cpu_features.hpp"

namespace convgrad::bench {

volatile float fma_sink;

double measure_fma_peak_gflops(int threads) {
    using namespace convgrad::detail;
    // What the hardware and OS support (CPUID + XGETBV), not capped by CONVGRAD_MAX_ISA.
    const cpu_features have = detected_features();
    if (!have.contains(features_of(cpu_isa::avx2))) return 0;
    const bool avx512 = have.contains(features_of(cpu_isa::avx512));
    auto loop = avx512 ? fma_loops::fma_loop_avx512 : fma_loops::fma_loop_avx2;
    const double flops_per_iter = fma_loops::fma_chains * (avx512 ? 16 : 8) * 2.0;
    // Best of several short trials per thread: robust against preemption on a shared machine.
    const long iters = 2'000'000;  // ~10 ms per trial at 3 GHz with 2 FMA ports
    const int trials = 10;
    double total = 0;
    float check = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total, check)
    {
        check += loop(iters);  // warm-up: brings the core to its AVX frequency
        double best = 0;
        for (int t = 0; t < trials; ++t) {
#pragma omp barrier
            const auto t0 = std::chrono::steady_clock::now();
            check += loop(iters);
            const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            best = std::max(best, flops_per_iter * double(iters) / sec * 1e-9);
        }
        total += best;
    }
    fma_sink = check;  // keeps the loops' results alive
    return total;
}

}  // namespace convgrad::bench
