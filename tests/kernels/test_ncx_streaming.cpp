// NCX tensors in the direct kernel (and the grouped lane-per-channel one): the batch streamed in
// chunks of images (plan images_per_chunk), each chunk's NCX operands block-transposed into
// channels-last scratch and its output written back before the next chunk, or an image's output
// a few rows at a time (plan out_rows_per_chunk); bwd_weights converts each thread's chunk of
// rows (plan rows_per_chunk) inside the schedule. For every direction,
// f32/bf16/f16, groups, 1-D/2-D/3-D, odd strides, dilation and the flattened-width stem path, the
// results must be
//   - bit-identical between NCX, NXC, NCX with gaps after rows and NCX with strided w (real
//     values, so a different summation order would show), whatever the chunking and at 1-3
//     threads, and
//   - equal to the reference (small integers: sums are exact).
#include <gtest/gtest.h>

#include <iterator>
#include <numeric>
#include <random>
#include <utility>
#include <vector>

#include "core/resolve.hpp"
#include "kernels/common/direct_plan.hpp"
#include "kernels/direct_entry_points.hpp"
#include "util/kernel_check.hpp"

namespace convgrad {
namespace {

using testing::tensor_buffer;

struct direct_unit {
    const char *name;
    detail::cpu_isa isa;
    int vlen, nregs;
    void (*run)(const detail::direct_plan &, const detail::conv_args &);
    void (*run_grouped)(const detail::direct_plan &, const detail::conv_args &);  // or null
    bool bf16_only = false;  // the vdpbf16ps kernel: bf16 cases only
};
const direct_unit units[] = {
    {"avx512", detail::cpu_isa::avx512, 16, 32, detail::avx512::run_direct,
     detail::avx512::run_grouped},
    {"avx2", detail::cpu_isa::avx2, 8, 16, detail::avx2::run_direct, detail::avx2::run_grouped},
    {"sse2", detail::cpu_isa::generic, 4, 16, detail::sse2::run_direct, nullptr},
    // (The AVX-512 source on its plain C++ traits: where AVX-512 is missing, it runs here.)
    {"avx512_emulated", detail::cpu_isa::avx2, 16, 32, detail::avx512_emu::run_direct,
     detail::avx512_emu::run_grouped}};
// The vdpbf16ps kernel's gather (bf16 cases only), on the same plans.
const direct_unit bf16dot_units[] = {
    {"direct_bf16dot", detail::cpu_isa::avx512_bf16, 16, 32, detail::avx512_bf16::run_bf16dot,
     nullptr, true},
    {"direct_bf16dot emulated on AVX-512F", detail::cpu_isa::avx512, 16, 32,
     detail::avx512::run_bf16dot, nullptr, true},
    {"direct_bf16dot emulated in C++", detail::cpu_isa::avx2, 16, 32,
     detail::avx512_emu::run_bf16dot, nullptr, true}};

struct stream_case {
    const char *what;
    op_kind kind;
    dim_t g, icg, ocg;
    dims big, k, s, dl, pad;
    data_type dt;
    bool grouped = false;  // the lane-per-channel kernel (channels per group dividing 8)
};

// Batch 3 everywhere: chunks of 1 and 2 images both split it unevenly.
const stream_case cases[] = {
    {"fwd 2-D",
     op_kind::Convolution,
     1,
     19,
     35,
     {9, 11},
     {3, 3},
     {1, 1},
     {1, 1},
     {1, 1},
     data_type::f32},
    {"fwd 2-D stem (flattened w)",
     op_kind::Convolution,
     1,
     3,
     17,
     {20, 19},
     {7, 7},
     {2, 2},
     {1, 1},
     {3, 3},
     data_type::f32},
    {"fwd 2-D bf16 stem (flattened w) stride 3 along w",
     op_kind::Convolution,
     1,
     3,
     20,
     {15, 17},
     {5, 4},
     {2, 3},
     {1, 1},
     {2, 2},
     data_type::bf16},
    {"fwd 3-D f16 two channels (flattened w)",
     op_kind::Convolution,
     1,
     2,
     9,
     {5, 6, 13},
     {3, 2, 3},
     {1, 2, 2},
     {1, 1, 1},
     {1, 0, 2},
     data_type::f16},
    {"fwd 1-D bf16 dilated stride 3",
     op_kind::Convolution,
     1,
     20,
     33,
     {37},
     {5},
     {3},
     {2},
     {2},
     data_type::bf16},
    {"fwd 2-D bf16 64 channels (whole lines: the streamed stores of two vectors)",
     op_kind::Convolution,
     1,
     8,
     64,
     {7, 9},
     {3, 3},
     {1, 1},
     {1, 1},
     {1, 1},
     data_type::bf16},
    {"fwd 2-D f16 groups stride 3",
     op_kind::Convolution,
     2,
     12,
     10,
     {13, 14},
     {3, 3},
     {3, 3},
     {1, 1},
     {1, 1},
     data_type::f16},
    {"bwd_data 2-D stride 2",
     op_kind::ConvolutionBackwardData,
     1,
     17,
     24,
     {13, 10},
     {3, 3},
     {2, 2},
     {1, 1},
     {1, 1},
     data_type::f32},
    {"bwd_data 3-D ConvTranspose",
     op_kind::ConvTranspose,
     1,
     8,
     21,
     {8, 6, 10},
     {2, 2, 2},
     {2, 2, 2},
     {1, 1, 1},
     {0, 0, 0},
     data_type::f32},
    {"bwd_data 2-D bf16 groups",
     op_kind::ConvolutionBackwardData,
     3,
     9,
     7,
     {11, 12},
     {3, 3},
     {1, 2},
     {1, 1},
     {1, 1},
     data_type::bf16},
    {"fwd ConvTransposeBackwardData f16",
     op_kind::ConvTransposeBackwardData,
     1,
     18,
     5,
     {10, 9},
     {4, 4},
     {2, 2},
     {1, 1},
     {1, 1},
     data_type::f16},
    {"bwd_weights 2-D stride 2",
     op_kind::ConvolutionBackwardWeights,
     1,
     19,
     21,
     {12, 11},
     {3, 3},
     {2, 2},
     {1, 1},
     {1, 1},
     data_type::f32},
    {"bwd_weights 3-D bf16 groups",
     op_kind::ConvTransposeBackwardWeights,
     2,
     6,
     9,
     {6, 7, 5},
     {3, 3, 3},
     {1, 1, 1},
     {1, 1, 1},
     {1, 1, 1},
     data_type::bf16},
    {"grouped depthwise fwd",
     op_kind::Convolution,
     24,
     1,
     1,
     {9, 10},
     {3, 3},
     {1, 1},
     {1, 1},
     {1, 1},
     data_type::f32,
     true},
    {"grouped cg 2 bwd_data stride 2 bf16",
     op_kind::ConvolutionBackwardData,
     12,
     2,
     2,
     {11, 9},
     {3, 3},
     {2, 2},
     {1, 1},
     {1, 1},
     data_type::bf16,
     true},
    {"grouped depthwise ConvTranspose",
     op_kind::ConvTranspose,
     20,
     1,
     1,
     {12, 10},
     {4, 4},
     {2, 2},
     {1, 1},
     {1, 1},
     data_type::f32,
     true},
    {"grouped cg 4 bwd_weights f16",
     op_kind::ConvolutionBackwardWeights,
     6,
     4,
     4,
     {8, 9},
     {3, 3},
     {1, 1},
     {1, 1},
     {1, 1},
     data_type::f16,
     true},
};

// ncx_output: the output NCX, the inputs NXC (an f32 input read in place while the output is
// copied: the plan's rows_across_images).
enum class layout { nxc, ncx, ncx_row_gaps, ncx_strided_w, ncx_output };
const char *const layout_names[] = {"NXC", "NCX", "NCX with row gaps", "NCX with strided w",
                                    "NCX output of NXC inputs"};

// Strides of an NCX-shaped data tensor {N, C, spatial...} in the given memory layout.
dims strides_of(const dims &shape, layout l) {
    const size_t r = shape.size();
    std::vector<size_t> order(r);  // outermost first
    std::iota(order.begin(), order.end(), 0);
    dims ext = shape, st(r, 0);
    if (l == layout::nxc) {
        order.erase(order.begin() + 1);
        order.push_back(1);
    }
    if (l == layout::ncx_row_gaps) ext[r - 1] += 3;   // runs of w contiguous, gaps after each
    dim_t step = l == layout::ncx_strided_w ? 2 : 1;  // w not contiguous: the scalar path
    for (size_t j = r; j-- > 0;) {
        st[order[j]] = step;
        step *= ext[order[j]];
    }
    return st;
}

op make_op(const stream_case &c, layout l) {
    const bool ct = is_conv_transpose_family(c.kind);
    const size_t S = c.big.size();
    const dim_t mb = 3;
    testing::conv_shapes sh;
    sh.src = {mb, c.g * c.icg};
    sh.dst = {mb, c.g * c.ocg};
    sh.wei = {c.g * c.ocg, c.icg};
    for (size_t j = 0; j < S; ++j) {
        const dim_t span = c.big[j] + 2 * c.pad[j] - c.dl[j] * (c.k[j] - 1) - 1;
        sh.src.push_back(c.big[j]);
        sh.dst.push_back(span / c.s[j] + 1);
        sh.wei.push_back(c.k[j]);
        sh.output_padding.push_back(span % c.s[j]);  // ConvTranspose: back to the big size
    }
    op o(0, c.kind, c.what);
    o.set_attr("strides", c.s).set_attr("dilations", c.dl).set_attr("pads_begin", c.pad);
    o.set_attr("pads_end", c.pad)
        .set_attr("groups", c.g)
        .set_attr("data_format", std::string("NCX"));
    o.set_attr("weights_format", std::string(ct ? "IOX" : "OIX"));
    testing::add_conv_tensors(o, c.kind, sh, false, c.dt, [&](size_t id, const dims &shape) {
        if (&shape == &sh.wei) return logical_tensor(id, c.dt, shape);
        const layout tl = l != layout::ncx_output ? l : id == 3 ? layout::ncx : layout::nxc;
        return logical_tensor(id, c.dt, shape, strides_of(shape, tl));
    });
    return o;
}

struct prepared {
    detail::resolved_op r;
    std::vector<tensor_buffer> in;
};

// The op's tensors in layout l, filled by logical index (the same values in every layout):
// small integers, or reals in [-1, 1) rounded to the type.
prepared prepare(const stream_case &c, layout l, bool ints) {
    const op o = make_op(c, l);
    prepared pr{detail::resolve_op(o, o.inputs(), o.outputs()), {}};
    for (size_t t = 0; t < pr.r.inputs.size(); ++t) {
        pr.in.emplace_back(pr.r.inputs[t]);
        if (ints) {
            pr.in.back().fill_ints(11 + t);
            continue;
        }
        std::mt19937_64 rng(11 + t);
        std::uniform_real_distribution<double> val(-1.0, 1.0);
        for (dim_t i = 0; i < pr.in.back().count(); ++i) pr.in.back().set(i, val(rng));
    }
    return pr;
}

// Runs one ISA's direct kernel with its plan's threads and (chunk > 0) images per chunk set, and
// (out_rows > 0) the output of fwd/bwd_data computed that many rows at a time. `rounded`: a
// bf16/f16 output with contiguous channels is rounded in place by the gather, as the kernels'
// plans ask (the plan's out_rounded_in_kernel), instead of through an f32 copy. `in_rows`: by
// rows, the input is copied a chunk's rows at a time (the plan's in_rows_copied; else per
// image, or read in place). `band` > 0: the gather runs its channel blocks over bands of that
// many units of register tiles (the plan's gather_band_units), the order it takes for big A.
// `stream`: an f32 output in place is stored past the caches (the plan's stream_output).
// `panel` > 0: the gather's L1 budget for a chunk of packed weights, with no chunk kept whole
// in L2 (the plan's gather_panel and gather_whole_k), so that a few KiB force chunks of K.
// `prefetch` 0 or 1: whether one-tap gathers prefetch the next tile's rows (the plan's
// prefetch_next_rows; -1: the plan's choice for this CPU). `own`: by rows, a copied output's
// chunks are each thread's own (1: the plan's out_rows_private, image by image; 2: with
// rows_across_images, each thread's share of the batch's (image, chunk) pairs, where the input
// is read in place; else image by image; 0: every chunk shared by all).
std::vector<double> run_direct(const direct_unit &u, prepared &pr, int nthr, dim_t chunk,
                               bool grouped, dim_t out_rows = 0, bool rounded = false,
                               bool in_rows = false, dim_t band = 0, bool stream = false,
                               dim_t panel = 0, int prefetch = -1, int own = 0) {
    detail::direct_plan pl = detail::make_direct_plan(
        pr.r.prob, u.vlen, u.nregs, detail::machine_caches(), rounded, false, u.bf16_only);
    pl.nthr = nthr;
    pl.gather_band_units = band;
    pl.stream_output = stream;
    pl.stream_copied_output = stream;  // (an NCX f32 output: its copy written back streamed)
    if (panel > 0) pl.gather_panel = panel, pl.gather_whole_k = 0;
    if (prefetch >= 0) pl.prefetch_next_rows = prefetch == 1;
    // fwd/bwd_data convert `chunk` images at a time, bwd_weights `chunk` rows (n, d, h) per
    // thread at a time: in both the order of every sum stays the same.
    if (chunk > 0) pl.images_per_chunk = pl.rows_per_chunk = chunk;
    // By rows of the output along d, h or w (the outermost of more than one pixel; an image at a
    // time), as the plan does for images beyond L2: the input's copy then holds only the rows
    // those read.
    if (out_rows > 0) {
        pl.images_per_chunk = 1;
        pl.out_rows_per_chunk = out_rows;
        pl.out_row_axis = detail::direct_out_row_axis(pr.r.prob, pl.flat_w);
        pl.in_rows_copied = in_rows;
        pl.out_rows_private = own > 0;
        pl.rows_across_images = own > 1;
    }
    tensor_buffer out(pr.r.outputs[0]);
    std::fill(out.bytes.begin(), out.bytes.end(), uint8_t(0x7f));
    (grouped ? u.run_grouped : u.run)(pl, testing::conv_args_of(pr.r, pr.in, out.data()));
    return out.values();
}

// Whether the case runs the direct kernel's fwd or bwd_data, which can compute an image's output
// in chunks of rows.
bool output_by_rows_applies(const stream_case &c) {
    return !c.grouped && c.kind != op_kind::ConvolutionBackwardWeights &&
           c.kind != op_kind::ConvTransposeBackwardWeights;
}

// The gather in chunks of K (gather.hpp: when the taps x K panel of weights does not fit L2's
// budget and 32 channels of it fit L1's), forced by budgets of a few KiB: each pixel then sums
// its products in another order, so on integer data (exact in every order) it gives the values
// of the plan's own order, rounded in place or not (a bf16/f16 output through its f32 tiles).
TEST(NcxStreaming, GatherInChunksOfChannelsMatchesOneChunk) {
    // K of 70 and 75 (the gather's K is the input side's channels): chunks of 32 or 48 with a
    // tail, by the panels below (9 taps x 32 or 48 packed columns per channel).
    const stream_case chunked[] = {{"fwd 2-D 70 channels",
                                    op_kind::Convolution,
                                    1,
                                    70,
                                    20,
                                    {6, 7},
                                    {3, 3},
                                    {1, 1},
                                    {1, 1},
                                    {1, 1},
                                    data_type::f32},
                                   {"fwd 2-D bf16 70 channels",
                                    op_kind::Convolution,
                                    1,
                                    70,
                                    36,
                                    {5, 6},
                                    {3, 3},
                                    {1, 1},
                                    {1, 1},
                                    {1, 1},
                                    data_type::bf16},
                                   {"bwd_data 2-D stride 2, 75 channels",
                                    op_kind::ConvolutionBackwardData,
                                    1,
                                    20,
                                    75,
                                    {9, 8},
                                    {3, 3},
                                    {2, 2},
                                    {1, 1},
                                    {1, 1},
                                    data_type::f32},
                                   {"bwd_data 2-D f16 75 channels",
                                    op_kind::ConvolutionBackwardData,
                                    1,
                                    33,
                                    75,
                                    {6, 6},
                                    {3, 3},
                                    {1, 1},
                                    {1, 1},
                                    {1, 1},
                                    data_type::f16}};
    // (The vdpbf16ps gather's chunks are of at least 64 channels, two lines of a bf16 row: its
    // panel of 9 taps x 48 columns gives 70 channels as 64 and 6 with a 64 KiB budget.)
    std::vector<direct_unit> all(std::begin(units), std::end(units));
    all.insert(all.end(), std::begin(bf16dot_units), std::end(bf16dot_units));
    int runs = 0, bf16dot_runs = 0;
    for (const direct_unit &u : all) {
        if (!detail::isa_available(u.isa)) continue;
        for (const stream_case &c : chunked) {
            if (u.bf16_only && c.dt != data_type::bf16) continue;
            prepared pr = prepare(c, layout::nxc, true);
            for (bool rounded : {false, true}) {
                const std::vector<double> want = run_direct(u, pr, 2, 0, false, 0, rounded);
                for (dim_t panel : {40 * 1024, 64 * 1024, 96 * 1024}) {
                    const std::vector<double> got =
                        run_direct(u, pr, 2, 0, false, 0, rounded, false, 0, false, panel);
                    ASSERT_EQ(got, want) << u.name << " " << c.what << " panel " << panel
                                         << (rounded ? " rounded in place" : "");
                    ++runs;
                    bf16dot_runs += u.bf16_only;
                }
            }
        }
    }
    EXPECT_GT(runs, 0);
    EXPECT_GT(bf16dot_runs, 0) << "the vdpbf16ps gather runs at least emulated";
}

// Prefetching the next tile's rows in one-tap gathers (the plan's choice by CPU) changes no bit:
// 1x1 layers and the one-tap stride phases of a 1x1 stride-2 data gradient.
TEST(NcxStreaming, PrefetchOfTheNextTilesRowsChangesNoBit) {
    const stream_case one_tap[] = {{"fwd 2-D 1x1",
                                    op_kind::Convolution,
                                    1,
                                    40,
                                    70,
                                    {9, 11},
                                    {1, 1},
                                    {1, 1},
                                    {1, 1},
                                    {0, 0},
                                    data_type::f32},
                                   {"bwd_data 2-D 1x1 stride 2 bf16",
                                    op_kind::ConvolutionBackwardData,
                                    1,
                                    36,
                                    50,
                                    {10, 9},
                                    {1, 1},
                                    {2, 2},
                                    {1, 1},
                                    {0, 0},
                                    data_type::bf16}};
    int runs = 0;
    for (const direct_unit &u : units) {
        if (!detail::isa_available(u.isa)) continue;
        for (const stream_case &c : one_tap) {
            prepared pr = prepare(c, layout::nxc, false);
            const std::vector<double> off =
                run_direct(u, pr, 2, 0, false, 0, false, false, 0, false, 0, 0);
            const std::vector<double> on =
                run_direct(u, pr, 2, 0, false, 0, false, false, 0, false, 0, 1);
            ASSERT_EQ(on, off) << u.name << " " << c.what;
            ++runs;
        }
    }
    EXPECT_GT(runs, 0);
}

TEST(NcxStreaming, BitIdenticalToNxcWhateverTheLayoutChunksAndThreads) {
    int runs = 0;
    for (int nthr : {1, 2, 3})  // outermost: changing the team size costs a reconfiguration
        for (const direct_unit &u : units) {
            if (!detail::isa_available(u.isa)) continue;
            for (const stream_case &c : cases) {
                if (c.grouped && !u.run_grouped) continue;
                prepared nxc = prepare(c, layout::nxc, false);
                const std::vector<double> want = run_direct(u, nxc, nthr, 0, c.grouped);
                // Every chunking of dense NCX; one each for the other layouts (fast enough for the
                // sanitizer runs).
                // (and output rows 1 and 2 at a time: an uneven split; an output rounded in place,
                // NXC, with its input rows copied when bf16/f16).
                // (And the gather's blocks over bands of 1 and 2 units: 2 leaves a short last
                // band where the units are odd; and the output stored past the caches, which
                // the kernels do for f32 in place and for bf16/f16 rounded in place, and for an
                // NCX f32 output written back from its copy.)
                struct run_of {
                    layout l;
                    dim_t chunk, out_rows;
                    bool rounded, in_rows;
                    dim_t band = 0;
                    bool stream = false;
                    int own = 0;
                };
                const run_of runs_of[] = {{layout::ncx, 0, 0, false, false},
                                          {layout::ncx, 1, 0, false, false},
                                          {layout::ncx, 2, 0, false, false},
                                          {layout::ncx_row_gaps, 1, 0, false, false},
                                          {layout::ncx_strided_w, 2, 0, false, false},
                                          {layout::ncx, 1, 1, false, false},
                                          {layout::ncx, 1, 2, false, true},
                                          {layout::nxc, 1, 2, false, true},
                                          {layout::nxc, 0, 0, true, false},
                                          {layout::nxc, 1, 1, true, true},
                                          {layout::ncx_row_gaps, 1, 2, true, true},
                                          {layout::nxc, 0, 0, false, false, 1},
                                          {layout::ncx, 2, 1, true, false, 2},
                                          {layout::nxc, 0, 0, false, false, 0, true},
                                          {layout::nxc, 0, 0, false, false, 1, true},
                                          {layout::nxc, 0, 0, true, false, 0, true},
                                          {layout::nxc, 0, 0, true, false, 1, true},
                                          {layout::ncx, 0, 0, false, false, 0, true},
                                          {layout::ncx, 1, 1, false, false, 0, true},
                                          {layout::ncx, 1, 1, false, false, 0, false, 1},
                                          {layout::ncx_row_gaps, 1, 2, false, false, 0, true, 1},
                                          {layout::ncx_output, 1, 2, false, false, 0, false, 2},
                                          {layout::ncx_output, 1, 1, false, false, 0, true, 2},
                                          {layout::ncx, 1, 2, false, false, 0, false, 2}};
                for (const auto &[l, chunk, out_rows, rounded, in_rows, band, stream, own] :
                     runs_of) {
                    const bool gather = output_by_rows_applies(c);  // (fwd or bwd_data)
                    if ((out_rows > 0 || band > 0 || stream) && !gather) continue;
                    prepared pr = prepare(c, l, false);
                    const std::vector<double> got =
                        run_direct(u, pr, nthr, chunk, c.grouped, out_rows, rounded, in_rows, band,
                                   stream, 0, -1, own);
                    ASSERT_EQ(got.size(), want.size());
                    for (size_t i = 0; i < got.size(); ++i)
                        ASSERT_EQ(got[i], want[i])
                            << u.name << " " << c.what << " " << layout_names[int(l)] << " threads "
                            << nthr << " images per chunk " << chunk << " output rows " << out_rows
                            << (rounded ? " rounded in place" : "")
                            << (in_rows ? " input by rows" : "") << " bands of " << band << " units"
                            << (stream ? " streamed" : "") << (own ? " output rows per thread" : "")
                            << (own > 1 ? " across images" : "") << " at " << i;
                    ++runs;
                }
            }
        }
    std::printf(
        "[ info    ] %d (unit, case, layout, threads, chunking) runs matched NXC bit for bit\n",
        runs);
}

TEST(NcxStreaming, ChunkedNcxEqualsTheReference) {
    for (const stream_case &c : cases)
        for (layout l : {layout::ncx, layout::ncx_strided_w, layout::nxc, layout::ncx_output}) {
            prepared pr = prepare(c, l, true);
            tensor_buffer ref(pr.r.outputs[0]);  // once per problem, for every unit
            testing::run_poisoned(pr.r, detail::reference_impl().create, pr.in, ref);
            const std::vector<double> want = ref.values();
            for (const direct_unit &u : units) {
                if (!detail::isa_available(u.isa) || (c.grouped && !u.run_grouped)) continue;
                for (const dim_t out_rows : {0, 1})
                    for (const bool rounded : {false, true})
                        for (const bool in_rows : {false, true})
                            for (const int own : {0, 1, 2}) {
                                if (out_rows > 0 ? !output_by_rows_applies(c) : in_rows || own)
                                    continue;
                                const std::vector<double> got =
                                    run_direct(u, pr, 2, 1, c.grouped, out_rows, rounded, in_rows,
                                               0, false, 0, -1, own);
                                for (size_t i = 0; i < got.size(); ++i)
                                    ASSERT_EQ(got[i], want[i])
                                        << u.name << " " << c.what << " " << layout_names[int(l)]
                                        << " output rows " << out_rows
                                        << (rounded ? " rounded in place" : "")
                                        << (in_rows ? " input by rows" : "")
                                        << (own ? " output rows per thread" : "")
                                        << (own > 1 ? " across images" : "") << " at " << i;
                            }
            }
        }
}

// The vdpbf16ps kernel's forward and data gradient convert and compute the batch a chunk of
// images at a time (the plan's images_per_chunk: the reduced side's channel pairs and an f32
// copy of the output per chunk; the flattened forward's copy is the whole batch's): on the
// bf16 cases, chunks of 1 and 2 images of 3, in every layout, rounded in place or through the
// copy, give the reference's exact integer sums.
TEST(NcxStreaming, Bf16DotChunksOfImagesEqualTheReference) {
    int runs = 0;
    for (const stream_case &c : cases) {
        if (c.dt != data_type::bf16 || c.grouped) continue;
        for (layout l : {layout::nxc, layout::ncx, layout::ncx_strided_w}) {
            prepared pr = prepare(c, l, true);
            tensor_buffer ref(pr.r.outputs[0]);
            testing::run_poisoned(pr.r, detail::reference_impl().create, pr.in, ref);
            const std::vector<double> want = ref.values();
            for (const direct_unit &u : bf16dot_units) {
                if (!detail::isa_available(u.isa)) continue;
                for (const bool rounded : {false, true})
                    for (const dim_t chunk : {0, 1, 2}) {
                        const std::vector<double> got =
                            run_direct(u, pr, 2, chunk, false, 0, rounded);
                        ASSERT_EQ(got.size(), want.size());
                        for (size_t i = 0; i < got.size(); ++i)
                            ASSERT_EQ(got[i], want[i])
                                << u.name << " " << c.what << " " << layout_names[int(l)]
                                << " images per chunk " << chunk
                                << (rounded ? " rounded in place" : "") << " at " << i;
                        ++runs;
                    }
            }
        }
    }
    EXPECT_GT(runs, 0) << "the vdpbf16ps kernel runs at least emulated";
    std::printf(
        "[ info    ] %d (unit, case, layout, chunking) vdpbf16ps runs matched the reference\n",
        runs);
}

}  // namespace
}  // namespace convgrad
