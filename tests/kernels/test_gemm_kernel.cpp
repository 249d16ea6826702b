// Matrix-product shapes (the GEMM kernel's) for every row of the kernel inventory that can
// compute them, against the reference, on this machine under its cap (the ctest
// kernels_vs_reference_cap_* entries repeat these tests under each cap), and the dispatch of
// GEMM-shaped problems to the GEMM kernel.
//
// The sweep draws only matrix-product shapes, per spatial axis one of: a 1x1 kernel at stride 1,
// a kernel covering the whole input, kernel == stride tiles (with a remainder src never reads),
// a 1x1 kernel with stride (gaps), a dilated kernel with stride >= its extent; with channel
// counts and batches that leave tails of every register tile, groups, NCX/NXC and randomly
// strided views, f32/bf16/f16, bias, and thread counts 1-3 (K split reductions included).
#include <gtest/gtest.h>
#include <omp.h>

#include <random>

#include "convgrad/convgrad.hpp"
#include "core/resolve.hpp"
#include "dispatch/registry.hpp"
#include "kernels/common/gemm_plan.hpp"
#include "kernels/pack/padded_src.hpp"
#include "kernels/plan/cache_sizes.hpp"
#include "util/conv_case.hpp"
#include "util/conv_geometry.hpp"
#include "util/conv_test_util.hpp"
#include "util/kernel_check.hpp"

