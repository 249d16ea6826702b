// The direct convolution on vdpbf16ps (row direct_bf16dot:avx512_bf16) on the edges its
// packing has: odd channel counts (a zero channel pads the last pair; with groups, pairs must
// not cross a group), few input channels (fwd flattens the kernel width into K), bf16 NXC used in
// place, odd dst widths in bwd_weights (the last pixel is paired with a zero), strides (src
// transposed per w phase, only the rows and phases read), rows in several chunks, dilation, pads so
// large that taps fall wholly in the padding, groups, 1-D/2-D/3-D, NCX, padded strides, 1-3
// threads, f32 under fpmath_mode bf16. Small-integer data: results equal the reference exactly.
//
// Then denormals: vdpbf16ps treats denormal inputs as zero and flushes denormal products and
// sums (docs/semantics.md, "Low-precision dot products"), so the expected values below are
// derived by hand from those rules, not from the reference (which keeps denormals).
//
// Every case runs on the native instruction where the CPU has AVX512_BF16 and on the emulation
// where it has AVX-512; a missing one is a visible skip.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <string>

#include "dispatch/cpu_features.hpp"
#include "dispatch/registry.hpp"
#include "kernels/bf16dot_kernels.hpp"
#include "kernels/common/gemm_plan.hpp"
#include "util/conv_case.hpp"

