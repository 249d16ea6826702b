// The depthwise kernel (kernels/dw_kernels.hpp) on the edges its tiles must get right, against
// the reference, exactly (small-integer data), for every op of every geometry: channel tails
// (1, 15, 16, 17, 33 channels against 8- and 16-lane vectors), rows shorter and longer than
// the register tile, a kernel larger than the input, strides 1-3, dilation, asymmetric
// padding, pads and dilations of 2^60 (taps that read only padding), a stride of 2^60, 1-D and
// 3-D, bias, NCX and padded strides, bf16/f16, 1-3 threads on problems big enough to be split.
// Plus an Inf weight whose tap lands in the padding for some outputs: the reference skips padded
// taps, so those outputs stay finite (Inf * 0 would make them NaN).
// Grouped layers with a few channels per group (planes): 1-8 src and dst channels per group,
// unequal both ways, over the same edges, and a batch spanning several chunks of plane copies.
// The NCX depthwise kernel (kernels/dw_ncx_kernels.hpp, pixels on the lanes) over its own
// edges: lines of 12-150 outputs against 8- and 16-lane vectors (tails, whole vectors, blocks
// of 4), strides 1-3 with odd and even widths (its stride phases, split and interleaved by
// vectors and by elements), dilation, asymmetric pads, a kernel larger than the input, 1-D and
// 3-D, bias, padded strides, bf16/f16, threads, an empty batch, and the Inf weight.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>

#include "core/resolve.hpp"
#include "kernels/col2im_kernels.hpp"
#include "kernels/common/direct_plan.hpp"
#include "kernels/common/gemm_plan.hpp"
#include "kernels/dw_kernels.hpp"
#include "kernels/dw_ncx_kernels.hpp"
#include "kernels/dw_test_util.hpp"
#include "kernels/plan/cache_sizes.hpp"
#include "util/kernel_check.hpp"

