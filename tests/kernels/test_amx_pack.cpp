// The AMX packers (src/kernels/amx/amx_pack.hpp): round trips from every source type and
// stride pattern, the zero pad of odd K, rounding to nearest even, bad input.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "convgrad/types.hpp"
#include "core/float_convert.hpp"
#include "dispatch/cpu_features.hpp"
#include "kernels/amx/amx_pack.hpp"
#include "kernels/amx/amx_pair_ops.hpp"

namespace convgrad::detail::amx {
namespace {

// Values exact in bf16 and in f16: small integers and halves.
float exact_value(std::mt19937 &rng) {
    return float(int(rng() % 33) - 16) * 0.5f;
}

struct source {
    std::vector<float> f32;
    std::vector<uint16_t> h;  // the same values as bf16 or f16
    matrix_view view(data_type dt, int64_t rs, int64_t cs) const {
        return {dt, dt == data_type::f32 ? static_cast<const void *>(f32.data()) : h.data(), rs,
                cs};
    }
};

source make_source(data_type dt, size_t n, std::mt19937 &rng) {
    source s;
    s.f32.resize(n);
    s.h.resize(n);
    for (size_t i = 0; i < n; ++i) {
        s.f32[i] = exact_value(rng);
        s.h[i] = dt == data_type::f16 ? float_to_f16(s.f32[i]) : float_to_bf16(s.f32[i]);
    }
    return s;
}

TEST(AmxPack, RoundTripsEveryTypeAndLayout) {
    std::mt19937 rng(3);
    for (data_type dt : {data_type::f32, data_type::bf16, data_type::f16})
        for (amx_dot to : {amx_dot::bf16, amx_dot::f16})
            for (int rows : {1, 5, 16, 33})
                for (int64_t K : {1, 2, 7, 32, 33}) {
                    const source src = make_source(dt, size_t(rows * K), rng);
                    for (bool transposed : {false, true}) {  // (r, c) row-major, or column-major
                        const int64_t rs = transposed ? 1 : K, cs = transposed ? rows : 1;
                        // A: rows x K
                        const int64_t lda = padded_k(K) + 6;
                        std::vector<uint16_t> a(size_t(rows * lda), 0xffff);
                        pack_a_panel(src.view(dt, rs, cs), rows, K, to, a.data(), lda);
                        std::vector<float> back(size_t(rows * K));
                        unpack_a_panel(a.data(), rows, K, to, lda, back.data());
                        for (int m = 0; m < rows; ++m)
                            for (int64_t k = 0; k < K; ++k)
                                ASSERT_EQ(back[size_t(m * K + k)], src.f32[size_t(m * rs + k * cs)])
                                    << to_string(dt) << " A " << m << "," << k;
                        for (int m = 0; m < rows && (K & 1); ++m) {
                            ASSERT_EQ(a[size_t(m * lda + K)], 0) << "pad of odd K";
                        }
                    }
                    // B: K x N with N = rows (any N up to the tile width and beyond)
                    const int N = rows;
                    const source bsrc = make_source(dt, size_t(K * N), rng);
                    for (bool transposed : {false, true}) {
                        const int64_t rs = transposed ? 1 : N, cs = transposed ? K : 1;
                        const int64_t ldb = 2 * N + 4;
                        std::vector<uint16_t> b(size_t(padded_k(K) / 2 * ldb), 0xffff);
                        pack_b_vnni(bsrc.view(dt, rs, cs), K, N, to, b.data(), ldb);
                        std::vector<float> back(size_t(K * N));
                        unpack_b_vnni(b.data(), K, N, to, ldb, back.data());
                        for (int64_t k = 0; k < K; ++k)
                            for (int n = 0; n < N; ++n)
                                ASSERT_EQ(back[size_t(k * N + n)],
                                          bsrc.f32[size_t(k * rs + n * cs)])
                                    << to_string(dt) << " B " << k << "," << n;
                        for (int n = 0; n < N && (K & 1); ++n) {
                            ASSERT_EQ(b[size_t((K / 2) * ldb + 2 * n + 1)], 0)
                                << "pad row of odd K";
                        }
                    }
                }
}

TEST(AmxPack, RoundsToNearestEven) {
    // 1 + 2^-8 is halfway between bf16 neighbours 1 and 1 + 2^-7: ties to even gives 1;
    // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6: gives 1 + 2^-6.
    const float v[2] = {1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f};
    uint16_t a[2];
    pack_a_panel({data_type::f32, v, 2, 1}, 1, 2, amx_dot::bf16, a, 2);
    EXPECT_EQ(bf16_to_float(a[0]), 1.0f);
    EXPECT_EQ(bf16_to_float(a[1]), 1.0f + 0x1p-6f);
    // f16: 1 + 2^-11 ties to 1.
    const float w[2] = {1.0f + 0x1p-11f, 3.0f};
    pack_a_panel({data_type::f32, w, 2, 1}, 1, 2, amx_dot::f16, a, 2);
    EXPECT_EQ(f16_to_float(a[0]), 1.0f);
    EXPECT_EQ(f16_to_float(a[1]), 3.0f);
}

TEST(AmxPack, BadInputIsAnError) {
    float v[4] = {};
    uint16_t out[8];
    EXPECT_THROW(pack_a_panel({data_type::s32, v, 1, 1}, 1, 1, amx_dot::bf16, out, 2), error);
    EXPECT_THROW(pack_a_panel({data_type::f32, nullptr, 1, 1}, 1, 1, amx_dot::bf16, out, 2), error);
    EXPECT_THROW(pack_a_panel({data_type::f32, v, 3, 1}, 1, 3, amx_dot::bf16, out, 3),
                 error);  // lda < 4
    EXPECT_THROW(pack_b_vnni({data_type::f32, v, 2, 1}, 2, 2, amx_dot::bf16, out, 3),
                 error);  // ldb < 4
    EXPECT_THROW(pack_b_vnni({data_type::f32, v, 2, 1}, 0, 2, amx_dot::bf16, out, 4), error);
}

}  // namespace
}  // namespace convgrad::detail::amx

