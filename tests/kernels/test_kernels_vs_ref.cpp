// Every row of the kernel inventory, on this machine under its CONVGRAD_MAX_ISA cap (the ctest
// kernels_vs_reference_cap_* runs repeat this under each level the inventory uses), against the
// reference, over a seeded random sweep of problems that hits tails and edges: odd and tiny
// channel counts, groups and depthwise, dilation, stride > kernel, asymmetric and large pads,
// 1-D/2-D/3-D, spatial size 1, both data formats, every weights format, strided tensors,
// f32/bf16/f16; groups of one vector of channels on lines longer than a register tile. A row the
// machine cannot run is a visible skip with the reason.
#include <gtest/gtest.h>

#include <random>

#include "kernels/common/direct_plan.hpp"
#include "util/conv_test_util.hpp"
#include "util/kernel_check.hpp"

namespace convgrad {
namespace {

using testing::tensor_buffer;

struct random_case {
    op o{0, op_kind::Convolution};
    std::string text;
};

dim_t pick(std::mt19937_64 &rng, std::initializer_list<dim_t> v) {
    return *(v.begin() + std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng));
}

// What a sweep draws from: spatial ranks, channels per group, the big side's spatial sizes and
// batch sizes, each picked uniformly.
struct case_ranges {
    std::initializer_list<dim_t> ranks, groups, icg, ocg, kernel, sizes, mb;
    bool depthwise;  // one case in six is depthwise
    dim_t w_stride = 0;  // the stride along w, when not drawn
    bool equal_channels = false;  // ocg = icg (the grouped kernels' problems)
    dim_t dilation = 0;  // the dilation of every axis, when not drawn (the pads end made to fit)
    // Along w: a stride of 2-4, an undilated kernel of 1-2 strides, a begin pad of 0-1 strides
    // and a src width of whole strides: the data gradient's stride phases along w merge into
    // its channels where they are few (direct_merges_w_phases).
    bool w_phases_merge = false;
    // Only weight gradients (of either family) with stride and dilation 1 along w: the problems
    // whose grouped rows the direct kernel reduces as runs (direct_bwd_w_group_runs).
    bool weight_gradient_runs = false;
};
// Tails and edges: tiny and odd channel counts, spatial size 1.
constexpr case_ranges edge_ranges{{1, 2, 2, 2, 3},
                                  {1, 1, 1, 2, 3, 4},
                                  {1, 2, 3, 5, 8, 16, 17, 33},
                                  {1, 3, 4, 7, 16, 19, 32, 48, 65},
                                  {1, 2, 3, 3, 4, 5},
                                  {1, 2, 4, 7, 9, 13, 20, 31},
                                  {1, 2, 3},
                                  true};
// Several channel blocks on either side (with tails) over enough pixels that every thread gets
// several units of register tiles: the orders in which the direct kernel's gather walks blocks.
constexpr case_ranges block_ranges{{1, 2}, {1, 2}, {16, 65, 130}, {65, 130}, {1, 3}, {20, 24, 28},
                                   {2}, false};
// Many groups of 16-33 channels (the direct kernel's, not the lane-per-channel kernels'): the
// gather runs sets of groups per unit of register tiles, shifting its tables from group to
// group and block to block, and splits the groups into sets when their weights outgrow its L2
// budget (12 groups of 70 x 33 channels and 3x3 taps) or when the units are too few to share
// out.
constexpr case_ranges group_ranges{{1, 2}, {5, 12}, {16, 17, 33}, {16, 24, 70}, {1, 3},
                                   {6, 9, 20}, {1, 2}, false};
// C sides of 3 vectors (9-12 channels on SSE2's 4 lanes, 17-24 on AVX2's 8): the direct
// kernel's gather takes them as one block of 3 vectors, 4 x 3 register tiles, stride phases
// and all (direct_block_nv).
constexpr case_ranges three_vector_ranges{
    {1, 2}, {1, 2}, {9, 11, 12, 17, 21, 24}, {9, 11, 12, 17, 21, 24}, {1, 2, 3}, {5, 9, 20},
    {1, 2}, false};
// A stride along w far beyond the image (found by fuzz_op under UBSan: the grouped kernel's
// bwd_data, the direct kernel's bwd_weights). With one output pixel per row the kernels get it
// as it is, and nothing may multiply it by a pixel index or a channel stride before knowing the
// pixel exists; with two (begin pads of the stride, half the cases) the problem takes a stride
// of the image plus a window (conv_problem::shorten_strides_past_image), checked here on every
// row.
constexpr case_ranges huge_w_stride_ranges{
    {2}, {1, 3}, {1, 2, 5}, {1, 2, 7}, {1, 2, 3}, {3, 4, 9}, {1, 2}, true, INT64_MAX / 2};
// A dilation far beyond the image on every axis (pads to match: each output pixel reads one
// tap per axis): nothing may size a copy by the span of the taps (found by fuzz_rewrite under
// UBSan in the grouped kernel's bwd_weights, whose src box overflowed). Few channels per group
// on both sides, so that the grouped kernels are asked too.
constexpr case_ranges huge_dilation_ranges{{1, 2, 3}, {1, 2, 4}, {1, 2, 4, 8, 17}, {},
                                           {2, 3},    {1, 2, 5}, {1, 2},           true,
                                           0,         true,      INT64_MAX / 16};

// Kernels much larger than the input (sizes 1-3, kernels of 5-13 taps, the padding made to
// match): most taps read only padding for every output, and the direct kernels neither pack
// their weights nor visit them (tap_is_read); the taps that remain must all be there.
constexpr case_ranges big_kernel_ranges{{1, 2, 3}, {1, 2}, {1, 3, 16, 17}, {1, 4, 16, 19},
                                        {5, 9, 13}, {1, 2, 3}, {1, 2}, true};

// Few channels on the input side (1-5 per group; a first layer's 3) against many on the other:
// the direct kernel's bwd_weights lets several taps along w share a register tile, rows (tap,
// channel), over the output pixels all of them reach, and each tap's other pixels (at the
// padding) follow in tiles of its own; its forward flattens the kernel width into K.
constexpr case_ranges few_channel_ranges{{1, 2, 3}, {1, 1, 2}, {1, 2, 3, 5}, {16, 33, 65},
                                         {2, 3, 4, 5, 7}, {5, 9, 13, 20}, {1, 2}, false};

// 8-31 input channels with kernels 2-7 wide: the forward's widest flattening rule
// (direct_flattens_w: the vdpbf16ps kernel's, up to 31 channels and 128 values a window; the
// f32 kernel's at stride 1 up to 16 channels), odd windows among them, and the same problems
// unflattened for the other directions.
constexpr case_ranges window_channel_ranges{
    {1, 2, 2, 3}, {1},  {8, 9, 12, 16, 21, 31}, {16, 21, 33}, {2, 3, 4, 5, 7}, {5, 9, 13, 20},
    {1, 2},       false};

// 2, 4 or 8 channels per group on both sides (ResNeXt's grouped 3x3 has 32 groups of 4-8):
// the grouped kernels put several groups on a vector's lanes (of channels, or of channel
// pairs for vdpbf16ps), so the group counts give whole vectors and tails of every size, one
// vector or several, under strides, dilation and pads.
constexpr case_ranges w_merge_ranges{
    {1, 2, 2, 3}, {1, 1, 2}, {3, 5, 9, 21}, {4, 7, 21, 33}, {2, 3}, {3, 5, 9}, {1, 2, 3}, false, 0,
    false,        0,         true};

constexpr case_ranges few_channel_group_ranges{{1, 2, 2, 3}, {3, 4, 8, 12, 33}, {2, 4, 8}, {},
                                               {1, 2, 3, 5}, {3, 7, 13, 20}, {1, 2}, false, 0,
                                               true};

// Groups of exactly one vector of channels (4 on SSE2, 8 on AVX2, 16 on AVX-512) over lines
// longer than a register tile (14-16 rows), kernels up to 7 wide and pads up to 5: the direct
// kernel's gather gives such tiles as spaced rows, one call per range of rows its taps read
// inside the image (gather_tables::calls), the borders along w too.
constexpr case_ranges one_vector_group_ranges{
    {1, 2, 2}, {2, 3, 5}, {4, 8, 16}, {},  {1, 2, 3, 5, 7}, {15, 17, 20, 29, 33},
    {1, 2},    false,     0,          true};

// Weight gradients of groups of one vector of output channels (4, 8, 16) over 1-12 input
// channels, stride 1 along w, kernels up to 7 wide and pads up to 5 (the row's reads of the
// padding and of the zeros past its end), over enough rows that a thread's chunks hold several
// runs and cross images, in f32, bf16 and f16, NXC and NCX: the direct kernel reduces their rows
// as runs (bwd_weights_runs.hpp).
constexpr case_ranges weight_gradient_run_ranges{{1, 2, 2, 3},
                                                 {2, 3, 5},
                                                 {1, 2, 3, 5, 8, 12},
                                                 {4, 8, 16},
                                                 {1, 2, 3, 5, 7},
                                                 {5, 9, 15, 20},
                                                 {1, 2, 3},
                                                 false,
                                                 1,
                                                 false,
                                                 0,
                                                 false,
                                                 true};

// A random op whose shapes are consistent (built from a random canonical convolution).
random_case make_case(std::mt19937_64 &rng, const case_ranges &cr = edge_ranges) {
    op_kind kind = all_op_kinds[rng() % 6];
    const bool ct = is_conv_transpose_family(kind);
    if (cr.weight_gradient_runs)
        kind = ct ? op_kind::ConvTransposeBackwardWeights : op_kind::ConvolutionBackwardWeights;
    const int S = int(pick(rng, cr.ranks));
    const dim_t G = pick(rng, cr.groups);
    const bool depthwise = rng() % 6 == 0 && cr.depthwise;
    const dim_t icg = depthwise ? 1 : pick(rng, cr.icg);
    const dim_t ocg = depthwise ? 1 : cr.equal_channels ? icg : pick(rng, cr.ocg);
    const dim_t g = depthwise ? pick(rng, {3, 8, 17, 32}) : G;
    const dim_t mb = pick(rng, cr.mb);
    dims k, s, d, pb, pe, big, small, op_pad;
    for (int j = 0; j < S; ++j) {
        k.push_back(pick(rng, cr.kernel));
        s.push_back(pick(rng, {1, 1, 2, 3, 4}));
        if (cr.w_stride && j == S - 1) s.back() = cr.w_stride;
        d.push_back(cr.dilation ? cr.dilation : pick(rng, {1, 1, 1, 2, 3}));
        if (cr.weight_gradient_runs && j == S - 1) d.back() = 1;
        pb.push_back(pick(rng, {0, 0, 1, 2, 3, 5}));
        // Half the time, begin pads of the stride: two output pixels per row, the first reading
        // only padding.
        if (cr.w_stride && j == S - 1 && rng() % 2) pb.back() = cr.w_stride;
        pe.push_back(pick(rng, {0, 0, 1, 2, 4}));
        const bool merged_axis = cr.w_phases_merge && j == S - 1;
        if (merged_axis) {
            s.back() = pick(rng, {2, 3, 4});
            k.back() = s.back() * pick(rng, {1, 2});
            d.back() = 1;
            pb.back() = s.back() * pick(rng, {0, 1});
        }
        const dim_t ke = (k[j] - 1) * d[j] + 1;
        dim_t I = merged_axis ? s.back() * pick(rng, {2, 3, 5, 7}) : pick(rng, cr.sizes);
        if (I + pb[j] + pe[j] < ke && !cr.dilation) I = ke - pb[j] - pe[j] + dim_t(rng() % 3);
        if (I < 1) I = 1;
        if (I + pb[j] + pe[j] < ke) pe[j] = ke - I - pb[j];
        big.push_back(I);
        small.push_back((I + pb[j] + pe[j] - ke) / s[j] + 1);
        // The big side of a ConvTranspose must be reachable as s*(Y-1)+Ke-pb-pe+op, op < s.
        op_pad.push_back(I - (s[j] * (small[j] - 1) + ke - pb[j] - pe[j]));
    }
    const bool ncx = rng() % 2;
    const bool legacy_wf = ct && rng() % 4 == 0;
    const bool first_wf = rng() % 2;
    const std::string wf =
        ct ? (legacy_wf ? (first_wf ? "OIX" : "XIO") : (first_wf ? "IOX" : "XOI"))
           : (first_wf ? "OIX" : "XIO");
    const data_type dt = std::vector<data_type>{data_type::f32, data_type::f32, data_type::bf16,
                                                data_type::f16}[rng() % 4];
    auto data_shape = [&](dim_t c, const dims &sp) {
        dims r{mb};
        if (ncx) r.push_back(c);
        r.insert(r.end(), sp.begin(), sp.end());
        if (!ncx) r.push_back(c);
        return r;
    };
    // Mirror-convolution weights: O axis = g*ocg (conv dst channels), I axis = icg.
    dims wshape;
    const dim_t O = g * ocg, I = icg;
    dims kk = k;
    if (wf == "OIX" && !ct)
        wshape = {O, I};
    else if (wf == "XIO" && !ct)
        wshape = {I, O};
    else if (wf == "IOX")
        wshape = {O, I};
    else if (wf == "XOI")
        wshape = {I, O};
    else if (wf == "OIX")
        wshape = {I, O};  // legacy [OC/G, IC, K]
    else
        wshape = {O, I};  // legacy XIO [K, IC, OC/G]
    if (wf[0] == 'X')
        wshape.insert(wshape.begin(), kk.begin(), kk.end());
    else
        wshape.insert(wshape.end(), kk.begin(), kk.end());

    const dims src_shape = data_shape(g * icg, big), dst_shape = data_shape(g * ocg, small);
    // Random strides: sometimes channels-last strides on NCX shapes, sometimes padded rows.
    auto strided = [&](size_t id, const dims &shape) {
        return testing::random_strided_tensor(rng, id, dt, shape);
    };
    op o(1, kind, "sweep");
    o.set_attr("strides", s)
        .set_attr("dilations", d)
        .set_attr("pads_begin", pb)
        .set_attr("pads_end", pe);
    o.set_attr("groups", g).set_attr("data_format", std::string(ncx ? "NCX" : "NXC"));
    o.set_attr("weights_format", wf);
    const bool bias = rng() % 2;
    testing::conv_shapes sh{src_shape, dst_shape, wshape, op_pad, g * icg, O};
    testing::add_conv_tensors(o, kind, sh, bias, dt, strided);
    random_case c;
    c.o = o;
    c.text =
        std::string(to_string(kind)) + " " + to_string(dt) + " " + (ncx ? "NCX " : "NXC ") + wf;
    return c;
}

// 1-D/2-D/3-D problems of 2, 4 or 8 channels per group on both sides, on 1-3 threads.
const std::vector<testing::swept_case> &few_channel_group_cases() {
    static const std::vector<testing::swept_case> cases = testing::reference_sweep(
        20261128, 36, [](std::mt19937_64 &rng) { return make_case(rng, few_channel_group_ranges); },
        [](int iter) { return 1 + iter % 3; });
    return cases;
}

// The edge sweep (400 problems on 1 thread), then the few-channel groups' (which no other
// sweep draws, and some rows take only).
const std::vector<testing::swept_case> &random_cases() {
    static const std::vector<testing::swept_case> cases = [] {
        std::vector<testing::swept_case> v = testing::reference_sweep(
            20261122, 400, [](std::mt19937_64 &rng) { return make_case(rng); },
            [](int) { return 1; });
        const auto &g = few_channel_group_cases();
        v.insert(v.end(), g.begin(), g.end());
        return v;
    }();
    return cases;
}

// 1-D and 2-D problems of 16-130 channels per group, on 1-3 threads.
const std::vector<testing::swept_case> &block_cases() {
    static const std::vector<testing::swept_case> cases = testing::reference_sweep(
        20261123, 24, [](std::mt19937_64 &rng) { return make_case(rng, block_ranges); },
        [](int iter) { return 1 + iter % 3; });
    return cases;
}

// 1-D and 2-D problems of 5 or 12 groups of 16-33 channels, on 1-3 threads.
const std::vector<testing::swept_case> &group_cases() {
    static const std::vector<testing::swept_case> cases = testing::reference_sweep(
        20261124, 24, [](std::mt19937_64 &rng) { return make_case(rng, group_ranges); },
        [](int iter) { return 1 + iter % 3; });
    return cases;
}

// 1-D and 2-D problems of 9-24 channels per group, on 1-3 threads.
const std::vector<testing::swept_case> &three_vector_cases() {
    static const std::vector<testing::swept_case> cases = testing::reference_sweep(
        20261127, 32, [](std::mt19937_64 &rng) { return make_case(rng, three_vector_ranges); },
        [](int iter) { return 1 + iter % 3; });
    return cases;
}

// 2-D problems with a stride of 2^62 along w, on 1-2 threads.
const std::vector<testing::swept_case> &huge_stride_cases() {
    static const std::vector<testing::swept_case> cases = testing::reference_sweep(
        62, 60, [](std::mt19937_64 &rng) { return make_case(rng, huge_w_stride_ranges); },
        [](int iter) { return 1 + iter % 2; });
    return cases;
}

// 1-D/2-D/3-D problems whose data gradient merges its stride phases along w, on 1-3 threads.
const std::vector<testing::swept_case> &w_merge_cases() {
    static const std::vector<testing::swept_case> cases = testing::reference_sweep(
        20261206, 48, [](std::mt19937_64 &rng) { return make_case(rng, w_merge_ranges); },
        [](int iter) { return 1 + iter % 3; });
    return cases;
}

// 1-D and 2-D problems of groups of 4, 8 or 16 channels on long lines, on 1-3 threads.
const std::vector<testing::swept_case> &one_vector_group_cases() {
    static const std::vector<testing::swept_case> cases = testing::reference_sweep(
        20261207, 48, [](std::mt19937_64 &rng) { return make_case(rng, one_vector_group_ranges); },
        [](int iter) { return 1 + iter % 3; });
    return cases;
}

// Weight gradients whose grouped rows go as runs, on 1-3 threads.
const std::vector<testing::swept_case> &weight_gradient_run_cases() {
    static const std::vector<testing::swept_case> cases = testing::reference_sweep(
        20261208, 48,
        [](std::mt19937_64 &rng) { return make_case(rng, weight_gradient_run_ranges); },
        [](int iter) { return 1 + iter % 3; });
    return cases;
}

// 1-D/2-D/3-D problems with dilations near the dim_t range, on 1-2 threads.
const std::vector<testing::swept_case> &huge_dilation_cases() {
    static const std::vector<testing::swept_case> cases = testing::reference_sweep(
        20261204, 60, [](std::mt19937_64 &rng) { return make_case(rng, huge_dilation_ranges); },
        [](int iter) { return 1 + iter % 2; });
    return cases;
}

// 1-D/2-D/3-D problems whose kernels outsize their inputs, on 1-3 threads.
const std::vector<testing::swept_case> &big_kernel_cases() {
    static const std::vector<testing::swept_case> cases = testing::reference_sweep(
        20261125, 30, [](std::mt19937_64 &rng) { return make_case(rng, big_kernel_ranges); },
        [](int iter) { return 1 + iter % 3; });
    return cases;
}

// 1-D/2-D/3-D problems with 1-5 input channels per group, on 1-3 threads.
const std::vector<testing::swept_case> &few_channel_cases() {
    static const std::vector<testing::swept_case> cases = testing::reference_sweep(
        20261126, 48, [](std::mt19937_64 &rng) { return make_case(rng, few_channel_ranges); },
        [](int iter) { return 1 + iter % 3; });
    return cases;
}

// 1-D/2-D/3-D problems with 8-31 input channels and kernels 2-7 wide, on 1-3 threads.
const std::vector<testing::swept_case> &window_channel_cases() {
    static const std::vector<testing::swept_case> cases = testing::reference_sweep(
        20261205, 64, [](std::mt19937_64 &rng) { return make_case(rng, window_channel_ranges); },
        [](int iter) { return 1 + iter % 3; });
    return cases;
}

// Each problem is taken by at least one kernel that can run here (the sse2 rows run everywhere).
TEST(KernelsVsReference, EveryProblemHasAKernel) {
    for (const auto &c : random_cases()) {
        bool taken = false;
        for (const auto &row : detail::kernel_inventory())
            taken = taken || (detail::isa_available(row.isa) && row.serves(c.r.prob).empty() &&
                              row.why_not(c.r.prob).empty());
        EXPECT_TRUE(taken) << c.text << " " << c.r.prob.desc();
    }
}

// The merge sweep reaches the merged gathers: some of its data gradients merge for vectors of
// 16 floats (AVX-512) and some for 8 (AVX2).
TEST(KernelsVsReference, TheMergeSweepMergesStridePhases) {
    for (int vlen : {8, 16}) {
        int merged = 0;
        for (const auto &c : w_merge_cases())
            merged += detail::direct_merges_w_phases(c.r.prob, vlen);
        EXPECT_GE(merged, 6) << vlen << " lanes";
    }
}

// The runs sweep reaches the runs, for vectors of 4, 8 and 16 floats (SSE2, AVX2, AVX-512).
TEST(KernelsVsReference, TheRunsSweepReducesRuns) {
    for (auto [vlen, nregs] : {std::pair{4, 16}, std::pair{8, 16}, std::pair{16, 32}}) {
        int runs = 0;
        for (const auto &c : weight_gradient_run_cases())
            runs += detail::direct_bwd_w_group_runs(detail::make_direct_plan(
                c.r.prob, vlen, nregs, detail::machine_caches(), true, true));
        EXPECT_GE(runs, 4) << vlen << " lanes";
    }
}

}  // namespace

