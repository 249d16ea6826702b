// fpmath_mode (docs/semantics.md, "Types"): an f32 op in a graph whose mode is bf16 or f16 rounds
// the values it multiplies (src, weights, diff_dst) once to that type, sums the exact products in
// f32 and writes f32; the bias is not rounded. strict is the default; tf32 and any currently
// compute as strict (which they allow). Checked on all six ops, dense and strided, against the
// reference run strictly on inputs the test rounds itself.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "api/rounded_inputs.hpp"
#include "convgrad/json.hpp"
#include "core/conv_problem.hpp"
#include "core/float_convert.hpp"
#include "dispatch/cpu_features.hpp"
#include "util/conv_test_util.hpp"
#include "util/tensor_buffer.hpp"

namespace convgrad {
namespace {

using testing::tensor_buffer;

// One 2-D problem of each op (NCX, OIX/IOX): Convolution family src 7x7 -> dst 4x4 (K3 s2 p1),
// IC 3, OC 4, N 2; the ConvTranspose family is its mirror.
struct op_case {
    op o{0, op_kind::Convolution};
    std::vector<dims> in_shapes;
};

op_case make_case(op_kind k) {
    op_case c{testing::make_conv_op(k, {2, 2}, {1, 1}, {1, 1}, {1, 1}), {}};
    const dims big{2, 3, 7, 7}, small{2, 4, 4, 4}, w{4, 3, 3, 3};
    const dims ct_src{2, 3, 4, 4}, ct_dst{2, 4, 7, 7}, ct_w{3, 4, 3, 3};
    switch (k) {
        case op_kind::Convolution: c.in_shapes = {big, w}; break;
        case op_kind::ConvolutionBackwardData:
            c.in_shapes = {small, w};
            c.o.set_attr("dst_shape", big);
            break;
        case op_kind::ConvolutionBackwardWeights:
            c.in_shapes = {big, small};
            c.o.set_attr("weights_shape", w);
            break;
        case op_kind::ConvTranspose: c.in_shapes = {ct_src, ct_w}; break;
        case op_kind::ConvTransposeBackwardData: c.in_shapes = {ct_dst, ct_w}; break;
        case op_kind::ConvTransposeBackwardWeights:
            c.in_shapes = {ct_src, ct_dst};
            c.o.set_attr("weights_shape", ct_w);
            break;
    }
    return c;
}

// The op's inputs as logical tensors: dense, or with every axis padded (non-contiguous).
op with_inputs(const op_case &c, bool strided) {
    op o = c.o;
    for (size_t i = 0; i < c.in_shapes.size(); ++i) {
        const dims &s = c.in_shapes[i];
        if (!strided) {
            o.add_input(logical_tensor(i, data_type::f32, s));
            continue;
        }
        std::vector<int> order(s.size());
        for (size_t a = 0; a < s.size(); ++a) order[a] = int(a);
        o.add_input(logical_tensor(i, data_type::f32, s,
                                   testing::strides_in_order(s, order, dims(s.size(), 1))));
    }
    o.add_output(logical_tensor::unknown(c.in_shapes.size(), data_type::f32));
    return o;
}

std::vector<double> run(const op &o, const std::vector<std::vector<double>> &values, fpmath_mode mode,
                        impl_choice choice = impl_choice::best) {
    graph g(mode);
    g.add_op(o);
    g.finalize();
    compiled_partition cp = g.get_partitions()[0].compile(o.inputs(), o.outputs(), choice);
    std::vector<tensor_buffer> ins;
    for (size_t i = 0; i < cp.inputs().size(); ++i) {
        ins.emplace_back(cp.inputs()[i]);
        ins.back().fill_values(values[i]);
    }
    std::vector<tensor> t;
    for (auto &b : ins) t.push_back(b.as_tensor());
    tensor_buffer out(cp.outputs()[0]);
    cp.execute(t, {out.as_tensor()});
    return out.values();
}

std::vector<std::vector<double>> random_values(const op_case &c, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<std::vector<double>> v;
    for (const dims &s : c.in_shapes) {
        dim_t n = 1;
        for (dim_t x : s) n *= x;
        v.emplace_back(size_t(n));
        for (double &x : v.back()) x = double(float(u(rng)));  // f32 values
    }
    return v;
}

double round_to(data_type t, double x) {
    const float f = float(x);
    return t == data_type::bf16 ? detail::bf16_to_float(detail::float_to_bf16(f))
                                : detail::f16_to_float(detail::float_to_f16(f));
}

double max_abs_diff(const std::vector<double> &a, const std::vector<double> &b) {
    double m = 0;
    for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
    return m;
}

struct mode_case {
    fpmath_mode mode;
    data_type math;
};

class FpmathMode : public ::testing::TestWithParam<op_kind> {};

TEST_P(FpmathMode, RoundsTheMultipliedInputsOnceAndAccumulatesInF32) {
    const op_case c = make_case(GetParam());
    for (bool strided : {false, true}) {
        const op o = with_inputs(c, strided);
        const auto raw = random_values(c, 17 + uint64_t(GetParam()));
        const std::vector<double> strict = run(o, raw, fpmath_mode::strict);
        for (const mode_case m : {mode_case{fpmath_mode::bf16, data_type::bf16}, mode_case{fpmath_mode::f16, data_type::f16}}) {
            SCOPED_TRACE(std::string(to_string(GetParam())) + (strided ? " strided" : " dense") + " fpmath " +
                         to_string(m.mode));
            auto rounded = raw;
            for (auto &v : rounded)
                for (double &x : v) x = round_to(m.math, x);
            const std::vector<double> got = run(o, raw, m.mode);
            const std::vector<double> want = run(o, rounded, fpmath_mode::strict, impl_choice::reference);
            ASSERT_EQ(got.size(), want.size());
            // f32 sums of at most 3*9 (data) or 2*16 (weights) exact products: a few f32 ulps.
            double scale = 0;
            for (double x : want) scale = std::max(scale, std::fabs(x));
            EXPECT_LE(max_abs_diff(got, want), 1e-5 * (1 + scale));
            // ...and the rounding did happen: the strict result is measurably different
            // (relative input error ~2^-9 for bf16, ~2^-12 for f16).
            EXPECT_GT(max_abs_diff(got, strict), 1e-5 * scale);
            // The reference kernel follows the mode too.
            const std::vector<double> ref = run(o, raw, m.mode, impl_choice::reference);
            EXPECT_LE(max_abs_diff(ref, want), 1e-5 * (1 + scale));
        }
        // tf32: convgrad has no tf32 kernels, so f32 (allowed). any: f32 too, unless this
        // machine multiplies bf16 faster than f32 (AMX, or vdpbf16ps at twice the FMA rate as on
        // AMD Zen 4): then bf16 where such a kernel takes the problem.
        EXPECT_EQ(run(o, raw, fpmath_mode::tf32), strict) << "tf32 computes as strict (allowed)";
        const std::vector<double> any = run(o, raw, fpmath_mode::any);
        if (!detail::bf16_multiplies_faster()) {
            EXPECT_EQ(any, strict) << "any computes as strict where bf16 is not faster";
        } else if (any != strict) {
            auto rounded = raw;
            for (auto &v : rounded)
                for (double &x : v) x = round_to(data_type::bf16, x);
            const std::vector<double> want = run(o, rounded, fpmath_mode::strict, impl_choice::reference);
            double scale = 0;
            for (double x : want) scale = std::max(scale, std::fabs(x));
            EXPECT_LE(max_abs_diff(any, want), 1e-5 * (1 + scale)) << "any where bf16 is faster: the bf16 result";
        }
    }
}

INSTANTIATE_TEST_SUITE_P(AllOps, FpmathMode, ::testing::ValuesIn(all_op_kinds),
                         [](const auto &info) { return std::string(to_string(info.param)); });

// The rounding pass itself, bit for bit against the scalar conversions: ties, the largest
// finite values (rounding to infinity), denormals, infinities and NaNs, dense and strided rows,
// and a zero stride (rows sharing elements), on 1 and 3 threads.
TEST(Fpmath, RoundingPassMatchesTheScalarConversionBitForBit) {
    std::vector<float> vals;
    for (uint32_t u : {0x3f808000u, 0x3f818000u, 0x3f80ffffu, 0x7f7fffffu, 0xff7fffffu, 0x00000001u,
                       0x807fffffu, 0x7f800000u, 0xff800000u, 0x7fc00001u, 0xff800001u, 0x00000000u,
                       0x80000000u, 0x477ff000u, 0x38800000u, 0x33000001u}) {
        float f;
        std::memcpy(&f, &u, sizeof f);
        vals.push_back(f);
    }
    for (int i = 0; i < 50; ++i) vals.push_back(float(i) * 0.1234567f - 3.0f);
    const dim_t n = dim_t(vals.size());
    auto bits = [](float f) {
        uint32_t u;
        std::memcpy(&u, &f, sizeof u);
        return u;
    };
    for (data_type to : {data_type::bf16, data_type::f16})
        for (int nthr : {1, 3}) {
            auto want = [&](float v) {
                return to == data_type::bf16 ? detail::bf16_to_float(detail::float_to_bf16(v))
                                             : detail::f16_to_float(detail::float_to_f16(v));
            };
            // Dense [3][n], strided rows [n][3] read along n (stride 3), and a zero stride.
            std::vector<float> dense(size_t(3 * n));
            for (dim_t r = 0; r < 3; ++r)
                for (dim_t i = 0; i < n; ++i) dense[size_t(r * n + i)] = vals[size_t((i + r) % n)];
            detail::rounded_inputs ri;
            const float *d = ri.add(logical_tensor(0, data_type::f32, dims{3, n}), dense.data(), to, nthr);
            const float *t = ri.add(logical_tensor(1, data_type::f32, dims{n, 3}, dims{1, n}), dense.data(), to, nthr);
            const float *z = ri.add(logical_tensor(2, data_type::f32, dims{4, n}, dims{0, 1}), dense.data(), to, nthr);
            for (dim_t k = 0; k < 3 * n; ++k) {
                ASSERT_EQ(bits(d[k]), bits(want(dense[size_t(k)]))) << k;
                ASSERT_EQ(bits(t[k]), bits(want(dense[size_t(k)]))) << k;
            }
            for (dim_t k = 0; k < n; ++k) ASSERT_EQ(bits(z[k]), bits(want(dense[size_t(k)]))) << k;
        }
}

TEST(Fpmath, KnownAnswerBiasIsNotRounded) {
    // 1x1 Convolution, one pixel: src 1 + 2^-9 and weight 1 + 2^-9 round to 1 in bf16 (below half
    // of bf16's ulp 2^-7) but are exact in f16; 1 + 2^-12 rounds to 1 in f16 too.
    op o = testing::make_conv_op(op_kind::Convolution, {1, 1}, {0, 0}, {0, 0}, {1, 1});
    o.add_input(logical_tensor(0, data_type::f32, {1, 1, 1, 1}))
        .add_input(logical_tensor(1, data_type::f32, {1, 1, 1, 1}))
        .add_input(logical_tensor(2, data_type::f32, {1}))
        .add_output(logical_tensor::unknown(3, data_type::f32));
    const double a = 1 + std::ldexp(1.0, -9), tiny = 1 + std::ldexp(1.0, -12);
    const double bias = double(0.1f);
    EXPECT_EQ(run(o, {{a}, {a}, {bias}}, fpmath_mode::strict)[0], double(float(a * a) + float(bias)));
    EXPECT_EQ(run(o, {{a}, {a}, {bias}}, fpmath_mode::bf16)[0], double(1.0f + float(bias)));
    EXPECT_EQ(run(o, {{a}, {a}, {bias}}, fpmath_mode::f16)[0], double(float(a * a) + float(bias)));
    EXPECT_EQ(run(o, {{tiny}, {tiny}, {bias}}, fpmath_mode::f16)[0], double(1.0f + float(bias)));
}

TEST(Fpmath, LowPrecisionOpsAreUnchangedByTheMode) {
    // A bf16 op already multiplies bf16 values: every mode gives the strict result.
    op o = testing::make_conv_op(op_kind::ConvolutionBackwardWeights, {1, 1}, {0, 0}, {0, 0}, {1, 1});
    o.set_attr("weights_shape", dims{2, 3, 1, 1});
    o.add_input(logical_tensor(0, data_type::bf16, {1, 3, 2, 2}))
        .add_input(logical_tensor(1, data_type::bf16, {1, 2, 2, 2}))
        .add_output(logical_tensor::unknown(2, data_type::bf16));
    const std::vector<std::vector<double>> v = {{0.5, 1.5, -2, 3, 0.25, 1, 1, 2, -1, 4, 0.125, 8},
                                                {1, 2, 3, 4, -1, -2, -3, -4}};
    const auto strict = run(o, v, fpmath_mode::strict);
    for (fpmath_mode m : {fpmath_mode::bf16, fpmath_mode::f16, fpmath_mode::tf32, fpmath_mode::any})
        EXPECT_EQ(run(o, v, m), strict) << to_string(m);
}

TEST(Fpmath, MathTypeOfEachMode) {
    using detail::math_type;
    for (bool bf16_faster : {false, true}) {
        EXPECT_EQ(math_type(fpmath_mode::strict, data_type::f32, bf16_faster), data_type::f32);
        EXPECT_EQ(math_type(fpmath_mode::bf16, data_type::f32, bf16_faster), data_type::bf16);
        EXPECT_EQ(math_type(fpmath_mode::f16, data_type::f32, bf16_faster), data_type::f16);
        EXPECT_EQ(math_type(fpmath_mode::tf32, data_type::f32, bf16_faster), data_type::f32);
        for (fpmath_mode m : {fpmath_mode::strict, fpmath_mode::bf16, fpmath_mode::f16, fpmath_mode::any}) {
            EXPECT_EQ(math_type(m, data_type::bf16, bf16_faster), data_type::bf16);
            EXPECT_EQ(math_type(m, data_type::f16, bf16_faster), data_type::f16);
        }
    }
    EXPECT_EQ(math_type(fpmath_mode::any, data_type::f32, false), data_type::f32);
    EXPECT_EQ(math_type(fpmath_mode::any, data_type::f32, true), data_type::bf16);
}

TEST(Fpmath, NamesParseAndPrint) {
    for (fpmath_mode m : {fpmath_mode::strict, fpmath_mode::bf16, fpmath_mode::f16, fpmath_mode::tf32,
                          fpmath_mode::any}) {
        fpmath_mode back = fpmath_mode::strict;
        ASSERT_TRUE(parse_fpmath_mode(to_string(m), back));
        EXPECT_EQ(back, m);
    }
    fpmath_mode out;
    EXPECT_FALSE(parse_fpmath_mode("fp32", out));
    EXPECT_FALSE(parse_fpmath_mode("BF16", out));
    EXPECT_FALSE(parse_fpmath_mode("", out));
}

TEST(Fpmath, JsonCarriesTheModeAndRejectsUnknownOnes) {
    const std::string op_json =
        R"("graph":[{"id":0,"name":"c","kind":"Convolution","attrs":{"strides":{"type":"s64[]","value":[1]},)"
        R"("pads_begin":{"type":"s64[]","value":[0]},"pads_end":{"type":"s64[]","value":[0]},)"
        R"("dilations":{"type":"s64[]","value":[1]}},"inputs":[)"
        R"({"id":0,"dtype":"f32","shape":[1,1,3],"stride":[3,3,1],"layout_type":"strided","property_type":"undef"},)"
        R"({"id":1,"dtype":"f32","shape":[1,1,1],"stride":[1,1,1],"layout_type":"strided","property_type":"undef"}],)"
        R"("outputs":[{"id":2,"dtype":"f32","shape":[1,1,3],"stride":[3,3,1],"layout_type":"strided","property_type":"undef"}]}]})";
    const json::document d = json::parse(R"({"version":"3.7.0","engine_kind":"cpu","fpmath_mode":"bf16",)" + op_json, "t.json");
    EXPECT_EQ(d.fpmath_mode, "bf16");
    EXPECT_EQ(d.to_graph().get_fpmath_mode(), fpmath_mode::bf16);
    EXPECT_EQ(d.to_graph().get_partitions()[0].get_fpmath_mode(), fpmath_mode::bf16);
    EXPECT_EQ(json::from_graph(d.to_graph()).fpmath_mode, "bf16");
    try {
        json::parse(R"({"version":"3.7.0","engine_kind":"cpu","fpmath_mode":"fp8",)" + op_json, "t.json");
        FAIL() << "an unknown fpmath_mode must be rejected";
    } catch (const error &e) {
        EXPECT_NE(std::string(e.what()).find("fpmath_mode"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("fp8"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace convgrad