namespace convgrad {
namespace {

using testing::tensor_buffer;

dim_t pick(std::mt19937_64 &rng, std::initializer_list<dim_t> v) {
    return *(v.begin() + std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng));
}

struct gemm_case {
    op o{0, op_kind::Convolution};
    std::string text;
};

gemm_case make_gemm_case(std::mt19937_64 &rng, bool big) {
    const op_kind kind = all_op_kinds[rng() % 6];
    const bool ct = is_conv_transpose_family(kind);
    const int S = int(pick(rng, {1, 2, 2, 3}));
    const dim_t g = pick(rng, {1, 1, 1, 2, 3});
    const dim_t icg = big ? pick(rng, {33, 50, 64}) : pick(rng, {1, 2, 3, 4, 5, 7, 13, 17, 33, 50});
    const dim_t ocg = big ? pick(rng, {3, 17, 33}) : pick(rng, {1, 2, 3, 4, 5, 9, 16, 19, 65});
    const dim_t mb = big ? pick(rng, {33, 64}) : pick(rng, {1, 2, 3, 5});
    dims k, s, d, big_sp, small_sp, op_pad;
    std::string shape;
    for (int j = 0; j < S; ++j) {
        dim_t K = 1, St = 1, Dl = 1, I = 1;
        switch (rng() % 5) {
            case 0:
                I = big ? pick(rng, {16, 23}) : pick(rng, {1, 3, 7, 20}), shape += "1x1 ";
                break;
            case 1:
                K = I = pick(rng, {1, 2, 4, 5}), St = pick(rng, {1, 2}), shape += "whole ";
                break;
            case 2:
                K = St = pick(rng, {2, 3}), I = pick(rng, {1, 2, 3, 5}) * K + dim_t(rng() % K),
                shape += "tiles ";
                break;
            case 3:
                St = pick(rng, {2, 3}), I = pick(rng, {5, 9}), shape += "gaps ";
                break;
            default:
                K = 2, Dl = 2, St = 3, I = pick(rng, {7, 9}), shape += "dilated ";
                break;
        }
        const dim_t ke = (K - 1) * Dl + 1, O = (I - ke) / St + 1;
        k.push_back(K), s.push_back(St), d.push_back(Dl), big_sp.push_back(I),
            small_sp.push_back(O);
        op_pad.push_back(I - (St * (O - 1) + ke));
    }
    const bool ncx = rng() % 2;
    const std::string wf = ct ? (rng() % 2 ? "IOX" : "XOI") : (rng() % 2 ? "OIX" : "XIO");
    const data_type dt = std::vector<data_type>{data_type::f32, data_type::f32, data_type::bf16,
                                                data_type::f16}[rng() % 4];
    auto data_shape = [&](dim_t c, const dims &sp) {
        dims r{mb};
        if (ncx) r.push_back(c);
        r.insert(r.end(), sp.begin(), sp.end());
        if (!ncx) r.push_back(c);
        return r;
    };
    const dim_t O = g * ocg, I = icg;
    // Mirror-convolution weights: OIX/IOX are [O][I][K...], XIO/XOI are [K...][I][O].
    dims wshape = wf[0] == 'X' ? dims{I, O} : dims{O, I};
    if (wf[0] == 'X')
        wshape.insert(wshape.begin(), k.begin(), k.end());
    else
        wshape.insert(wshape.end(), k.begin(), k.end());
    auto strided = [&](size_t id, const dims &sh) {
        return testing::random_strided_tensor(rng, id, dt, sh);
    };
    const dims zeros(size_t(S), 0);
    op o(1, kind, "gemm_sweep");
    o.set_attr("strides", s)
        .set_attr("dilations", d)
        .set_attr("pads_begin", zeros)
        .set_attr("pads_end", zeros);
    o.set_attr("groups", g).set_attr("data_format", std::string(ncx ? "NCX" : "NXC"));
    o.set_attr("weights_format", wf);
    const dims src_shape = data_shape(g * icg, big_sp), dst_shape = data_shape(g * ocg, small_sp);
    const bool bias = rng() % 2;
    testing::conv_shapes sh{src_shape, dst_shape, wshape, op_pad, g * icg, O};
    testing::add_conv_tensors(o, kind, sh, bias, dt, strided);
    gemm_case c;
    c.o = o;
    c.text = std::string(to_string(kind)) + " " + to_string(dt) + " " + (ncx ? "NCX " : "NXC ") +
             wf + " " + shape;
    return c;
}

// The small cases run on one thread; the big ones on 1-3 (blocks of every size, K split into
// parts with partial sums reduced in order).
const std::vector<testing::swept_case> &gemm_cases(bool big) {
    auto make = [big](std::mt19937_64 &rng) { return make_gemm_case(rng, big); };
    static const std::vector<testing::swept_case> small =
        testing::reference_sweep(20261123, 300, make, [](int) { return 1; });
    static const std::vector<testing::swept_case> large =
        testing::reference_sweep(7, 24, make, [](int iter) { return 1 + iter % 3; });
    return big ? large : small;
}

TEST(KernelsVsReference, GemmSweepDrawsOnlyMatrixProducts) {
    for (bool big : {false, true})
        for (const auto &c : gemm_cases(big))
            EXPECT_EQ(detail::gemm_shape_why_not(c.r.prob), "") << c.text << " " << c.r.prob.desc();
}

// An empty batch, on every kernel that can compute it: bwd_weights sums nothing (zeros), fwd and
// bwd_data have nothing to write.
TEST(KernelsVsReference, GemmKernelEmptyBatch) {
    for (op_kind kind : {op_kind::Convolution, op_kind::ConvolutionBackwardData,
                         op_kind::ConvolutionBackwardWeights}) {
        op o(0, kind);
        o.set_attr("strides", dims{1, 1})
            .set_attr("pads_begin", dims{0, 0})
            .set_attr("pads_end", dims{0, 0});
        o.set_attr("dilations", dims{1, 1}).set_attr("data_format", std::string("NCX"));
        o.set_attr("weights_format", std::string("OIX"));
        const logical_tensor x(0, data_type::f32, {0, 5, 3, 3}), y(1, data_type::f32, {0, 2, 3, 3}),
            w(2, data_type::f32, {2, 5, 1, 1});
        if (kind == op_kind::Convolution) o.add_input(x).add_input(w).add_output(y);
        if (kind == op_kind::ConvolutionBackwardData) o.add_input(y).add_input(w).add_output(x);
        if (kind == op_kind::ConvolutionBackwardWeights) o.add_input(x).add_input(y).add_output(w);
        const detail::resolved_op r = detail::resolve_op(o, o.inputs(), o.outputs());
        std::vector<tensor_buffer> in;
        for (const auto &lt : r.inputs) in.emplace_back(lt);
        for (const auto &impl : detail::kernel_inventory()) {
            const testing::row_mode m = testing::how_to_run(impl);
            if (!m.create || !impl.cannot(r.prob).empty()) continue;
            tensor_buffer got(r.outputs[0]);
            testing::run_poisoned(r, m.create, in, got);
            for (double v : got.values()) EXPECT_EQ(v, 0.0) << impl.name << " " << to_string(kind);
        }
    }
}

// ------------------------------------------------------------------------------ dispatch --

std::string kernel_for(const op &o) {
    return compile_op(o).kernel_name();
}

// The GEMM row dispatch tries first under this machine's cap.
std::string gemm_row_here() {
    return detail::effective_isa() >= detail::cpu_isa::avx512 ? "gemm:avx512"
           : detail::effective_isa() >= detail::cpu_isa::avx2 ? "gemm:avx2"
                                                              : "gemm:sse2";
}

TEST(Dispatch, GemmShapedProblemsPickTheGemmKernel) {
    const std::string want = gemm_row_here();
    {  // DCGAN projection: ConvTranspose nz=100 -> 512 x 4x4 from a 1x1 input (batch 4 here).
        op o(0, op_kind::ConvTranspose);
        o.set_attr("strides", dims{1, 1})
            .set_attr("pads_begin", dims{0, 0})
            .set_attr("pads_end", dims{0, 0});
        o.set_attr("dilations", dims{1, 1}).set_attr("weights_format", std::string("XOI"));
        o.add_input(logical_tensor(0, data_type::f32, {4, 1, 1, 100}))
            .add_input(logical_tensor(1, data_type::f32, {4, 4, 512, 100}))
            .add_output(logical_tensor::unknown(2, data_type::f32));
        EXPECT_EQ(kernel_for(o), want);
    }
    {  // A user's ConvTranspose3d 50 -> 1 channel, kernel 28x28x1 on a 1x1x1 input, NCX.
        op o(0, op_kind::ConvTranspose);
        o.set_attr("strides", dims{1, 1, 1}).set_attr("pads_begin", dims{0, 0, 0});
        o.set_attr("pads_end", dims{0, 0, 0}).set_attr("dilations", dims{1, 1, 1});
        o.set_attr("data_format", std::string("NCX"))
            .set_attr("weights_format", std::string("IOX"));
        o.add_input(logical_tensor(0, data_type::f32, {8, 50, 1, 1, 1}))
            .add_input(logical_tensor(1, data_type::f32, {50, 1, 28, 28, 1}))
            .add_output(logical_tensor::unknown(2, data_type::f32));
        EXPECT_EQ(kernel_for(o), want);
    }
    {  // One output channel, 1x1 kernel, NCX: the direct kernel would use 1 lane of a vector
       // (and copy src to channels-last); the product puts the pixels on the lanes.
        op o(0, op_kind::Convolution);
        o.set_attr("strides", dims{1, 1})
            .set_attr("pads_begin", dims{0, 0})
            .set_attr("pads_end", dims{0, 0});
        o.set_attr("dilations", dims{1, 1}).set_attr("data_format", std::string("NCX"));
        o.set_attr("weights_format", std::string("OIX"));
        o.add_input(logical_tensor(0, data_type::f32, {2, 64, 32, 32}))
            .add_input(logical_tensor(1, data_type::f32, {1, 64, 1, 1}))
            .add_output(logical_tensor::unknown(2, data_type::f32));
        EXPECT_EQ(kernel_for(o), want);
    }
}

// Short reductions per tap: the direct kernel reduces ICg values per batch element (one per
// tap), the GEMM kernel the whole window at once (im2col through its offset tables). Measured
// (1 thread, random problems): 421 -> 230 ms for the first, 386 -> 19 ms for a 1-D ConvTranspose
// gradient with a 991-tap kernel and padding (through the padded copy of src).
TEST(Dispatch, ShortReductionsPickTheGemmKernel) {
    const std::string want = gemm_row_here();
    {  // 2 groups of 1 -> 312 channels, a 12-tap 1-D kernel: one value per tap.
        op o(0, op_kind::Convolution);
        o.set_attr("strides", dims{1})
            .set_attr("pads_begin", dims{0})
            .set_attr("pads_end", dims{0});
        o.set_attr("dilations", dims{1}).set_attr("groups", dim_t(2));
        o.set_attr("data_format", std::string("NXC"))
            .set_attr("weights_format", std::string("XIO"));
        o.add_input(logical_tensor(0, data_type::f32, {4, 4471, 2}))
            .add_input(logical_tensor(1, data_type::f32, {12, 1, 624}))
            .add_output(logical_tensor::unknown(2, data_type::f32));
        EXPECT_EQ(kernel_for(o), want);
    }
    {  // ConvTransposeBackwardData 6 -> 1 channel, 991 taps, padding 495 on both sides.
        op o(0, op_kind::ConvTransposeBackwardData);
        o.set_attr("strides", dims{1})
            .set_attr("pads_begin", dims{495})
            .set_attr("pads_end", dims{495});
        o.set_attr("dilations", dims{1}).set_attr("data_format", std::string("NXC"));
        o.set_attr("weights_format", std::string("XOI"));
        o.add_input(logical_tensor(0, data_type::f32, {2, 4757, 1}))
            .add_input(logical_tensor(1, data_type::f32, {991, 1, 6}))
            .add_output(logical_tensor(2, data_type::f32, {2, 4757, 6}));
        EXPECT_EQ(kernel_for(o), want);
    }
}

// Units that accumulate in the user's C need no f32 block, so their rows are not bounded by the
// block's L2 budget: each packed block of B serves all of M (the user's ConvTranspose3d 50 -> 1
// at batch 200: B, 50 x 784 gathered from strided weights, was packed once per 70 rows). With a
// bias the product's C goes through the block, bounded as before.
TEST(GemmPlan, RowsAreOneBlockWhenCIsTheUsersTensor) {
    set_num_threads(1);
    detail::testcase::conv_case c;  // the conv view of the ConvTranspose: src is the 28 x 28 side
    c.dir = detail::conv_direction::bwd_data, c.mb = 200, c.icg = 1, c.ocg = 50;
    c.i[1] = c.k[1] = 28, c.i[2] = c.k[2] = 28;
    c.dt = c.math = data_type::f32;
    std::vector<dim_t> tables;
    const detail::gemm_plan pl =
        detail::make_gemm_plan(detail::testcase::make_problem(c), 16, 32, tables);
    EXPECT_FALSE(pl.c_block) << detail::describe(pl);
    EXPECT_EQ(pl.mblocks, 1) << detail::describe(pl);
    EXPECT_NE(detail::describe(pl).find("output=in place"), std::string::npos);
    c.bias = true;
    std::vector<dim_t> tables_b;
    const detail::gemm_plan pb =
        detail::make_gemm_plan(detail::testcase::make_problem(c), 16, 32, tables_b);
    EXPECT_TRUE(pb.c_block) << detail::describe(pb);
    EXPECT_LE(pb.mc * pb.nc * 4, detail::budget_of(detail::machine_caches()).l2_block)
        << detail::describe(pb);
    set_num_threads(0);
}

// The one case of geometry `geo` as op `kind`, given seeded inputs (seed), its kernels run on
// nthr threads: what the plan tests below check their plans' rows against.
std::vector<testing::swept_case> one_case(const testing::conv_geometry &geo, op_kind kind,
                                          uint64_t seed, int nthr) {
    const op o = testing::make_geometry_op(geo, kind, false);
    auto make = [&](std::mt19937_64 &) { return std::pair<op, std::string>(o, geo.what); };
    return testing::reference_sweep(seed, 1, make, [nthr](int) { return nthr; });
}

// A C in place far beyond the caches (gemm_plan::stream_c): row blocks whose C rows, every group
// and column block, are written one after another, and streamed. 2 groups of 1 -> 312 channels
// (random 24's shape): group 1's rows start half a line in, so its vectors are stored plainly
// beside group 0's streamed ones, on the same lines. One thread, C 1.25x the bound; every
// GEMM row that runs here (the AVX-512 one emulated too) against the reference.
TEST(GemmPlan, HugeOutputInPlaceIsStreamedByRowBlocks) {
    const double bound = 8.0 * double(detail::machine_caches().l2);  // one thread
    const dim_t width = dim_t(1.25 * bound / (2.0 * 624 * 4)) + 1;
    const testing::conv_geometry geo{"2 groups of 1 -> 312", 2, 2, {width}, {3}, {1}, {1}, {1},
                                     {1}, false, false, data_type::f32, 1, 312};
    const std::vector<testing::swept_case> cases = one_case(geo, op_kind::Convolution, 3, 1);
    const detail::resolved_op &r = cases[0].r;
    set_num_threads(1);
    int ran = 0;
    for (const detail::impl_desc &row : detail::kernel_inventory()) {
        if (std::string(row.name).rfind("gemm:", 0) != 0) continue;
        const testing::row_mode m = testing::how_to_run(row);
        if (!m.create) continue;
        const std::string plan = m.create(r.prob)->describe();
        EXPECT_NE(plan.find("streamed past the caches"), std::string::npos) << row.name << plan;
        EXPECT_EQ(testing::check_row(row, m, cases), 1) << row.name;
        ++ran;
    }
    set_num_threads(0);
    if (ran == 0) GTEST_SKIP() << "no gemm row runs here";
}

// A 1x1 NCX layer with images of side x side pixels, f32 (the plan tests below).
testing::conv_geometry ncx_1x1(const char *what, dim_t mb, dim_t side, dim_t icg, dim_t ocg) {
    return {what,   1,      mb,   {side, side}, {1, 1},         {1, 1}, {0, 0},
            {0, 0}, {1, 1}, true, false,        data_type::f32, icg,    ocg};
}

// Every GEMM row that runs here against the reference on `cases`; how many ran.
int check_gemm_rows(const std::vector<testing::swept_case> &cases, const std::string &what) {
    int ran = 0;
    for (const detail::impl_desc &row : detail::kernel_inventory()) {
        if (std::string(row.name).rfind("gemm:", 0) != 0) continue;
        const testing::row_mode m = testing::how_to_run(row);
        if (!m.create) continue;
        EXPECT_EQ(testing::check_row(row, m, cases), 1) << row.name << " " << what;
        ++ran;
    }
    return ran;
}

// NCX pixels are one run of C's columns per image. Column blocks of the default width that cross
// an image's end cannot accumulate in the user's C, whose f32 block then bounds the row blocks,
// and B was packed again for each (ResNet-50 res2's 1x1 data gradient: three times). The blocks
// shrink to a divisor of the image's pixels instead: whole panels where one divides (40 x 40:
// 1600 = 5 x 320), else whole vectors (56 x 56, 3136 = 4 x 784, no multiple of 64 between 256
// and 1024 divides it). Both directions that write an NCX data tensor, every GEMM row that
// runs here, against the reference, on 1 and 2 threads (2: more column blocks than threads).
TEST(GemmPlan, ColumnBlocksStayInsideImages) {
    int ran = 0;
    for (const dim_t side : {dim_t(40), dim_t(56)}) {
        for (const op_kind kind : {op_kind::Convolution, op_kind::ConvolutionBackwardData}) {
            const testing::conv_geometry geo =
                ncx_1x1("NCX 1x1, images not a multiple of the block", 3, side, 24, 80);
            const std::vector<testing::swept_case> cases = one_case(geo, kind, 5, 1);
            for (const int nthr : {1, 2}) {
                set_num_threads(nthr);
                std::vector<dim_t> tables;
                const detail::conv_problem &p = cases[0].r.prob;
                const detail::gemm_plan pl = detail::make_gemm_plan(p, 16, 32, tables);
                const std::string what = detail::describe(pl);
                EXPECT_GT(pl.nblocks, 1) << what;
                EXPECT_EQ((side * side) % pl.nc, 0) << what;
                EXPECT_TRUE(detail::gemm_column_blocks_are_runs(pl)) << what;
                EXPECT_FALSE(pl.c_block) << what;
                EXPECT_EQ(pl.mblocks, 1) << what;
                ran += check_gemm_rows(cases, what);
            }
        }
    }
    set_num_threads(0);
    if (ran == 0) GTEST_SKIP() << "no gemm row runs here";
}

// Rows split over the threads in blocks of whole tiles can leave the busiest thread a tile or
// more above its share; where the rows are the only split, equal blocks replace them (one per
// thread, or a multiple of the threads within the cache's block) when that saves half a tile.
// The user's ConvTranspose3d 50 -> 1's data gradient (200 rows, tiles of 14) on 2 threads:
// blocks of 100, against the reference on every GEMM row that runs here.
TEST(GemmPlan, RowBlocksGiveTheThreadsEqualRows) {
    EXPECT_EQ(detail::equal_row_blocks(200, 56, 210, 14, 2), 100);  // 112 and 88 rows
    EXPECT_EQ(detail::equal_row_blocks(200, 56, 60, 14, 2), 50);    // 100 > 60: four blocks
    EXPECT_EQ(detail::equal_row_blocks(224, 56, 224, 14, 2), 56);   // already 112 and 112
    EXPECT_EQ(detail::equal_row_blocks(4096, 1036, 4102, 14, 2), 2048);  // 2072 and 2024
    EXPECT_EQ(detail::equal_row_blocks(30, 14, 42, 14, 2), 15);  // 28 and 2 rows
    EXPECT_EQ(detail::equal_row_blocks(200, 56, 210, 14, 3), 67);  // 112, 56, 32 -> 67, 67, 66
    const testing::conv_geometry geo{"ConvTranspose3d 50 -> 1 as 2-D", 1, 200, {28, 28},
                                     {28, 28}, {1, 1}, {0, 0}, {0, 0}, {1, 1}, false, false,
                                     data_type::f32, 1, 50};
    const std::vector<testing::swept_case> cases =
        one_case(geo, op_kind::ConvTransposeBackwardData, 11, 2);
    set_num_threads(2);
    std::vector<dim_t> tables;
    const detail::gemm_plan pl = detail::make_gemm_plan(cases[0].r.prob, 16, 32, tables);
    const std::string what = detail::describe(pl);
    EXPECT_EQ(pl.M, 200) << what;
    EXPECT_EQ(pl.mr, 14) << what;
    EXPECT_EQ(pl.mc, 100) << what;
    EXPECT_EQ(pl.mblocks, 2) << what;
    const int ran = check_gemm_rows(cases, what);
    set_num_threads(0);
    if (ran == 0) GTEST_SKIP() << "no gemm row runs here";
}

// A weight gradient whose C (the weights) is one f32 block over a long K (the pixels) splits K
// over the threads rather than C's rows, each part packing its own range of B once (row blocks
// each packed all of B again); a C beyond one block keeps its row and column blocks. Against
// the reference, every GEMM row that runs here.
TEST(GemmPlan, SmallCOverLongKSplitsK) {
    const testing::conv_geometry geo = ncx_1x1("NCX 1x1 weight gradient", 4, 40, 40, 24);
    const std::vector<testing::swept_case> cases =
        one_case(geo, op_kind::ConvolutionBackwardWeights, 9, 2);
    set_num_threads(2);
    std::vector<dim_t> tables;
    const detail::gemm_plan pl = detail::make_gemm_plan(cases[0].r.prob, 16, 32, tables);
    const std::string what = detail::describe(pl);
    EXPECT_EQ(pl.ksplit, 2) << what;
    EXPECT_EQ(pl.mblocks, 1) << what;
    EXPECT_EQ(pl.nblocks, 1) << what;
    const int ran = check_gemm_rows(cases, what);
    // 64 -> 8192 channels: C, 2 MB of f32, is beyond one block on any machine (an eighth of an L2
    // of up to 16 MB), and keeps its blocks. (A plan only: no tensors.)
    detail::testcase::conv_case big;
    big.dir = detail::conv_direction::bwd_weights, big.mb = 4, big.icg = 64, big.ocg = 8192;
    big.i[1] = big.i[2] = 40, big.ncx = true;
    big.dt = big.math = data_type::f32;
    std::vector<dim_t> big_tables;
    const detail::gemm_plan pb =
        detail::make_gemm_plan(detail::testcase::make_problem(big), 16, 32, big_tables);
    EXPECT_EQ(pb.ksplit, 1) << detail::describe(pb);
    EXPECT_GT(pb.mblocks * pb.nblocks, 1) << detail::describe(pb);
    set_num_threads(0);
    if (ran == 0) GTEST_SKIP() << "no gemm row runs here";
}

TEST(Dispatch, GemmKernelDeclinesWithReasons) {
    detail::conv_problem p;  // 3x3, pad 1: taps read padding
    p.nsp = 2;
    p.mb = 2, p.icg = p.ocg = 64;
    p.i[1] = p.i[2] = p.o[1] = p.o[2] = 14;
    p.k[1] = p.k[2] = 3;
    p.pb[1] = p.pb[2] = p.pe[1] = p.pe[2] = 1;
    p.src = {14 * 14 * 64, 1, {0, 14 * 64, 64}};
    p.dst = p.src;
    // fwd and bwd_weights read a zero-bordered copy of src; bwd_data would write the padding.
    EXPECT_EQ(detail::gemm_shape_why_not(p), "");
    const detail::gemm_padded_src pad = detail::padded_src_of(p);
    EXPECT_TRUE(pad.needed);
    EXPECT_EQ(pad.elems, 2 * 64 * 16 * 16);
    EXPECT_EQ(pad.p.pb[2], 0);
    EXPECT_EQ(pad.p.i[2], 16);
    p.dir = detail::conv_direction::bwd_data;
    EXPECT_NE(detail::gemm_shape_why_not(p).find("begin padding"), std::string::npos);
    // Padding that would more than double src: no copy.
    p.dir = detail::conv_direction::bwd_weights;
    p.i[1] = p.i[2] = 2, p.o[1] = p.o[2] = 2, p.k[1] = p.k[2] = 200;
    p.pb[1] = p.pb[2] = p.pe[1] = p.pe[2] = 100;
    EXPECT_NE(detail::gemm_shape_why_not(p).find("zero-padded copy of src would hold"),
              std::string::npos);
    p.i[1] = p.i[2] = p.o[1] = p.o[2] = 14, p.k[1] = p.k[2] = 3;
    p.pb[1] = p.pb[2] = p.pe[1] = p.pe[2] = 1;
    p.dir = detail::conv_direction::fwd;
    // A channels-last 1x1 layer with many channels: a matrix product, but the direct kernel
    // already fills the lanes, and the estimate leaves it there.
    p.k[1] = p.k[2] = 1;
    p.pb[1] = p.pb[2] = p.pe[1] = p.pe[2] = 0;
    p.ocg = 256;
    p.dst = {14 * 14 * 256, 1, {0, 14 * 256, 256}};
    p.wei = {64, 1, {0, 0, 0}};
    EXPECT_EQ(detail::gemm_shape_why_not(p), "");
    for (const auto &impl : detail::impl_list()) {
        if (std::string(impl.name).rfind("gemm:", 0) != 0) continue;
        EXPECT_NE(impl.why_not(p).find("direct kernel is estimated faster"), std::string::npos)
            << impl.name;
    }
}

namespace {

// Copies src of `p` (its src layout as given) into the zero-bordered copy and checks every
// element of the copy: src's element at the coordinates shifted by the begin padding, or zero.
void expect_padded_copy_holds_src(const detail::conv_problem &p, int nthr) {
    const detail::gemm_padded_src pad = detail::padded_src_of(p);
    ASSERT_TRUE(pad.needed);
    ASSERT_EQ(pad.why_not, "");
    const dim_t C = p.ic(), H = pad.p.i[1], Wd = pad.p.i[2];
    // From the first window's start to the last one's end: (o - 1) * stride + (k - 1) * dil + 1.
    for (int x = 1; x < 3; ++x)
        EXPECT_EQ(pad.p.i[x], (p.o[x] - 1) * p.s[x] + (p.k[x] - 1) * p.dl[x] + 1);
    ASSERT_EQ(pad.elems, p.mb * C * H * Wd);
    const size_t es = element_size(p.dt);
    std::vector<unsigned char> src(size_t(p.mb * p.src.n) * es), out(size_t(pad.elems) * es, 0xcd);
    for (size_t b = 0; b < src.size(); ++b) src[b] = static_cast<unsigned char>(b * 7 + 1);
    detail::copy_padded_src(p, pad, src.data(), out.data(), nthr);
    const detail::data_layout &l = pad.p.src;
    for (dim_t n = 0; n < p.mb; ++n)
        for (dim_t c = 0; c < C; ++c)
            for (dim_t h = 0; h < H; ++h)
                for (dim_t w = 0; w < Wd; ++w) {
                    const dim_t sh = h - p.pb[1], sw = w - p.pb[2];
                    const bool in = sh >= 0 && sh < p.i[1] && sw >= 0 && sw < p.i[2];
                    const size_t o = size_t(n * l.n + c * l.c + h * l.sp[1] + w * l.sp[2]) * es;
                    const size_t x = in ? size_t(n * p.src.n + c * p.src.c + sh * p.src.sp[1] +
                                                 sw * p.src.sp[2]) *
                                              es
                                        : 0;
                    for (size_t b = 0; b < es; ++b)
                        ASSERT_EQ(out[o + b], in ? src[x + b] : 0)
                            << to_string(p.dt) << " n" << n << " c" << c << " h" << h << " w" << w
                            << " threads " << nthr;
                }
}

// A 2-D weight-gradient problem of 2 images, 3 -> 2 channels, src 4x5 seen through strided
// views: a gap of 2 elements after each pixel (NXC) or row (NCX).
detail::conv_problem padded_problem(bool nxc, data_type dt) {
    detail::conv_problem p;
    p.dir = detail::conv_direction::bwd_weights;
    p.dt = dt;
    p.nsp = 2;
    p.mb = 2, p.icg = 3, p.ocg = 2;
    p.i[1] = 4, p.i[2] = 5;
    const dim_t C = 3, pix = 4 * 5;
    if (nxc)
        p.src = {pix * (C + 2), 1, {0, 5 * (C + 2), C + 2}};
    else
        p.src = {C * 4 * 7, 4 * 7, {0, 7, 1}};
    return p;
}

}  // namespace

// The zero-bordered copy of src, read through strided channels-last and channels-first views,
// in f32 and bf16, on 1 and 3 threads.
TEST(GemmPaddedSrc, CopyHoldsSrcInsideAndZerosAround) {
    for (const bool nxc : {true, false})
        for (const data_type dt : {data_type::f32, data_type::bf16})
            for (const int nthr : {1, 3}) {
                detail::conv_problem p = padded_problem(nxc, dt);
                p.k[1] = 3, p.k[2] = 4;
                p.pb[1] = 1, p.pb[2] = 2, p.pe[1] = 2, p.pe[2] = 0;
                p.o[1] = 5, p.o[2] = 4;  // 4 + 1 + 2 - 3 + 1, 5 + 2 + 0 - 4 + 1
                EXPECT_EQ(detail::padded_src_of(p).nxc, nxc);
                expect_padded_copy_holds_src(p, nthr);
            }
}

// Strides so long that the windows end inside the begin padding: the copy is all zeros, and no
// src address before the tensor is formed (found by fuzz_op under UBSan: a pointer taken at a
// negative offset for an empty row).
TEST(GemmPaddedSrc, WindowsInsideTheBeginPaddingCopyOnlyZeros) {
    for (const bool nxc : {true, false})
        for (const int nthr : {1, 3}) {
            detail::conv_problem p = padded_problem(nxc, data_type::f32);
            p.k[1] = 2, p.k[2] = 1;
            p.s[1] = 9, p.s[2] = 10;
            p.pb[1] = 1, p.pb[2] = 5, p.pe[1] = 0, p.pe[2] = 0;
            p.o[1] = 1, p.o[2] = 1;  // (4 + 1 - 2) / 9 + 1, (5 + 5 - 1) / 10 + 1
            expect_padded_copy_holds_src(p, nthr);
        }
}

// A matrix-product problem whose offset tables would be enormous (found by fuzz_op: a 343 GB
// reserve while dispatching) is declined with the reason, without building them.
TEST(Dispatch, GemmKernelDeclinesHugeOffsetTables) {
    const dim_t mb = dim_t(1) << 31;
    op o(0, op_kind::Convolution);
    o.set_attr("strides", dims{1, 1})
        .set_attr("pads_begin", dims{0, 0})
        .set_attr("pads_end", dims{0, 0});
    o.set_attr("dilations", dims{1, 1}).set_attr("data_format", std::string("NCX"));
    o.set_attr("weights_format", std::string("OIX"));
    o.add_input(logical_tensor(0, data_type::f32, {mb, 4, 1, 1}))
        .add_input(logical_tensor(1, data_type::f32, {2, 4, 1, 1}))
        .add_output(logical_tensor::unknown(2, data_type::f32));
    const detail::resolved_op r = detail::resolve_op(o, o.inputs(), o.outputs());
    EXPECT_EQ(detail::gemm_shape_why_not(r.prob), "");
    for (const auto &impl : detail::impl_list()) {
        if (std::string(impl.name).rfind("gemm:", 0) != 0) continue;
        EXPECT_NE(impl.why_not(r.prob).find("offset tables would hold"), std::string::npos)
            << impl.name;
    }
}

}  // namespace

namespace testing {

// Every row that can compute matrix products (the GEMM kernel, whatever its cost estimate would
// choose, and the direct kernels), exactly as the reference.
TEST_P(KernelRow, MatrixProductShapes) {
    const detail::impl_desc &row = *GetParam();
    const row_mode m = how_to_run(row);
    if (!m.create) GTEST_SKIP() << row.name << ": " << m.skip_reason;
    const int runs = check_row(row, m, gemm_cases(false));
    std::printf("%s%s: %d of %zu problems compared\n", row.name, m.emulated ? " (emulated)" : "",
                runs, gemm_cases(false).size());
}

TEST_P(KernelRow, MatrixProductsThreadedAndKSplit) {
    const detail::impl_desc &row = *GetParam();
    const row_mode m = how_to_run(row);
    if (!m.create) GTEST_SKIP() << row.name << ": " << m.skip_reason;
    const int runs = check_row(row, m, gemm_cases(true));
    std::printf("%s%s: %d of %zu problems compared\n", row.name, m.emulated ? " (emulated)" : "",
                runs, gemm_cases(true).size());
}

}  // namespace testing
}  // namespace convgrad
