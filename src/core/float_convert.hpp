// Exact widening of bf16/f16 to float and rounding (nearest-even) of float/double to them.
// Plain bit manipulation: the same code in every translation unit, ISA flags or not.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace convgrad::detail {

static inline float bits_to_float(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}
static inline uint32_t float_to_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

static inline float bf16_to_float(uint16_t h) { return bits_to_float(uint32_t(h) << 16); }

static inline uint16_t float_to_bf16(float f) {
    uint32_t u = float_to_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40);  // quiet NaN
    u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest, ties to even
    return uint16_t(u >> 16);
}

static inline float f16_to_float(uint16_t h) {
    uint32_t sign = uint32_t(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    if (exp == 0x1f) return bits_to_float(sign | 0x7f800000u | (man << 13));  // inf / NaN
    if (exp == 0) {
        // zero or subnormal: man * 2^-24, exact in float
        float v = float(man) * 5.9604644775390625e-8f;
        return sign ? -v : v;
    }
    return bits_to_float(sign | ((exp + 112u) << 23) | (man << 13));
}

static inline uint16_t float_to_f16(float f) {
    uint32_t u = float_to_bits(f);
    uint16_t sign = uint16_t((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return uint16_t(sign | 0x7e00u);  // NaN
    if (a >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // rounds to >= 65520: inf
    if (a < 0x38800000u) {
        // result is subnormal or zero: round a * 2^24 to an integer, ties to even
        float v = bits_to_float(a) * 16777216.0f;  // exact scaling by a power of two
        float r = std::nearbyint(v);               // default rounding mode: nearest-even
        return uint16_t(sign | uint16_t(r));
    }
    // normal: drop 13 mantissa bits with round to nearest, ties to even
    uint32_t r = a + 0xfffu + ((a >> 13) & 1u);
    r -= 112u << 23;
    return uint16_t(sign | uint16_t(r >> 13));
}

/// Rounds a double to float so that a second rounding to a narrower type is still correct
/// (round to odd): the result is the truncation of x with the last bit set when inexact.
static inline float double_to_float_round_odd(double x) {
    float f = float(x);
    if (double(f) == x || std::isnan(x) || std::isinf(f)) return f;
    if (std::fabs(double(f)) > std::fabs(x)) f = std::nextafter(f, 0.0f);
    return bits_to_float(float_to_bits(f) | 1u);
}

static inline uint16_t double_to_bf16(double x) { return float_to_bf16(double_to_float_round_odd(x)); }
static inline uint16_t double_to_f16(double x) { return float_to_f16(double_to_float_round_odd(x)); }

// No value of a run of n (`stride` values apart, of the width of `Bits`) is infinite or NaN:
// their magnitude bits are at or above infinity's, `inf` (0x7f800000 for f32, 0x7f80 for bf16,
// 0x7c00 for f16). A max reduction of the magnitudes, which vectorizes over a dense run.
template <class Bits>
static inline bool bits_finite(const void *base, int64_t n, int64_t stride, Bits inf) {
    const unsigned char *bytes = static_cast<const unsigned char *>(base);
    const Bits magnitude = Bits(Bits(~Bits(0)) >> 1);
    auto at = [&](int64_t x) {
        Bits v;
        std::memcpy(&v, bytes + x * int64_t(sizeof(Bits)), sizeof(Bits));
        return Bits(v & magnitude);
    };
    Bits top = 0;
    if (stride == 1)
        for (int64_t x = 0; x < n; ++x) top = at(x) > top ? at(x) : top;
    else
        for (int64_t x = 0; x < n; ++x) top = at(x * stride) > top ? at(x * stride) : top;
    return top < inf;
}

}  // namespace convgrad::detail
