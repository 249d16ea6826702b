// The plans' blocking comes from the machine's cache sizes: read once and sane, CPUID leaf 4
// decoded right, and the budgets (so the plans) follow the sizes.
#include <gtest/gtest.h>

#include <cstdio>

#include "kernels/common/direct_plan.hpp"
#include "kernels/plan/cache_sizes.hpp"

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

TEST(Plan, DirectPlanBlockingComesFromTheCaches) {
    conv_problem p{};
    p.dir = conv_direction::bwd_weights;
    p.mb = 8, p.g = 1, p.icg = 64, p.ocg = 64;
    p.i[2] = p.o[2] = 56;
    p.src.c = p.dst.c = 1;
    const direct_plan small = make_direct_plan(p, 16, 32, {32 * 1024, 1024 * 1024, "test"});
    const direct_plan big = make_direct_plan(p, 16, 32, {48 * 1024, 2 * 1024 * 1024, "test"});
    EXPECT_EQ(big.rows_per_chunk, 2 * small.rows_per_chunk);
    EXPECT_GT(big.gather_panel, small.gather_panel);
    EXPECT_NE(describe(big).find("rows_per_chunk="), std::string::npos);
}

}  // namespace
}  // namespace convgrad::detail
