// The few-output-channels kernel (kernels/few_oc_kernels.hpp) on the edges it must get right,
// against the reference, exactly (small-integer data): 1-4 dst channels (blocks of 16, 8, 5 and
// 4 pixels on AVX-512), src channels with a partial last vector, pads larger than the kernel
// (pixels whose every tap is padding), stride larger than the kernel, dilation along w, 1-D
// with a long kernel, 3-D, groups, NCX and padded strides (src rows converted per chunk),
// bf16/f16, bias; forwards and weight gradients, and the ConvTranspose ops that are the same
// computations (its data gradient a forward, its weight gradient a weight gradient). Plus
// repeated runs bit for bit on non-integer data, and the reasons it declines.
#include <gtest/gtest.h>
#include <omp.h>

#include <cstring>
#include <random>

#include "core/resolve.hpp"
#include "kernels/few_oc_kernels.hpp"
#include "util/conv_geometry.hpp"
#include "util/kernel_check.hpp"

namespace convgrad {
namespace {

using testing::conv_geometry;

struct few_oc_case {
    conv_geometry geo;
    op_kind kind;
    bool bias;
};

// One case per line, as a table.
// clang-format off
const few_oc_case cases[] = {
    {{"3x3 to 1 channel, 20 channels (tail)", 1, 2, {9, 21}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false, false, data_type::f32, 20, 1}, op_kind::Convolution, true},
    {{"3x3 to 3 channels, stride 2", 1, 2, {11, 13}, {3, 3}, {2, 2}, {1, 1}, {0, 1}, {1, 1}, false, false, data_type::f32, 32, 3}, op_kind::Convolution, false},
    {{"pads > kernel, 2 outputs", 1, 1, {4, 5}, {3, 3}, {1, 1}, {4, 5}, {5, 4}, {1, 1}, false, false, data_type::f32, 17, 2}, op_kind::Convolution, true},
    {{"stride > kernel, 4 outputs", 1, 2, {11, 19}, {2, 2}, {4, 5}, {1, 0}, {0, 1}, {1, 1}, false, false, data_type::f32, 33, 4}, op_kind::Convolution, false},
    {{"dilated along w", 1, 1, {13, 30}, {3, 3}, {1, 1}, {2, 3}, {2, 3}, {2, 3}, false, false, data_type::f32, 16, 1}, op_kind::Convolution, false},
    {{"1-D kernel 7 (HiFi-GAN conv_post)", 1, 2, {70}, {7}, {1}, {3}, {3}, {1}, false, false, data_type::f32, 32, 1}, op_kind::Convolution, true},
    {{"3-D 1 output", 1, 1, {5, 6, 7}, {3, 2, 3}, {1, 2, 1}, {1, 0, 1}, {1, 1, 1}, {1, 1, 1}, false, false, data_type::f32, 24, 1}, op_kind::Convolution, false},
    {{"groups 3 of 20 -> 2", 3, 2, {8, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false, false, data_type::f32, 20, 2}, op_kind::Convolution, true},
    {{"NCX padded strides", 1, 2, {10, 9}, {3, 3}, {2, 1}, {1, 1}, {1, 1}, {1, 1}, true, true, data_type::f32, 19, 1}, op_kind::Convolution, true},
    {{"bf16 3 outputs", 1, 1, {9, 10}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false, false, data_type::bf16, 48, 3}, op_kind::Convolution, true},
    {{"f16 1-D kernel 7, 40 channels (tail)", 1, 2, {70}, {7}, {1}, {3}, {3}, {1}, false, false, data_type::f16, 40, 1}, op_kind::Convolution, true},
    {{"bf16 padded strides, stride > kernel, 4 outputs", 1, 2, {11, 19}, {2, 2}, {4, 5}, {1, 0}, {0, 1}, {1, 1}, false, true, data_type::bf16, 33, 4}, op_kind::Convolution, false},
    {{"f16 NCX 1x1 stride 2", 1, 3, {7, 6}, {1, 1}, {2, 2}, {0, 0}, {0, 0}, {1, 1}, true, false, data_type::f16, 64, 1}, op_kind::Convolution, false},
    {{"weights: 3x3 to 1 channel, tail", 1, 2, {9, 21}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false, false, data_type::f32, 20, 1}, op_kind::ConvolutionBackwardWeights, false},
    {{"weights: 3 channels, stride 2", 1, 2, {11, 13}, {3, 3}, {2, 2}, {1, 1}, {0, 1}, {1, 1}, false, false, data_type::f32, 32, 3}, op_kind::ConvolutionBackwardWeights, false},
    {{"weights: pads > kernel", 1, 1, {4, 5}, {3, 3}, {1, 1}, {4, 5}, {5, 4}, {1, 1}, false, false, data_type::f32, 17, 2}, op_kind::ConvolutionBackwardWeights, false},
    {{"weights: stride > kernel, 4", 1, 2, {11, 19}, {2, 2}, {4, 5}, {1, 0}, {0, 1}, {1, 1}, false, false, data_type::f32, 33, 4}, op_kind::ConvolutionBackwardWeights, false},
    {{"weights: dilated along w", 1, 1, {13, 30}, {3, 3}, {1, 1}, {2, 3}, {2, 3}, {2, 3}, false, false, data_type::f32, 16, 1}, op_kind::ConvolutionBackwardWeights, false},
    // 7 taps x 4 vectors: 28 (kw, vector) pairs, over one register block (24 on AVX-512).
    {{"weights: 1-D kernel 7, 64 channels", 1, 2, {70}, {7}, {1}, {3}, {3}, {1}, false, false, data_type::f32, 64, 1}, op_kind::ConvolutionBackwardWeights, false},
    {{"weights: 3-D", 1, 1, {5, 6, 7}, {3, 2, 3}, {1, 2, 1}, {1, 0, 1}, {1, 1, 1}, {1, 1, 1}, false, false, data_type::f32, 24, 1}, op_kind::ConvolutionBackwardWeights, false},
    {{"weights: groups, NCX padded", 2, 2, {8, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true, true, data_type::f32, 20, 2}, op_kind::ConvolutionBackwardWeights, false},
    {{"weights: bf16", 1, 2, {9, 10}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false, false, data_type::bf16, 48, 3}, op_kind::ConvolutionBackwardWeights, false},
    {{"weights: f16 NCX", 1, 2, {7, 6}, {3, 1}, {1, 1}, {1, 0}, {1, 0}, {1, 1}, true, false, data_type::f16, 40, 1}, op_kind::ConvolutionBackwardWeights, false},
    // bf16/f16 with contiguous channels: read in place, widened in the loads (native16).
    {{"weights: f16, 1-D kernel 7, 40 channels", 1, 2, {70}, {7}, {1}, {3}, {3}, {1}, false, false, data_type::f16, 40, 1}, op_kind::ConvolutionBackwardWeights, false},
    {{"weights: bf16 padded strides, 4 outputs, stride 2", 1, 2, {11, 13}, {3, 3}, {2, 2}, {1, 1}, {0, 1}, {1, 1}, false, true, data_type::bf16, 20, 4}, op_kind::ConvolutionBackwardWeights, false},
    {{"weights: f16 dilated, groups 2 of 17 -> 2", 2, 1, {9, 20}, {3, 3}, {1, 1}, {2, 2}, {2, 2}, {2, 2}, false, false, data_type::f16, 17, 2}, op_kind::ConvolutionBackwardWeights, false},
    {{"weights: bf16 pads > kernel, 64 channels, 3 outputs", 1, 1, {4, 5}, {3, 3}, {1, 1}, {4, 5}, {5, 4}, {1, 1}, false, false, data_type::bf16, 64, 3}, op_kind::ConvolutionBackwardWeights, false},
    {{"ConvTranspose weight gradient from 1 channel, f16", 1, 2, {9, 8}, {4, 4}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, false, false, data_type::f16, 24, 1}, op_kind::ConvTransposeBackwardWeights, false},
    {{"ConvTranspose data gradient from 2 channels", 1, 2, {9, 8}, {4, 4}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, false, false, data_type::f32, 24, 2}, op_kind::ConvTransposeBackwardData, false},
    {{"ConvTranspose weight gradient from 1 channel", 1, 2, {9, 8}, {4, 4}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, false, false, data_type::f32, 24, 1}, op_kind::ConvTransposeBackwardWeights, false},
};
// clang-format on

const std::vector<testing::swept_case> &edge_cases() {
    static const std::vector<testing::swept_case> all = [] {
        size_t next = 0;
        auto make = [&](std::mt19937_64 &) {
            const few_oc_case &c = cases[next++];
            return std::pair<op, std::string>(testing::make_geometry_op(c.geo, c.kind, c.bias),
                                              c.geo.what);
        };
        return testing::reference_sweep(13, int(std::size(cases)), make,
                                        [](int iter) { return 1 + iter % 3; });
    }();
    return all;
}

std::vector<const detail::impl_desc *> few_oc_rows() {
    std::vector<const detail::impl_desc *> rows;
    for (const detail::impl_desc &r : detail::kernel_inventory())
        if (std::strncmp(r.name, "few_oc:", 7) == 0) rows.push_back(&r);
    return rows;
}

TEST(FewOutputChannels, EdgeCasesEqualTheReference) {
    const auto rows = few_oc_rows();
    ASSERT_FALSE(rows.empty());
    int ran = 0;
    for (const detail::impl_desc *row : rows) {
        const testing::row_mode m = testing::how_to_run(*row);
        if (!m.create) continue;
        // Every case is one the row must take (else this test would not test it).
        for (const testing::swept_case &c : edge_cases())
            EXPECT_EQ(row->cannot(c.r.prob), "") << row->name << " " << c.text;
        EXPECT_EQ(testing::check_row(*row, m, edge_cases()), int(std::size(cases)));
        ++ran;
    }
    if (ran == 0) GTEST_SKIP() << "no few_oc row runs on this CPU (or under CONVGRAD_MAX_ISA)";
}

// Non-integer data (a different summation order would show in the bits), over a million
// multiply-adds so that two threads split the work: each run repeats the previous one's bits.
TEST(FewOutputChannels, RepeatedRunsBitForBit) {
    for (op_kind kind : {op_kind::Convolution, op_kind::ConvolutionBackwardWeights}) {
        const conv_geometry geo{"big",  1,      4,     {40, 40}, {3, 3},         {1, 1}, {1, 1},
                                {1, 1}, {1, 1}, false, false,    data_type::f32, 40,     3};
        const op o = testing::make_geometry_op(geo, kind, false);
        const detail::resolved_op r = detail::resolve_op(o, o.inputs(), o.outputs());
        std::vector<testing::tensor_buffer> in;
        std::mt19937_64 rng(7);
        std::uniform_real_distribution<double> u(-1, 1);
        for (const logical_tensor &t : r.inputs) {
            in.emplace_back(t);
            std::vector<double> v(in.back().values().size());
            for (double &x : v) x = u(rng);
            in.back().fill_values(v);
        }
        const int saved = omp_get_max_threads();
        for (const detail::impl_desc *row : few_oc_rows()) {
            const testing::row_mode m = testing::how_to_run(*row);
            if (!m.create) continue;
            for (int nthr : {1, 2}) {
                omp_set_num_threads(nthr);
                testing::tensor_buffer first(r.outputs[0]), again(r.outputs[0]);
                testing::run_poisoned(r, m.create, in, first);
                testing::run_poisoned(r, m.create, in, again);
                EXPECT_EQ(first.bytes, again.bytes) << row->name << " threads " << nthr;
            }
        }
        omp_set_num_threads(saved);
    }
}

// An empty batch whose extents are near the dim_t range (the fuzzers build such problems): the
// weight gradient is zero, with no scratch sized by those extents (bf16 NCX: rows converted).
// The bf16/f16 forward and weight gradient over channels-last tensors read them in place and
// widen each load (few_oc_plan::native16): on non-integer data they must sum exactly as the
// f32 kernel sums the widened values, in the same order, so the output is the f32 result
// rounded once. A 1-D layer with a channel tail and one with 3 outputs and stride 2, on two
// threads.
TEST(FewOutputChannels, NativeHalfWeightGradientSumsAsF32) {
    // clang-format off
    const conv_geometry geos[] = {
        {"1-D kernel 7, 40 channels", 1, 3, {300}, {7}, {1}, {3}, {3}, {1}, false, false, data_type::f32, 40, 1},
        {"3 outputs, stride 2", 1, 2, {21, 23}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, false, false, data_type::f32, 33, 3},
    };
    // clang-format on
    const int saved = omp_get_max_threads();
    omp_set_num_threads(2);
    int ran = 0;
    for (op_kind kind : {op_kind::Convolution, op_kind::ConvolutionBackwardWeights})
        for (const conv_geometry &g32 : geos)
            for (data_type dt : {data_type::bf16, data_type::f16}) {
                conv_geometry g16 = g32;
                g16.dt = dt;
                const op o16 = testing::make_geometry_op(g16, kind, false);
                const op o32 = testing::make_geometry_op(g32, kind, false);
                const detail::resolved_op r16 =
                    detail::resolve_op(o16, o16.inputs(), o16.outputs());
                const detail::resolved_op r32 =
                    detail::resolve_op(o32, o32.inputs(), o32.outputs());
                std::mt19937_64 rng(11);
                std::uniform_real_distribution<double> u(-1, 1);
                std::vector<testing::tensor_buffer> in16, in32;
                for (size_t i = 0; i < r16.inputs.size(); ++i) {
                    in16.emplace_back(r16.inputs[i]);
                    in32.emplace_back(r32.inputs[i]);
                    for (dim_t e = 0; e < in16.back().count(); ++e) {
                        in16.back().set(e, u(rng));  // rounds to dt
                        in32.back().set(e, in16.back().get(e));
                    }
                }
                for (const detail::impl_desc *row : few_oc_rows()) {
                    const testing::row_mode m = testing::how_to_run(*row);
                    if (!m.create) continue;
                    const std::string what = std::string(row->name) + " " + to_string(kind) + " " +
                                             g32.what + " " + to_string(dt);
                    ASSERT_NE(m.create(r16.prob)->describe().find("widened in the loads"),
                              std::string::npos)
                        << what;
                    testing::tensor_buffer got(r16.outputs[0]), f32(r32.outputs[0]),
                        want(r16.outputs[0]);
                    testing::run_poisoned(r16, m.create, in16, got);
                    testing::run_poisoned(r32, m.create, in32, f32);
                    dim_t rounded = 0;
                    for (dim_t e = 0; e < f32.count(); ++e) {
                        want.set(e, f32.get(e));  // rounds once to dt
                        rounded += want.get(e) != f32.get(e);
                    }
                    dim_t bad = 0;
                    for (dim_t e = 0; e < got.count(); ++e)
                        if (got.get(e) != want.get(e) && bad++ < 3)
                            ADD_FAILURE() << what << " element " << e << ": " << got.get(e)
                                          << " vs " << want.get(e) << " (f32 " << f32.get(e) << ")";
                    EXPECT_EQ(bad, 0) << what;
                    EXPECT_GT(rounded, f32.count() / 2) << what << ": the data must need rounding";
                    ++ran;
                }
            }
    omp_set_num_threads(saved);
    if (ran == 0) GTEST_SKIP() << "no few_oc row runs on this CPU (or under CONVGRAD_MAX_ISA)";
}

TEST(FewOutputChannels, EmptyBatchWeightGradientIsZero) {
    const conv_geometry geo{"empty batch", 1,    0,     {dim_t(1) << 40}, {3}, {1}, {1}, {1},
                            {1},           true, false, data_type::bf16,  16,  1};
    const op o = testing::make_geometry_op(geo, op_kind::ConvolutionBackwardWeights, false);
    const detail::resolved_op r = detail::resolve_op(o, o.inputs(), o.outputs());
    std::vector<testing::tensor_buffer> in;
    for (const logical_tensor &t : r.inputs) in.emplace_back(t);
    int ran = 0;
    for (const detail::impl_desc *row : few_oc_rows()) {
        const testing::row_mode m = testing::how_to_run(*row);
        if (!m.create) continue;
        ASSERT_EQ(row->cannot(r.prob), "") << row->name;
        testing::tensor_buffer w(r.outputs[0]);
        testing::run_poisoned(r, m.create, in, w);
        for (double v : w.values()) ASSERT_EQ(v, 0.0) << row->name;
        ++ran;
    }
    EXPECT_GT(ran, 0);
}

TEST(FewOutputChannels, DeclinesWithReasons) {
    auto prob = [](conv_geometry g, op_kind kind = op_kind::Convolution) {
        const op o = testing::make_geometry_op(g, kind, false);
        return detail::resolve_op(o, o.inputs(), o.outputs()).prob;
    };
    const conv_geometry base{"base", 1,      1,     {8, 8}, {3, 3},         {1, 1}, {1, 1},
                             {1, 1}, {1, 1}, false, false,  data_type::f32, 32,     3};
    EXPECT_EQ(detail::few_oc_why_not(prob(base), 16), "");
    EXPECT_EQ(detail::few_oc_why_not(prob(base, op_kind::ConvolutionBackwardWeights), 16), "");
    EXPECT_NE(detail::few_oc_why_not(prob(base, op_kind::ConvolutionBackwardData), 16)
                  .find("only fwd and bwd_weights"),
              std::string::npos);
    conv_geometry wide = base;
    wide.ocg = 5;
    EXPECT_NE(detail::few_oc_why_not(prob(wide), 16).find("above 4"), std::string::npos);
    conv_geometry narrow = base;
    narrow.icg = 7, narrow.ocg = 1;  // under half of 16 lanes; half of AVX2's 8
    EXPECT_NE(detail::few_oc_why_not(prob(narrow), 16).find("half"), std::string::npos);
    EXPECT_EQ(detail::few_oc_why_not(prob(narrow), 8), "");
    conv_geometry close = base;
    close.icg = 12;  // 3 outputs: 12 is only 4x
    EXPECT_NE(detail::few_oc_why_not(prob(close), 16).find("4x"), std::string::npos);
    conv_geometry ncx_1x1 = base;
    ncx_1x1.ncx = true, ncx_1x1.k = {1, 1}, ncx_1x1.pb = ncx_1x1.pe = {0, 0};
    EXPECT_NE(detail::few_oc_why_not(prob(ncx_1x1), 16).find("NCX"), std::string::npos);
    EXPECT_EQ(detail::few_oc_why_not(prob(ncx_1x1, op_kind::ConvolutionBackwardWeights), 16), "");
    detail::conv_problem rounded = prob(base);
    rounded.math_dt = data_type::bf16;  // an f32 op under fpmath_mode bf16
    EXPECT_NE(detail::few_oc_why_not(rounded, 16).find("fpmath_mode"), std::string::npos);
}

}  // namespace
}  // namespace convgrad
