// The col2im kernel (kernels/col2im_kernels.hpp) on the edges its scatter must get right, against
// the reference, exactly (small-integer data): pads larger than the kernel (dst pixels whose
// every tap lands in padding), stride larger than the kernel (src pixels no tap reaches), dilation
// (along w too: the non-contiguous scatter), 1-D and 3-D, groups with few channels per group,
// NCX and padded strides, bf16/f16, bias. The row on the bf16-pairs microkernel runs every case
// in bf16 (odd dst channel counts and NCX dst: the copied pairs). Plus bit-identical results at 1,
// 2 and 3 threads on non-integer data, and the reasons it declines.
#include <gtest/gtest.h>
#include <omp.h>

#include <cstdio>
#include <random>
#include <string>

#include "core/resolve.hpp"
#include "kernels/col2im_kernels.hpp"
#include "util/conv_geometry.hpp"
#include "util/kernel_check.hpp"

namespace convgrad {
namespace {

using testing::tensor_buffer;

struct col2im_case {
    const char *what;
    op_kind kind;  // ConvolutionBackwardData or ConvTranspose
    dim_t g, icg, ocg, mb;
    dims big, k, s, pb, pe, dl;  // dl: 1 = dense
    bool ncx, padded_strides, bias;
    data_type dt;
};

// One case per line, as a table.
// clang-format off
const col2im_case cases[] = {
    {"stem 7x7 s2", op_kind::ConvolutionBackwardData, 1, 3, 16, 2, {23, 23}, {7, 7}, {2, 2}, {3, 3}, {3, 3}, {1, 1}, false, false, false, data_type::f32},
    {"pads > kernel", op_kind::ConvolutionBackwardData, 1, 3, 5, 1, {5, 6}, {3, 3}, {1, 1}, {4, 5}, {5, 4}, {1, 1}, false, false, false, data_type::f32},
    {"stride > kernel", op_kind::ConvolutionBackwardData, 1, 2, 9, 2, {11, 13}, {3, 3}, {4, 5}, {1, 0}, {0, 1}, {1, 1}, false, false, false, data_type::f32},
    {"dilated h and w", op_kind::ConvolutionBackwardData, 1, 3, 7, 1, {13, 14}, {3, 3}, {2, 1}, {2, 2}, {2, 2}, {2, 3}, false, false, false, data_type::f32},
    {"1-D long kernel NCX", op_kind::ConvolutionBackwardData, 1, 1, 5, 3, {50}, {17}, {4}, {8}, {8}, {1}, true, false, false, data_type::f32},
    {"3-D bf16", op_kind::ConvolutionBackwardData, 1, 2, 7, 1, {7, 6, 7}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, false, false, false, data_type::bf16},
    {"groups 3, 2 channels each", op_kind::ConvolutionBackwardData, 3, 2, 5, 2, {9, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false, false, false, data_type::f32},
    {"NCX padded strides f16", op_kind::ConvolutionBackwardData, 2, 3, 4, 2, {10, 9}, {3, 3}, {2, 1}, {1, 1}, {1, 1}, {1, 1}, true, true, false, data_type::f16},
    {"ConvTranspose to RGB, bias, bf16", op_kind::ConvTranspose, 1, 3, 32, 2, {8, 8}, {4, 4}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, false, false, true, data_type::bf16},
    {"ConvTranspose NCX padded f32 bias", op_kind::ConvTranspose, 1, 1, 6, 1, {12, 11}, {5, 5}, {3, 2}, {2, 2}, {2, 2}, {1, 1}, true, true, true, data_type::f32},
    {"ConvTranspose 3-D to 1 channel", op_kind::ConvTranspose, 1, 1, 5, 2, {6, 8, 8}, {2, 4, 4}, {1, 2, 2}, {0, 1, 1}, {0, 1, 1}, {1, 1, 1}, false, false, true, data_type::f16},
    // Channels x taps in part of a vector (10 and 9 of 16 lanes; AVX2: 2 vectors, the second partial).
    {"1-D to 1 channel, kernel 10 stride 5", op_kind::ConvolutionBackwardData, 1, 1, 24, 2, {203}, {10}, {5}, {0}, {3}, {1}, false, false, false, data_type::f32},
    {"ConvTranspose 3x3 s2 to 1 channel, bias, padded", op_kind::ConvTranspose, 1, 1, 12, 2, {15, 13}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, false, true, true, data_type::f32},
    {"3x3 to 1 channel NCX bf16", op_kind::ConvolutionBackwardData, 1, 1, 8, 1, {9, 10}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true, false, false, data_type::bf16},
};
// Over a million multiply-adds: the kernel splits the (image, group) units over threads.
const col2im_case stem_big{"stem", op_kind::ConvolutionBackwardData, 1, 3, 64, 3, {40, 40}, {7, 7}, {2, 2}, {3, 3}, {3, 3}, {1, 1}, false, false, false, data_type::f32};
const col2im_case stem_small{"stem", op_kind::ConvolutionBackwardData, 1, 3, 16, 1, {23, 23}, {7, 7}, {2, 2}, {3, 3}, {3, 3}, {1, 1}, false, false, false, data_type::f32};
// clang-format on

// Strides of `shape` (row-major) with every axis padded by one element.
op make_op(const col2im_case &c) {
    return testing::make_geometry_op({c.what, c.g, c.mb, c.big, c.k, c.s, c.pb, c.pe, c.dl, c.ncx,
                                      c.padded_strides, c.dt, c.icg, c.ocg},
                                     c.kind, c.bias);
}

// The cases as they are, or all in bf16 (the pairs row's).
const std::vector<testing::swept_case> &edge_cases(bool all_bf16 = false) {
    static const auto sweep = [](bool bf16) {
        size_t next = 0;
        auto make = [&](std::mt19937_64 &) {
            col2im_case c = cases[next++];
            if (bf16) c.dt = data_type::bf16;
            return std::pair<op, std::string>(make_op(c), c.what);
        };
        return testing::reference_sweep(11, int(std::size(cases)), make,
                                        [](int iter) { return 1 + iter % 2; });
    };
    static const std::vector<testing::swept_case> as_given = sweep(false), in_bf16 = sweep(true);
    return all_bf16 ? in_bf16 : as_given;
}

// The rows whose names start with `family` and a colon.
std::vector<const detail::impl_desc *> col2im_rows(const std::string &family = "col2im") {
    std::vector<const detail::impl_desc *> rows;
    for (const detail::impl_desc &r : detail::kernel_inventory())
        if (std::string(r.name).rfind(family + ":", 0) == 0) rows.push_back(&r);
    return rows;
}

void check_rows(const std::vector<const detail::impl_desc *> &rows,
                const std::vector<testing::swept_case> &sweep) {
    ASSERT_FALSE(rows.empty());
    int ran = 0;
    for (const detail::impl_desc *row : rows) {
        const testing::row_mode m = testing::how_to_run(*row);
        if (!m.create) {
            std::printf("%s skipped: %s\n", row->name, m.skip_reason.c_str());
            continue;
        }
        // Every case is one the row must take (else this test would not test it).
        for (const testing::swept_case &c : sweep)
            EXPECT_EQ(row->cannot(c.r.prob), "") << row->name << " " << c.text;
        EXPECT_EQ(testing::check_row(*row, m, sweep), int(std::size(cases)));
        std::printf("%s%s: %zu cases compared\n", row->name, m.emulated ? " (emulated)" : "",
                    sweep.size());
        ++ran;
    }
    if (ran == 0) GTEST_SKIP() << "no such row runs on this CPU (or under CONVGRAD_MAX_ISA)";
}

TEST(Col2im, EdgeCasesEqualTheReference) {
    check_rows(col2im_rows(), edge_cases());
}

TEST(Col2im, PairsRowTakesEveryCaseInBf16AndEqualsTheReference) {
    check_rows(col2im_rows("col2im_bf16dot"), edge_cases(true));
}

// Non-integer data, so a different summation order would show in the bits (the f32 rows in
// f32, the pairs row in bf16).
void expect_bit_identical_for_any_thread_count(const std::vector<const detail::impl_desc *> &rows,
                                               data_type dt) {
    col2im_case c = stem_big;
    c.dt = dt;
    const op o = make_op(c);
    const detail::resolved_op r = detail::resolve_op(o, o.inputs(), o.outputs());
    std::vector<tensor_buffer> in;
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<double> u(-1, 1);
    for (const logical_tensor &t : r.inputs) {
        in.emplace_back(t);
        std::vector<double> v(in.back().values().size());
        for (double &x : v) x = u(rng);
        in.back().fill_values(v);
    }
    const int saved = omp_get_max_threads();
    for (const detail::impl_desc *row : rows) {
        const testing::row_mode m = testing::how_to_run(*row);
        if (!m.create) continue;
        std::vector<std::vector<double>> results;
        for (int nthr : {1, 2, 3}) {
            omp_set_num_threads(nthr);
            tensor_buffer out(r.outputs[0]);
            testing::run_poisoned(r, m.create, in, out);
            results.push_back(out.values());
        }
        omp_set_num_threads(saved);
        EXPECT_EQ(results[0], results[1]) << row->name;
        EXPECT_EQ(results[0], results[2]) << row->name;
    }
}

TEST(Col2im, BitIdenticalForAnyThreadCount) {
    expect_bit_identical_for_any_thread_count(col2im_rows(), data_type::f32);
    expect_bit_identical_for_any_thread_count(col2im_rows("col2im_bf16dot"), data_type::bf16);
}

// The register tile: the widest of at least 6 rows (AVX2's 4-vector tile has 2 rows, 8
// accumulators); narrower where N (channels x taps) fills fewer vectors.
TEST(Col2im, TileOfSixRowsAndTheMostVectors) {
    const op o = make_op(stem_small);  // 3 channels x 7 x 7 taps: N = 147
    const detail::conv_problem p = detail::resolve_op(o, o.inputs(), o.outputs()).prob;
    auto tile_of = [&](const detail::conv_problem &q, int vlen, int nregs) {
        const std::string d =
            detail::make_col2im_kernel(q, {vlen, nregs}, nullptr, false)->describe();
        const size_t at = d.find("tile=");
        return at == std::string::npos ? d : d.substr(at + 5, d.find(' ', at) - at - 5);
    };
    EXPECT_EQ(tile_of(p, 8, 16), "6x16");   // AVX2
    EXPECT_EQ(tile_of(p, 16, 32), "6x64");  // AVX-512
    EXPECT_EQ(tile_of(p, 4, 16), "6x8");    // SSE2
    detail::conv_problem mono = p;  // 1 channel x 7 x 7 taps: 49 lanes, 4 of AVX-512's vectors
    mono.icg = 1;
    EXPECT_EQ(tile_of(mono, 16, 32), "6x64");
    mono.k[1] = mono.k[2] = 3;  // 9 lanes: one vector
    EXPECT_EQ(tile_of(mono, 16, 32), "16x16");
    EXPECT_EQ(tile_of(mono, 8, 16), "6x16");
}

TEST(Col2im, DeclinesWithReasons) {
    const col2im_case &base = stem_small;
    auto prob = [](col2im_case c) {
        const op o = make_op(c);
        return detail::resolve_op(o, o.inputs(), o.outputs()).prob;
    };
    EXPECT_EQ(detail::col2im_why_not(prob(base), 16), "");
    col2im_case wide = base;
    wide.icg = 8;
    EXPECT_NE(detail::col2im_why_not(prob(wide), 16).find("half a vector"), std::string::npos);
    EXPECT_EQ(detail::col2im_why_not(prob(wide), 32), "");
    col2im_case few_taps = base;
    few_taps.k = {2, 2};  // 3 channels x 4 taps < 16 lanes
    EXPECT_NE(detail::col2im_why_not(prob(few_taps), 16).find("one vector"), std::string::npos);
    // Part of a vector: taken with one channel (9 of 16 lanes), not with 3 channels (12 lanes,
    // only 4x the direct kernel's 3) nor with under half a vector (1 channel x 2x2 taps); 1 x 5
    // taps fill 5 of AVX2's 8.
    col2im_case mono = base;
    mono.icg = 1, mono.k = {3, 3}, mono.pb = mono.pe = {1, 1};
    EXPECT_EQ(detail::col2im_why_not(prob(mono), 16), "");
    mono.k = {2, 2};
    EXPECT_NE(detail::col2im_why_not(prob(mono), 16).find("one vector"), std::string::npos);
    mono.k = {1, 5}, mono.pb = mono.pe = {0, 2};  // 5 of 8 lanes (AVX2)
    EXPECT_EQ(detail::col2im_why_not(prob(mono), 8), "");
    col2im_case one_out = base;
    one_out.ocg = 3;
    EXPECT_NE(detail::col2im_why_not(prob(one_out), 16).find("below 4"), std::string::npos);
    detail::conv_problem fwd = prob(base);
    fwd.dir = detail::conv_direction::fwd;
    EXPECT_EQ(detail::col2im_why_not(fwd, 16), "only bwd_data");
    // The pairs row: bf16 only, else the same reasons.
    EXPECT_NE(detail::col2im_pairs_why_not(prob(base), 16).find("takes bf16 tensors, not f32"),
              std::string::npos);
    col2im_case bf16 = base;
    bf16.dt = data_type::bf16;
    EXPECT_EQ(detail::col2im_pairs_why_not(prob(bf16), 16), "");
    bf16.ocg = 3;
    EXPECT_NE(detail::col2im_pairs_why_not(prob(bf16), 16).find("below 4"), std::string::npos);
}

}  // namespace
}  // namespace convgrad
