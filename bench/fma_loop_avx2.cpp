// Compiled with -mavx2 -mfma: only called after a CPUID/XGETBV check.
#include <immintrin.h>

#include "fma_peak.hpp"

namespace convgrad::bench::fma_loops {

float fma_loop_avx2(long iters) {
    // As the AVX-512 loop: 12 independent chains (of 16 ymm registers) hide the FMA latency.
    const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-6f);
    __m256 c0 = _mm256_set1_ps(0.f), c1 = _mm256_set1_ps(.1f), c2 = _mm256_set1_ps(.2f),
           c3 = _mm256_set1_ps(.3f), c4 = _mm256_set1_ps(.4f), c5 = _mm256_set1_ps(.5f),
           c6 = _mm256_set1_ps(.6f), c7 = _mm256_set1_ps(.7f), c8 = _mm256_set1_ps(.8f),
           c9 = _mm256_set1_ps(.9f), c10 = _mm256_set1_ps(1.f), c11 = _mm256_set1_ps(1.1f);
    for (long it = 0; it < iters; ++it) {
        c0 = _mm256_fmadd_ps(c0, a, b), c1 = _mm256_fmadd_ps(c1, a, b);
        c2 = _mm256_fmadd_ps(c2, a, b), c3 = _mm256_fmadd_ps(c3, a, b);
        c4 = _mm256_fmadd_ps(c4, a, b), c5 = _mm256_fmadd_ps(c5, a, b);
        c6 = _mm256_fmadd_ps(c6, a, b), c7 = _mm256_fmadd_ps(c7, a, b);
        c8 = _mm256_fmadd_ps(c8, a, b), c9 = _mm256_fmadd_ps(c9, a, b);
        c10 = _mm256_fmadd_ps(c10, a, b), c11 = _mm256_fmadd_ps(c11, a, b);
    }
    __m256 s = _mm256_add_ps(
        _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(c0, c1), _mm256_add_ps(c2, c3)),
                      _mm256_add_ps(_mm256_add_ps(c4, c5), _mm256_add_ps(c6, c7))),
        _mm256_add_ps(_mm256_add_ps(c8, c9), _mm256_add_ps(c10, c11)));
    alignas(32) float v[8];
    _mm256_store_ps(v, s);
    return v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
}

}  // namespace convgrad::bench::fma_loops