// The pair ops of the packers (amx_pair_ops.hpp): the portable ones against their definitions,
// and the native (AVX-512) ones byte for byte against the portable ones, over every channel
// count through two vectors plus a tail and every count of pairs (rows) in a block.
namespace convgrad::detail::amx {
namespace {

TEST(AmxPairOps, NativeAndPortableWriteTheSameBytes) {
    const pair_ops &portable = pair_ops_for(amx_backend::emulated);
    // (The native ops only where the CPU, within CONVGRAD_MAX_ISA, runs AVX-512.)
    const pair_ops *native =
        isa_available(cpu_isa::avx512_bf16) ? native::vector_pair_ops() : nullptr;
    std::mt19937 rng(5);
    std::vector<uint16_t> pixels(2 * max_transposed_pairs * 80);
    for (uint16_t &v : pixels) v = uint16_t(rng());
    int compared = 0;
    for (int64_t n = 1; n <= 80; ++n) {
        const uint16_t *lo = pixels.data(), *hi = pixels.data() + 80;
        std::vector<uint16_t> a(2 * n + 8, 0xabcd), b = a;
        portable.interleave(lo, hi, n, a.data());
        for (int64_t c = 0; c < n; ++c) {
            ASSERT_EQ(a[size_t(2 * c)], lo[c]);
            ASSERT_EQ(a[size_t(2 * c + 1)], hi[c]);
        }
        ASSERT_EQ(a[size_t(2 * n)], 0xabcd) << "nothing past 2n written";
        if (native) {
            native->interleave(lo, hi, n, b.data());
            ASSERT_EQ(a, b) << "interleave n = " << n;
        }
        for (int pairs = 1; pairs <= max_transposed_pairs; ++pairs) {
            const uint16_t *px[2 * max_transposed_pairs];
            for (int j = 0; j < 2 * pairs; ++j) px[j] = pixels.data() + j * 80;
            const int64_t ld = 2 * max_transposed_pairs + 6;
            std::vector<uint16_t> ta(size_t(n * ld), 0x1234), tb = ta;
            portable.transpose_pairs(px, pairs, n, ta.data(), ld);
            for (int64_t c = 0; c < n; ++c)
                for (int j = 0; j < pairs; ++j) {
                    ASSERT_EQ(ta[size_t(c * ld + 2 * j)], px[2 * j][c]);
                    ASSERT_EQ(ta[size_t(c * ld + 2 * j + 1)], px[2 * j + 1][c]);
                }
            if (native) {
                native->transpose_pairs(px, pairs, n, tb.data(), ld);
                ASSERT_EQ(ta, tb) << "transpose n = " << n << ", pairs = " << pairs;
                ++compared;
            }
        }
        for (int nrows = 1; nrows <= 16; ++nrows) {
            // rows at odd 16-bit offsets: no alignment
            const uint32_t *rows[16];
            std::vector<uint16_t> words(size_t(2 * (16 * 80 + 2)));
            for (size_t x = 0; x < words.size(); ++x) words[x] = uint16_t(rng());
            for (int j = 0; j < nrows; ++j)
                rows[j] = reinterpret_cast<const uint32_t *>(words.data() + 1 + j * 2 * n);
            const int64_t ld = 21;
            std::vector<uint32_t> wa(size_t(n * ld), 7u), wb = wa;
            portable.transpose_words(rows, nrows, n, wa.data(), ld);
            for (int64_t c = 0; c < n; ++c)
                for (int j = 0; j < nrows; ++j) {
                    uint32_t want;
                    std::memcpy(&want, words.data() + 1 + j * 2 * n + 2 * c, 4);
                    ASSERT_EQ(wa[size_t(c * ld + j)], want);
                }
            if (native) {
                native->transpose_words(rows, nrows, n, wb.data(), ld);
                ASSERT_EQ(wa, wb) << "transpose_words n = " << n << ", rows = " << nrows;
            }
        }
        std::vector<uint16_t> v(pixels.begin(), pixels.begin() + n);
        for (uint16_t &x : v) x &= 0x3fff;  // finite in both types
        for (amx_dot dot : {amx_dot::bf16, amx_dot::f16}) {
            const uint16_t inf = dot == amx_dot::bf16 ? 0x7f80 : 0x7c00;
            EXPECT_TRUE(portable.all_finite(v.data(), n, dot));
            std::vector<uint16_t> w = v;
            w[size_t(n - 1)] = uint16_t(0x8000 | inf);  // -inf, last
            EXPECT_FALSE(portable.all_finite(w.data(), n, dot));
            if (native) {
                EXPECT_TRUE(native->all_finite(v.data(), n, dot));
                EXPECT_FALSE(native->all_finite(w.data(), n, dot));
                w[size_t(n - 1)] = uint16_t(inf + 1);  // a NaN
                EXPECT_FALSE(native->all_finite(w.data(), n, dot));
            }
        }
    }
    std::printf("[ amx pair ops ] %d native transposes equal to the portable ones%s\n", compared,
                native ? "" : " (no native ops built or runnable here: portable only)");
}

}  // namespace
}  // namespace convgrad::detail::amx
