// bwd_weights with the weights split over the threads (direct_plan::weights_split): each thread
// reduces every row of src and diff_dst into its blocks of the user's weights, in place (bf16 and
// f16: through f32 sums of its own, rounded by the last chunk of rows that reaches each tap),
// instead of reducing its rows into partial weights that are summed afterwards. On every ISA's
// direct kernel (and, for bf16, the vdpbf16ps kernel, which rounds the same way), at 1-3
// threads and whatever the chunk of rows, the weights must be
//   - bit-identical to the rows split on one thread (real values: each weight sums the same rows
//     in the same order, so a different order would show),
//   - equal to the reference (small integers: the sums are exact),
// and the gaps between the weights' rows must keep the bytes they had. (Where the rows split
// shares the taps along d and h in its tiles, it sums a tap's interior rows before its border
// rows, a different order: none of these cases.) The cases have taps that
// read only padding (weights no microkernel call writes: they must still be zeroed), output
// channels over several blocks with a tail, groups, and 1-D/2-D/3-D.
// The plan picks the split only where it pays (direct_plan.cpp); the last test checks that rule.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "convgrad/threads.hpp"
#include "core/resolve.hpp"
#include "kernels/common/direct_plan.hpp"
#include "kernels/direct_entry_points.hpp"
#include "util/aligned_bytes.hpp"
#include "util/conv_geometry.hpp"
#include "util/kernel_check.hpp"

