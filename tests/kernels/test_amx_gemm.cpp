// The AMX GEMM kernel (kernels/amx/amx_gemm.hpp) on the paths of its packers and schedule,
// against the reference exactly (small-integer data), emulated and, where AMX is granted,
// native: A read as rows of runs or as a transposed view (pairs interleaved, then transposed as
// words), B as contiguous columns or contiguous K (pairs as words), C stored by runs, by
// uniformly strided rows or column by column (NCX); K of 1, odd, one step and a tail, and over
// the K block (three blocks: the f32 block accumulates); M and N tails; groups, bias, bf16 and
// f16 data, f32 under fpmath bf16; bwd_data writing only part of src (the prefill). The
// kernel's plan states what it chose, and the test checks that each path was taken.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>

#include "kernels/amx/amx_gemm.hpp"
#include "util/conv_case.hpp"

namespace convgrad::detail {
namespace {

using namespace testcase;

// A case that is a matrix product per group.
struct gemm_shape {
    const char *what;
    conv_case c;
};

conv_case ct_from_1x1(conv_direction dir, dim_t mb, dim_t small_c, dim_t big_c, dim_t kh,
                      dim_t kw) {
    // The conv view of a ConvTranspose from a 1x1 input: src is the big side, one window.
    conv_case c;
    c.dir = dir, c.mb = mb, c.icg = big_c, c.ocg = small_c;
    c.i[1] = kh, c.i[2] = kw, c.k[1] = kh, c.k[2] = kw;
    return c;
}

std::vector<gemm_shape> shapes() {
    std::vector<gemm_shape> v;
    for (conv_direction dir :
         {conv_direction::fwd, conv_direction::bwd_data, conv_direction::bwd_weights}) {
        // The user's ConvTranspose3d 50 -> 1 (kernel 28 x 28), at a small batch: K 784 or 50.
        v.push_back({"1 channel, 28x28 window", ct_from_1x1(dir, 9, 50, 1, 28, 28)});
        // K over the block: 40 channels x 64 taps = 2560 (fwd), three K blocks.
        v.push_back({"K over three blocks", ct_from_1x1(dir, 5, 37, 40, 8, 8)});
        // Odd K and odd columns: 3 x 5 window of 7 channels (K 105 fwd, 9 bwd_data).
        conv_case odd = ct_from_1x1(dir, 35, 9, 7, 3, 5);
        odd.bias = dir != conv_direction::bwd_weights;
        v.push_back({"odd K, bias", odd});
        // 1x1 stride 1, NCX: pixels on the rows of A or C are contiguous, channels strided.
        conv_case ncx;
        ncx.dir = dir, ncx.mb = 2, ncx.icg = 34, ncx.ocg = 33, ncx.ncx = true;
        ncx.i[1] = 5, ncx.i[2] = 7;
        v.push_back({"1x1 NCX", ncx});
        // XIO weights, groups, an odd pixel count (the weight gradient's K).
        conv_case grp;
        grp.dir = dir, grp.mb = 3, grp.g = 2, grp.icg = 18, grp.ocg = 20, grp.xio = true;
        grp.i[1] = 3, grp.i[2] = 5;
        v.push_back({"1x1 groups XIO, odd pixels", grp});
        // kernel == stride with a remainder src never reads (bwd_data: the prefill).
        conv_case tiles;
        tiles.dir = dir, tiles.mb = 2, tiles.icg = 16, tiles.ocg = 24, tiles.bias = true;
        tiles.i[1] = 5, tiles.i[2] = 9, tiles.k[1] = tiles.k[2] = 2, tiles.s[1] = tiles.s[2] = 2;
        v.push_back({"kernel == stride, remainder", tiles});
    }
    return v;
}

TEST(AmxGemm, EveryPackingPathEqualsTheReference) {
    std::set<std::string> plans;
    int runs = 0;
    for (const gemm_shape &s : shapes())
        for (data_type dt : {data_type::bf16, data_type::f16, data_type::f32}) {
            conv_case c = s.c;
            c.dt = dt;
            c.math = dt == data_type::f32 ? data_type::bf16 : dt;  // f32: fpmath_mode bf16
            const conv_problem p = make_problem(c);
            ASSERT_EQ(amx::gemm_cannot(p), "") << s.what << " " << describe(c);
            std::mt19937_64 rng(17);
            const inputs in = make_inputs(p, rng, true);
            const buffer want = run(p, in, nullptr);
            for (amx::amx_backend b : {amx::amx_backend::emulated, amx::amx_backend::native}) {
                const amx::amx_dot dot =
                    dt == data_type::f16 ? amx::amx_dot::f16 : amx::amx_dot::bf16;
                if (b == amx::amx_backend::native && !amx::native_usable(dot)) continue;
                const std::unique_ptr<kernel> k = b == amx::amx_backend::native
                                                      ? amx::gemm_create_native(p)
                                                      : amx::gemm_create_emulated(p);
                const std::string plan = k->describe();
                plans.insert(plan.substr(plan.find(':') + 2));
                const buffer got = run(p, in, k.get());
                for (dim_t o : output_offsets(p))
                    ASSERT_EQ(got.get(o), want.get(o))
                        << s.what << " " << describe(c) << " " << plan << " at " << o;
                ++runs;
            }
        }
    std::string all;
    for (const std::string &pl : plans) all += pl + "\n";
    // Every reading path of the packers and every store was planned on some case.
    // ("columns of runs": runs along the rows, read as pairs transposed into the columns.)
    for (const char *path : {"A=src(rows of runs)", "A=dst(columns of runs)", "A=dst(elements)",
                             "B=wei(rows of runs)", "B=src(columns of runs)", "B=src(elements)",
                             "C=src(rows of runs)", "C=dst(columns of runs)", "C=wei(elements)",
                             "K=2560 groups=1 mc=32 nc=32 kc=864", " prefill", "groups=2"})
        EXPECT_NE(all.find(path), std::string::npos) << path << " in:\n" << all;
    std::printf("[ amx gemm ] %d runs as the reference\n", runs);
}

// The kernel is chosen natively only where it wins (amx_gemm.cpp): the user's 50 -> 1 layer,
// not ResNet-50's 3x3 weight gradient (many pixels) or the 7x7 stem's (3 channels per tap).
TEST(AmxGemm, NativeDispatchTakesOnlyWhereItWins) {
    if (!amx::native_usable(amx::amx_dot::bf16)) GTEST_SKIP() << "AMX not granted here";
    EXPECT_EQ(amx::gemm_why_not_native(
                  make_problem(ct_from_1x1(conv_direction::fwd, 200, 50, 1, 28, 28))),
              "");
    conv_case r;
    r.dir = conv_direction::bwd_weights, r.mb = 8, r.icg = r.ocg = 64;
    r.i[1] = r.i[2] = 56, r.k[1] = r.k[2] = 3, r.pb[1] = r.pb[2] = r.pe[1] = r.pe[2] = 1;
    EXPECT_NE(amx::gemm_why_not_native(make_problem(r)), "");
    conv_case stem = r;
    stem.icg = 3, stem.i[1] = stem.i[2] = 224, stem.k[1] = stem.k[2] = 7, stem.s[1] = stem.s[2] = 2;
    stem.pb[1] = stem.pb[2] = 3, stem.pe[1] = stem.pe[2] = 2;
    EXPECT_NE(amx::gemm_why_not_native(make_problem(stem)), "");
}

}  // namespace
}  // namespace convgrad::detail