namespace convgrad {
namespace {

using dw_geometry = testing::conv_geometry;
using testing::conv_kinds;
using testing::dw_unit;
using testing::dw_units;
using testing::tensor_buffer;

// clang-format off
const dw_geometry geometries[] = {
    {"1 channel", 1, 2, {7, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false, false, data_type::f32},
    {"15 channels, long rows", 15, 1, {6, 40}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false, false, data_type::f32},
    {"16 channels, stride 2", 16, 2, {5, 11}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, false, false, data_type::f32},
    {"17 channels, stride 3, asymmetric pads", 17, 1, {9, 30}, {3, 3}, {3, 3}, {1, 2}, {0, 1}, {1, 1}, false, false, data_type::f32},
    {"33 channels, dilation 2", 33, 1, {8, 27}, {3, 3}, {1, 1}, {2, 2}, {2, 2}, {2, 2}, false, false, data_type::f32},
    {"kernel larger than the input", 33, 2, {3, 4}, {5, 5}, {1, 1}, {3, 2}, {3, 3}, {1, 1}, false, false, data_type::f32},
    {"rows shorter than the tile", 24, 2, {4, 3}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false, false, data_type::f32},
    {"x2 upsampler 4x4 s2", 24, 1, {10, 12}, {4, 4}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, false, false, data_type::f32},
    {"1-D long kernel", 9, 2, {40}, {9}, {1}, {4}, {5}, {1}, false, false, data_type::f32},
    {"1-D stride 2 bf16", 20, 2, {50}, {7}, {2}, {3}, {2}, {1}, false, false, data_type::bf16},
    {"3-D", 17, 1, {5, 6, 7}, {3, 3, 3}, {1, 2, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, false, false, data_type::f32},
    {"3-D f16 dilated", 18, 1, {5, 6, 9}, {2, 3, 3}, {1, 1, 2}, {0, 2, 1}, {1, 1, 2}, {1, 2, 2}, false, false, data_type::f16},
    {"NCX", 19, 2, {7, 8}, {3, 3}, {1, 2}, {1, 1}, {1, 1}, {1, 1}, true, false, data_type::f32},
    {"NCX bf16", 5, 1, {6, 13}, {3, 3}, {2, 1}, {1, 1}, {1, 1}, {1, 1}, true, false, data_type::bf16},
    // 3.5 MB of f32 copies per image: fwd and bwd_data convert one image at a time (L2 of up to
    // 4 MB per core, 2 threads), so chunk boundaries are crossed (NcxCopiesAChunkOfImages).
    {"NCX, copies in chunks of images", 48, 3, {96, 96}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true, false, data_type::f32},
    {"padded strides bf16, tail", 33, 1, {7, 19}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false, true, data_type::bf16},
    {"padded strides f16, tail", 17, 2, {6, 21}, {3, 3}, {2, 2}, {1, 1}, {0, 0}, {1, 1}, false, true, data_type::f16},
    // Pads and a dilation of 2^60 along w (fuzz_op found the bwd_data one): the outer taps
    // read only padding, and their offsets times the pixel stride would overflow.
    {"huge pads and dilation along w", 16, 1, {5, 6}, {3, 3}, {1, 1}, {1, 1LL << 60}, {1, 1LL << 60}, {1, 1LL << 60}, false, false, data_type::f32},
    {"huge pads and dilation, stride 2 bf16", 21, 2, {4, 9}, {3, 3}, {1, 2}, {1, 1LL << 60}, {1, (1LL << 60) + 1}, {1, 1LL << 60}, false, false, data_type::bf16},
    // A stride and pads of 2^60 along w (fuzz_op found the forward one): three outputs per
    // line, the middle one inside; the stride times the pixel stride, and a tap's offset
    // times it, do not fit in 64 bits and must not be computed (fwd, bwd_data and
    // bwd_weights each did once).
    {"huge stride and pads along w", 16, 2, {5, 6}, {3, 3}, {1, 1LL << 60}, {1, 1LL << 60}, {1, 1LL << 60}, {1, 1}, false, false, data_type::f32},
    {"huge stride and pads along w, bf16 tail", 21, 1, {4, 9}, {3, 3}, {1, 1LL << 60}, {1, 1LL << 60}, {1, 1LL << 60}, {1, 1}, false, false, data_type::bf16},
    // Over a million multiply-adds: the work is split over the threads (1, 2, 3 by position).
    {"threaded 3x3", 33, 4, {40, 40}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false, false, data_type::f32},
    {"threaded stride 2 bf16", 40, 6, {36, 36}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, false, false, data_type::bf16},
    {"threaded upsampler f16", 17, 4, {34, 34}, {4, 4}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, false, false, data_type::f16},
    {"64 channels f16, whole lines", 64, 1, {5, 9}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, false, false, data_type::f16},
};
// icg == ocg dividing 8 is grouped_lanes' (the depthwise rows decline it).
const dw_geometry grouped_geometries[] = {
    {"planes 1->2, 1-D stride 2, lane tail", 9, 2, {40}, {5}, {2}, {2}, {1}, {1}, false, false, data_type::f32, 1, 2},
    {"planes 2->1, dilation 2", 17, 1, {9, 21}, {3, 3}, {1, 1}, {2, 2}, {2, 2}, {2, 2}, false, false, data_type::f32, 2, 1},
    {"planes 1->6 bf16, stride 2", 5, 2, {7, 19}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, false, false, data_type::bf16, 1, 6},
    {"planes 6->1 3-D f16", 3, 1, {4, 5, 9}, {2, 3, 3}, {1, 2, 1}, {0, 1, 1}, {1, 1, 1}, {1, 1, 1}, false, false, data_type::f16, 6, 1},
    {"planes 3->8 NCX, asymmetric pads", 2, 2, {8, 11}, {3, 3}, {1, 3}, {1, 2}, {0, 1}, {1, 1}, true, false, data_type::f32, 3, 8},
    {"planes 8->3, kernel larger than the input", 3, 2, {3, 4}, {5, 5}, {1, 1}, {3, 2}, {3, 3}, {1, 1}, false, false, data_type::f32, 8, 3},
    {"planes 2->3 NCX bf16, 1-D long kernel", 7, 1, {30}, {9}, {1}, {4}, {5}, {1}, true, false, data_type::bf16, 2, 3},
    {"planes 3->2 3-D padded strides bf16", 5, 1, {5, 6, 7}, {3, 3, 3}, {1, 2, 2}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, false, true, data_type::bf16, 3, 2},
    {"planes 3->3 f16 dilated", 7, 2, {6, 13}, {2, 3}, {1, 2}, {0, 2}, {1, 1}, {1, 2}, false, false, data_type::f16, 3, 3},
    {"planes 2->1 empty batch", 5, 0, {6, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false, false, data_type::f32, 2, 1},
    {"planes 6->8 padded strides f32", 2, 1, {6, 9}, {3, 3}, {2, 1}, {1, 1}, {1, 1}, {1, 1}, false, true, data_type::f32, 6, 8},
    // Threaded; planes of one image 0.5 MB (fwd: 64 lanes x 2 planes; bwd_data 32 x 4): chunks
    // of 2 images of the 5 (2, 2, 1).
    {"planes 2->4 threaded, chunks", 16, 5, {32, 32}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false, false, data_type::f32, 2, 4},
    {"planes 4->2 threaded bf16, stride 3", 16, 4, {40, 40}, {3, 3}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false, false, data_type::bf16, 4, 2},
};
// icg == ocg dividing the vector width, several groups per vector: the grouped_lanes rows'
// (their own family below). Every channel count per group (1, 2, 4, 8), tails of the last
// block (12, 40, 18, 19 channels), strides and dilation along each axis, asymmetric pads, a
// kernel larger than the input, 1-D/3-D, a 1-D kernel of 11 taps (the weight gradient's
// register groups of 9 taps on AVX-512 and 4 on AVX2: a short last group on both), NCX,
// padded strides, bf16/f16, rows so long that the weight gradient copies one block at a time,
// and problems big enough to be split over the threads and into several runs of rows per plane
// and chunks of rows.
const dw_geometry lanes_geometries[] = {
    {"lanes 8x8 3x3, two blocks", 4, 2, {9, 13}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false, false, data_type::f32, 8, 8},
    {"lanes 8, 40 channels (tail), stride 2", 5, 1, {7, 10}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, false, false, data_type::f32, 8, 8},
    {"lanes 4, 12 channels, dilation 2, asymmetric pads", 3, 2, {9, 11}, {3, 3}, {2, 1}, {1, 2}, {0, 1}, {2, 2}, false, false, data_type::f32, 4, 4},
    {"lanes 2, 1-D 11 taps", 9, 2, {40}, {11}, {1}, {5}, {4}, {1}, false, false, data_type::f32, 2, 2},
    {"lanes 8 3-D bf16", 2, 1, {4, 5, 9}, {2, 3, 3}, {1, 2, 1}, {0, 1, 1}, {1, 1, 1}, {1, 1, 1}, false, false, data_type::bf16, 8, 8},
    {"lanes 4 NCX f16, kernel larger than the input", 4, 2, {3, 4}, {5, 5}, {1, 1}, {3, 2}, {3, 3}, {1, 1}, true, false, data_type::f16, 4, 4},
    {"lanes 2, 18 channels, padded strides, stride 3 along w", 9, 1, {6, 20}, {3, 3}, {1, 3}, {1, 0}, {1, 2}, {1, 1}, false, true, data_type::f32, 2, 2},
    {"lanes 1, 19 channels, 3-D dilated f16", 19, 1, {5, 6, 7}, {3, 2, 3}, {1, 1, 2}, {1, 0, 1}, {1, 1, 1}, {2, 1, 1}, false, false, data_type::f16, 1, 1},
    // A row's box of one block (1.3 MB) outgrows half of L2: each fill copies a single block.
    {"lanes 2, 1-D rows of 20000", 32, 1, {20000}, {3}, {1}, {1}, {1}, {1}, false, false, data_type::f32, 2, 2},
    {"lanes 8, empty batch", 2, 0, {6, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false, false, data_type::f32, 8, 8},
    // Threaded (1, 2, 3 threads by position), several runs of rows per plane and chunks.
    {"lanes 8 threaded, 64 channels", 8, 3, {30, 30}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false, false, data_type::f32, 8, 8},
    {"lanes 4 threaded bf16 NCX, stride 2", 16, 4, {28, 36}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, true, false, data_type::bf16, 4, 4},
    {"lanes 2 threaded f16, 5x5", 24, 2, {40, 40}, {5, 5}, {1, 1}, {2, 2}, {2, 2}, {1, 1}, false, false, data_type::f16, 2, 2},
};
// NCX only (every row of the NCX kernel must take them: lines of at least half a vector).
const dw_geometry ncx_geometries[] = {
    {"NCX w 17, pads 1", 5, 2, {6, 17}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true, false, data_type::f32},
    {"NCX w 16", 3, 1, {5, 16}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true, false, data_type::f32},
    {"NCX long rows", 2, 1, {4, 150}, {3, 5}, {1, 1}, {1, 2}, {1, 2}, {1, 1}, true, false, data_type::f32},
    {"NCX stride 2, odd width", 4, 2, {9, 45}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, true, false, data_type::f32},
    {"NCX stride 2, even width", 3, 1, {8, 64}, {3, 3}, {2, 2}, {0, 0}, {1, 1}, {1, 1}, true, false, data_type::f32},
    {"NCX stride 3, asymmetric pads", 3, 1, {9, 50}, {3, 3}, {3, 3}, {1, 2}, {0, 1}, {1, 1}, true, false, data_type::f32},
    {"NCX dilation 2", 3, 1, {8, 40}, {3, 3}, {1, 1}, {2, 2}, {2, 2}, {2, 2}, true, false, data_type::f32},
    {"NCX kernel larger than the input", 3, 2, {3, 12}, {5, 5}, {1, 1}, {3, 3}, {3, 3}, {1, 1}, true, false, data_type::f32},
    {"NCX x2 upsampler 4x4 s2", 4, 1, {10, 40}, {4, 4}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, true, false, data_type::f32},
    {"NCX 1-D long kernel", 4, 2, {60}, {9}, {1}, {4}, {5}, {1}, true, false, data_type::f32},
    // Dilation 20 and 19: the last tap reads inside only from output 20 (or 19) on, past the
    // first vector, and the first tap stops before the last one (the fuzzer's shift by 36).
    {"NCX 1-D dilation past a vector", 3, 1, {70}, {3}, {1}, {20}, {20}, {20}, true, false, data_type::f32},
    {"NCX 1-D stride 2, dilation past a vector", 2, 1, {80}, {3}, {2}, {19}, {19}, {19}, true, false, data_type::f32},
    {"NCX 1-D stride 2 bf16", 3, 2, {50}, {7}, {2}, {3}, {2}, {1}, true, false, data_type::bf16},
    {"NCX 3-D", 3, 1, {5, 6, 20}, {3, 3, 3}, {1, 2, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, true, false, data_type::f32},
    {"NCX 3-D f16 dilated, stride 2", 2, 1, {4, 5, 24}, {2, 3, 3}, {1, 1, 2}, {0, 2, 1}, {1, 1, 2}, {1, 2, 2}, true, false, data_type::f16},
    {"NCX f16 tail", 5, 1, {6, 21}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true, false, data_type::f16},
    {"NCX bf16 stride 2", 3, 2, {7, 40}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, true, false, data_type::bf16},
    {"NCX padded strides bf16", 4, 1, {6, 19}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true, true, data_type::bf16},
    {"NCX padded strides stride 2", 3, 2, {6, 33}, {3, 3}, {2, 2}, {0, 0}, {0, 0}, {1, 1}, true, true, data_type::f32},
    {"NCX empty batch", 3, 0, {6, 20}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true, false, data_type::f32},
    // Over a million multiply-adds: the planes are split over the threads (1, 2, 3 by position).
    {"NCX threaded 3x3", 33, 4, {40, 40}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true, false, data_type::f32},
    {"NCX threaded stride 2 bf16", 20, 6, {64, 64}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, true, false, data_type::bf16},
    {"NCX threaded upsampler f16", 17, 8, {48, 48}, {4, 4}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, true, false, data_type::f16},
};
// clang-format on

// Every geometry under every op; the forward ops (Convolution, ConvTranspose) with a bias.
template <size_t N>
std::vector<testing::swept_case> sweep(const dw_geometry (&geos)[N], uint64_t seed) {
    size_t next = 0;
    auto make = [&](std::mt19937_64 &) {
        const dw_geometry &c = geos[next / std::size(conv_kinds)];
        const op_kind kind = conv_kinds[next % std::size(conv_kinds)];
        ++next;
        const bool bias = kind == op_kind::Convolution || kind == op_kind::ConvTranspose;
        return std::pair<op, std::string>(testing::make_geometry_op(c, kind, bias),
                                          std::string(c.what) + " " + to_string(kind));
    };
    const int n = int(N * std::size(conv_kinds));
    return testing::reference_sweep(
        seed, n, make, [](int iter) { return 1 + (iter / int(std::size(conv_kinds))) % 3; });
}

const std::vector<testing::swept_case> &edge_cases() {
    static const std::vector<testing::swept_case> all = sweep(geometries, 23);
    return all;
}

const std::vector<testing::swept_case> &ncx_cases() {
    static const std::vector<testing::swept_case> all = sweep(ncx_geometries, 31);
    return all;
}

const std::vector<testing::swept_case> &grouped_cases() {
    static const std::vector<testing::swept_case> all = sweep(grouped_geometries, 29);
    return all;
}

const std::vector<testing::swept_case> &lanes_cases() {
    static const std::vector<testing::swept_case> all = sweep(lanes_geometries, 37);
    return all;
}

// The rows of one kernel family: "depthwise:" (channels on the lanes) or "depthwise_ncx:".
std::vector<const detail::impl_desc *> dw_rows(const std::string &family = "depthwise:") {
    std::vector<const detail::impl_desc *> rows;
    for (const detail::impl_desc &r : detail::kernel_inventory())
        if (std::string(r.name).rfind(family, 0) == 0) rows.push_back(&r);
    return rows;
}

// Every row of the family that runs here takes every case and equals the reference on each.
void check_rows_take_and_match(const std::vector<testing::swept_case> &cases,
                               const std::string &family = "depthwise:") {
    const auto rows = dw_rows(family);
    ASSERT_FALSE(rows.empty());
    int ran = 0;
    for (const detail::impl_desc *row : rows) {
        const testing::row_mode m = testing::how_to_run(*row);
        if (!m.create) continue;
        for (const testing::swept_case &c : cases)
            EXPECT_EQ(row->cannot(c.r.prob), "") << row->name << " " << c.text;
        EXPECT_EQ(testing::check_row(*row, m, cases), int(cases.size()));
        ++ran;
    }
    if (ran == 0) GTEST_SKIP() << "no depthwise row runs on this CPU (or under CONVGRAD_MAX_ISA)";
}

TEST(Depthwise, EdgeCasesEqualTheReference) {
    check_rows_take_and_match(edge_cases());
}

TEST(Depthwise, NcxPixelsOnLanesEqualTheReference) {
    check_rows_take_and_match(ncx_cases(), "depthwise_ncx:");
}

// The NCX rows also take the NCX geometries of the channels-last kernel's sweep (whose lines
// are long enough) and equal the reference there.
TEST(Depthwise, NcxRowsEqualTheReferenceOnTheChannelsLastSweep) {
    int taken = 0;
    for (const detail::impl_desc *row : dw_rows("depthwise_ncx:")) {
        const testing::row_mode m = testing::how_to_run(*row);
        if (!m.create) continue;
        std::vector<testing::swept_case> mine;
        for (const testing::swept_case &c : edge_cases())
            if (row->cannot(c.r.prob).empty()) mine.push_back(c);
        taken += int(mine.size());
        EXPECT_EQ(testing::check_row(*row, m, mine), int(mine.size())) << row->name;
    }
    if (taken == 0) GTEST_SKIP() << "no depthwise_ncx row runs on this CPU";
}

TEST(Depthwise, GroupedPlanesEqualTheReference) {
    check_rows_take_and_match(grouped_cases());
}

// Each grouped_lanes row takes every lanes case but those whose groups fill its vector (8
// channels on AVX2's 8 lanes), and equals the reference on each.
TEST(Depthwise, GroupedLanesEqualTheReference) {
    int ran = 0;
    for (const detail::impl_desc *row : dw_rows("grouped_lanes:")) {
        const testing::row_mode m = testing::how_to_run(*row);
        if (!m.create) continue;
        ++ran;
        std::vector<testing::swept_case> mine;
        for (const testing::swept_case &c : lanes_cases()) {
            const std::string why = row->cannot(c.r.prob);
            if (why.empty())
                mine.push_back(c);
            else
                EXPECT_GE(c.r.prob.icg, row->tile.vlen)
                    << row->name << " " << c.text << ": " << why;
        }
        EXPECT_GE(mine.size(), lanes_cases().size() / 2) << row->name;
        EXPECT_EQ(testing::check_row(*row, m, mine), int(mine.size())) << row->name;
    }
    if (ran == 0)
        GTEST_SKIP() << "no grouped_lanes row runs on this CPU (or under CONVGRAD_MAX_ISA)";
}

// The chunked geometry really spans chunks of plane copies (2 images of 5), and the kernel
// says what it copies.
TEST(Depthwise, PlanesAreCopiedInChunks) {
    const dw_geometry &c = grouped_geometries[std::size(grouped_geometries) - 2];
    for (op_kind kind : {op_kind::Convolution, op_kind::ConvolutionBackwardData}) {
        const op o = testing::make_geometry_op(c, kind, false);
        const detail::conv_problem p = detail::resolve_op(o, o.inputs(), o.outputs()).prob;
        for (const detail::impl_desc *row : dw_rows()) {
            if (!testing::how_to_run(*row).create) continue;
            const std::string d = row->create(p)->describe();
            const bool fwd = kind == op_kind::Convolution;
            EXPECT_NE(d.find(fwd ? "planes=2 via src copies of 2 images"
                                 : "planes=4 via dst copies of 2 images"),
                      std::string::npos)
                << row->name << ": " << d;
        }
    }
}

// The NCX geometry of 3.5 MB per image is converted fewer images at a time than its batch, in
// every direction (EdgeCasesEqualTheReference checks the results; bwd_weights sums the chunks).
TEST(Depthwise, NcxCopiesAChunkOfImages) {
    const dw_geometry *c = nullptr;
    for (const dw_geometry &g : geometries)
        if (std::string(g.what) == "NCX, copies in chunks of images") c = &g;
    ASSERT_NE(c, nullptr);
    for (op_kind kind : {op_kind::Convolution, op_kind::ConvolutionBackwardData,
                         op_kind::ConvolutionBackwardWeights}) {
        const op o = testing::make_geometry_op(*c, kind, false);
        const detail::conv_problem p = detail::resolve_op(o, o.inputs(), o.outputs()).prob;
        for (const detail::impl_desc *row : dw_rows()) {
            if (!testing::how_to_run(*row).create) continue;
            const std::string d = row->create(p)->describe();
            const std::string key = "channels-last copies of ";
            const size_t at = d.find(key);
            ASSERT_NE(at, std::string::npos) << row->name << ": " << d;
            const long images = std::stol(d.substr(at + key.size()));
            EXPECT_LT(images, c->mb) << row->name << ": " << d;
        }
    }
}

// Weight tap (0, 0) of every channel is +Inf. With pads 1, it reads the padding for the first
// output row and column and real (non-zero) inputs elsewhere: the reference gives finite values
// there and +-Inf elsewhere, never NaN. In NXC for the channels-last rows, in NCX for the NCX
// rows (whose border lanes are masked).
TEST(Depthwise, InfWeightAtAPaddedTapIsSkipped) {
    dw_geometry c{"Inf weight", 17,     1,      {6, 20}, {3, 3}, {1, 1},
                  {1, 1},       {1, 1}, {1, 1}, false,   false,  data_type::f32};
    for (const bool ncx : {false, true})
        for (op_kind kind : {op_kind::Convolution, op_kind::ConvolutionBackwardData}) {
            c.ncx = ncx;
            const op o = testing::make_geometry_op(c, kind, false);
            const detail::resolved_op r = detail::resolve_op(o, o.inputs(), o.outputs());
            std::vector<tensor_buffer> in;
            std::mt19937_64 rng(3);
            for (size_t i = 0; i < r.inputs.size(); ++i) {
                in.emplace_back(r.inputs[i]);
                std::vector<double> v(in.back().values().size());
                for (double &x : v) x = double(1 + rng() % 3);  // non-zero: Inf * x is never NaN
                if (int(i) == r.wei_input)
                    for (dim_t ch = 0; ch < c.g; ++ch)
                        v[size_t(ch * 9)] = std::numeric_limits<double>::infinity();
                in.back().fill_values(v);
            }
            tensor_buffer want(r.outputs[0]);
            testing::run_poisoned(r, detail::reference_impl().create, in, want);
            const std::vector<double> ref = want.values();
            size_t finite = 0;
            for (double x : ref) {
                ASSERT_FALSE(std::isnan(x));
                finite += std::isfinite(x);
            }
            ASSERT_GT(finite, 0u);
            ASSERT_LT(finite, ref.size());
            for (const detail::impl_desc *row : dw_rows(ncx ? "depthwise_ncx:" : "depthwise:")) {
                const testing::row_mode m = testing::how_to_run(*row);
                if (!m.create) continue;
                ASSERT_EQ(row->cannot(r.prob), "") << row->name;
                tensor_buffer got(r.outputs[0]);
                testing::run_poisoned(r, m.create, in, got);
                EXPECT_EQ(got.values(), ref) << row->name << " " << to_string(kind);
            }
        }
}

// An output stored past the caches (the plan's stream_output, which the kernels take for big
// outputs in place) holds the same bits as one stored plainly: at a 64-byte aligned address,
// where whole vectors are streamed (bf16/f16: blocks of two vectors, one line) and channel
// tails masked, and one element past it, where every vector falls back to a plain store. Every
// channels-last geometry of the sweep (channel tails, strides, dilation, pads, a kernel larger
// than the input, 1-D, 3-D, threads, f32, bf16, f16), under the four ops that write data, the
// forward ones with a bias. The bytes around the output stay untouched, streamed or not.
TEST(Depthwise, StreamedOutputIsBitIdentical) {
    int runs = 0;
    for (const dw_unit &u : dw_units) {
        if (!detail::isa_available(u.isa)) continue;
        for (const dw_geometry &c : geometries) {
            if (c.ncx) continue;
            for (op_kind kind : {op_kind::Convolution, op_kind::ConvolutionBackwardData,
                                 op_kind::ConvTranspose, op_kind::ConvTransposeBackwardData}) {
                const bool bias = kind == op_kind::Convolution || kind == op_kind::ConvTranspose;
                const op o = testing::make_geometry_op(c, kind, bias);
                const detail::resolved_op r = detail::resolve_op(o, o.inputs(), o.outputs());
                if (!detail::dw_why_not(r.prob, u.tile.vlen).empty()) continue;
                std::vector<tensor_buffer> in;
                for (size_t i = 0; i < r.inputs.size(); ++i) {
                    in.emplace_back(r.inputs[i]);
                    in.back().fill_ints(5 + i);
                }
                const size_t bytes = size_t(r.outputs[0].size_bytes()),
                             elem = c.dt == data_type::f32 ? 4 : 2;
                auto run = [&](bool stream, size_t offset) {
                    std::vector<uint8_t> room(bytes + 256, 0xa5);
                    void *at = room.data();
                    size_t space = room.size();
                    uint8_t *out =
                        static_cast<uint8_t *>(std::align(64, bytes, at, space)) + offset * elem;
                    detail::dw_plan pl = detail::make_dw_plan(r.prob, u.tile);
                    pl.stream_output = stream;
                    u.run(pl, testing::conv_args_of(r, in, out));
                    const bool guards_kept =
                        std::all_of(room.data(), out, [](uint8_t b) { return b == 0xa5; }) &&
                        std::all_of(out + bytes, room.data() + room.size(),
                                    [](uint8_t b) { return b == 0xa5; });
                    EXPECT_TRUE(guards_kept) << u.name << " " << c.what << " " << to_string(kind)
                                             << " offset " << offset << " stream " << stream;
                    return std::vector<uint8_t>(out, out + bytes);
                };
                for (size_t offset : {0, 1}) {
                    const std::vector<uint8_t> plain = run(false, offset),
                                               streamed = run(true, offset);
                    EXPECT_EQ(plain, streamed) << u.name << " " << c.what << " " << to_string(kind)
                                               << " offset " << offset;
                    ++runs;
                }
            }
        }
    }
    if (runs == 0) GTEST_SKIP() << "no channels-last depthwise unit runs on this CPU";
}

// The plan of geometry g as op `kind` on AVX-512's register file (the plan tests below).
detail::dw_plan dw_plan_of(const dw_geometry &g, op_kind kind) {
    const op o = testing::make_geometry_op(g, kind, false);
    return detail::make_dw_plan(detail::resolve_op(o, o.inputs(), o.outputs()).prob, {8, 16});
}

// Every depthwise row that runs here describes its plan of g's forward with `text`.
void every_dw_forward_plan_says(const dw_geometry &g, const char *text) {
    const op o = testing::make_geometry_op(g, op_kind::Convolution, false);
    const detail::conv_problem p = detail::resolve_op(o, o.inputs(), o.outputs()).prob;
    for (const detail::impl_desc *row : dw_rows()) {
        if (!testing::how_to_run(*row).create) continue;
        const std::string d = row->create(p)->describe();
        EXPECT_NE(d.find(text), std::string::npos) << d;
    }
}

// The plan streams only outputs in place far beyond the threads' L2: MobileNetV2's 3x3
// depthwise forward at a batch whose output is twice 8x the threads' L2 (in bf16 with 160
// channels, whole lines per pixel, at the same batch, once), not at batch 1 (1.8 MB), nor
// bf16 with 144 channels or at a quarter of that batch, nor NCX (written through a copy), nor
// for the weight gradient. Its description says so.
TEST(Depthwise, OnlyBigOutputsInPlaceAreStreamed) {
    dw_geometry c{
        "MobileNetV2 3x3", 144, 1, {56, 56}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false, false,
        data_type::f32};
    const detail::dw_plan one = dw_plan_of(c, op_kind::Convolution);
    EXPECT_FALSE(one.stream_output);
    const double image = 56.0 * 56 * 144 * 4;
    c.mb = dim_t(std::ceil(2 * 8.0 * double(detail::machine_caches().l2) * one.nthr / image));
    for (op_kind kind : {op_kind::Convolution, op_kind::ConvolutionBackwardData,
                         op_kind::ConvTranspose, op_kind::ConvTransposeBackwardData})
        EXPECT_TRUE(dw_plan_of(c, kind).stream_output) << to_string(kind) << " batch " << c.mb;
    EXPECT_FALSE(dw_plan_of(c, op_kind::ConvolutionBackwardWeights).stream_output);
    dw_geometry low = c;
    low.dt = data_type::bf16;  // 144 channels: pixels of 4.5 lines, so lines written both ways
    EXPECT_FALSE(dw_plan_of(low, op_kind::Convolution).stream_output);
    low.g = 160;  // whole lines
    EXPECT_TRUE(dw_plan_of(low, op_kind::Convolution).stream_output);
    low.mb = (c.mb + 3) / 4;
    EXPECT_FALSE(dw_plan_of(low, op_kind::Convolution).stream_output);
    dw_geometry ncx = c;
    ncx.ncx = true;
    EXPECT_FALSE(dw_plan_of(ncx, op_kind::Convolution).stream_output);
    every_dw_forward_plan_says(c, "output streamed past the caches");
}

// The plan fetches a line's next input rows into L2 only where they bring more than
// dw_fetch_to_l2_bytes_per_mac bytes per multiply-add (MobileNetV2's layers, measured): f32 at
// stride 1 (0.44 bytes: 4 bytes of one new src pixel per 9 taps) and bf16 at stride 2 (two src
// rows of twice the pixels: 0.89), and their weight gradients (a dst row too: bf16 at stride 1,
// 0.44); not bf16's stride-1 forward and data gradient (0.22), nor its stride-2 data gradient
// (a dst row serves two src rows, each pixel a quarter of the taps: 0.22). Not with plane
// copies or NCX copies (read from L2 already). Its description says so. Prefetches do not
// change results: the sweeps above run these plans.
TEST(Depthwise, RowsOfManyBytesPerProductAreFetchedIntoL2) {
    dw_geometry s1{
        "MobileNetV2 3x3", 144, 32, {56, 56}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false, false,
        data_type::f32};
    dw_geometry s2{"MobileNetV2 3x3 stride 2", 96, 32, {112, 112}, {3, 3}, {2, 2}, {1, 1}, {0, 0},
                   {1, 1}, false, false, data_type::bf16};
    auto bytes = [&](const dw_geometry &g, op_kind kind) {
        const op o = testing::make_geometry_op(g, kind, false);
        return detail::dw_new_row_bytes_per_mac(detail::resolve_op(o, o.inputs(), o.outputs()).prob);
    };
    EXPECT_NEAR(bytes(s1, op_kind::Convolution), 4.0 / 9, 1e-12);
    EXPECT_NEAR(bytes(s2, op_kind::Convolution), 2.0 * 2 * 112 / (56 * 9), 1e-12);
    EXPECT_NEAR(bytes(s2, op_kind::ConvolutionBackwardData), 2.0 * 28 / (112 * 9 / 4.0), 1e-12);
    for (op_kind kind : {op_kind::Convolution, op_kind::ConvolutionBackwardData,
                         op_kind::ConvolutionBackwardWeights})
        EXPECT_TRUE(dw_plan_of(s1, kind).fetch_to_l2) << to_string(kind);
    EXPECT_TRUE(dw_plan_of(s2, op_kind::Convolution).fetch_to_l2);
    EXPECT_TRUE(dw_plan_of(s2, op_kind::ConvolutionBackwardWeights).fetch_to_l2);
    EXPECT_FALSE(dw_plan_of(s2, op_kind::ConvolutionBackwardData).fetch_to_l2);
    dw_geometry low = s1;
    low.dt = data_type::bf16;
    EXPECT_FALSE(dw_plan_of(low, op_kind::Convolution).fetch_to_l2);
    EXPECT_FALSE(dw_plan_of(low, op_kind::ConvolutionBackwardData).fetch_to_l2);
    EXPECT_TRUE(dw_plan_of(low, op_kind::ConvolutionBackwardWeights).fetch_to_l2);
    dw_geometry ncx = s1;
    ncx.ncx = true;
    EXPECT_FALSE(dw_plan_of(ncx, op_kind::Convolution).fetch_to_l2);
    dw_geometry planes = s1;
    planes.g = 72;
    planes.ocg = 2;  // a channel multiplier: plane copies
    EXPECT_FALSE(dw_plan_of(planes, op_kind::Convolution).fetch_to_l2);
    every_dw_forward_plan_says(s1, "next rows fetched into L2");
}

TEST(Depthwise, DeclinesWithReasons) {
    const op o = testing::make_geometry_op(geometries[1], op_kind::Convolution, false);
    detail::conv_problem p = detail::resolve_op(o, o.inputs(), o.outputs()).prob;
    for (int vlen : {8, 16}) {
        p.icg = p.ocg = 1;
        EXPECT_EQ(detail::dw_why_not(p, vlen), "");
        p.ocg = 2;  // a channel multiplier of 2: planes
        EXPECT_EQ(detail::dw_why_not(p, vlen), "");
        p.ocg = 9;  // too many for planes
        EXPECT_NE(detail::dw_why_not(p, vlen).find("not depthwise"), std::string::npos);
        p.ocg = 1;
        p.icg = 9;
        EXPECT_NE(detail::dw_why_not(p, vlen).find("not depthwise"), std::string::npos);
        p.icg = p.ocg = 4;  // grouped_lanes' (4 divides 8 and 16)
        EXPECT_NE(detail::dw_why_not(p, vlen).find("grouped_lanes"), std::string::npos);
        p.icg = p.ocg = 3;
        EXPECT_EQ(detail::dw_why_not(p, vlen), "");
    }
    p.g = 1;  // one group, several channels: not for planes
    EXPECT_NE(detail::dw_why_not(p, 16).find("not grouped"), std::string::npos);
}

// The NCX rows take true depthwise layers with w contiguous and lines of at least half a
// vector, and say why not otherwise.
TEST(Depthwise, NcxDeclinesWithReasons) {
    const op o = testing::make_geometry_op(ncx_geometries[0], op_kind::Convolution,
                                           false);  // 17 outputs along w
    const detail::conv_problem base = detail::resolve_op(o, o.inputs(), o.outputs()).prob;
    auto why = [](const detail::conv_problem &p, int vlen) {
        return detail::dw_ncx_why_not(p, vlen);
    };
    for (int vlen : {8, 16}) EXPECT_EQ(why(base, vlen), "");
    detail::conv_problem p = base;
    p.ocg = 2;
    EXPECT_NE(why(p, 16).find("not depthwise"), std::string::npos);
    p = base;
    p.g = 1;
    EXPECT_NE(why(p, 16).find("one channel"), std::string::npos);
    p = base;
    p.src.c = p.dst.c = 1;  // NXC
    EXPECT_NE(why(p, 16).find("channels contiguous"), std::string::npos);
    p = base;
    p.src.sp[2] = 2;
    EXPECT_NE(why(p, 16).find("w not contiguous"), std::string::npos);
    p = base;
    p.o[2] = 7;  // 7 of 16 lanes; 7 of 8 is enough
    EXPECT_NE(why(p, 16).find("fill less than half"), std::string::npos);
    EXPECT_EQ(why(p, 8), "");
    p.o[2] = 8;
    EXPECT_EQ(why(p, 16), "");
}

}  // namespace
}  // namespace convgrad
