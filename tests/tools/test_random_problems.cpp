// `convgrad bench --random`: the problems are the same for a seed, 0.01-5 GFLOP, every op in
// turn, and each one is a valid op in both data layouts (--tag=nxc|ncx) whose FLOP count is the
// one the generator sized.
#include <gtest/gtest.h>

#include <set>

#include "desc.hpp"
#include "random_problems.hpp"

using namespace convgrad;
using namespace convgrad::tool;

TEST(RandomProblems, DeterministicSizedAndValidInBothLayouts) {
    const auto a = random_problems(60, 7), b = random_problems(60, 7), c = random_problems(60, 8);
    ASSERT_EQ(a.size(), 60u);
    int differ = 0;
    std::set<int> nsp;
    for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].desc.str(), b[i].desc.str());
        EXPECT_EQ(a[i].kind, b[i].kind);
        differ += a[i].desc.str() != c[i].desc.str();
        EXPECT_EQ(a[i].kind, all_op_kinds[i % 6]) << i;
        EXPECT_GE(a[i].gflop, 0.01);
        EXPECT_LE(a[i].gflop, 5.0);
        nsp.insert(a[i].desc.nsp);
        for (bool ncx : {false, true}) {
            const op o = make_op(a[i].kind, a[i].desc, data_type::f32, ncx);
            compiled_partition cp;
            ASSERT_NO_THROW(cp = compile_op(o)) << a[i].desc.str() << " " << to_string(a[i].kind);
            EXPECT_NEAR(cp.flops() * 1e-9, a[i].gflop, 1e-9 + 1e-9 * a[i].gflop) << a[i].desc.str();
        }
    }
    EXPECT_GT(differ, 50);      // another seed, other problems
    EXPECT_EQ(nsp.size(), 3u);  // 1-D, 2-D and 3-D
}
