// The machine's floating-point peak, measured now: an FMA throughput loop on `threads` OpenMP
// threads. Used to express kernel speed as a fraction of what the cores can do.
#pragma once

namespace convgrad::bench {

/// f32 GFLOP/s (2 per FMA lane) of an AVX-512 FMA loop (AVX2 when the CPU or OS lacks
/// AVX-512, 0 when it has neither), summed over `threads` threads running at once.
double measure_fma_peak_gflops(int threads);

namespace fma_loops {
// The loops, each in a unit compiled with its own instruction-set flags: `iters` rounds of
// 12 independent FMA chains; the return value only defeats dead-code elimination.
float fma_loop_avx512(long iters);
float fma_loop_avx2(long iters);
inline constexpr int fma_chains = 12;
}  // namespace fma_loops

}  // namespace convgrad::bench
