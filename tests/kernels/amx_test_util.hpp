// Shared by the AMX tests: an independent model of the SDM's "FP32 FMA with DAZ=FTZ=1, RNE"
// on this CPU's own FMA unit (MXCSR set to DAZ + FTZ + round-to-nearest for the duration), and
// random data that reaches denormals and the underflow threshold.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <random>

#include "dispatch/cpu_features.hpp"

namespace convgrad::detail::amx::test {

/// The hardware oracle needs FMA (AVX2-class CPUs; the emulation itself needs nothing).
inline bool have_fma() {
    return detected_features().has(cpu_feature::fma);
}

/// MXCSR with DAZ (bit 6) and FTZ (bit 15), exceptions masked, round to nearest; restored on exit.
class daz_ftz_scope {
  public:
    daz_ftz_scope() : saved_(_mm_getcsr()) { _mm_setcsr(0x1f80u | 0x8000u | 0x0040u); }
    ~daz_ftz_scope() { _mm_setcsr(saved_); }
    daz_ftz_scope(const daz_ftz_scope &) = delete;
    daz_ftz_scope &operator=(const daz_ftz_scope &) = delete;

  private:
    unsigned saved_;
};

// (noinline: the compiler must not fold or move them across the MXCSR change.)
__attribute__((target("fma"), noinline)) inline float hw_fma(float acc, float a, float b) {
    return _mm_cvtss_f32(_mm_fmadd_ss(_mm_set_ss(a), _mm_set_ss(b), _mm_set_ss(acc)));
}
__attribute__((noinline)) inline float hw_add(float x, float y) {
    return _mm_cvtss_f32(_mm_add_ss(_mm_set_ss(x), _mm_set_ss(y)));
}

inline uint32_t bits_of(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}
inline float float_of(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

/// Same float bits, or both NaN (payloads are not modelled).
inline bool same_result(float x, float y) {
    return bits_of(x) == bits_of(y) || (x != x && y != y);
}

/// Floats whose exponents crowd around the bottom of the normal range and the denormals, with
/// random mantissas and signs: products and sums then land on the underflow threshold.
inline float edgy_float(std::mt19937 &rng, int lo_exp, int hi_exp) {
    std::uniform_int_distribution<int> e(lo_exp, hi_exp);
    const uint32_t mant = rng() & 0x7fffffu, sign = rng() & 0x80000000u;
    const int exp = e(rng);  // biased exponent; 0 = denormal
    return float_of(sign | (uint32_t(exp < 0 ? 0 : exp) << 23) | mant);
}

}  // namespace convgrad::detail::amx::test