namespace testing {

// Runs the row on every problem of a sweep it can compute, against the reference, and prints
// how many that was (a visible skip when the machine cannot run the row).
void sweep_row(const detail::impl_desc &row, const std::vector<swept_case> &cases,
               bool expect_some) {
    const row_mode m = how_to_run(row);
    if (!m.create) GTEST_SKIP() << row.name << ": " << m.skip_reason;
    const row_runs done = check_row_cases(row, m, cases);
    if (expect_some) {
        EXPECT_GT(done.runs, 0) << row.name << " can compute none of the sweep's problems";
    }
    std::printf("%s%s: %d of %zu problems compared", row.name, m.emulated ? " (emulated)" : "",
                done.runs, cases.size());
    if (done.emulated > 0) {
        std::printf(", %d of them emulated (%s)", done.emulated, done.emulated_because.c_str());
        row_modes_seen()[row.name] = "native, emulated where " + done.emulated_because;
    }
    std::printf("\n");
}

TEST_P(KernelRow, RandomSweep) {
    sweep_row(*GetParam(), random_cases(), true);
}

TEST_P(KernelRow, ManyChannelBlocks) {
    sweep_row(*GetParam(), block_cases(), false);
}

TEST_P(KernelRow, ThreeVectorChannelBlocks) {
    sweep_row(*GetParam(), three_vector_cases(), false);
}

TEST_P(KernelRow, ManyGroups) {
    sweep_row(*GetParam(), group_cases(), false);
}

TEST_P(KernelRow, KernelLargerThanInput) {
    sweep_row(*GetParam(), big_kernel_cases(), false);
}

TEST_P(KernelRow, FewInputChannels) {
    sweep_row(*GetParam(), few_channel_cases(), false);
}

TEST_P(KernelRow, WindowsOfUpTo31Channels) {
    sweep_row(*GetParam(), window_channel_cases(), false);
}

TEST_P(KernelRow, HugeStrideAlongW) {
    sweep_row(*GetParam(), huge_stride_cases(), false);
}

TEST_P(KernelRow, StridePhasesAlongWMerged) {
    sweep_row(*GetParam(), w_merge_cases(), false);
}

TEST_P(KernelRow, OneVectorGroupsAlongLines) {
    sweep_row(*GetParam(), one_vector_group_cases(), false);
}

TEST_P(KernelRow, WeightGradientRuns) {
    sweep_row(*GetParam(), weight_gradient_run_cases(), false);
}

TEST_P(KernelRow, HugeDilation) {
    sweep_row(*GetParam(), huge_dilation_cases(), false);
}

INSTANTIATE_TEST_SUITE_P(Inventory, KernelRow, ::testing::ValuesIn(inventory_rows()),
                         row_test_name);

}  // namespace testing
}  // namespace convgrad
