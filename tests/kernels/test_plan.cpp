// The plans' blocking comes from the machine's cache sizes: read once and sane, CPUID leaf 4
// decoded right, and the budgets (so the plans) follow the sizes.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <cstdio>

#include "kernels/common/direct_plan.hpp"
#include "kernels/plan/cache_sizes.hpp"
#include "kernels/plan/gather_split.hpp"
#include "threading/parallel.hpp"

namespace convgrad::detail {
namespace {

TEST(Plan, MachineCachesAreReadOnceAndSane) {
    const cache_sizes &c = machine_caches();
    std::printf("[ info    ] %s\n", to_string(c).c_str());
    EXPECT_EQ(&c, &machine_caches());
    EXPECT_GE(c.l1d, 4 * 1024);
    EXPECT_LE(c.l1d, c.l2);
    EXPECT_LE(c.l2, 64 * 1024 * 1024);
}

TEST(Plan, Cpuid4DecodesWaysPartitionsLineSizeAndSets) {
    // A 48 KiB 12-way L1 data cache with 64-byte lines and 64 sets.
    const unsigned eax = (1u << 5) | 1u, ebx = (11u << 22) | (0u << 12) | 63u, ecx = 63u;
    int level, type;
    dim_t bytes;
    cpuid4_cache(eax, ebx, ecx, level, type, bytes);
    EXPECT_EQ(level, 1);
    EXPECT_EQ(type, 1);
    EXPECT_EQ(bytes, 48 * 1024);
}

TEST(Plan, BudgetsFollowTheCacheSizes) {
    // A 48 KiB / 2 MiB core gives the constants the kernels were tuned with.
    const cache_budget b = budget_of({48 * 1024, 2 * 1024 * 1024, "test"});
    EXPECT_EQ(b.l1_panel, 40 * 1024);
    EXPECT_EQ(b.l2_whole, 256 * 1024);
    EXPECT_EQ(b.l2_rows, 512 * 1024);
    EXPECT_EQ(b.l2_block, 256 * 1024);
    const cache_budget z = budget_of({32 * 1024, 1024 * 1024, "test"});  // Zen 4
    EXPECT_LT(z.l1_panel, b.l1_panel);
    EXPECT_LT(z.l2_rows, b.l2_rows);
}

// Zen 3's caches per core (the machine the plans' figures were measured on).
const cache_sizes zen3{32 * 1024, 512 * 1024, "test"};

// A channels-last 2-D problem (d = 1) of one group with dense channels, src and dst extents
// {h, w}, kernel and stride per axis {h, w} (dilation 1, no padding).
conv_problem nxc_problem(conv_direction dir, dim_t mb, dim_t icg, dim_t ocg, std::array<dim_t, 2> i,
                         std::array<dim_t, 2> o, std::array<dim_t, 2> k, std::array<dim_t, 2> s) {
    conv_problem p{};
    p.dir = dir;
    p.mb = mb, p.g = 1, p.icg = icg, p.ocg = ocg;
    p.nsp = 2;
    p.i[0] = p.o[0] = p.k[0] = p.s[0] = 1;
    for (int x = 1; x < 3; ++x)
        p.i[x] = i[x - 1], p.o[x] = o[x - 1], p.k[x] = k[x - 1], p.s[x] = s[x - 1];
    for (int x = 0; x < 3; ++x) p.dl[x] = 1;
    p.src.c = p.dst.c = 1;
    return p;
}

TEST(Plan, DirectPlanBlockingComesFromTheCaches) {
    conv_problem p{};
    p.dir = conv_direction::bwd_weights;
    p.mb = 8, p.g = 1, p.icg = 64, p.ocg = 64;
    p.i[2] = p.o[2] = 56;
    p.src.c = p.dst.c = 1;
    const direct_plan small = make_direct_plan(p, 16, 32, {32 * 1024, 1024 * 1024, "test"});
    const direct_plan big = make_direct_plan(p, 16, 32, {48 * 1024, 2 * 1024 * 1024, "test"});
    EXPECT_EQ(big.rows_per_chunk, 2 * small.rows_per_chunk);  // (both beyond 256 pixels)
    EXPECT_GT(big.gather_panel, small.gather_panel);
    EXPECT_NE(describe(big).find("rows_per_chunk="), std::string::npos);
    // Rows too long for more than one or two in the budget still make chunks of at least 256
    // pixels, each microkernel call's share: ResNet-50's 1x1 projection (28 output pixels per
    // row, 114 KB of rows), ResNeXt's 32 groups of 8 channels (28 pixels, 57 KB).
    conv_problem proj = p;
    proj.icg = 256, proj.ocg = 512, proj.i[2] = 56, proj.o[2] = 28;
    conv_problem rx = p;
    rx.g = 32, rx.icg = rx.ocg = 8, rx.i[2] = rx.o[2] = 28;
    for (const conv_problem &q : {proj, rx}) {
        const direct_plan pl = make_direct_plan(q, 8, 16, zen3);
        EXPECT_GE(pl.rows_per_chunk * q.o[2], 256) << describe(pl);
        EXPECT_LT(pl.rows_per_chunk * q.o[2], 256 + q.o[2]) << describe(pl);
        EXPECT_FALSE(pl.stream_output);  // (bwd_weights)
    }
}

TEST(Plan, OnlyBigOutputsInPlaceAreStreamedPastTheCaches) {
    // ResNet-50's 1x1 64 -> 256 forward at batch 16: 51 MB of dst.
    const conv_problem p =
        nxc_problem(conv_direction::fwd, 16, 64, 256, {56, 56}, {56, 56}, {1, 1}, {1, 1});
    const direct_plan pl = make_direct_plan(p, 8, 16, zen3);
    EXPECT_TRUE(pl.stream_output) << describe(pl);
    EXPECT_NE(describe(pl).find("streamed"), std::string::npos);
    conv_problem small = p;
    small.mb = 1;  // 3.2 MB: stays in cache for the next op
    EXPECT_FALSE(make_direct_plan(small, 8, 16, zen3).stream_output);
    conv_problem bf = p;
    bf.dt = data_type::bf16;  // copied: the copy is written back
    EXPECT_FALSE(make_direct_plan(bf, 8, 16, zen3).stream_output);
    // Rounded in place by the microkernel (the kernels that ask for it): streamed, a line of
    // two vectors at a time; 25.7 MB of bf16 here, 1.6 MB at batch 1.
    EXPECT_TRUE(make_direct_plan(bf, 8, 16, zen3, true).stream_output);
    conv_problem bf_small = bf;
    bf_small.mb = 1;
    EXPECT_FALSE(make_direct_plan(bf_small, 8, 16, zen3, true).stream_output);
    conv_problem ncx = p;
    ncx.dst.c = 56 * 56;  // copied in chunks, read back by the write-back
    EXPECT_FALSE(make_direct_plan(ncx, 8, 16, zen3).stream_output);
}

// A stride phase's C pixels lie apart along w: streamed, rows of channels that are not whole
// cache lines would reach memory as partial lines (FCN's x8 upsampling: 21 channels at 8-pixel
// steps of a 520 x 520 image). Whole lines (32 channels), or a stride along h only, still are.
TEST(Plan, PhasedOutputsOfPartialLinesAreNotStreamed) {
    const conv_problem p =
        nxc_problem(conv_direction::bwd_data, 1, 21, 21, {520, 520}, {64, 64}, {16, 16}, {8, 8});
    EXPECT_FALSE(make_direct_plan(p, 8, 16, zen3).stream_output);
    conv_problem whole = p;
    whole.icg = 32;
    EXPECT_TRUE(make_direct_plan(whole, 8, 16, zen3).stream_output);
    // bf16 rounded in place: a line holds 32 channels, so 16 make partial lines.
    conv_problem bf = p;
    bf.dt = data_type::bf16, bf.icg = 16, bf.mb = 4;  // (4 images: past the caches)
    EXPECT_FALSE(make_direct_plan(bf, 8, 16, zen3, true).stream_output);
    bf.icg = 32;
    EXPECT_TRUE(make_direct_plan(bf, 8, 16, zen3, true).stream_output);
    conv_problem along_h = p;
    along_h.s[2] = 1, along_h.o[2] = 505;
    EXPECT_TRUE(make_direct_plan(along_h, 8, 16, zen3).stream_output);
}

// Groups of channels that are not whole cache lines: each group's tiles write pieces of the
// output's lines, which streamed would reach memory as partial lines (ResNeXt-50's 32 groups
// of 8 channels). Groups of whole lines (16 f32 channels), or one group, still are streamed.
TEST(Plan, GroupsOfPartialLinesAreNotStreamed) {
    for (const conv_direction dir : {conv_direction::fwd, conv_direction::bwd_data}) {
        conv_problem p = nxc_problem(dir, 16, 8, 8, {28, 28}, {28, 28}, {3, 3}, {1, 1});
        p.g = 32;  // 12.8 MB of output: past the caches
        EXPECT_FALSE(make_direct_plan(p, 8, 16, zen3).stream_output) << int(dir);
        conv_problem lines = p;
        lines.g = 16, lines.icg = lines.ocg = 16;
        EXPECT_TRUE(make_direct_plan(lines, 8, 16, zen3).stream_output) << int(dir);
        conv_problem one = p;
        one.g = 1, one.icg = one.ocg = 256;
        EXPECT_TRUE(make_direct_plan(one, 8, 16, zen3).stream_output) << int(dir);
        // bf16 rounded in place: a line holds 32 channels, so groups of 16 make partial lines.
        conv_problem bf = lines;
        bf.dt = data_type::bf16;
        EXPECT_FALSE(make_direct_plan(bf, 8, 16, zen3, true).stream_output) << int(dir);
    }
}

// With AVX2, an output whose elements take few products each (min_macs_per_streamed_output)
// is not streamed (a measured rule: make_direct_plan says where). Counted over the whole
// output, so a data gradient's products come from diff_dst's channels and the taps over the
// stride.
TEST(Plan, OutputsOfFewProductsAnElementAreNotStreamedWithAvx2) {
    // wav2vec2's first layer: 1 channel, 10 taps at stride 5, 131 MB of output.
    conv_problem wav =
        nxc_problem(conv_direction::fwd, 4, 1, 512, {1, 80000}, {1, 15999}, {1, 10}, {1, 5});
    EXPECT_FALSE(make_direct_plan(wav, 8, 16, zen3).stream_output);
    // With AVX-512 it is (streamed, its forward ran 1.7x faster on Zen 4).
    EXPECT_TRUE(make_direct_plan(wav, 16, 32, zen3).stream_output);
    wav.icg = 2;  // 20 products an element
    EXPECT_TRUE(make_direct_plan(wav, 8, 16, zen3).stream_output);
    // ESRGAN's last layer's data gradient: 3 channels x 9 taps = 27 products, 67 MB.
    conv_problem esr =
        nxc_problem(conv_direction::bwd_data, 16, 64, 3, {128, 128}, {128, 128}, {3, 3}, {1, 1});
    esr.pb[1] = esr.pb[2] = 1;
    EXPECT_TRUE(make_direct_plan(esr, 8, 16, zen3).stream_output);
    esr.ocg = 1;  // 9
    EXPECT_FALSE(make_direct_plan(esr, 8, 16, zen3).stream_output);
    // A stride-2 data gradient of 1 x 1 taps: 16 channels, but 4 products an element of diff_src.
    conv_problem s2 =
        nxc_problem(conv_direction::bwd_data, 16, 64, 16, {112, 112}, {56, 56}, {1, 1}, {2, 2});
    EXPECT_FALSE(make_direct_plan(s2, 8, 16, zen3).stream_output);
    s2.ocg = 64;  // 16
    EXPECT_TRUE(make_direct_plan(s2, 8, 16, zen3).stream_output);
}

// The threads share out the items of several gathers by their products: an item with groups
// inner runs all its (group, block) pairs and weighs as many single-pair items. The stride
// phases of ResNet-50's stride-2 3x3 data gradient (128 channels, 8 blocks; tiles_per_unit units
// of 131 per phase): three phases of 1, 2 and 2 taps split with groups inner, one of 4 taps
// block by block.
TEST(Plan, GatherItemsAreWeighedByTheirProducts) {
    const gather_split inner{131, 8, 1, 131}, by_block{131, 8, 0, 131};
    EXPECT_EQ(gather_items(inner, 1), 131);
    EXPECT_EQ(gather_items(by_block, 1), 1048);
    EXPECT_EQ(gather_item_pairs(inner, 1), 8);
    EXPECT_EQ(gather_item_pairs(by_block, 1), 1);
    EXPECT_EQ(gather_item_pairs(gather_split{10, 2, 4, 10}, 32), 8);  // 4 groups of 2 blocks
    EXPECT_EQ(gather_item_pairs(gather_split{10, 2, 4, 10}, 3), 6);   // (only 3 groups)
    EXPECT_DOUBLE_EQ(gather_item_weight(inner, 1, 2, 128), 8.0 * (2 * 128 + 1));
    struct phase {
        gather_split sp;
        int ntaps;
    };
    const phase phases[] = {{inner, 1}, {inner, 2}, {inner, 2}, {by_block, 4}};
    const dim_t K = 128;
    for (const int nt : {2, 3}) {
        double total = 0, products[3] = {0, 0, 0};
        for (const phase &ph : phases)
            total += double(gather_items(ph.sp, 1)) * gather_item_weight(ph.sp, 1, ph.ntaps, K);
        for (int ithr = 0; ithr < nt; ++ithr) {
            weighted_share sh = weighted_share_of(total, nt, ithr);
            for (const phase &ph : phases) {
                int64_t s = 0, e = 0;
                weighted_next(sh, gather_items(ph.sp, 1), gather_item_weight(ph.sp, 1, ph.ntaps, K),
                              s, e);
                products[ithr] += double(e - s) * double(gather_item_pairs(ph.sp, 1)) *
                                  double(ph.ntaps) * double(K);
            }
        }
        const double most = *std::max_element(products, products + nt),
                     least = *std::min_element(products, products + nt);
        EXPECT_LT(most, 1.02 * least) << nt << " threads";
    }
}

// The gather's channel blocks: the plan's max_nv vectors, but C sides of 3 vectors with 16
// registers are one block of 3 (a 4 x 3 tile), not blocks of 2 and 1.
TEST(Plan, ThreeVectorCSidesAreOneBlock) {
    conv_problem p = nxc_problem(conv_direction::fwd, 1, 16, 16, {1, 64}, {1, 64}, {1, 1}, {1, 1});
    for (const dim_t oc : {dim_t(16), dim_t(17), dim_t(21), dim_t(24), dim_t(25), dim_t(40)}) {
        p.ocg = oc;
        const direct_plan avx2 = make_direct_plan(p, 8, 16, zen3);
        const bool three = oc > 16 && oc <= 24;
        EXPECT_EQ(direct_block_nv(avx2, oc), three ? 3 : 2) << oc;
        EXPECT_NE(describe(avx2).find(three ? "tile=4x24" : "tile=6x16"), std::string::npos)
            << describe(avx2);
        const direct_plan avx512 = make_direct_plan(p, 16, 32, zen3);
        EXPECT_EQ(direct_block_nv(avx512, oc), 4) << oc;
    }
    // SSE2's 4 lanes: 9-12 channels.
    p.ocg = 11;
    EXPECT_EQ(direct_block_nv(make_direct_plan(p, 4, 16, zen3), 11), 3);
    // bwd_weights keeps its blocks of max_nv.
    p.dir = conv_direction::bwd_weights;
    p.ocg = 21;
    EXPECT_NE(describe(make_direct_plan(p, 8, 16, zen3)).find("tile=6x16"), std::string::npos);
}

// A channels-last problem of one image along h (2-D) or w (1-D), dims as {h, w}.
conv_problem rows_problem(conv_direction dir, data_type dt, dim_t C, dim_t ih, dim_t iw, dim_t k,
                          dim_t s, dim_t dl, dim_t pad) {
    conv_problem p{};
    p.dir = dir;
    p.dt = dt;
    p.mb = 1, p.g = 1, p.icg = C, p.ocg = C;
    p.nsp = 2;
    const dim_t in[3] = {1, ih, iw};
    for (int x = 0; x < 3; ++x) {
        p.i[x] = in[x];
        p.k[x] = in[x] > 1 ? k : 1;
        p.s[x] = in[x] > 1 ? s : 1;
        p.dl[x] = in[x] > 1 ? dl : 1;
        p.pb[x] = p.pe[x] = in[x] > 1 ? pad : 0;
        p.o[x] = (p.i[x] + 2 * p.pb[x] - (p.k[x] - 1) * p.dl[x] - 1) / p.s[x] + 1;
    }
    p.src = {p.i[0] * p.i[1] * p.i[2] * C, 1, {p.i[1] * p.i[2] * C, p.i[2] * C, C}};
    p.dst = {p.o[0] * p.o[1] * p.o[2] * C, 1, {p.o[1] * p.o[2] * C, p.o[2] * C, C}};
    return p;
}

// The busiest thread's output rows when chunks of R of n rows are split over nthr threads
// (gather_by_rows: contiguous shares of whole chunks).
dim_t busiest_thread_rows(dim_t n, dim_t R, int nthr) {
    const dim_t chunks = (n + R - 1) / R;
    return std::min(n, (chunks + nthr - 1) / nthr * R);
}

TEST(Plan, InputRowsCopiedByEachThreadFitItsL2AndSplitEvenly) {
    const cache_sizes caches{48 * 1024, 1024 * 1024, "test"};
    const int saved = omp_get_max_threads();
    for (const int nthr : {2, 3}) {
        omp_set_num_threads(nthr);
        // U-Net's up-convolution's data gradient in f16 (a forward 256 -> 512 channels, 2x2
        // stride 2 over 64x64): 8 MB of f32 input copy, the output rounded in place. The
        // input rows of every chunk fit the share of one thread's L2, and the split is no
        // worse than chunks as big as the budget allows.
        conv_problem u = rows_problem(conv_direction::fwd, data_type::f16, 256, 64, 64, 2, 2, 1, 0);
        u.ocg = 512;
        u.dst = {u.o[1] * u.o[2] * 512, 1, {u.o[1] * u.o[2] * 512, u.o[2] * 512, 512}};
        // FCN's x8 upsampling's data gradient (21 channels, 520x520 -> 64x64, 16x16 stride 8):
        // one output row reads 16 input rows (700 KB).
        conv_problem f =
            rows_problem(conv_direction::fwd, data_type::f16, 21, 520, 520, 16, 8, 1, 0);
        for (const conv_problem &p : {u, f}) {
            const direct_plan pl = make_direct_plan(p, 16, 32, caches, true);
            ASSERT_EQ(pl.nthr, nthr) << describe(pl);
            ASSERT_TRUE(pl.in_rows_copied) << describe(pl);
            ASSERT_GT(pl.out_rows_per_chunk, 0) << describe(pl);
            ASSERT_EQ(pl.out_row_axis, 1);
            const double row_bytes = double(p.i[2]) * double(p.ic()) * 4.0;
            const dim_t n = p.o[1], R = pl.out_rows_per_chunk;
            dim_t most_fitting = 0;  // the most output rows whose input rows fit the share
            for (dim_t r = 1; r < n; ++r) {
                dim_t a0, a1;
                direct_input_rows(p, 1, 0, r, &a0, &a1);
                if (double(a1 - a0) * row_bytes <= direct_private_rows_share * double(caches.l2))
                    most_fitting = r;
            }
            for (dim_t r0 = 0; r0 < n; r0 += R) {
                dim_t a0, a1;
                direct_input_rows(p, 1, r0, std::min(n, r0 + R), &a0, &a1);
                EXPECT_LE(double(a1 - a0) * row_bytes,
                          direct_private_rows_share * double(caches.l2))
                    << describe(pl) << " chunk at " << r0;
            }
            EXPECT_LE(R, most_fitting);
            EXPECT_LE(busiest_thread_rows(n, R, nthr), busiest_thread_rows(n, most_fitting, nthr))
                << describe(pl);
        }
        // 32 rows over 2 threads, 6 within the budget: 8 chunks of 4, 16 rows each (6 chunks of
        // 6 gave one thread 18).
        if (nthr == 2) {
            EXPECT_EQ(make_direct_plan(u, 16, 32, caches, true).out_rows_per_chunk, 4);
        }
        // One row a chunk for FCN's: 64 chunks, 32 a thread.
        EXPECT_EQ(make_direct_plan(f, 16, 32, caches, true).out_rows_per_chunk, 1);
    }
    omp_set_num_threads(saved);
}

TEST(Plan, InputRowsAreThoseTheOutputRowsWindowsRead) {
    // Every (output rows, stride, dilation, padding) of small extents: direct_input_rows holds
    // every input row a window of those output rows reads (exactly those, for fwd away from the
    // padding).
    int checked = 0;
    for (const conv_direction dir : {conv_direction::fwd, conv_direction::bwd_data})
        for (dim_t k = 1; k <= 4; ++k)
            for (dim_t s = 1; s <= 3; ++s)
                for (dim_t dl = 1; dl <= 2; ++dl)
                    for (dim_t pad = 0; pad <= 3; ++pad) {
                        const conv_problem p =
                            rows_problem(dir, data_type::f32, 4, 11, 1, k, s, dl, pad);
                        if (p.o[1] < 1) continue;
                        const bool fwd = dir == conv_direction::fwd;
                        const dim_t out_n = fwd ? p.o[1] : p.i[1], in_n = fwd ? p.i[1] : p.o[1];
                        for (dim_t r0 = 0; r0 < out_n; ++r0)
                            for (dim_t r1 = r0 + 1; r1 <= out_n; ++r1) {
                                dim_t a0, a1, lo = in_n, hi = 0;
                                direct_input_rows(p, 1, r0, r1, &a0, &a1);
                                for (dim_t r = r0; r < r1; ++r)
                                    for (dim_t kk = 0; kk < k; ++kk) {
                                        // fwd: output row r reads r*s - pb + kk*dl; bwd_data:
                                        // src row r is reached from dst row (r + pb - kk*dl)/s.
                                        const dim_t num = r + pad - kk * dl;
                                        dim_t x = fwd ? r * s - pad + kk * dl : num / s;
                                        if (!fwd && (num < 0 || num % s != 0)) continue;
                                        if (x < 0 || x >= in_n) continue;
                                        EXPECT_LE(a0, x) << k << s << dl << pad << r0 << r1;
                                        EXPECT_LT(x, a1) << k << s << dl << pad << r0 << r1;
                                        lo = std::min(lo, x), hi = std::max(hi, x + 1);
                                    }
                                EXPECT_LE(a0, a1);
                                // No more than the windows span (fwd: exactly what they
                                // read when no tap falls in the padding).
                                if (fwd) {
                                    EXPECT_LE(a1 - a0, (r1 - r0 - 1) * s + (k - 1) * dl + 1);
                                }
                                if (fwd && r0 * s - pad >= 0 &&
                                    (r1 - 1) * s - pad + (k - 1) * dl < in_n) {
                                    EXPECT_EQ(a0, lo);
                                    EXPECT_EQ(a1, hi);
                                }
                                ++checked;
                            }
                    }
    EXPECT_GT(checked, 1000);
}

TEST(Plan, BigImagesAreComputedInChunksOfRowsWithTheirInputRowsCopied) {
    const cache_sizes caches{48 * 1024, 2 * 1024 * 1024, "test"};
    // f16, channels last, output rounded in place: only the input is copied, and one 112x112x64
    // image (3.2 MB in f32) is beyond the budget, so it goes by rows of h, each chunk's input
    // rows (its windows', with the 3x3 halo) within half the threads' L2 (each thread's own chunks,
    // within a share of its L2).
    for (const conv_direction dir : {conv_direction::fwd, conv_direction::bwd_data}) {
        const conv_problem p = rows_problem(dir, data_type::f16, 64, 112, 112, 3, 1, 1, 1);
        const direct_plan pl = make_direct_plan(p, 16, 32, caches, true);
        ASSERT_TRUE(pl.out_rounded_in_kernel);
        ASSERT_GT(pl.out_rows_per_chunk, 0) << describe(pl);
        EXPECT_TRUE(pl.in_rows_copied);
        EXPECT_EQ(pl.out_row_axis, 1);
        EXPECT_NE(describe(pl).find("out_rows_per_chunk="), std::string::npos);
        dim_t a0, a1;
        direct_input_rows(p, 1, 1, 1 + pl.out_rows_per_chunk, &a0, &a1);
        const double bytes = double(a1 - a0) * 112.0 * 64.0 * 4.0;
        EXPECT_LE(bytes, direct_private_rows_share * double(caches.l2)) << describe(pl);
        // NCX: both copied; the output by rows, the input per image.
        conv_problem n = p;
        n.src = {n.src.n, 112 * 112, {0, 112, 1}};
        n.dst = {n.dst.n, 112 * 112, {0, 112, 1}};
        const direct_plan pn = make_direct_plan(n, 16, 32, caches, true);
        EXPECT_FALSE(pn.out_rounded_in_kernel);
        EXPECT_GT(pn.out_rows_per_chunk, 0) << describe(pn);
        EXPECT_FALSE(pn.in_rows_copied);
        // In f32 nothing is copied: whole images, read and written in place.
        const conv_problem q = rows_problem(dir, data_type::f32, 64, 112, 112, 3, 1, 1, 1);
        EXPECT_EQ(make_direct_plan(q, 16, 32, caches, true).out_rows_per_chunk, 0);
    }
    // Forward windows that skip src pixels (1x1, stride 2) read a quarter of a copy: its input
    // is not copied by rows.
    const conv_problem skip =
        rows_problem(conv_direction::fwd, data_type::f16, 256, 56, 56, 1, 2, 1, 0);
    const direct_plan ps = make_direct_plan(skip, 16, 32, caches, true);
    EXPECT_FALSE(ps.in_rows_copied) << describe(ps);
    EXPECT_EQ(ps.out_rows_per_chunk, 0) << describe(ps);
    // 1-D: cut along w.
    const conv_problem w =
        rows_problem(conv_direction::fwd, data_type::bf16, 128, 1, 40000, 7, 1, 1, 3);
    const direct_plan pw = make_direct_plan(w, 16, 32, caches, true);
    EXPECT_GT(pw.out_rows_per_chunk, 0) << describe(pw);
    EXPECT_EQ(pw.out_row_axis, 2);
    // Short rows (FCN's x8 upsampling's data gradient: 64 output pixels per row, 16 input rows
    // each) by rows too: each thread computes whole chunks of its own, so a chunk need not give
    // every thread tiles (when the threads shared each chunk, this layer kept whole images, its
    // 22 MB copy through memory, 8.7x slower on Zen 5).
    conv_problem f = rows_problem(conv_direction::fwd, data_type::f16, 21, 520, 520, 16, 8, 1, 0);
    const direct_plan pf = make_direct_plan(f, 16, 32, caches, true);
    EXPECT_GT(pf.out_rows_per_chunk, 0) << describe(pf);
    EXPECT_TRUE(pf.in_rows_copied) << describe(pf);
}

TEST(Plan, NcxOutputOfFewChunksAnImageIsSharedOutAcrossTheBatch) {
    const cache_sizes caches{48 * 1024, 1024 * 1024, "test"};
    const int saved = omp_get_max_threads();
    omp_set_num_threads(2);
    // HiFi-GAN's conv_post data gradient in NCX: 32 channels of 8192 samples from 1 (in place
    // whatever its stride), 1 MB of output copy an image (within the two threads' L2s, beyond
    // one's half): 2 chunks of rows, fewer than 2 a thread, so the threads take halves of the
    // batch's 32 (image, chunk) pairs.
    conv_problem p =
        rows_problem(conv_direction::bwd_data, data_type::f32, 32, 1, 8192, 7, 1, 1, 3);
    p.ocg = 1;
    p.mb = 16;
    p.src = {32 * 8192, 8192, {8192, 8192, 1}};
    p.dst = {8192, 8192, {8192, 8192, 1}};
    const direct_plan pl = make_direct_plan(p, 16, 32, caches, true);
    ASSERT_EQ(pl.nthr, 2);
    EXPECT_TRUE(pl.dst_direct) << describe(pl);
    ASSERT_GT(pl.out_rows_per_chunk, 0) << describe(pl);
    EXPECT_EQ((p.i[2] + pl.out_rows_per_chunk - 1) / pl.out_rows_per_chunk, 2) << describe(pl);
    EXPECT_TRUE(pl.out_rows_private) << describe(pl);
    EXPECT_TRUE(pl.rows_across_images) << describe(pl);
    EXPECT_NE(describe(pl).find("across images"), std::string::npos) << describe(pl);
    // One image: nothing across images.
    p.mb = 1;
    const direct_plan one = make_direct_plan(p, 16, 32, caches, true);
    EXPECT_FALSE(one.rows_across_images) << describe(one);
    // diff_dst of 2 channels in NCX is copied per image: no share-out across images.
    p.mb = 16;
    p.ocg = 2;
    p.dst = {2 * 8192, 8192, {8192, 8192, 1}};
    const direct_plan two = make_direct_plan(p, 16, 32, caches, true);
    EXPECT_FALSE(two.dst_direct) << describe(two);
    EXPECT_FALSE(two.rows_across_images) << describe(two);
    omp_set_num_threads(saved);
}

}  // namespace
}  // namespace convgrad::detail