namespace convgrad::detail {
namespace {

using namespace testcase;

const impl_desc &bf16dot_row() {
    return inventory_row("direct_bf16dot:avx512_bf16");
}

std::vector<row_backend> backends() {
    return native_and_emulated(bf16dot_row(), "no AVX512_BF16 here (or CONVGRAD_MAX_ISA caps it)",
                               "no AVX2 here (or CONVGRAD_MAX_ISA caps it)");
}

conv_case base(conv_direction dir, int nsp) {
    conv_case c;
    c.dir = dir;
    c.nsp = nsp;
    return c;
}

// bwd_data whose stride phases along w merge into the channels (direct_merges_w_phases): a C
// pixel of s src pixels, s x icg channels (21 -> 42, 5 -> 20 at stride 4, 6 -> 18 at stride
// 3), rounded in place or through the f32 copy (NCX, padded strides), f32 in place under
// fpmath_mode bf16, begin pads of one and two strides (taps reading before the row), the last
// image of a chunk, 1-D, 2-D and 3-D with stride phases along d and h too.
std::vector<conv_case> w_merged_cases() {
    std::vector<conv_case> v;
    conv_case c = base(conv_direction::bwd_data, 2);
    c.icg = 21, c.ocg = 21, c.mb = 3;
    set_axis(c, 1, 10, 4, 2, 1, 0, 0);
    set_axis(c, 2, 14, 4, 2, 1, 0, 0);
    v.push_back(c);
    c.ncx = true;
    v.push_back(c);
    c.ncx = false, c.pad = 3;
    v.push_back(c);
    conv_case f = base(conv_direction::bwd_data, 1);
    f.icg = 21, f.ocg = 10, f.dt = data_type::f32, f.math = data_type::bf16, f.mb = 2;
    set_axis(f, 2, 20, 4, 2, 1, 2, 2);
    v.push_back(f);
    f.ncx = true;
    v.push_back(f);
    conv_case q = base(conv_direction::bwd_data, 2);
    q.icg = 5, q.ocg = 7, q.mb = 2;
    set_axis(q, 1, 7, 3, 2, 1, 1, 1);
    set_axis(q, 2, 16, 8, 4, 1, 8, 4);
    v.push_back(q);
    conv_case d = base(conv_direction::bwd_data, 3);
    d.icg = 6, d.ocg = 9;
    set_axis(d, 0, 4, 2, 2, 1, 0, 0);
    set_axis(d, 1, 5, 3, 2, 1, 1, 1);
    set_axis(d, 2, 9, 6, 3, 1, 3, 3);
    v.push_back(d);
    return v;
}

std::vector<conv_case> edge_cases(conv_direction dir) {
    std::vector<conv_case> v;
    auto add = [&](conv_case c) {
        c.bias = dir != conv_direction::bwd_weights && v.size() % 2;
        v.push_back(c);
    };
    for (dim_t icg : {1, 2, 3, 17, 33})         // odd and even K (fwd), pairs per group
        for (dim_t ocg : {1, 5, 16, 31, 65}) {  // channel-vector tails (N)
            conv_case c = base(dir, 2);
            c.icg = icg, c.ocg = ocg, c.g = icg == 3 ? 2 : 1;
            set_axis(c, 1, 5, 3, 1, 1, 1, 1);
            set_axis(c, 2, 7, 3, 1, 1, 1, 1);
            c.ncx = ocg == 31;
            add(c);
        }
    {  // odd widths, stride 2 and 3 (w phases), dilation, asymmetric pads
        for (dim_t s : {2, 3})
            for (dim_t w : {7, 8, 9}) {
                conv_case c = base(dir, 2);
                c.icg = 3, c.ocg = 19, c.mb = 2;
                set_axis(c, 1, 6, 2, s, 1, 1, 0);
                set_axis(c, 2, w, 3, s, 2, 2, 1);
                add(c);
            }
    }
    {  // rows of more than 16 pixels and 16 channels per group: bwd_weights transposes its
       // src rows in 16 x 16 blocks, whole and partial, per group and stride phase
        for (dim_t s : {1, 2}) {
            conv_case c = base(dir, 2);
            c.g = 2, c.icg = 40, c.ocg = 24;
            set_axis(c, 1, 3, 2, 1, 1, 0, 0);
            set_axis(c, 2, 37, 3, s, 1, 1, 1);
            add(c);
        }
    }
    {  // kernels smaller than their strides: bwd_weights transposes only the src rows and w
       // phases some tap reads (1x1 stride 2: every other row, one phase in two; a 3-D kernel
       // of 1 x 1 x 2 with strides 3: rows of one d in three, phases 0 and 2 of 3), odd widths
        conv_case c = base(dir, 2);
        c.icg = 5, c.ocg = 18, c.mb = 2;
        set_axis(c, 1, 9, 1, 2);
        set_axis(c, 2, 11, 1, 2);
        add(c);
        c.ncx = true;
        add(c);
        conv_case d = base(dir, 3);
        d.icg = 4, d.ocg = 9;
        set_axis(d, 0, 7, 1, 3);
        set_axis(d, 1, 4, 1, 1);
        set_axis(d, 2, 13, 2, 3, 2, 1, 0);
        add(d);
    }
    {  // more rows than one chunk (rows_per_chunk about 22 with a 1 MB L2): a thread packs its
       // rows a chunk at a time, and a 3x3 kernel's chunks share src rows at their ends
        conv_case c = base(dir, 2);
        c.icg = 32, c.ocg = 48, c.mb = 2;
        set_axis(c, 1, 24, 3, 1, 1, 1, 1);
        set_axis(c, 2, 37, 3, 1, 1, 1, 1);
        add(c);
    }
    {  // pads larger than the kernel: whole taps in the padding
        conv_case c = base(dir, 2);
        c.icg = 4, c.ocg = 7;
        set_axis(c, 1, 3, 2, 1, 1, 4, 4);
        set_axis(c, 2, 2, 3, 2, 1, 5, 3);
        add(c);
    }
    {  // groups with odd channels (a pair may not cross into the next group), padded strides
        conv_case c = base(dir, 2);
        c.g = 3, c.icg = 5, c.ocg = 3, c.pad = 3;
        set_axis(c, 1, 4, 3, 1, 1, 1, 1);
        set_axis(c, 2, 6, 3, 1, 1, 1, 1);
        add(c);
        c.ncx = true, c.xio = true;
        add(c);
    }
    {  // 1-D and 3-D
        conv_case c = base(dir, 1);
        c.icg = 6, c.ocg = 33;
        set_axis(c, 2, 11, 5, 2, 1, 2, 2);
        add(c);
        conv_case d = base(dir, 3);
        d.icg = 7, d.ocg = 17, d.mb = 2;
        set_axis(d, 0, 4, 2, 2, 1, 1, 0);
        set_axis(d, 1, 5, 3, 1, 2, 1, 1);
        set_axis(d, 2, 5, 3, 1, 1, 1, 1);
        add(d);
    }
    {  // a K too long for one chunk: the chunks accumulate in f32 tiles, and the last one
       // rounds them into a bf16 output in place (a vector tail of 8 lanes on the C side)
        conv_case c = base(dir, 2);
        c.icg = dir == conv_direction::bwd_data ? 72 : 520;
        c.ocg = dir == conv_direction::bwd_data ? 520 : 72;
        set_axis(c, 1, 4, 3, 1, 1, 1, 1);
        set_axis(c, 2, 5, 3, 1, 1, 1, 1);
        add(c);
    }
    {  // few input channels: fwd flattens the kernel width into K (direct_flattens_w), over a
       // copy of src padded along w (its own zero columns and, for an odd count, channel):
       // 1-7 channels, windows of up to 63 values, strides, pads wider than the kernel,
       // the stem's shape, NCX and f32 under fpmath_mode bf16, 1-D and 3-D
        for (dim_t icg : {1, 2, 3, 5, 7}) {
            conv_case c = base(dir, 2);
            c.icg = icg, c.ocg = icg == 3 ? 64 : 17, c.mb = 2;
            const dim_t kw = icg == 7 ? 9 : icg == 3 ? 7 : 4;
            set_axis(c, 1, 9, 3, icg % 2 ? 2 : 1, 1, 1, 0);
            set_axis(c, 2, 13, kw, icg == 5 ? 3 : 2, 1, icg == 3 ? 3 : 1, icg == 3 ? 2 : 0);
            c.ncx = icg == 5;
            add(c);
        }
        conv_case c = base(dir, 2);
        c.icg = 3, c.ocg = 20, c.dt = data_type::f32, c.math = data_type::bf16;
        set_axis(c, 1, 5, 2, 1, 1, 0, 1);
        set_axis(c, 2, 4, 3, 1, 1, 5, 4);  // windows wholly in the padding
        add(c);
        conv_case d = base(dir, 1);
        d.icg = 2, d.ocg = 33;
        set_axis(d, 2, 40, 16, 4, 1, 6, 6);
        add(d);
        // Odd channels with an even kernel width: the pairs run across the taps, no zero
        // channel (wav2vec2's first layer: 1 channel, kernel 10 stride 5; 3 channels 2x2)
        conv_case w = base(dir, 1);
        w.icg = 1, w.ocg = 40, w.mb = 2;
        set_axis(w, 2, 93, 10, 5, 1, 3, 4);
        add(w);
        conv_case t = base(dir, 2);
        t.icg = 3, t.ocg = 18;
        set_axis(t, 1, 6, 2, 2, 1, 1, 0);
        set_axis(t, 2, 11, 2, 1, 1, 1, 2);
        add(t);
        t.ncx = true, t.icg = 5;
        add(t);
        // An odd window on a narrow row: 7 channels, one pixel, kernel 3, pads 1 (the copy
        // without a zero channel has the longer row: 4 columns of 7 against 3 of 8)
        conv_case n = base(dir, 1);
        n.icg = 7, n.ocg = 9, n.mb = 8;
        set_axis(n, 2, 1, 3, 1, 1, 1, 1);
        add(n);
        // This kernel's wider rule (direct_flattens_w: up to 31 channels, 128 values a
        // window): FCN's x2 upsampling data gradient (21 channels, 4x4 stride 2, 84 values),
        // 16 channels (read in place when not flattened), and 15 channels 7 wide (an odd
        // window of 105 values) with pads, NCX
        for (dim_t icg : {21, 16, 15}) {
            conv_case f = base(dir, 2);
            f.icg = icg, f.ocg = icg == 16 ? 24 : 21, f.mb = 2, f.ncx = icg == 15;
            const dim_t kw = icg == 15 ? 7 : icg == 21 ? 4 : 3;
            set_axis(f, 1, 8, icg == 21 ? 4 : 3, icg == 21 ? 2 : 1, 1, 0, 1);
            set_axis(f, 2, 12, kw, icg == 21 ? 2 : 1, 1, icg == 15 ? 3 : 0, icg == 15 ? 3 : 1);
            add(f);
        }
        conv_case e = base(dir, 3);
        e.icg = 3, e.ocg = 16, e.ncx = true;
        set_axis(e, 0, 4, 3, 2, 1, 1, 1);
        set_axis(e, 1, 5, 3, 1, 1, 1, 1);
        set_axis(e, 2, 6, 3, 1, 1, 1, 1);
        add(e);
    }
    {  // f32 under fpmath_mode bf16, both layouts
        conv_case c = base(dir, 2);
        c.icg = 9, c.ocg = 20, c.dt = data_type::f32, c.math = data_type::bf16;
        set_axis(c, 1, 6, 3, 1, 1, 1, 1);
        set_axis(c, 2, 9, 3, 2, 1, 1, 1);
        add(c);
        c.ncx = true;
        add(c);
    }
    if (dir == conv_direction::bwd_data)
        for (const conv_case &c : w_merged_cases()) add(c);
    return v;
}

// Big enough (over 2^20 multiply-adds) for the plan to split the work over the threads.
conv_case threaded_case(conv_direction dir) {
    conv_case c = base(dir, 2);
    c.mb = 2, c.icg = 33, c.ocg = 40;
    set_axis(c, 1, 13, 3, 1, 1, 1, 1);
    set_axis(c, 2, 13, 3, 1, 1, 1, 1);
    return c;
}

void expect_exact(const row_backend &b, const conv_case &c, uint64_t seed) {
    const conv_problem p = make_problem(c);
    ASSERT_EQ(bf16dot_row().cannot(p), "") << describe(c);
    std::mt19937_64 rng(seed);
    const inputs in = make_inputs(p, rng, true);
    const auto k = b.create(p);
    const buffer got = run(p, in, k.get()), want = run(p, in, nullptr);
    for (dim_t o : output_offsets(p))
        ASSERT_EQ(got.get(o), want.get(o)) << b.name << " " << describe(c) << " at " << o;
}

class Bf16Dot : public ::testing::TestWithParam<conv_direction> {};

TEST_P(Bf16Dot, EdgeCasesMatchTheReference) {
    for (const row_backend &b : backends()) {
        if (!b.skip.empty()) {
            std::printf("direct_bf16dot %s: skipped (%s)\n", b.name, b.skip.c_str());
            continue;
        }
        uint64_t seed = 7;
        for (const conv_case &c : edge_cases(GetParam())) expect_exact(b, c, ++seed);
    }
}

TEST_P(Bf16Dot, ThreadCounts) {
    const int saved = omp_get_max_threads();
    for (const row_backend &b : backends()) {
        if (!b.skip.empty()) continue;
        for (int t : {1, 2, 3}) {
            omp_set_num_threads(t);
            expect_exact(b, threaded_case(GetParam()), 100 + t);
        }
    }
    omp_set_num_threads(saved);
}

INSTANTIATE_TEST_SUITE_P(Directions, Bf16Dot,
                         ::testing::Values(conv_direction::fwd, conv_direction::bwd_data,
                                           conv_direction::bwd_weights),
                         [](const auto &info) { return std::string(to_string(info.param)); });

// Where vdpbf16ps is fast, dispatch still leaves fwd and bwd_data with fewer than 6 reduced
// channels per group to the f32 kernels (too few pairs per broadcast), but not bwd_weights,
// whose K is the pixel axis, nor 6 channels, nor the forward that flattens the kernel width
// into K (undilated along w, a kernel wider than 1); bwd_weights of one input channel goes to
// the f32 direct kernel's shared tap tiles. Where it is slow, the CPU is the reason.
TEST(Bf16DotDispatch, DeclinesFewReducedChannelsWhereFast) {
    auto why = [](conv_direction dir, dim_t icg, dim_t ocg, dim_t kw = 3, dim_t dlw = 1) {
        conv_case c = base(dir, 2);
        c.mb = 2, c.icg = icg, c.ocg = ocg;
        set_axis(c, 1, 20, 3, 1, 1, 1, 1);
        set_axis(c, 2, 20, kw, 1, dlw, 1, 1);
        return bf16dot_why_not(make_problem(c));
    };
    if (!fast_bf16_dot()) {
        EXPECT_EQ(why(conv_direction::fwd, 64, 64), fast_bf16_dot_reason());
        GTEST_SKIP() << "vdpbf16ps is not fast here: " << fast_bf16_dot_reason();
    }
    EXPECT_EQ(why(conv_direction::fwd, 3, 64), "");  // flattened: K = 3 x 2 pairs
    EXPECT_EQ(why(conv_direction::fwd, 5, 64), "");
    EXPECT_NE(why(conv_direction::fwd, 3, 64, 1).find("reduced channels"), std::string::npos);
    EXPECT_NE(why(conv_direction::fwd, 5, 64, 3, 2).find("reduced channels"), std::string::npos);
    EXPECT_NE(why(conv_direction::bwd_data, 64, 3).find("reduced channels"), std::string::npos);
    EXPECT_EQ(why(conv_direction::fwd, 6, 64), "");
    EXPECT_EQ(why(conv_direction::bwd_data, 3, 64), "");  // reduces over the 64 output channels
    EXPECT_EQ(why(conv_direction::bwd_weights, 3, 64), "");
    // One input channel: the f32 direct kernel's tiles share the taps along d and h (rows
    // (kh, kw, channel)), where this kernel's would have one row.
    EXPECT_NE(why(conv_direction::bwd_weights, 1, 16).find("share the taps"), std::string::npos);
    // bwd_weights reduces a row's pixel pairs: rows of fewer than 6 output pixels are left to
    // the f32 kernels (every direction: ConvTranspose's weight gradient is bwd_weights too).
    for (const dim_t ow : {1, 2, 5, 6, 7}) {
        conv_case c = base(conv_direction::bwd_weights, 2);
        c.mb = 16, c.icg = 64, c.ocg = 64;
        set_axis(c, 1, 8, 3, 1, 1, 1, 1);
        set_axis(c, 2, ow, 3, 1, 1, 1, 1);
        const std::string w = bf16dot_why_not(make_problem(c));
        if (ow < min_bwd_weights_row_pixels)
            EXPECT_NE(w.find("rows of " + std::to_string(ow) + " output pixels"), std::string::npos)
                << w;
        else
            EXPECT_EQ(w, "") << ow;
    }
}

// Where direct_bf16dot runs, the GEMM kernel weighs itself against it (twice the f32 direct
// kernel's rate) in fwd and bwd_data: ResNet-50's 1x1 s2 projection in bf16 goes to it, while
// the same layer in f16, which it cannot take, is weighed against the f32 direct kernel's
// rate. (Its f16 choice between the GEMM and the direct kernel is close: 10-11 ms on either,
// Zen 4, 2 threads; the estimates have it on the direct kernel since the GEMM kernel's widening
// of f16 operands is charged.)
TEST(Bf16DotDispatch, GemmWeighsItselfAgainstTheBf16DirectKernel) {
    if (!isa_available(cpu_isa::avx512_bf16) || !fast_bf16_dot())
        GTEST_SKIP() << "direct_bf16dot is not dispatched here (no AVX512_BF16, a cap, or "
                        "vdpbf16ps not faster than the f32 FMA)";
    conv_case c = base(conv_direction::fwd, 2);
    c.mb = 8, c.icg = 256, c.ocg = 512, c.xio = true;  // NXC data, XIO weights, as the suite
    set_axis(c, 0, 56, 1, 2);
    set_axis(c, 1, 56, 1, 2);
    EXPECT_STREQ(dispatch(make_problem(c), effective_features(), false).impl->name,
                 "direct_bf16dot:avx512_bf16");
    const impl_desc &gemm = inventory_row("gemm:avx512");
    EXPECT_EQ(gemm.why_not(make_problem(c)), gemm_why_not(make_problem(c), 16, 32, 2.0));
    EXPECT_NE(gemm.why_not(make_problem(c)), "");
    c.dt = c.math = data_type::f16;
    EXPECT_EQ(gemm.why_not(make_problem(c)), gemm_why_not(make_problem(c), 16, 32, 1.0));
    EXPECT_STREQ(dispatch(make_problem(c), effective_features(), false).impl->name,
                 gemm_why_not(make_problem(c), 16, 32, 1.0).empty() ? "gemm:avx512"
                                                                    : "direct_brgemm:avx512");
}

// bf16 matrix products go to gemm_bf16dot (the GEMM schedule on vdpbf16ps) where its packers read
// the operands by rows, transposes or the pair packer: the user's ConvTranspose3d 50 -> 1 and its
// weight gradient (K = the batch). A weight gradient whose pixels on K are a strided view (a
// ConvTranspose with stride 2 along w, random 101 of the bench: its pairs would be copied element
// by element, 2.4x the f32 GEMM's time) is left to the f32 GEMM row, with the reason.
TEST(Bf16DotDispatch, GemmPairsTakeMatrixProductsWhosePackersReadRuns) {
    if (!isa_available(cpu_isa::avx512_bf16) || !fast_bf16_dot())
        GTEST_SKIP() << "gemm_bf16dot is not dispatched here (no AVX512_BF16, a cap, or "
                        "vdpbf16ps not faster than the f32 FMA)";
    const impl_desc &pairs = inventory_row("gemm_bf16dot:avx512_bf16");
    for (conv_direction dir : {conv_direction::bwd_data, conv_direction::bwd_weights}) {
        conv_case c = base(dir, 3);  // the conv view of the ConvTranspose: src is the 28 x 28 side
        c.mb = 200, c.icg = 1, c.ocg = 50;
        set_axis(c, 1, 28, 28);
        set_axis(c, 2, 28, 28);
        c.dt = c.math = data_type::bf16;
        EXPECT_EQ(pairs.why_not(make_problem(c)), "") << describe(c);
        EXPECT_STREQ(dispatch(make_problem(c), effective_features(), false).impl->name,
                     "gemm_bf16dot:avx512_bf16")
            << describe(c);
    }
    conv_case c = base(conv_direction::bwd_weights, 2);
    c.mb = 34, c.icg = 68, c.ocg = 6;
    set_axis(c, 1, 11, 1);
    set_axis(c, 2, 413, 1, 2);
    c.dt = c.math = data_type::bf16;
    const conv_problem p = make_problem(c);
    ASSERT_EQ(gemm_why_not(p, 16, 32, 1.0), "") << "the f32 GEMM row's estimate no longer takes it";
    EXPECT_NE(pairs.why_not(p).find("element by element"), std::string::npos) << pairs.why_not(p);
    EXPECT_STREQ(dispatch(p, effective_features(), false).impl->name, "gemm:avx512");
}

// A bf16 output with contiguous channels (fwd's dst, bwd_data's diff_src) whose rows fill
// their vectors is rounded in place by the microkernel, with no f32 copy to write, read back
// and convert; short or ragged rows (21 channels), NCX outputs and f32 outputs under
// fpmath_mode bf16 are not (an f32 copy, or the user's f32 tensor in place).
TEST(Bf16DotPlan, RoundsABf16OutputWithContiguousChannelsInPlace) {
    for (conv_direction dir : {conv_direction::fwd, conv_direction::bwd_data}) {
        const char *out = dir == conv_direction::fwd ? " dst=" : " src=";
        conv_case c = base(dir, 2);
        set_axis(c, 1, 6, 3, 1, 1, 1, 1);
        set_axis(c, 2, 6, 3, 1, 1, 1, 1);
        auto described = [&] { return bf16dot_row().create_emulated(make_problem(c))->describe(); };
        for (dim_t ch : {32, 72, 21}) {
            c.icg = c.ocg = ch;
            const char *want = ch == 21 ? "copied" : "rounded in place";
            EXPECT_NE(described().find(std::string(out) + want), std::string::npos)
                << to_string(dir) << " " << ch << " channels: " << described();
        }
        c.icg = c.ocg = 32;
        c.ncx = true;
        EXPECT_NE(described().find(std::string(out) + "copied"), std::string::npos)
            << to_string(dir) << ": " << described();
        c.ncx = false, c.dt = data_type::f32, c.math = data_type::bf16;
        EXPECT_NE(described().find(std::string(out) + "in place"), std::string::npos)
            << to_string(dir) << ": " << described();
        EXPECT_EQ(described().find("rounded"), std::string::npos) << described();
    }
}

// Every backend on inputs with an infinity, against the reference: NaN where the reference has
// NaN, the same value elsewhere, and some outputs finite.
void expect_nans_where_the_reference_has_them(const conv_case &c, const inputs &in) {
    const conv_problem p = make_problem(c);
    const buffer want = run(p, in, nullptr);
    for (const row_backend &b : backends()) {
        if (!b.skip.empty()) continue;
        const auto k = b.create(p);
        const buffer got = run(p, in, k.get());
        int finite = 0;
        for (dim_t o : output_offsets(p)) {
            finite += std::isfinite(want.get(o));
            if (std::isnan(want.get(o)))
                ASSERT_TRUE(std::isnan(got.get(o))) << b.name << " at " << o;
            else
                ASSERT_EQ(got.get(o), want.get(o)) << b.name << " " << describe(c) << " at " << o;
        }
        ASSERT_GT(finite, 0);
    }
}

// The cases of w_merged_cases merge (the plan says so), into an output rounded in place where
// src's pixels are dense along w, else through the f32 copy; and where a condition fails, the
// phases stay apart: a begin pad or a src width that is not a multiple of the stride, two
// groups, a dilation along w, 32 channels (whole vectors already).
TEST(Bf16DotPlan, MergesTheStridePhasesAlongWWhereTheyFillTheVectors) {
    auto described = [](const conv_case &c) {
        return bf16dot_row().create_emulated(make_problem(c))->describe();
    };
    for (const conv_case &c : w_merged_cases()) {
        const std::string d = described(c);
        EXPECT_NE(d.find("stride phases along w merged"), std::string::npos) << describe(c) << d;
        const bool dense = !c.ncx && c.pad == 0;
        const char *want = c.dt == data_type::f32 ? (c.ncx ? "src=copied" : "src=in place")
                           : dense                ? "src=rounded in place"
                                                  : "src=copied";
        EXPECT_NE(d.find(want), std::string::npos) << describe(c) << " wants " << want << ": " << d;
    }
    const conv_case merged = w_merged_cases()[0];
    std::vector<conv_case> apart(5, merged);
    set_axis(apart[0], 2, 14, 4, 2, 1, 1, 1);
    set_axis(apart[1], 2, 13, 4, 2, 1, 0, 0);
    apart[2].g = 2;
    set_axis(apart[3], 2, 14, 2, 2, 2, 0, 0);
    apart[4].icg = 32;
    for (const conv_case &c : apart)
        EXPECT_EQ(described(c).find("merged"), std::string::npos) << describe(c) << described(c);
}

// Merged, every sub-pixel reads the dst pixels the reference reads for it and no other (no
// zero weight meets a dst value): an infinity in diff_dst makes NaN and infinities of the same
// src pixels as in the reference, and leaves the others finite and equal.
TEST(Bf16DotMergedPhases, AnInfinityReachesTheSrcPixelsTheReferenceReachesWithIt) {
    const conv_case c = w_merged_cases()[0];
    const conv_problem p = make_problem(c);
    std::mt19937_64 rng(9);
    inputs in = make_inputs(p, rng, true);
    in.dst.set(2 * p.dst.sp[1] + 3 * p.dst.sp[2] + 4 * p.dst.c, INFINITY);  // h 2, w 3, channel 4
    expect_nans_where_the_reference_has_them(c, in);
}

// bwd_weights pairs an odd width's last dst pixel with a zero pixel; the src pixel its tap
// would pair with may be one no output reads (here iw = 6 of 7, kernel 2, stride 2: dst width
// 3), and an infinity there must not turn into 0 * inf = NaN.
TEST(Bf16DotBwdWeights, UnreadSrcPixelsDoNotReachTheResult) {
    for (const row_backend &b : backends()) {
        if (!b.skip.empty()) continue;
        conv_case c = base(conv_direction::bwd_weights, 1);
        c.icg = 3, c.ocg = 5;
        set_axis(c, 2, 7, 2, 2);
        const conv_problem p = make_problem(c);
        ASSERT_EQ(p.o[2], 3);
        std::mt19937_64 rng(5);
        inputs in = make_inputs(p, rng, true);
        for (dim_t ch = 0; ch < p.ic(); ++ch) in.src.set(6 * p.src.sp[2] + ch * p.src.c, INFINITY);
        const auto k = b.create(p);
        const buffer got = run(p, in, k.get()), want = run(p, in, nullptr);
        for (dim_t o : output_offsets(p)) {
            ASSERT_TRUE(std::isfinite(want.get(o)));
            ASSERT_EQ(got.get(o), want.get(o)) << b.name << " at " << o;
        }
    }
}

// The flattened forward with an odd window (3 channels, kernel 3) reduces it with one element
// past its end, the next column's channel 0, times a zero weight. Where that element is
// infinite, 0 x inf must not make NaN of an output that does not read it: such a src is copied
// with a zero channel instead. Stride 3: window ow covers columns [3 ow, 3 ow + 3), so column
// 3's infinity is past window 0's end and inside window 1.
TEST(Bf16DotFlattened, AnInfinityPastAnOddWindowIsNotMultiplied) {
    conv_case c = base(conv_direction::fwd, 1);
    c.icg = 3, c.ocg = 18, c.mb = 2;
    set_axis(c, 2, 12, 3, 3);
    const conv_problem p = make_problem(c);
    ASSERT_TRUE(p.flattens_w());
    std::mt19937_64 rng(5);
    inputs in = make_inputs(p, rng, true);
    in.src.set(3 * p.src.sp[2], INFINITY);
    expect_nans_where_the_reference_has_them(c, in);  // (finite: window 0, the second image)
}

// Values around the denormal range, exact in bf16.
const float tiny = std::ldexp(1.f, -130);  // a denormal (bf16 and f32)
const float huge = std::ldexp(1.f, 126);   // tiny * huge = 1/16 if tiny were kept
const float small = std::ldexp(1.f, -70);  // small * small = 2^-140: a denormal product

// One output pixel of a 1x1 convolution over channels (c0, c1) with weights (w0, w1), through
// the direction's own operands: fwd reduces src channels, bwd_data dst channels, bwd_weights
// two pixels of one channel pair.
float one_pair(const row_backend &b, conv_direction dir, float a0, float a1, float w0, float w1) {
    conv_case c = base(dir, 1);
    if (dir == conv_direction::bwd_weights) {
        set_axis(c, 2, 2, 1);  // two pixels: the pixel pair
    } else {
        c.icg = dir == conv_direction::fwd ? 2 : 1;
        c.ocg = dir == conv_direction::fwd ? 1 : 2;
    }
    const conv_problem p = make_problem(c);
    std::mt19937_64 rng(1);
    inputs in = make_inputs(p, rng, true);
    if (dir == conv_direction::bwd_weights) {  // src pixels (a0, a1), diff_dst (w0, w1)
        in.src.set(0, a0), in.src.set(1, a1);
        in.dst.set(0, w0), in.dst.set(1, w1);
    } else if (dir == conv_direction::fwd) {  // src channels (a0, a1), weights (w0, w1)
        in.src.set(0, a0), in.src.set(1, a1);
        in.wei.set(0, w0), in.wei.set(1, w1);
    } else {  // diff_dst channels (a0, a1), weights (w0, w1) (OIX: oc is the outer axis)
        in.dst.set(0, a0), in.dst.set(1, a1);
        in.wei.set(0, w0), in.wei.set(1, w1);
    }
    const auto k = b.create(p);
    return run(p, in, k.get()).get(0);
}

TEST_P(Bf16Dot, DenormalInputsAreZeroAndDenormalResultsFlush) {
    const conv_direction dir = GetParam();
    for (const row_backend &b : backends()) {
        if (!b.skip.empty()) continue;
        // A denormal input counts as zero: the reference gives 1 + 1/16, vdpbf16ps 1.
        EXPECT_EQ(one_pair(b, dir, tiny, 1.f, huge, 1.f), 1.f) << b.name;
        EXPECT_EQ(one_pair(b, dir, 1.f, tiny, 1.f, huge), 1.f) << b.name;
        // A denormal product is flushed to zero (the reference keeps 2^-140).
        EXPECT_EQ(one_pair(b, dir, small, 0.f, small, 0.f), 0.f) << b.name;
        // Normal values on either side of the range are untouched.
        EXPECT_EQ(one_pair(b, dir, std::ldexp(1.f, -60), 1.f, std::ldexp(1.f, -60), 0.f),
                  std::ldexp(1.f, -120))
            << b.name;
    }
}

}  // namespace
}  // namespace convgrad::detail
