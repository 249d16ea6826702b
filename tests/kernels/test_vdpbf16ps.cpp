// The two emulations of vdpbf16ps, in AVX-512F (src/kernels/avx512/vdpbf16ps_emulation.hpp) and
// in plain C++ (src/kernels/avx512_emu/vector_traits_emulated.hpp), against the native
// instruction, bit for bit, on random pairs rich in denormals, zeros, infinities, NaNs and
// values near the ends of the f32 range; and all against a scalar model of the SDM
// semantics written here (odd element pair first, DAZ inputs, FTZ results, one round to
// nearest even per step, NaN from a, then b, then acc).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/ukernel/ukernel_set.hpp"

namespace convgrad::detail {
namespace {

float from_bits(uint32_t u) {
    float x;
    std::memcpy(&x, &u, 4);
    return x;
}
uint32_t bits(float x) {
    uint32_t u;
    std::memcpy(&u, &x, 4);
    return u;
}

// Dwords of every interesting class (used as two bf16 or as one f32 accumulator).
uint32_t draw(std::mt19937 &rng) {
    const uint32_t r = rng(), sign = r & 0x80000000u;
    switch (rng() % 10) {
        case 0:
            return r & 0x807fffffu;  // f32 denormal / zero
        case 1:
            return sign | (r & 0x007f007fu);  // two bf16 denormals
        case 2:
            return sign | 0x7f800000u | (rng() % 2 ? 0 : 0x7f80u);  // infinities
        case 3:
            return 0x7fc00000u | (r & 0x803fffffu);  // NaNs
        case 4:
            return (r & 0x80ffffffu) | 0x00800000u;  // smallest normals
        case 5:
            return (r & 0x807fffffu) | 0x7f000000u;  // near the largest
        default:
            return (r & 0x807fffffu) | ((100u + rng() % 56) << 23);  // ordinary
    }
}

float daz(float x) {
    const uint32_t u = bits(x);
    return (u & 0x7f800000u) == 0 ? from_bits(u & 0x80000000u) : x;
}
float quiet(float x) {
    return from_bits(bits(x) | 0x00400000u);
}
float step(float x, float y, float c) {
    if (std::isnan(x)) return quiet(x);
    if (std::isnan(y)) return quiet(y);
    if (std::isnan(c)) return quiet(c);
    return daz(std::fma(x, y, c));  // FTZ is DAZ of the result
}
uint32_t model(uint32_t acc, uint32_t a, uint32_t b) {
    const auto odd = [](uint32_t u) { return daz(from_bits(u & 0xffff0000u)); };
    const auto even = [](uint32_t u) { return daz(from_bits(u << 16)); };
    float c = daz(from_bits(acc));
    c = step(odd(a), odd(b), c);
    return bits(step(even(a), even(b), c));
}

struct lanes {
    std::vector<float> acc, out;
    std::vector<uint16_t> a, b;
};
lanes random_lanes(dim_t n, unsigned seed) {
    std::mt19937 rng(seed);
    lanes l;
    l.acc.resize(size_t(n)), l.out.resize(size_t(n));
    l.a.resize(size_t(2 * n)), l.b.resize(size_t(2 * n));
    for (dim_t i = 0; i < n; ++i) {
        l.acc[size_t(i)] = from_bits(draw(rng));
        const uint32_t x = draw(rng), y = draw(rng);
        std::memcpy(&l.a[size_t(2 * i)], &x, 4);
        std::memcpy(&l.b[size_t(2 * i)], &y, 4);
    }
    return l;
}
uint32_t dword(const std::vector<uint16_t> &v, dim_t i) {
    uint32_t u;
    std::memcpy(&u, &v[size_t(2 * i)], 4);
    return u;
}

constexpr dim_t lanes_per_run = dim_t(1) << 20;

// The units whose bf16 microkernel runs an emulation of vdpbf16ps: plain AVX-512 and the plain
// C++ traits.
const ukernel_set *const emulations[] = {&avx512::ukernels, &avx512_emu::ukernels};

TEST(Vdpbf16ps, EmulationMatchesTheScalarModel) {
    int ran = 0;
    for (const ukernel_set *s : emulations) {
        ASSERT_FALSE(s->bf16_native) << s->name;
        if (!isa_available(s->isa)) {
            std::printf("[ skipped ] vdpbf16ps emulation of %s: needs %s, absent or capped\n",
                        s->name, to_string(s->isa));
            continue;
        }
        lanes l = random_lanes(lanes_per_run, 7);
        s->dpbf16(l.acc.data(), l.a.data(), l.b.data(), l.out.data(), lanes_per_run);
        for (dim_t i = 0; i < lanes_per_run; ++i) {
            const uint32_t acc = bits(l.acc[size_t(i)]), a = dword(l.a, i), b = dword(l.b, i);
            ASSERT_EQ(bits(l.out[size_t(i)]), model(acc, a, b))
                << s->name << std::hex << ": acc " << acc << " a " << a << " b " << b;
        }
        std::printf("[ ran     ] vdpbf16ps emulation of %s vs scalar model: %lld lanes bit-exact\n",
                    s->name, (long long)lanes_per_run);
        ++ran;
    }
    if (ran == 0) GTEST_SKIP() << "no emulation of vdpbf16ps is allowed on this machine";
}

TEST(Vdpbf16ps, EmulationMatchesTheNativeInstruction) {
    const ukernel_set &native = avx512_bf16::ukernels;
    if (!isa_available(native.isa))
        GTEST_SKIP()
            << "native vdpbf16ps needs AVX512_BF16, which this machine lacks or "
               "CONVGRAD_MAX_ISA caps; the emulations were checked against the scalar model";
    ASSERT_TRUE(native.bf16_native);
    lanes l = random_lanes(lanes_per_run, 11);
    std::vector<float> out_native(static_cast<size_t>(lanes_per_run));
    native.dpbf16(l.acc.data(), l.a.data(), l.b.data(), out_native.data(), lanes_per_run);
    for (const ukernel_set *emu : emulations) {
        emu->dpbf16(l.acc.data(), l.a.data(), l.b.data(), l.out.data(), lanes_per_run);
        for (dim_t i = 0; i < lanes_per_run; ++i)
            ASSERT_EQ(bits(l.out[size_t(i)]), bits(out_native[size_t(i)]))
                << emu->name << std::hex << ": acc " << bits(l.acc[size_t(i)]) << " a "
                << dword(l.a, i) << " b " << dword(l.b, i);
        std::printf("[ ran     ] vdpbf16ps native vs emulated by %s: %lld lanes bit-exact\n",
                    emu->name, (long long)lanes_per_run);
    }
}

// Whole microkernels: the emulated and the native bf16 kernels give the same bits.
TEST(Vdpbf16ps, EmulatedAndNativeMicrokernelsAgreeBitForBit) {
    const ukernel_set &native = avx512_bf16::ukernels;
    if (!isa_available(native.isa))
        GTEST_SKIP() << "native vdpbf16ps needs AVX512_BF16, absent or capped";
    for (const ukernel_set *e : emulations) {
        const ukernel_set &emu = *e;
        std::mt19937 rng(3);
        for (int nv = 1; nv <= ukernel_max_nv; ++nv)
            for (int m = 1; m <= ukernel_max_rows; ++m) {
                const dim_t K = 2 * (1 + rng() % 20), N = nv * 16 - int(rng() % 16);
                std::vector<uint16_t> A(size_t(m * K)), B(size_t(K * N));
                for (auto &x : A) x = uint16_t(draw(rng) >> 16);
                for (auto &x : B) x = uint16_t(draw(rng) >> 16);
                std::vector<const uint16_t *> Ar;
                for (int r = 0; r < m; ++r) Ar.push_back(A.data() + r * K);
                const uint16_t *Bp = B.data();
                std::vector<std::vector<float>> C[2];
                for (int which = 0; which < 2; ++which) {
                    C[which].assign(size_t(m), std::vector<float>(size_t(N)));
                    std::vector<float *> Cr;
                    for (auto &r : C[which]) Cr.push_back(r.data());
                    brgemm_bf16_args a{};
                    a.K = K;
                    a.nbatch = 1;
                    a.A = Ar.data();
                    a.aks = 2;
                    a.B = &Bp;
                    a.ldb = 2 * N;
                    a.C = Cr.data();
                    a.tail = int(N - (nv - 1) * 16);
                    a.init = ukernel_init::zero;
                    (which ? native : emu).bf16(m, nv, a);
                }
                for (int r = 0; r < m; ++r)
                    for (dim_t n = 0; n < N; ++n)
                        ASSERT_EQ(bits(C[0][size_t(r)][size_t(n)]),
                                  bits(C[1][size_t(r)][size_t(n)]))
                            << emu.name << ": M=" << m << " NV=" << nv << " at (" << r << ", " << n
                            << ")";
            }
    }
}

}  // namespace
}  // namespace convgrad::detail
