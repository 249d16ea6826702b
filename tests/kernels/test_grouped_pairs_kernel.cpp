// The grouped kernel on vdpbf16ps (row grouped_pairs:avx512_bf16): 2, 4 or 8 channels per group,
// channel pairs of 32/cg groups on the lanes, on the edges of its schedule:
// - group counts giving one vector, several, and a partial last one of every shape (6 channels:
//   3 lanes; 24: a full first half and half a second; 132: four vectors and 2 lanes);
// - rows whose width leaves a partial tile of pixels (tiles of 3, 5 or 9 pixels), interior and
//   edge tiles, strides 2 and 3 (bwd_data's stride phases), dilation, asymmetric pads, pads
//   wider than the kernel (taps wholly in the padding);
// - 1-D, 2-D and 3-D; NXC in place, NXC with padded pixel strides, NCX (bf16 copies of the
//   input side and an f32 copy of the output), XIO weights; bias; f32 under fpmath_mode bf16;
//   1-3 threads.
// Small-integer data: every result equals the reference exactly. Then a denormal input, which
// vdpbf16ps reads as zero (docs/semantics.md, "Low-precision dot products").
//
// Every case runs on the native instruction where the CPU has AVX512_BF16 and on the emulation
// (AVX-512F, or plain C++ on AVX2); a missing one is a visible skip.
#include <gtest/gtest.h>
#include <omp.h>

#include <string>

#include "convgrad/convgrad.hpp"
#include "dispatch/cpu_features.hpp"
#include "dispatch/registry.hpp"
#include "kernels/grouped_pairs_kernels.hpp"
#include "util/conv_case.hpp"

