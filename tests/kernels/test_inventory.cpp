// The kernel inventory as a table: well-formed rows, levels that cover them, and dispatch that
// follows it (order, features, directions and data types, CONVGRAD_DISABLE).
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

#include "dispatch/registry.hpp"

namespace convgrad {
namespace {

using namespace detail;

conv_problem small_problem(conv_direction dir, data_type dt) {
    conv_problem p;  // 1x1, 8 -> 8 channels, 4x4 NXC-like strides: every row can compute it
    p.dir = dir;
    p.dt = dt;
    p.mb = 1, p.icg = p.ocg = 8;
    p.i[1] = p.i[2] = p.o[1] = p.o[2] = 4;
    p.src = {4 * 4 * 8, 1, {0, 4 * 8, 8}};
    p.dst = p.src;
    p.wei = {8, 1, {0, 0, 0}};
    return p;
}

TEST(Inventory, RowsAreWellFormed) {
    std::set<std::string> names;
    for (const impl_desc &row : kernel_inventory()) {
        const std::string name = row.name;
        EXPECT_TRUE(names.insert(name).second) << "two rows named " << name;
        // "family:isa-suffix": CONVGRAD_DISABLE matches families by prefix.
        EXPECT_NE(name.find(':'), std::string::npos) << name;
        EXPECT_GT(row.tile.vlen, 0) << name;
        EXPECT_GT(row.tile.nregs, 0) << name;
        EXPECT_NE(row.cannot, nullptr) << name;
        EXPECT_NE(row.why_not, nullptr) << name;
        EXPECT_NE(row.create, nullptr) << name;
    }
    ASSERT_EQ(impl_list().size(), kernel_inventory().size() + 1);
    for (size_t i = 0; i < kernel_inventory().size(); ++i)
        EXPECT_STREQ(impl_list()[i].name, kernel_inventory()[i].name)
            << "dispatch order is table order";
    EXPECT_STREQ(impl_list().back().name, "ref:any");
}

TEST(Inventory, IsaLevelsCoverEveryRowInCapOrder) {
    const std::vector<cpu_isa> levels = inventory_isa_levels();
    ASSERT_FALSE(levels.empty());
    EXPECT_EQ(levels.front(), cpu_isa::generic);  // some row runs everywhere
    for (size_t i = 1; i < levels.size(); ++i) EXPECT_LT(int(levels[i - 1]), int(levels[i]));
    for (const impl_desc &row : kernel_inventory()) {
        EXPECT_NE(std::find(levels.begin(), levels.end(), row.isa), levels.end()) << row.name;
        // The cap of the row's level lets it run wherever the CPU has the features.
        EXPECT_TRUE(cap_features(row.isa).contains(row.needs())) << row.name;
    }
}

// A row that serves fewer directions or types is passed over with the reason.
TEST(Inventory, ServesChecksDirectionsAndTypes) {
    impl_desc row = kernel_inventory().back();
    row.directions = direction_set{conv_direction::fwd};
    row.dtypes = dtype_set{data_type::f32};
    EXPECT_EQ(row.serves(small_problem(conv_direction::fwd, data_type::f32)), "");
    EXPECT_EQ(row.serves(small_problem(conv_direction::bwd_data, data_type::f32)),
              "serves fwd, not bwd_data");
    EXPECT_EQ(row.serves(small_problem(conv_direction::fwd, data_type::bf16)),
              "takes f32, not bf16");
}

// Dispatch picks the first row that can run here and accepts; refusals name the rows passed over.
TEST(Inventory, DispatchFollowsTableOrder) {
    const conv_problem p = small_problem(conv_direction::fwd, data_type::f32);
    const dispatch_result r = dispatch(p, effective_features(), false);
    const impl_desc *want = nullptr;
    for (const impl_desc &row : kernel_inventory())
        if (!want && effective_features().contains(row.needs()) && row.why_not(p).empty())
            want = &row;
    ASSERT_NE(want, nullptr);
    EXPECT_STREQ(r.impl->name, want->name);
    EXPECT_EQ(r.refusals.size(), size_t(want - kernel_inventory().data()));
    // With no features at all only the generic rows remain.
    const dispatch_result g = dispatch(p, cpu_features{}, false);
    EXPECT_EQ(g.impl->isa, cpu_isa::generic) << g.impl->name;
}

// When the OS refuses AMX tile data, AMX is not among the features (CpuFeatures tests the
// decoding), and a bf16 problem the AMX row would take goes to the next row, with the reason.
TEST(Inventory, RefusedAmxFailsOverToTheNextRow) {
    const cpu_features amx{cpu_feature::amx_tile, cpu_feature::amx_bf16, cpu_feature::amx_fp16};
    amx_permission answer;
    const cpu_features refused = amx_features(
        (1u << 24) | (1u << 22), 0, 3ull << 17, [] { return false; }, answer);
    ASSERT_EQ(answer, amx_permission::refused);
    const cpu_features here = cpu_features::from_missing(effective_features(), amx) | refused;
    for (conv_direction dir :
         {conv_direction::fwd, conv_direction::bwd_data, conv_direction::bwd_weights}) {
        const conv_problem p = small_problem(dir, data_type::bf16);
        const dispatch_result r = dispatch(p, here, false);
        EXPECT_EQ(std::string(r.impl->name).find("amx"), std::string::npos) << r.impl->name;
        bool reported = false;
        for (const auto &why : r.refusals)
            reported = reported || (why.rfind("amx_conv:amx: needs amx", 0) == 0 &&
                                    why.find("amx_tile") != std::string::npos);
        EXPECT_TRUE(reported) << to_string(dir);
    }
}

// CONVGRAD_PREFER puts rows first and ignores their estimates, not their correctness: a row that
// cannot compute the problem (or lacks its features) is still passed over.
TEST(Inventory, PreferTriesRowsFirstButOnlyWhereTheyCanCompute) {
    const conv_problem p = small_problem(conv_direction::fwd, data_type::f32);
    const std::string usual = dispatch(p, effective_features(), false).impl->name;
    const impl_desc &last = kernel_inventory().back();  // a generic row: runs everywhere
    ASSERT_EQ(last.isa, cpu_isa::generic);
    ASSERT_EQ(last.cannot(p), "");
    ::setenv("CONVGRAD_PREFER", last.name, 1);
    const dispatch_result r = dispatch(p, effective_features(), false);
    EXPECT_STREQ(r.impl->name, last.name);
    // A row serving only bwd_data is not given a fwd problem.
    ::setenv("CONVGRAD_PREFER", "col2im", 1);
    EXPECT_EQ(dispatch(p, effective_features(), false).impl->name, usual);
    // Nor a row whose features are missing.
    ::setenv("CONVGRAD_PREFER", "amx", 1);
    const dispatch_result none = dispatch(p, cpu_features{}, false);
    EXPECT_EQ(none.impl->isa, cpu_isa::generic) << none.impl->name;
    ::unsetenv("CONVGRAD_PREFER");
}

TEST(Inventory, DisableSkipsRowsByPrefix) {
    const conv_problem p = small_problem(conv_direction::bwd_data, data_type::f32);
    const std::string first = dispatch(p, effective_features(), false).impl->name;
    const std::string family = first.substr(0, first.find(':'));
    ::setenv("CONVGRAD_DISABLE", family.c_str(), 1);
    const dispatch_result r = dispatch(p, effective_features(), false);
    ::unsetenv("CONVGRAD_DISABLE");
    EXPECT_NE(std::string(r.impl->name).rfind(family, 0), 0u) << r.impl->name;
    bool reported = false;
    for (const auto &why : r.refusals)
        reported = reported || why == first + ": disabled by CONVGRAD_DISABLE";
    EXPECT_TRUE(reported);
}

}  // namespace
}  // namespace convgrad