namespace convgrad {
namespace {

using testing::tensor_buffer;

struct isa_unit {
    const char *name;
    detail::cpu_isa isa;
    int vlen, nregs;
    void (*run)(const detail::direct_plan &, const detail::conv_args &);
    bool bf16_only = false;  // the vdpbf16ps kernel: bf16 cases only
};
const isa_unit isa_units[] = {
    {"avx512", detail::cpu_isa::avx512, 16, 32, detail::avx512::run_direct},
    {"avx2", detail::cpu_isa::avx2, 8, 16, detail::avx2::run_direct},
    {"sse2", detail::cpu_isa::generic, 4, 16, detail::sse2::run_direct},
    // (The AVX-512 source on its plain C++ traits: where AVX-512 is missing, it runs here.)
    {"avx512_emulated", detail::cpu_isa::avx2, 16, 32, detail::avx512_emu::run_direct},
    // (Each thread's f32 sums of its units, rounded into the weights by their last calls.)
    {"direct_bf16dot", detail::cpu_isa::avx512_bf16, 16, 32, detail::avx512_bf16::run_bf16dot,
     true},
    {"direct_bf16dot emulated on AVX-512F", detail::cpu_isa::avx512, 16, 32,
     detail::avx512::run_bf16dot, true},
    {"direct_bf16dot emulated in C++", detail::cpu_isa::avx2, 16, 32,
     detail::avx512_emu::run_bf16dot, true}};

struct split_case {
    const char *what;
    op_kind kind;
    dim_t g, icg, ocg, mb;
    dims big, k, s, pb, pe;
    dim_t row_gap;  // elements between the weights' rows of output channels (0: dense)
    data_type dt = data_type::f32;
    data_type math = data_type::f32;  // bf16: an f32 op under fpmath_mode bf16
};

// The vdpbf16ps kernel computes bf16, and f32 under fpmath_mode bf16 (inputs exact in bf16).
bool runs_on(const isa_unit &u, const split_case &c) {
    return detail::isa_available(u.isa) &&
           (!u.bf16_only || c.dt == data_type::bf16 || c.math == data_type::bf16);
}

// One case per two lines:
// clang-format off
const split_case cases[] = {
    // 70 and 130 output channels: blocks of 64 (avx512), 32 (avx2), 16 (sse2), with tails.
    {"2-D stride 2, 70 channels", op_kind::ConvolutionBackwardWeights, 1, 19, 70, 2, {9, 8},
     {3, 3}, {2, 2}, {1, 1}, {1, 1}, 0},
    {"2-D 130 channels, rows with gaps", op_kind::ConvolutionBackwardWeights, 1, 7, 130, 1,
     {5, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 5},
    // Kernel 9 on 3 pixels, pads 4: tap 0 (and 8) reads only padding along w.
    {"1-D taps only in padding", op_kind::ConvolutionBackwardWeights, 1, 5, 33, 3, {3}, {9}, {1},
     {4}, {4}, 3},
    // Kernel 7x1 on 2 rows, pads 3: taps kh = 0 and 6 reach no row at all.
    {"2-D rows only in padding", op_kind::ConvolutionBackwardWeights, 1, 4, 21, 2, {2, 5}, {7, 1},
     {1, 1}, {3, 0}, {3, 0}, 0},
    {"3-D ConvTranspose groups", op_kind::ConvTransposeBackwardWeights, 2, 5, 19, 2, {6, 5, 4},
     {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {0, 0, 0}, 2},
    // bf16/f16 weights: f32 sums per thread, rounded into the weights by each tap's last chunk.
    {"bf16 2-D stride 2, 70 channels", op_kind::ConvolutionBackwardWeights, 1, 19, 70, 2,
     {9, 8}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 0, data_type::bf16},
    {"f16 1-D taps only in padding", op_kind::ConvolutionBackwardWeights, 1, 5, 33, 3, {3}, {9},
     {1}, {4}, {4}, 3, data_type::f16},
    {"f16 2-D rows only in padding", op_kind::ConvolutionBackwardWeights, 1, 4, 21, 2, {2, 5},
     {7, 1}, {1, 1}, {3, 0}, {3, 0}, 0, data_type::f16},
    {"bf16 3-D ConvTranspose groups", op_kind::ConvTransposeBackwardWeights, 2, 5, 19, 2,
     {6, 5, 4}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {0, 0, 0}, 2, data_type::bf16},
    // (Also the vdpbf16ps kernel's: bf16 only. Odd rows of 3 and 5 pixels: each tap's last
    // pair is its own call, the one that rounds.)
    {"bf16 1-D taps only in padding", op_kind::ConvolutionBackwardWeights, 1, 5, 33, 3, {3}, {9},
     {1}, {4}, {4}, 3, data_type::bf16},
    {"bf16 2-D rows only in padding", op_kind::ConvolutionBackwardWeights, 1, 4, 21, 2, {2, 5},
     {7, 1}, {1, 1}, {3, 0}, {3, 0}, 0, data_type::bf16},
    // f32 weights in place, from the vdpbf16ps kernel too.
    {"f32 under fpmath bf16, 1-D taps only in padding", op_kind::ConvolutionBackwardWeights, 1,
     5, 33, 3, {3}, {9}, {1}, {4}, {4}, 3, data_type::f32, data_type::bf16},
    {"f32 under fpmath bf16, 3-D ConvTranspose groups", op_kind::ConvTransposeBackwardWeights, 2,
     5, 19, 2, {6, 5, 4}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {0, 0, 0}, 2, data_type::f32,
     data_type::bf16},
};
// clang-format on

// NXC data; XIO (Convolution) or XOI (ConvTranspose) weights, whose output channels (of the
// mirror convolution) are contiguous: [taps..., icg, g * ocg], each row `row_gap` apart.
op make_op(const split_case &c) {
    const bool ct = is_conv_transpose_family(c.kind);
    const size_t S = c.big.size();
    testing::conv_shapes sh;
    sh.src = {c.mb};
    sh.dst = {c.mb};
    for (size_t j = 0; j < S; ++j) {
        const dim_t span = c.big[j] + c.pb[j] + c.pe[j] - c.k[j];
        sh.src.push_back(c.big[j]);
        sh.dst.push_back(span / c.s[j] + 1);
        sh.wei.push_back(c.k[j]);
        sh.output_padding.push_back(span % c.s[j]);
    }
    sh.src.push_back(c.g * c.icg);
    sh.dst.push_back(c.g * c.ocg);
    sh.wei.push_back(c.icg);
    sh.wei.push_back(c.g * c.ocg);
    dims wst(sh.wei.size());
    dim_t step = 1;
    for (size_t j = sh.wei.size(); j-- > 0;) {
        wst[j] = step;
        step *= sh.wei[j] + (j + 1 == sh.wei.size() ? c.row_gap : 0);
    }
    op o(0, c.kind, c.what);
    o.set_attr("strides", c.s)
        .set_attr("dilations", dims(S, 1))
        .set_attr("pads_begin", c.pb)
        .set_attr("pads_end", c.pe);
    o.set_attr("groups", c.g).set_attr("data_format", std::string("NXC"));
    o.set_attr("weights_format", std::string(ct ? "XOI" : "XIO"));
    testing::add_conv_tensors(o, c.kind, sh, false, c.dt, [&](size_t id, const dims &shape) {
        if (&shape == &sh.wei) return logical_tensor(id, c.dt, shape, wst);
        return logical_tensor(id, c.dt, shape);
    });
    return o;
}

struct prepared {
    detail::resolved_op r;
    std::vector<tensor_buffer> in;
};

prepared prepare_op(const op &o, bool ints);
prepared prepare(const split_case &c, bool ints) {
    prepared pr = prepare_op(make_op(c), ints);
    pr.r.prob.math_dt = c.math;
    return pr;
}

prepared prepare_op(const op &o, bool ints) {
    prepared pr{detail::resolve_op(o, o.inputs(), o.outputs()), {}};
    for (size_t t = 0; t < pr.r.inputs.size(); ++t) {
        pr.in.emplace_back(pr.r.inputs[t]);
        if (ints) {
            pr.in.back().fill_ints(21 + t);
            continue;
        }
        std::mt19937_64 rng(21 + t);
        std::uniform_real_distribution<double> val(-1.0, 1.0);
        for (dim_t i = 0; i < pr.in.back().count(); ++i) pr.in.back().set(i, val(rng));
    }
    return pr;
}

// The weights (poisoned first: 0x7f bytes) from one ISA's direct kernel, split as asked (or
// planned by pl); src and diff_dst are the prepared inputs, or copies of them where given.
tensor_buffer run_plan(const isa_unit &u, prepared &pr, const detail::direct_plan &pl,
                       const void *src = nullptr, const void *dst = nullptr);
tensor_buffer run_split(const isa_unit &u, prepared &pr, bool weights_split, int nthr,
                        dim_t rows_per_chunk, const void *src = nullptr, const void *dst = nullptr,
                        dim_t pixels_per_chunk = -1) {
    detail::direct_plan pl = detail::make_direct_plan(pr.r.prob, u.vlen, u.nregs);
    pl.weights_split = weights_split;
    pl.nthr = nthr;
    if (rows_per_chunk > 0) pl.rows_per_chunk = rows_per_chunk;
    if (pixels_per_chunk >= 0) pl.pixels_per_chunk = pixels_per_chunk;
    return run_plan(u, pr, pl, src, dst);
}
tensor_buffer run_plan(const isa_unit &u, prepared &pr, const detail::direct_plan &pl,
                       const void *src, const void *dst) {
    tensor_buffer out(pr.r.outputs[0]);
    std::fill(out.bytes.begin(), out.bytes.end(), uint8_t(0x7f));
    detail::conv_args a;
    a.src = src ? src : pr.in[size_t(pr.r.src_input)].data();
    a.dst = dst ? dst : pr.in[size_t(pr.r.dst_input)].data();
    a.out = out.data();
    u.run(pl, a);
    return out;
}

TEST(BwdWeightsSplit, BitIdenticalToOneThreadsRowsAndGapsUntouched) {
    int runs = 0;
    for (const isa_unit &u : isa_units) {
        if (!detail::isa_available(u.isa)) {
            std::printf("[ skipped ] %s: not on this machine\n", u.name);
            continue;
        }
        for (const split_case &c : cases) {
            if (!runs_on(u, c)) continue;
            prepared pr = prepare(c, false);
            ASSERT_EQ(pr.r.prob.wei.oc, 1) << c.what;  // the weights the split writes in place
            for (const dim_t chunk : {dim_t(0), dim_t(1), dim_t(2)}) {
                const tensor_buffer want = run_split(u, pr, false, 1, chunk);
                for (int nthr : {1, 2, 3}) {
                    const tensor_buffer got = run_split(u, pr, true, nthr, chunk);
                    // Every byte: the weights' bits, and the gaps' poison.
                    ASSERT_EQ(got.bytes.size(), want.bytes.size());
                    for (size_t i = 0; i < got.bytes.size(); ++i)
                        ASSERT_EQ(got.bytes[i], want.bytes[i])
                            << u.name << " " << c.what << " threads " << nthr << " rows per chunk "
                            << chunk << " at byte " << i;
                    ++runs;
                }
            }
            // The gaps were not written by the rows split either: the poison is there.
            const tensor_buffer w = run_split(u, pr, true, 2, 0);
            std::vector<bool> is_weight(w.bytes.size(), false);
            const size_t esize = c.dt == data_type::f32 ? 4 : 2;
            for (dim_t i = 0; i < w.count(); ++i)
                for (size_t b = 0; b < esize; ++b)
                    is_weight[size_t(w.offset_of(i)) * esize + b] = true;
            for (size_t i = 0; i < w.bytes.size(); ++i)
                ASSERT_TRUE(is_weight[i] || w.bytes[i] == 0x7f)
                    << u.name << " " << c.what << " wrote the gap byte " << i;
        }
    }
    std::printf("[ info    ] %d (isa, case, chunk, threads) runs matched one thread's rows split\n",
                runs);
}

// The reference's weights on the prepared inputs.
std::vector<double> reference_weights(prepared &pr) {
    tensor_buffer ref(pr.r.outputs[0]);
    testing::run_poisoned(pr.r, detail::reference_impl().create, pr.in, ref);
    return ref.values();
}

TEST(BwdWeightsSplit, EqualsTheReference) {
    for (const split_case &c : cases) {
        prepared pr = prepare(c, true);
        const std::vector<double> want = reference_weights(pr);
        for (const isa_unit &u : isa_units) {
            if (!runs_on(u, c)) continue;
            const std::vector<double> got = run_split(u, pr, true, 2, 1).values();
            for (size_t i = 0; i < got.size(); ++i)
                ASSERT_EQ(got[i], want[i]) << u.name << " " << c.what << " at " << i;
        }
    }
}

// Groups whose channels are not whole cache lines, f32 in place: each chunk's rows are copied
// with each group's channels dense before the groups' passes (direct_plan::bwd_w_group_copies).
// The microkernel gets the same values in the same order as from the rows in place, so on every
// ISA's direct kernel, 1-3 threads and chunks of the plan's rows or of 1, 2 and 5 (chunks that
// cross images and start at any row), the weights must be bit-identical to the in-place run's
// (real values), and the reference's (small integers: exact sums). The cases: groups of 8, a
// vector on AVX2 (ResNeXt's); channels that leave tails (3 -> 5, 12 -> 20); whole lines on the
// output side only (6 -> 16); one channel a group, whose taps along d, h and w share the tiles;
// a ConvTranspose; strides, pads and weights rows with gaps.
TEST(BwdWeightsGroupCopies, BitIdenticalInPlaceAndTheReference) {
    // clang-format off
    const split_case grouped[] = {
        {"2-D 4 groups of 8, 3x3", op_kind::ConvolutionBackwardWeights, 4, 8, 8, 2, {6, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 0},
        {"2-D 3 groups of 3 -> 5, stride 2", op_kind::ConvolutionBackwardWeights, 3, 3, 5, 3, {7, 6}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 0},
        {"1-D 2 groups of 12 -> 20, rows with gaps", op_kind::ConvolutionBackwardWeights, 2, 12, 20, 2, {9}, {5}, {1}, {2}, {2}, 3},
        {"2-D 2 groups of 6 -> 16", op_kind::ConvolutionBackwardWeights, 2, 6, 16, 2, {5, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 0},
        {"3-D 3 groups of 1 -> 4", op_kind::ConvolutionBackwardWeights, 3, 1, 4, 2, {4, 5, 6}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 0},
        {"3-D ConvTranspose groups", op_kind::ConvTransposeBackwardWeights, 2, 5, 19, 2, {6, 5, 4}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {0, 0, 0}, 2},
    };
    // clang-format on
    const testing::poisoned_scratch nan_scratch;
    int runs = 0;
    for (const split_case &c : grouped) {
        prepared real = prepare(c, false), ints = prepare(c, true);
        const std::vector<double> want = reference_weights(ints);
        for (const isa_unit &u : isa_units) {
            if (!detail::isa_available(u.isa) || u.bf16_only) continue;
            detail::direct_plan pl = detail::make_direct_plan(real.r.prob, u.vlen, u.nregs);
            ASSERT_TRUE(pl.bwd_w_group_copies) << u.name << " " << c.what;
            ASSERT_FALSE(pl.weights_split) << u.name << " " << c.what;
            const dim_t planned = pl.rows_per_chunk;
            testing::aligned_bytes first[4];  // per thread count: the planned chunks' weights
            for (const dim_t chunk : {planned, dim_t(1), dim_t(2), dim_t(5)})
                for (int nthr : {1, 2, 3}) {
                    pl.rows_per_chunk = chunk, pl.nthr = nthr;
                    detail::direct_plan in_place = pl;
                    in_place.bwd_w_group_copies = false;
                    const tensor_buffer got = run_plan(u, real, pl);
                    const tensor_buffer same = run_plan(u, real, in_place);
                    // Reduced as runs of rows, each weight's products come row by row, pixel
                    // by pixel (zeros between them change no bits): the in-place order where
                    // it calls one tap at a time. Where its taps along w share calls (the
                    // pixels they share first, then each one's border), the orders differ:
                    // then the runs' weights are the same however the rows are chunked.
                    const bool same_order = !detail::direct_bwd_w_group_runs(pl) ||
                                            detail::direct_bwd_w_taps_along_w(in_place) == 1;
                    if (first[nthr].empty()) first[nthr] = got.bytes;
                    ASSERT_EQ(got.bytes, same_order ? same.bytes : first[nthr])
                        << u.name << " " << c.what << " threads " << nthr << " rows per chunk "
                        << chunk << (same_order ? " (in place)" : " (the planned chunks)");
                    const std::vector<double> exact = run_plan(u, ints, pl).values();
                    for (size_t i = 0; i < exact.size(); ++i)
                        ASSERT_EQ(exact[i], want[i])
                            << u.name << " " << c.what << " threads " << nthr << " rows per chunk "
                            << chunk << " at " << i;
                    ++runs;
                }
        }
    }
    std::printf(
        "[ info    ] %d (case, isa, chunk, threads) runs matched in place and the reference\n",
        runs);
}

// Only f32 rows in place are copied by groups, or converted ones where they go as runs, only
// where a group's channels on one side are not whole lines, only with the rows split.
TEST(BwdWeightsGroupCopies, PlannedForGroupsOfPartialLinesInPlace) {
    // ResNeXt-50's grouped 3x3 weight gradient: 32 groups of 8 channels.
    split_case rx{"ResNeXt", op_kind::ConvolutionBackwardWeights,
                  32,        8,
                  8,         2,
                  {28, 28},  {3, 3},
                  {1, 1},    {1, 1},
                  {1, 1},    0};
    EXPECT_TRUE(detail::make_direct_plan(prepare(rx, true).r.prob, 8, 16).bwd_w_group_copies);
    EXPECT_NE(detail::describe(detail::make_direct_plan(prepare(rx, true).r.prob, 8, 16))
                  .find("groups copied dense"),
              std::string::npos);
    split_case lines = rx;
    lines.icg = lines.ocg = 16;
    EXPECT_FALSE(detail::make_direct_plan(prepare(lines, true).r.prob, 8, 16).bwd_w_group_copies);
    split_case one = rx;
    one.g = 1, one.icg = one.ocg = 256;
    EXPECT_FALSE(detail::make_direct_plan(prepare(one, true).r.prob, 8, 16).bwd_w_group_copies);
    // Converted rows (bf16) only where they go as runs (the copies convert them a row at a
    // time): one vector of output channels a group, not 5.
    split_case bf = rx;
    bf.dt = data_type::bf16;
    const detail::direct_plan bf_plan = detail::make_direct_plan(prepare(bf, true).r.prob, 8, 16);
    EXPECT_TRUE(bf_plan.bwd_w_group_copies && detail::direct_bwd_w_group_runs(bf_plan));
    bf.ocg = 5;
    EXPECT_FALSE(detail::make_direct_plan(prepare(bf, true).r.prob, 8, 16).bwd_w_group_copies);
    // The vdpbf16ps kernel's plans (pairs) have their own schedule.
    EXPECT_FALSE(detail::make_direct_plan(prepare(rx, true).r.prob, 16, 32,
                                          detail::machine_caches(), true, true, true)
                     .bwd_w_group_copies);
}

// The rows split with few input channels: the taps along w, and along d and h too, share the
// tiles, rows (kd, kh, kw, channel), over the rows where every tap reads a src row; the border
// rows go tap by tap (direct_bwd_w_shares_hd). With chunks of 1, 2 or 5 rows a chunk may hold
// only border rows (a whole d slice of a 3-D image), so some taps of a shared tile have started
// their sums and others not: those are zeroed first. The scratch is poisoned (NaN), so a sum
// that accumulated onto an unstarted one shows; small integers, so the sums are exact.
TEST(BwdWeightsRowsSplit, TapsSharingTilesEqualTheReference) {
    // clang-format off
    const split_case shared[] = {
        {"3-D 1 channel 3x3x3", op_kind::ConvolutionBackwardWeights, 1, 1, 16, 2, {4, 5, 6},
         {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 0},
        {"2-D 3 channels 3x3 stride 2", op_kind::ConvolutionBackwardWeights, 1, 3, 20, 2, {9, 11},
         {3, 3}, {2, 2}, {1, 1}, {1, 1}, 0},
        {"2-D 2 channels 5x3, no row read by every tap", op_kind::ConvolutionBackwardWeights, 1, 2,
         40, 1, {3, 7}, {5, 3}, {1, 1}, {2, 1}, {2, 1}, 3},
        {"3-D ConvTranspose 1 channel groups", op_kind::ConvTransposeBackwardWeights, 2, 1, 3, 2,
         {3, 4, 5}, {2, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, 0},
    };
    // clang-format on
    const testing::poisoned_scratch nan_scratch;
    int runs = 0;
    for (const split_case &c : shared) {
        prepared pr = prepare(c, true);
        const std::vector<double> want = reference_weights(pr);
        for (const isa_unit &u : isa_units) {
            if (!detail::isa_available(u.isa) || u.bf16_only) continue;
            detail::direct_plan pl = detail::make_direct_plan(pr.r.prob, u.vlen, u.nregs);
            pl.weights_split = false;  // (as run_split runs it)
            // (The AVX-512 tiles have the rows for it; on AVX2/SSE2 the taps along w may
            // already fill theirs.)
            if (u.nregs == 32) {
                EXPECT_TRUE(detail::direct_bwd_w_shares_hd(pl)) << u.name << " " << c.what;
            }
            for (const dim_t chunk : {dim_t(0), dim_t(1), dim_t(2), dim_t(5)})
                for (int nthr : {1, 2, 3}) {
                    const std::vector<double> got = run_split(u, pr, false, nthr, chunk).values();
                    for (size_t i = 0; i < got.size(); ++i)
                        ASSERT_EQ(got[i], want[i]) << u.name << " " << c.what << " threads " << nthr
                                                   << " rows per chunk " << chunk << " at " << i;
                    ++runs;
                }
        }
    }
    std::printf("[ info    ] %d (isa, case, chunk, threads) runs equal the reference\n", runs);
}

// The f32 data off a cache line, as glibc's malloc leaves a large buffer (16 bytes past one):
// where the groups' output channels are whole vectors, the kernel copies diff_dst's rows per
// chunk into aligned scratch instead of loading vectors that straddle two lines
// (rows_split_vectors); elsewhere it reads them in place as before. Both splits, 1-3 threads,
// chunks of the plan's rows and of 1, every ISA's direct kernel: the reference's weights.
TEST(BwdWeights, DataOffALineEqualsTheReference) {
    // clang-format off
    const split_case off_line[] = {
        {"2-D 48 output channels, stride 2", op_kind::ConvolutionBackwardWeights, 1, 7, 48, 2, {9, 8}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 0},
        {"1-D groups of 16 output channels", op_kind::ConvolutionBackwardWeights, 3, 5, 16, 2, {20}, {5}, {1}, {2}, {2}, 0},
        {"3-D ConvTranspose, 32 channels", op_kind::ConvTransposeBackwardWeights, 1, 6, 32, 1, {4, 5, 6}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {0, 0, 0}, 0},
        {"2-D 20 output channels (in place)", op_kind::ConvolutionBackwardWeights, 1, 9, 20, 2, {7, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 0},
    };
    // clang-format on
    int runs = 0;
    for (const split_case &c : off_line) {
        prepared pr = prepare(c, true);
        const std::vector<double> want = reference_weights(pr);
        for (size_t shift : {size_t(1), size_t(4), size_t(15)}) {
            // The same values `shift` floats past a line (the buffers are 64-byte aligned).
            std::vector<testing::aligned_bytes> moved;
            for (tensor_buffer &t : pr.in) {
                moved.emplace_back(t.bytes.size() + 64, uint8_t(0));
                std::memcpy(moved.back().data() + shift * sizeof(float), t.data(), t.bytes.size());
            }
            for (const isa_unit &u : isa_units) {
                if (!detail::isa_available(u.isa) || u.bf16_only) continue;
                for (bool weights_split : {false, true})
                    for (int nthr : {1, 2, 3})
                        for (const dim_t chunk : {dim_t(0), dim_t(1)}) {
                            const std::vector<double> got =
                                run_split(
                                    u, pr, weights_split, nthr, chunk,
                                    moved[size_t(pr.r.src_input)].data() + shift * sizeof(float),
                                    moved[size_t(pr.r.dst_input)].data() + shift * sizeof(float))
                                    .values();
                            for (size_t i = 0; i < got.size(); ++i)
                                ASSERT_EQ(got[i], want[i])
                                    << u.name << " " << c.what << ", " << shift
                                    << " floats past a line, weights split " << weights_split
                                    << ", threads " << nthr << ", rows per chunk " << chunk
                                    << ", at " << i;
                            ++runs;
                        }
            }
        }
    }
    std::printf(
        "[ info    ] %d (case, offset, isa, split, threads, chunk) runs equal the reference\n",
        runs);
}

// Rows cut into chunks of output pixels (direct_plan::pixels_per_chunk, which the plan sets for
// rows beyond its L2 budget, a long 1-D signal): every tap and block reduces a chunk before
// the next. Chunks of 1, 3 and 7 pixels cut the taps' ranges of pixels (which differ per tap
// with pads and strides) and the shared tiles' extra pixels anywhere; taps sharing a tile
// (few channels), weights split (bf16: each tap's sums rounded by the call that reaches its
// last pixel in its last row, not by the first chunk of that row), 1-3 threads, poisoned
// scratch, small integers: the reference's weights.
TEST(BwdWeights, PixelChunksEqualTheReference) {
    // clang-format off
    const split_case chunked[] = {
        {"1-D 1 channel, kernel 10 stride 5 (wav2vec2's first layer)", op_kind::ConvolutionBackwardWeights, 1, 1, 40, 2, {83}, {10}, {5}, {2}, {4}, 0},
        {"1-D 3 channels, kernel 5, pads", op_kind::ConvolutionBackwardWeights, 1, 3, 70, 1, {37}, {5}, {1}, {2}, {2}, 3},
        {"2-D 2 channels 3x3 stride 2", op_kind::ConvolutionBackwardWeights, 1, 2, 20, 2, {7, 19}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 0},
        {"1-D ConvTranspose groups", op_kind::ConvTransposeBackwardWeights, 2, 5, 19, 2, {29}, {4}, {2}, {1}, {1}, 2},
        {"bf16 1-D 19 channels", op_kind::ConvolutionBackwardWeights, 1, 19, 70, 2, {41}, {3}, {2}, {1}, {1}, 0, data_type::bf16},
        // Converted a window of pixels at a time (diff_dst and the src pixels it reads).
        {"f16 1-D 1 channel, kernel 10 stride 5", op_kind::ConvolutionBackwardWeights, 1, 1, 40, 2, {83}, {10}, {5}, {2}, {4}, 0, data_type::f16},
        {"bf16 2-D 3 channels, dilated-free stride 2", op_kind::ConvolutionBackwardWeights, 1, 3, 20, 1, {5, 23}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 0, data_type::bf16},
    };
    // clang-format on
    const testing::poisoned_scratch nan_scratch;
    int runs = 0;
    for (const split_case &c : chunked) {
        prepared pr = prepare(c, true);
        const std::vector<double> want = reference_weights(pr);
        for (const isa_unit &u : isa_units) {
            // (The vdpbf16ps kernel's bf16 cases too: its chunks are rounded up to a pair.)
            if (!runs_on(u, c)) continue;
            for (bool weights_split : {false, true})
                for (int nthr : {1, 2, 3})
                    for (const dim_t pixels : {dim_t(1), dim_t(3), dim_t(7)}) {
                        const std::vector<double> got =
                            run_split(u, pr, weights_split, nthr, 1, nullptr, nullptr, pixels)
                                .values();
                        for (size_t i = 0; i < got.size(); ++i)
                            ASSERT_EQ(got[i], want[i])
                                << u.name << " " << c.what << ", weights split " << weights_split
                                << ", threads " << nthr << ", pixels per chunk " << pixels
                                << ", at " << i;
                        ++runs;
                    }
        }
    }
    std::printf("[ info    ] %d (case, isa, split, threads, pixels) runs equal the reference\n",
                runs);
}

// The same over NCX tensors (PyTorch's layout), converted by windows through the block
// transpose of channel runs: f32 and bf16, 1-D and 2-D, a padded layout.
TEST(BwdWeights, PixelChunksOfNcxRowsEqualTheReference) {
    // clang-format off
    const testing::conv_geometry ncx[] = {
        {"NCX 1-D 1 channel, kernel 10 stride 5", 1, 2, {83}, {10}, {5}, {2}, {4}, {1}, true, false, data_type::f32, 1, 40},
        {"NCX bf16 2-D 5 channels", 1, 2, {6, 37}, {3, 3}, {1, 2}, {1, 1}, {1, 1}, {1, 1}, true, false, data_type::bf16, 5, 24},
        {"NCX padded f32 1-D 20 channels, dilated", 1, 1, {45}, {3}, {1}, {2}, {2}, {2}, true, true, data_type::f32, 20, 33},
    };
    // clang-format on
    int runs = 0;
    for (const testing::conv_geometry &g : ncx) {
        prepared pr = prepare_op(
            testing::make_geometry_op(g, op_kind::ConvolutionBackwardWeights, false), true);
        const std::vector<double> want = reference_weights(pr);
        for (const isa_unit &u : isa_units) {
            if (!detail::isa_available(u.isa) || u.bf16_only) continue;
            for (int nthr : {1, 2})
                for (const dim_t pixels : {dim_t(1), dim_t(4), dim_t(9)}) {
                    const std::vector<double> got =
                        run_split(u, pr, false, nthr, 1, nullptr, nullptr, pixels).values();
                    for (size_t i = 0; i < got.size(); ++i)
                        ASSERT_EQ(got[i], want[i]) << u.name << " " << g.what << ", threads "
                                                   << nthr << ", pixels " << pixels << ", at " << i;
                    ++runs;
                }
        }
    }
    std::printf("[ info    ] %d NCX (case, isa, threads, pixels) runs equal the reference\n", runs);
}

// The vdpbf16ps weight gradient with few input channels: the taps along w of a (kd, kh) share
// its register tiles, rows (kw, channel) (direct_bwd_w_taps_along_w, as the f32 kernel's), and
// rows go in chunks of pixels, rounded up to a pair (1 -> 2, 3 -> 4, 7 -> 8; 0: whole rows).
// Odd widths (the last pixel paired with zero, in the last chunk), taps only in padding,
// dilation, stride phases, groups, NCX; rows and weights split (one tap per tile), 1-3
// threads, poisoned scratch, small integers: the reference's weights.
TEST(BwdWeightsBf16Dot, TapsSharingTilesAndPixelChunksEqualTheReference) {
    // clang-format off
    const testing::conv_geometry few[] = {
        {"1 channel, kernel 10 stride 5 (wav2vec2's first layer), 17 outputs", 1, 2, {88}, {10}, {5}, {2}, {4}, {1}, false, false, data_type::bf16, 1, 40},
        {"2-D 3 channels, kernel 3x7 stride 2 (a stem), 17 outputs", 1, 2, {5, 33}, {3, 7}, {1, 2}, {1, 3}, {1, 3}, {1, 1}, false, false, data_type::bf16, 3, 24},
        {"2 channels, dilated kernel 5, taps only in padding", 1, 3, {6}, {5}, {1}, {4}, {4}, {3}, false, false, data_type::bf16, 2, 33},
        {"groups of 1 channel, kernel 4 stride 2", 2, 2, {15}, {4}, {2}, {1}, {1}, {1}, false, false, data_type::bf16, 1, 19},
        {"NCX 3 channels, kernel 9, 70 outputs channels", 1, 1, {41}, {9}, {1}, {4}, {4}, {1}, true, false, data_type::bf16, 3, 70},
        {"5 channels (a tile per tap), kernel 3 stride 2", 1, 2, {2, 37}, {3, 3}, {1, 2}, {1, 1}, {1, 1}, {1, 1}, false, false, data_type::bf16, 5, 20},
    };
    // clang-format on
    const testing::poisoned_scratch nan_scratch;
    int runs = 0, shared = 0;
    for (const testing::conv_geometry &g : few) {
        for (const op_kind kind :
             {op_kind::ConvolutionBackwardWeights, op_kind::ConvTransposeBackwardWeights}) {
            prepared pr = prepare_op(testing::make_geometry_op(g, kind, false), true);
            const std::vector<double> want = reference_weights(pr);
            const detail::direct_plan pl = detail::make_direct_plan(pr.r.prob, 16, 32);
            detail::direct_plan rows_split = pl;
            rows_split.weights_split = false;
            shared += detail::direct_bwd_w_taps_along_w(rows_split) > 1;
            for (const isa_unit &u : isa_units) {
                if (!detail::isa_available(u.isa) || !u.bf16_only) continue;
                for (bool weights_split : {false, true})
                    for (int nthr : {1, 2, 3})
                        for (const dim_t pixels :
                             {dim_t(0), dim_t(1), dim_t(3), dim_t(7), dim_t(64)}) {
                            const std::vector<double> got =
                                run_split(u, pr, weights_split, nthr, 1, nullptr, nullptr, pixels)
                                    .values();
                            for (size_t i = 0; i < got.size(); ++i)
                                ASSERT_EQ(got[i], want[i])
                                    << u.name << " " << g.what << " " << to_string(kind)
                                    << ", weights split " << weights_split << ", threads " << nthr
                                    << ", pixels per chunk " << pixels << ", at " << i;
                            ++runs;
                        }
            }
        }
    }
    // The cases of 1-3 channels put several taps in a tile.
    EXPECT_GE(shared, 8);
    std::printf("[ info    ] %d (case, op, isa, split, threads, pixels) runs equal the reference\n",
                runs);
}

// A channels-last f32 bwd_weights problem of one image size, dims as {h, w}.
detail::conv_problem weights_problem(dim_t mb, dim_t ic, dim_t oc, dim_t oh, dim_t k, dim_t s) {
    detail::conv_problem p{};
    p.dir = detail::conv_direction::bwd_weights;
    p.dt = data_type::f32;
    p.mb = mb, p.g = 1, p.icg = ic, p.ocg = oc;
    p.nsp = 2;
    p.i[0] = p.o[0] = p.k[0] = p.s[0] = p.dl[0] = 1;
    for (int x = 1; x < 3; ++x) {
        p.o[x] = oh, p.k[x] = k, p.s[x] = s, p.dl[x] = 1;
        p.pb[x] = p.pe[x] = (k - 1) / 2;
        p.i[x] = (oh - 1) * s + k - 2 * p.pb[x];
    }
    p.src = {p.i[1] * p.i[2] * ic, 1, {p.i[1] * p.i[2] * ic, p.i[2] * ic, ic}};
    p.dst = {p.o[1] * p.o[2] * oc, 1, {p.o[1] * p.o[2] * oc, p.o[2] * oc, oc}};
    p.wei.oc = 1, p.wei.ic = oc;  // XIO
    p.wei.sp[0] = k * k * ic * oc, p.wei.sp[1] = k * ic * oc, p.wei.sp[2] = ic * oc;
    return p;
}

TEST(BwdWeightsSplit, ThePlanSplitsTheWeightsWhereTheyAreBigNextToTheData) {
    set_num_threads(2);
    const detail::cache_sizes caches{48 * 1024, 2 * 1024 * 1024, "test"};
    // The plan of a kernel whose bwd_weights can split the weights (the direct kernel's).
    auto plan = [&](const detail::conv_problem &p) {
        return detail::make_direct_plan(p, 16, 32, caches, true, true);
    };
    // DCGAN 512 -> 256 (4x4 s2, batch 4) as the mirror convolution: 2.1 M weights, 0.4 M data.
    const detail::conv_problem dcgan = weights_problem(4, 256, 512, 8, 4, 2);
    const detail::direct_plan pd = plan(dcgan);
    EXPECT_TRUE(pd.weights_split) << detail::describe(pd);
    EXPECT_NE(detail::describe(pd).find("weights split"), std::string::npos);
    // Its chunks of rows hold at least 256 pixels (4 images of 8 rows of 8), beyond the L2
    // budget's 16 rows: each microkernel call then reduces 256 pixels into its C tile.
    EXPECT_GE(pd.rows_per_chunk * dcgan.o[2], 256) << detail::describe(pd);
    // ResNet-50 res2 3x3 at batch 8: 37 K weights, 3.2 M data.
    EXPECT_FALSE(plan(weights_problem(8, 64, 64, 56, 3, 1)).weights_split);
    // bf16 weights too (each tap's last chunk rounds the sums in place), but not OIX weights
    // (output channels strided: no row of sums to store at once).
    detail::conv_problem bf = dcgan;
    bf.dt = data_type::bf16;
    EXPECT_TRUE(plan(bf).weights_split);
    detail::conv_problem oix = dcgan;
    oix.wei.oc = 256 * 16, oix.wei.ic = 16, oix.wei.sp[0] = 16, oix.wei.sp[1] = 4,
    oix.wei.sp[2] = 1;
    EXPECT_FALSE(plan(oix).weights_split);
    // A kernel whose bwd_weights splits only the rows (the grouped and vdpbf16ps kernels) does
    // not ask: never split.
    EXPECT_FALSE(detail::make_direct_plan(dcgan, 16, 32, caches, true).weights_split);
    // One thread: the same choice (its sums in place, with no partial copy to store after).
    set_num_threads(1);
    EXPECT_TRUE(plan(dcgan).weights_split);
    EXPECT_FALSE(plan(weights_problem(8, 64, 64, 56, 3, 1)).weights_split);
    set_num_threads(0);  // the default again
}

TEST(BwdWeights, ThePlanCutsRowsBeyondItsBudgetIntoPixelChunks) {
    const detail::cache_sizes caches{48 * 1024, 2 * 1024 * 1024, "test"};
    // wav2vec2's first layer: 1 -> 512 channels, kernel 10, stride 5, 16000 outputs a row
    // (33 MB of src and diff_dst): chunks of 126 pixels (256 KB each, with the next one within
    // a quarter of this 2 MB L2; within half of a 1 MB L2, Zen 4/5's, the same chunks).
    detail::conv_problem w2v = weights_problem(4, 1, 512, 1, 1, 1);
    w2v.nsp = 1;
    w2v.o[1] = w2v.i[1] = w2v.k[1] = 1, w2v.pb[1] = w2v.pe[1] = 0;
    w2v.o[2] = 15999, w2v.k[2] = 10, w2v.s[2] = 5, w2v.i[2] = 80000, w2v.pb[2] = w2v.pe[2] = 0;
    const detail::direct_plan pl = detail::make_direct_plan(w2v, 16, 32, caches);
    EXPECT_EQ(pl.pixels_per_chunk, 126) << detail::describe(pl);
    EXPECT_NE(detail::describe(pl).find("pixels_per_chunk=126"), std::string::npos);
    const detail::cache_sizes zen{48 * 1024, 1024 * 1024, "test"};
    EXPECT_EQ(detail::make_direct_plan(w2v, 16, 32, zen).pixels_per_chunk, 126);
    // A smaller L2 (512 KB): 128 KB chunks, at least 64 pixels.
    const detail::cache_sizes small{32 * 1024, 512 * 1024, "test"};
    EXPECT_EQ(detail::make_direct_plan(w2v, 16, 32, small).pixels_per_chunk, 64);
    // Rows within the budget stay whole: ResNet-50's res2 3x3 (56 pixels of 64 channels).
    EXPECT_EQ(detail::make_direct_plan(weights_problem(8, 64, 64, 56, 3, 1), 16, 32, caches)
                  .pixels_per_chunk,
              0);
    // A row just beyond it: chunks of half the budget.
    detail::conv_problem wide = weights_problem(1, 64, 64, 1, 3, 1);
    wide.o[2] = 1100, wide.i[2] = 1100;  // (64 + 64) * 4 * 1100 = 563 KB, 512 pixels a chunk
    EXPECT_EQ(detail::make_direct_plan(wide, 16, 32, caches).pixels_per_chunk, 512);
    wide.o[2] = wide.i[2] = 1000;  // 512 KB: within the budget
    EXPECT_EQ(detail::make_direct_plan(wide, 16, 32, caches).pixels_per_chunk, 0);
}

}  // namespace
}  // namespace convgrad
