// The direct kernel's weight gradient reduced as runs of whole rows (kernels/schedule/
// bwd_weights_runs.hpp) multiplies zeros the reference leaves out: the pads along w times
// diff_dst at the pixels whose windows read them, and the zeros past a diff_dst row's end
// times the src pixels at the ends of rows. An infinity at any of those places would make a
// NaN there (0 * inf), so the copies check them and such a chunk goes tap by tap instead: every
// output matches the reference, infinities and NaNs alike. Infinities elsewhere go through the
// runs and must match too. On each direct_brgemm row, natively or emulated, for groups of 4, 8
// and 16 output channels (one vector of SSE2, AVX2, AVX-512: the runs of each row's width), in
// f32 NXC, f32 NCX and f16 (rows converted by the copies).
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>

#include "kernels/common/direct_plan.hpp"
#include "kernels/plan/cache_sizes.hpp"
#include "util/conv_case.hpp"
#include "util/kernel_check.hpp"

namespace convgrad::detail {
namespace {

using namespace testcase;

// The problems: a 2-D 3x3 with pads 1, and a 1-D kernel of 5 with pads 2 and 1 (the ends
// differ); f32 NXC, f32 NCX (transposed into the copies) and f16.
std::vector<conv_case> run_cases(dim_t ocg, data_type dt, bool ncx) {
    conv_case a;
    a.dir = conv_direction::bwd_weights, a.dt = a.math = dt, a.ncx = ncx, a.xio = true;
    a.mb = 2, a.g = 3, a.icg = 5, a.ocg = ocg;
    set_axis(a, 1, 7, 3, 1, 1, 1, 1);
    set_axis(a, 2, 11, 3, 1, 1, 1, 1);
    conv_case b = a;
    b.nsp = 1, b.mb = 6, b.icg = 3;  // (enough data that the rows are split, not the weights)
    set_axis(b, 1, 1, 1);
    set_axis(b, 2, 29, 5, 1, 1, 2, 1);
    return {a, b};
}

// Where the infinity goes: a tensor (src or diff_dst) and a pixel along w of image 1, row h.
struct placement {
    bool in_dst;
    dim_t h;
    dim_t w;  // negative: from the row's end (-1: its last pixel)
    const char *what;
};

bool same(float a, float b) {
    return (std::isnan(a) && std::isnan(b)) || a == b;
}

TEST(WeightGradientRuns, InfinitiesMatchTheReferenceWhereverTheyAre) {
    const placement places[] = {
        {true, 0, 0, "diff_dst, first pixel (its window reads the pad)"},
        {true, 0, -1, "diff_dst, last pixel (its window reads the pad)"},
        {true, 0, 2, "diff_dst, inside"},
        {false, 0, 0, "src, first pixel (the zeros past the previous row read it)"},
        {false, 0, -1, "src, last pixel (the zeros past its row read it)"},
        {false, 0, 3, "src, inside"},
    };
    const int saved = omp_get_max_threads();
    int compared = 0, by_runs = 0;
    for (const impl_desc &row : kernel_inventory()) {
        if (std::string(row.name).rfind("direct_brgemm:", 0) != 0) continue;
        const testing::row_mode m = testing::how_to_run(row);
        if (!m.create) {
            std::printf("[ runs ] %s skipped: %s\n", row.name, m.skip_reason.c_str());
            continue;
        }
        for (dim_t ocg : {4, 8, 16})
            for (auto [dt, ncx] :
                 {std::pair{data_type::f32, false}, std::pair{data_type::f32, true},
                  std::pair{data_type::f16, false}})
                for (const conv_case &c : run_cases(ocg, dt, ncx))
                    for (const placement &at : places)
                        for (int nthr : {1, 2}) {
                            const conv_problem p = make_problem(c);
                            if (!row.serves(p).empty() || !row.cannot(p).empty()) continue;
                            std::mt19937_64 rng(11);
                            inputs in = make_inputs(p, rng, true);
                            buffer &t = at.in_dst ? in.dst : in.src;
                            const data_layout &l = at.in_dst ? p.dst : p.src;
                            const dim_t width = at.in_dst ? p.o[2] : p.i[2];
                            const dim_t w = at.w < 0 ? width + at.w : at.w;
                            t.set(l.n + at.h * l.sp[1] + w * l.sp[2] + 1 * l.c, INFINITY);
                            const buffer want = run(p, in, nullptr);
                            omp_set_num_threads(nthr);
                            const buffer got = run(p, in, m.create(p).get());
                            omp_set_num_threads(saved);
                            int nonfinite = 0;
                            for (dim_t o : output_offsets(p)) {
                                nonfinite += !std::isfinite(want.get(o));
                                ASSERT_TRUE(same(got.get(o), want.get(o)))
                                    << row.name << " " << describe(c) << ", infinity at " << at.what
                                    << ", " << nthr << " threads: at " << o << " " << got.get(o)
                                    << " against " << want.get(o);
                            }
                            ASSERT_GT(nonfinite, 0) << describe(c) << " " << at.what;
                            ++compared;
                            by_runs += direct_bwd_w_group_runs(make_direct_plan(
                                p, row.tile.vlen, row.tile.nregs, machine_caches(), true, true));
                        }
    }
    omp_set_num_threads(saved);
    std::printf(
        "[ runs ] %d (row, problem, infinity) runs as the reference, %d of them where "
        "the plan reduces runs\n",
        compared, by_runs);
    EXPECT_GT(compared, 0);
    EXPECT_GT(by_runs, 0);
}

}  // namespace
}  // namespace convgrad::detail