namespace convgrad::detail {
namespace {

using namespace testcase;

const impl_desc &pairs_row() {
    return inventory_row("grouped_pairs:avx512_bf16");
}

std::vector<row_backend> backends() {
    return native_and_emulated(pairs_row(), "no AVX512_BF16 here (or CONVGRAD_MAX_ISA caps it)",
                               "no AVX2 here (or CONVGRAD_MAX_ISA caps it)");
}

conv_case grouped(conv_direction dir, int nsp, dim_t cg, dim_t g) {
    conv_case c;
    c.dir = dir, c.nsp = nsp, c.icg = cg, c.ocg = cg, c.g = g;
    return c;
}

std::vector<conv_case> edge_cases(conv_direction dir) {
    std::vector<conv_case> v;
    auto add = [&](conv_case c) {
        c.bias = v.size() % 2;
        v.push_back(c);
    };
    // Channel counts against the 32-channel vectors, and widths against the pixel tiles.
    const std::pair<dim_t, std::vector<dim_t>> groups[] = {
        {2, {3, 16, 17}}, {4, {3, 8, 9, 33}}, {8, {2, 3, 4, 5, 32}}};
    for (const auto &[cg, gs] : groups)
        for (dim_t g : gs)
            for (dim_t w : {1, 4, 11, 20}) {
                conv_case c = grouped(dir, 2, cg, g);
                c.mb = w == 4 ? 2 : 1;
                set_axis(c, 1, 3, 3, 1, 1, 1, 1);
                set_axis(c, 2, w, 3, 1, 1, 1, 1);
                add(c);
            }
    for (dim_t cg : {2, 4, 8}) {
        // Strides 2 and 3 (bwd_data: w phases), dilation, asymmetric pads.
        for (dim_t s : {2, 3})
            for (dim_t w : {9, 14}) {
                conv_case c = grouped(dir, 2, cg, 5);
                set_axis(c, 1, 6, 2, s, 1, 1, 0);
                set_axis(c, 2, w, 3, s, 2, 2, 1);
                add(c);
            }
        {  // pads wider than the kernel: whole taps in the padding
            conv_case c = grouped(dir, 2, cg, 6);
            set_axis(c, 1, 3, 2, 1, 1, 4, 4);
            set_axis(c, 2, 2, 3, 2, 1, 5, 3);
            add(c);
        }
        {  // 1-D and 3-D
            conv_case c = grouped(dir, 1, cg, 9);
            set_axis(c, 2, 23, 5, 2, 1, 2, 2);
            add(c);
            conv_case d = grouped(dir, 3, cg, 4);
            d.mb = 2;
            set_axis(d, 0, 4, 2, 2, 1, 1, 0);
            set_axis(d, 1, 5, 3, 1, 2, 1, 1);
            set_axis(d, 2, 7, 3, 1, 1, 1, 1);
            add(d);
        }
        {  // layouts: padded NXC pixels (in place), NCX and XIO (copies), f32 under bf16
            conv_case c = grouped(dir, 2, cg, 7);
            set_axis(c, 1, 4, 3, 1, 1, 1, 1);
            set_axis(c, 2, 10, 3, 1, 1, 1, 1);
            c.pad = 6;
            add(c);
            c.pad = 0, c.ncx = true, c.xio = true;
            add(c);
            c.ncx = false, c.xio = false, c.dt = data_type::f32;
            add(c);
            c.ncx = true;
            add(c);
        }
    }
    return v;
}

void expect_exact(const row_backend &b, const conv_case &c, uint64_t seed) {
    const conv_problem p = make_problem(c);
    ASSERT_EQ(pairs_row().cannot(p), "") << describe(c);
    std::mt19937_64 rng(seed);
    const inputs in = make_inputs(p, rng, true);
    const auto k = b.create(p);
    const buffer got = run(p, in, k.get()), want = run(p, in, nullptr);
    for (dim_t o : output_offsets(p))
        ASSERT_EQ(got.get(o), want.get(o)) << b.name << " " << describe(c) << " at " << o;
}

class GroupedPairs : public ::testing::TestWithParam<conv_direction> {};

TEST_P(GroupedPairs, EdgeCasesMatchTheReference) {
    int ran = 0;
    for (const row_backend &b : backends()) {
        if (!b.skip.empty()) {
            std::printf("grouped_pairs %s: skipped (%s)\n", b.name, b.skip.c_str());
            continue;
        }
        uint64_t seed = 11;
        for (const conv_case &c : edge_cases(GetParam())) expect_exact(b, c, ++seed);
        ++ran;
    }
    std::printf("grouped_pairs: %d of 2 builds ran (native, emulated)\n", ran);
}

// Big enough (over 2^20 multiply-adds) for the plan to split the rows over the threads.
TEST_P(GroupedPairs, ThreadCounts) {
    const int saved = omp_get_max_threads();
    for (const row_backend &b : backends()) {
        if (!b.skip.empty()) continue;
        for (int t : {1, 2, 3}) {
            omp_set_num_threads(t);
            conv_case c = grouped(GetParam(), 2, 8, 12);
            c.mb = 3;
            set_axis(c, 1, 17, 3, 1, 1, 1, 1);
            set_axis(c, 2, 19, 3, 1, 1, 1, 1);
            expect_exact(b, c, 200 + t);
        }
    }
    omp_set_num_threads(saved);
}

// A denormal bf16 input is read as zero by the dot product: the result is the reference's on
// the same data with that input zeroed (all zero), and differs from the reference's on the data
// as is, whose products with the weights of 2^100 are normal (2^-30).
TEST_P(GroupedPairs, DenormalInputsCountAsZero) {
    conv_case c = grouped(GetParam(), 2, 4, 8);
    set_axis(c, 1, 3, 3, 1, 1, 1, 1);
    set_axis(c, 2, 5, 3, 1, 1, 1, 1);
    const conv_problem p = make_problem(c);
    const bool fwd = p.dir == conv_direction::fwd;
    for (const row_backend &b : backends()) {
        if (!b.skip.empty()) continue;
        std::mt19937_64 rng(5);
        inputs in = make_inputs(p, rng, true);
        for (dim_t x = 0; x < in.wei.count(); ++x) in.wei.set(x, 0x1p100f);
        buffer &data = fwd ? in.src : in.dst;
        for (dim_t x = 0; x < data.count(); ++x) data.set(x, 0.f);
        const dim_t at = p.dir == conv_direction::fwd ? 5 * p.src.sp[2] + 6 : 7 * p.dst.sp[2] + 9;
        data.set(at, 0x1p-130f);  // (bf16 keeps it: a denormal)
        const auto k = b.create(p);
        const buffer got = run(p, in, k.get()), as_is = run(p, in, nullptr);
        data.set(at, 0.f);
        const buffer zeroed = run(p, in, nullptr);
        bool differs = false;
        for (dim_t o : output_offsets(p)) {
            ASSERT_EQ(got.get(o), zeroed.get(o)) << b.name << " at " << o;
            differs = differs || got.get(o) != as_is.get(o);
        }
        EXPECT_TRUE(differs) << b.name << ": the denormal input reached no output";
    }
}

INSTANTIATE_TEST_SUITE_P(Directions, GroupedPairs,
                         ::testing::Values(conv_direction::fwd, conv_direction::bwd_data),
                         [](const auto &info) { return std::string(to_string(info.param)); });

// Where vdpbf16ps is fast, dispatch gives ResNeXt's grouped 3x3 in bf16 (32 groups of 8) to this
// kernel in Convolution and ConvolutionBackwardData, and keeps the weight gradient and f16 on
// the f32 grouped kernel; where it is slow, the CPU is the reason it declines.
TEST(GroupedPairsDispatch, TakesBf16GroupedLayersWhereFast) {
    auto why = [](conv_direction dir, data_type dt) {
        conv_case c = grouped(dir, 2, 8, 32);
        c.mb = 2, c.dt = dt, c.math = dt == data_type::f16 ? data_type::f16 : data_type::bf16;
        set_axis(c, 1, 14, 3, 1, 1, 1, 1);
        set_axis(c, 2, 14, 3, 1, 1, 1, 1);
        return grouped_pairs_why_not(make_problem(c));
    };
    EXPECT_NE(why(conv_direction::bwd_weights, data_type::bf16), "");
    EXPECT_NE(why(conv_direction::fwd, data_type::f16), "");
    if (!fast_bf16_dot()) {
        EXPECT_EQ(why(conv_direction::fwd, data_type::bf16), fast_bf16_dot_reason());
        GTEST_SKIP() << "vdpbf16ps is not fast here: " << fast_bf16_dot_reason();
    }
    if (!isa_available(cpu_isa::avx512_bf16))
        GTEST_SKIP() << "no AVX512_BF16 here (or CONVGRAD_MAX_ISA caps it)";
    EXPECT_EQ(why(conv_direction::fwd, data_type::bf16), "");
    EXPECT_EQ(why(conv_direction::bwd_data, data_type::bf16), "");
    EXPECT_EQ(why(conv_direction::fwd, data_type::f32), "");  // under fpmath_mode bf16
    for (op_kind k : {op_kind::Convolution, op_kind::ConvolutionBackwardData}) {
        op o(0, k);
        const bool fwd = k == op_kind::Convolution;
        o.set_attr("strides", dims{1, 1}).set_attr("pads_begin", dims{1, 1});
        o.set_attr("pads_end", dims{1, 1}).set_attr("dilations", dims{1, 1}).set_attr("groups", dim_t(32));
        o.set_attr("data_format", std::string("NXC")).set_attr("weights_format", std::string("XIO"));
        const logical_tensor x(0, data_type::bf16, dims{2, 14, 14, 256}),
            y(0, data_type::bf16, dims{2, 14, 14, 256}), w(1, data_type::bf16, dims{3, 3, 8, 256});
        o.add_input(fwd ? x : y).add_input(w);
        o.add_output(logical_tensor(2, data_type::bf16, dims{2, 14, 14, 256}));
        const compiled_partition cp = compile_op(o);
        EXPECT_EQ(cp.kernel_name(), "grouped_pairs:avx512_bf16") << to_string(k);
    }
}

}  // namespace
}  // namespace convgrad::detail
