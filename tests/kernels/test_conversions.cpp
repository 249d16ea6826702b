// The bf16/f16 <-> f32 conversions of every instruction-set unit (pack_set::widen/narrow, the
// vector traits every packer and kernel converts with) against the scalar conversions of
// core/float_convert.hpp, bit for bit: every f16 and bf16 value widened, and narrowing of
// rounding ties, values just around them, denormals, overflow to infinity, infinities, NaNs
// with payloads and signed zeros, at every length of a vector and its tail, at every offset
// (unaligned), without touching the elements next to the run.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "core/float_convert.hpp"
#include "kernels/pack/packed_formats.hpp"

namespace convgrad::detail {
namespace {

const pack_set *const all_units[] = {&avx512::packers, &avx2::packers, &sse2::packers,
                                     &avx512_emu::packers};

uint32_t bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

float widen_scalar_ref(data_type dt, uint16_t h) {
    return dt == data_type::bf16 ? bf16_to_float(h) : f16_to_float(h);
}
uint16_t narrow_scalar_ref(data_type dt, float x) {
    return dt == data_type::bf16 ? float_to_bf16(x) : float_to_f16(x);
}

// Whether h is a signaling NaN of its type (quiet bit clear, payload non-zero).
bool signaling(data_type dt, uint16_t h) {
    if (dt == data_type::bf16) return (h & 0x7f80u) == 0x7f80u && (h & 0x7fu) != 0 && !(h & 0x40u);
    return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0 && !(h & 0x200u);
}

TEST(Conversions, WidenEveryValueExactlyAtEveryLength) {
    std::vector<uint16_t> all(65536);
    for (size_t i = 0; i < all.size(); ++i) all[i] = uint16_t(i);
    for (const pack_set *s : all_units) {
        if (!isa_available(s->isa)) continue;
        for (data_type dt : {data_type::bf16, data_type::f16}) {
            // Every value, in one long run (whole vectors) from an odd offset.
            std::vector<float> y(all.size() + 2, -3.f);
            s->widen(dt, all.data() + 1, y.data() + 1, dim_t(all.size() - 1));
            ASSERT_EQ(bits(y[0]), bits(-3.f)) << s->name;
            ASSERT_EQ(bits(y.back()), bits(-3.f)) << s->name << " wrote past the run";
            for (size_t i = 1; i < all.size(); ++i) {
                const uint32_t want = bits(widen_scalar_ref(dt, all[i])), got = bits(y[i]);
                if (signaling(dt, all[i])) {
                    // The hardware conversions (vcvtph2ps) quiet a signaling NaN, the portable
                    // one keeps it: the same NaN but for the quiet bit.
                    ASSERT_EQ(got & ~0x00400000u, want)
                        << s->name << " " << to_string(dt) << " " << i;
                } else {
                    ASSERT_EQ(got, want) << s->name << " " << to_string(dt) << " value " << i;
                }
            }
            // Every length 0..40 (the tails, and runs shorter than a vector) at every offset.
            for (dim_t off = 0; off < 3; ++off)
                for (dim_t n = 0; n <= 40; ++n) {
                    std::vector<float> z(size_t(n + 8), -3.f);
                    const uint16_t *x = all.data() + 0x3c00 + off * 7;  // 1.0 upwards (f16)
                    s->widen(dt, x, z.data() + off, n);
                    for (dim_t i = 0; i < n + 8; ++i) {
                        const float want =
                            i >= off && i < off + n ? widen_scalar_ref(dt, x[i - off]) : -3.f;
                        ASSERT_EQ(bits(z[size_t(i)]), bits(want))
                            << s->name << " " << to_string(dt) << " n=" << n << " off=" << off
                            << " at " << i;
                    }
                }
        }
    }
}

// Floats that stress the rounding to dt: exact ties (odd and even), one ulp either side, the
// denormal range (f16: 2^-24..2^-14) and its ties, the overflow threshold, infinities, NaNs
// with payloads (quiet and signaling, both signs), signed zeros, and random bit patterns.
std::vector<float> hard_floats(data_type dt, std::mt19937_64 &rng) {
    std::vector<float> v;
    auto add_bits = [&](uint32_t u) {
        float f;
        std::memcpy(&f, &u, 4);
        v.push_back(f);
    };
    const int drop = dt == data_type::bf16 ? 16 : 13;  // mantissa bits dropped (normal range)
    for (int i = 0; i < 400; ++i) {
        // A value of dt, then the tie after it and its neighbours.
        const uint32_t base = uint32_t(rng()) & (dt == data_type::bf16 ? 0xffff0000u : 0x47ffe000u);
        const uint32_t tie = base | (1u << (drop - 1));
        for (uint32_t u : {base, tie, tie - 1, tie + 1, base | ((1u << drop) - 1)}) add_bits(u);
    }
    if (dt == data_type::f16) {
        // Denormal results: k * 2^-25 for small k (ties at odd k), and the boundaries.
        for (int k = 0; k < 64; ++k) {
            v.push_back(float(k) * 2.98023223876953125e-8f);
            v.push_back(-float(k) * 2.98023223876953125e-8f);
        }
        for (float f :
             {6.103515625e-05f, 6.1035156e-05f, 6.0975552e-05f, 5.9604645e-08f, 2.9802322e-08f,
              2.9802326e-08f, 65504.f, 65519.99f, 65520.f, 65536.f, 1e10f})
            v.push_back(f), v.push_back(-f);
    }
    for (uint32_t u : {0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00000u, 0x7fc00001u, 0x7fa00000u,
                       0xffa5a5a5u, 0x7f800001u, 0x7fffffffu, 0x00000000u, 0x80000000u, 0x00000001u,
                       0x807fffffu, 0x7f7fffffu, 0xff7fffffu})
        add_bits(u);
    for (int i = 0; i < 2000; ++i) add_bits(uint32_t(rng()));
    return v;
}

TEST(Conversions, NarrowMatchesTheScalarRoundingBitForBit) {
    std::mt19937_64 rng(11);
    for (const pack_set *s : all_units) {
        if (!isa_available(s->isa)) continue;
        for (data_type dt : {data_type::bf16, data_type::f16}) {
            const std::vector<float> x = hard_floats(dt, rng);
            // One long run from an odd offset (whole vectors and a tail).
            std::vector<uint16_t> y(x.size() + 1, 0x5555);
            s->narrow(dt, x.data() + 1, y.data() + 1, dim_t(x.size() - 1));
            ASSERT_EQ(y[0], 0x5555) << s->name;
            for (size_t i = 1; i < x.size(); ++i)
                ASSERT_EQ(y[i], narrow_scalar_ref(dt, x[i]))
                    << s->name << " " << to_string(dt) << " float bits 0x" << std::hex
                    << bits(x[i]);
            // Every length 0..40 at every offset; the elements around the run stay untouched.
            for (dim_t off = 0; off < 3; ++off)
                for (dim_t n = 0; n <= 40; ++n) {
                    const size_t start = size_t(rng() % (x.size() - 41));
                    std::vector<uint16_t> z(size_t(n + 8), 0x5555);
                    s->narrow(dt, x.data() + start, z.data() + off, n);
                    for (dim_t i = 0; i < n + 8; ++i) {
                        const uint16_t want =
                            i >= off && i < off + n
                                ? narrow_scalar_ref(dt, x[start + size_t(i - off)])
                                : 0x5555;
                        ASSERT_EQ(z[size_t(i)], want)
                            << s->name << " " << to_string(dt) << " n=" << n << " off=" << off
                            << " at " << i;
                    }
                }
        }
    }
}

}  // namespace
}  // namespace convgrad::detail
