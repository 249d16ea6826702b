// Compiled with -mavx512f -mfma: only called after a CPUID/XGETBV check.
#include <immintrin.h>

#include "fma_peak.hpp"

namespace convgrad::bench::fma_loops {

float fma_loop_avx512(long iters) {
    // 12 independent accumulator chains: more than latency (4) x FMA ports (2), so the loop
    // is bound by FMA throughput, not latency. acc = acc * a + b converges, no overflow/denormals.
    const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-6f);
    __m512 c0 = _mm512_set1_ps(0.f), c1 = _mm512_set1_ps(.1f), c2 = _mm512_set1_ps(.2f),
           c3 = _mm512_set1_ps(.3f), c4 = _mm512_set1_ps(.4f), c5 = _mm512_set1_ps(.5f),
           c6 = _mm512_set1_ps(.6f), c7 = _mm512_set1_ps(.7f), c8 = _mm512_set1_ps(.8f),
           c9 = _mm512_set1_ps(.9f), c10 = _mm512_set1_ps(1.f), c11 = _mm512_set1_ps(1.1f);
    for (long it = 0; it < iters; ++it) {
        c0 = _mm512_fmadd_ps(c0, a, b), c1 = _mm512_fmadd_ps(c1, a, b);
        c2 = _mm512_fmadd_ps(c2, a, b), c3 = _mm512_fmadd_ps(c3, a, b);
        c4 = _mm512_fmadd_ps(c4, a, b), c5 = _mm512_fmadd_ps(c5, a, b);
        c6 = _mm512_fmadd_ps(c6, a, b), c7 = _mm512_fmadd_ps(c7, a, b);
        c8 = _mm512_fmadd_ps(c8, a, b), c9 = _mm512_fmadd_ps(c9, a, b);
        c10 = _mm512_fmadd_ps(c10, a, b), c11 = _mm512_fmadd_ps(c11, a, b);
    }
    const __m512 s = _mm512_add_ps(
        _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(c0, c1), _mm512_add_ps(c2, c3)),
                      _mm512_add_ps(_mm512_add_ps(c4, c5), _mm512_add_ps(c6, c7))),
        _mm512_add_ps(_mm512_add_ps(c8, c9), _mm512_add_ps(c10, c11)));
    alignas(64) float v[16];
    _mm512_store_ps(v, s);
    float sum = 0;
    for (float x : v) sum += x;
    return sum;
}

}  // namespace convgrad::bench::fma_loops
