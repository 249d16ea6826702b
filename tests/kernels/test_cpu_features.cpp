// CPU features as a set: levels are not a chain (AMX does not imply AVX512_FP16, AVX512_BF16 does
// not imply AMX), availability is a subset test, and CONVGRAD_MAX_ISA caps by level name.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "dispatch/cpu_features.hpp"

namespace convgrad::detail {
namespace {

using f = cpu_feature;

TEST(CpuFeatures, LevelsNeedTheirOwnFeaturesOnly) {
    EXPECT_EQ(features_of(cpu_isa::generic), cpu_features{});
    EXPECT_TRUE(features_of(cpu_isa::avx512).contains(features_of(cpu_isa::avx2)));
    EXPECT_TRUE(features_of(cpu_isa::amx).has(f::amx_bf16));
    EXPECT_TRUE(features_of(cpu_isa::amx).has(f::amx_tile));
    EXPECT_FALSE(features_of(cpu_isa::amx).has(f::avx512_fp16));
    // (AVX512_BF16, which every AMX-BF16 CPU has: the AMX unit rounds with VCVTNE2PS2BF16.)
    EXPECT_TRUE(features_of(cpu_isa::amx).has(f::avx512_bf16));
    EXPECT_FALSE(features_of(cpu_isa::avx512_fp16).has(f::avx512_bf16));
    EXPECT_FALSE(features_of(cpu_isa::avx512_bf16).has(f::amx_tile));
}

// The two machines the project runs on, and a third that the old linear order got wrong.
const cpu_features avx512_base = features_of(cpu_isa::avx512);
const cpu_features zen4 = avx512_base | cpu_features{f::avx512_bf16};
const cpu_features granite_rapids =
    zen4 | cpu_features{f::avx512_fp16, f::amx_tile, f::amx_bf16, f::amx_fp16};
const cpu_features amx_without_fp16 = zen4 | cpu_features{f::amx_tile, f::amx_bf16};

TEST(CpuFeatures, BestLevelIsTheLastWhoseFeaturesArePresent) {
    EXPECT_EQ(best_isa(cpu_features{}), cpu_isa::generic);
    EXPECT_EQ(best_isa(cpu_features{f::avx2, f::fma}), cpu_isa::generic);  // no F16C: not the avx2 level
    EXPECT_EQ(best_isa(features_of(cpu_isa::avx2)), cpu_isa::avx2);
    EXPECT_EQ(best_isa(zen4), cpu_isa::avx512_bf16);
    EXPECT_EQ(best_isa(granite_rapids), cpu_isa::amx);
    // AMX without AVX512_FP16 is still AMX (a linear order called this machine avx512_bf16).
    EXPECT_EQ(best_isa(amx_without_fp16), cpu_isa::amx);
    EXPECT_FALSE(amx_without_fp16.contains(features_of(cpu_isa::avx512_fp16)));
}

TEST(CpuFeatures, CapAllowsTheNamedLevelAndEveryLevelBefore) {
    EXPECT_EQ(granite_rapids & cap_features(cpu_isa::generic), cpu_features{});
    EXPECT_EQ(best_isa(granite_rapids & cap_features(cpu_isa::avx2)), cpu_isa::avx2);
    EXPECT_EQ(best_isa(granite_rapids & cap_features(cpu_isa::avx512)), cpu_isa::avx512);
    EXPECT_EQ(best_isa(granite_rapids & cap_features(cpu_isa::avx512_bf16)), cpu_isa::avx512_bf16);
    EXPECT_FALSE((granite_rapids & cap_features(cpu_isa::avx512_fp16)).has(f::amx_tile));
    EXPECT_EQ(granite_rapids & cap_features(cpu_isa::amx), granite_rapids);
    // A cap never adds what the CPU lacks.
    EXPECT_EQ(zen4 & cap_features(cpu_isa::amx), zen4);
}

// The kernel tests run once per distinct cap (tests/isa_caps.cmake): a cap above what the CPU
// has would repeat the run of the level below it.
TEST(CpuFeatures, CapsThatAllowTheSameFeaturesAreListedOnce) {
    using enum cpu_isa;
    const std::vector<cpu_isa> levels{generic, avx2, avx512, avx512_bf16, amx};
    const cpu_features zen3 = features_of(avx2);
    EXPECT_EQ(distinct_caps(levels, zen3), (std::vector<cpu_isa>{generic, avx2}));
    EXPECT_EQ(distinct_caps(levels, zen4),
              (std::vector<cpu_isa>{generic, avx2, avx512, avx512_bf16}));
    EXPECT_EQ(distinct_caps(levels, granite_rapids), levels);
    EXPECT_EQ(distinct_caps(levels, amx_without_fp16), levels);
    // AVX2 without F16C allows nothing a kernel level needs beyond generic, but its caps still
    // differ in the features they allow: they are kept.
    EXPECT_EQ(distinct_caps(levels, cpu_features{cpu_feature::avx2, cpu_feature::fma}),
              (std::vector<cpu_isa>{generic, avx2}));
    EXPECT_EQ(distinct_caps(levels, cpu_features{}), (std::vector<cpu_isa>{generic}));
}

// The AMX tests run again under cap avx512_fp16 only where it refuses something: AMX.
TEST(CpuFeatures, ACapWithholdsOnlyWhatTheCpuHasBeyondIt) {
    using enum cpu_isa;
    EXPECT_TRUE(cap_withholds(avx512_fp16, granite_rapids));
    EXPECT_TRUE(cap_withholds(avx512_fp16, amx_without_fp16));
    EXPECT_FALSE(cap_withholds(avx512_fp16, zen4));
    EXPECT_FALSE(cap_withholds(avx512_fp16, features_of(avx2)));
    EXPECT_TRUE(cap_withholds(generic, features_of(avx2)));
    EXPECT_TRUE(cap_withholds(avx2, zen4));
    EXPECT_FALSE(cap_withholds(amx, granite_rapids));
    EXPECT_FALSE(cap_withholds(generic, cpu_features{}));
}

TEST(CpuFeatures, NamesParseAndPrint) {
    for (int i = 0; i < cpu_isa_count; ++i) {
        cpu_isa back;
        ASSERT_TRUE(parse_cpu_isa(to_string(cpu_isa(i)), back));
        EXPECT_EQ(back, cpu_isa(i));
    }
    cpu_isa x;
    EXPECT_TRUE(parse_cpu_isa("AVX512_BF16", x));
    EXPECT_FALSE(parse_cpu_isa("avx1024", x));
    EXPECT_EQ(cpu_features({f::avx2, f::amx_fp16}).to_string(), "avx2 amx_fp16");
    EXPECT_EQ(cpu_features::from_missing(zen4, avx512_base).to_string(), "avx512_bf16");
}

// AMX needs three things: CPUID's AMX bits, the tile state enabled in XCR0, and the OS's grant of
// tile data to the process. The permission request is a parameter, so its refusal is tested on
// any machine.
constexpr unsigned amx_tile_bit = 1u << 24, amx_bf16_bit = 1u << 22, amx_fp16_bit = 1u << 21;
constexpr uint64_t tile_state = 3ull << 17;
int permission_asked = 0;
bool grant() {
    ++permission_asked;
    return true;
}
bool refuse() {
    ++permission_asked;
    return false;
}

TEST(CpuFeatures, AmxNeedsTheOsPermissionAndARefusalLeavesItOut) {
    amx_permission answer;
    permission_asked = 0;
    EXPECT_EQ(amx_features(amx_tile_bit | amx_bf16_bit, amx_fp16_bit, tile_state, grant, answer),
              (cpu_features{f::amx_tile, f::amx_bf16, f::amx_fp16}));
    EXPECT_EQ(answer, amx_permission::granted);
    EXPECT_EQ(amx_features(amx_tile_bit | amx_bf16_bit, 0, tile_state, refuse, answer), cpu_features{});
    EXPECT_EQ(answer, amx_permission::refused);
    EXPECT_EQ(permission_asked, 2);
    // Nothing to ask for without the CPUID bit or without the tile state in XCR0.
    EXPECT_EQ(amx_features(0, 0, tile_state, grant, answer), cpu_features{});
    EXPECT_EQ(answer, amx_permission::not_asked);
    EXPECT_EQ(amx_features(amx_tile_bit | amx_bf16_bit, 0, 1ull << 17, grant, answer), cpu_features{});
    EXPECT_EQ(answer, amx_permission::not_asked);
    EXPECT_EQ(permission_asked, 2);
    EXPECT_NE(std::string(to_string(amx_permission::refused)).find("refused"), std::string::npos);
    // This process: AMX is among the detected features exactly when the OS granted it.
    EXPECT_EQ(detected_features().has(f::amx_tile), amx_permission_status() == amx_permission::granted);
}

// What runs here agrees with the cap in force (the ctest ISA-cap runs set CONVGRAD_MAX_ISA).
TEST(CpuFeatures, EffectiveIsDetectedWithinTheCap) {
    EXPECT_TRUE(detected_features().contains(effective_features()));
    for (int i = 0; i < cpu_isa_count; ++i)
        EXPECT_EQ(isa_available(cpu_isa(i)), effective_features().contains(features_of(cpu_isa(i))));
    std::printf("detected: %s\neffective: %s\n", detected_features().to_string().c_str(),
                effective_features().to_string().c_str());
}

// The one place that says whether vdpbf16ps outruns the f32 FMA (dispatch of the
// direct_bf16dot row): AMD Zen 4 and later yes, Intel no, unknown no; CONVGRAD_BF16_DOT forces.
TEST(CpuFeatures, Bf16DotSpeedByVendorFamilyAndOverride) {
    EXPECT_TRUE(decide_bf16_dot("AuthenticAMD", 0x19, nullptr).fast);  // Zen 4
    EXPECT_TRUE(decide_bf16_dot("AuthenticAMD", 0x1a, nullptr).fast);  // Zen 5
    EXPECT_TRUE(decide_bf16_dot("AuthenticAMD", 0x19, nullptr).reason.empty());
    EXPECT_FALSE(decide_bf16_dot("AuthenticAMD", 0x17, nullptr).fast);  // Zen 2: no such speed
    const bf16_dot_speed intel = decide_bf16_dot("GenuineIntel", 6, nullptr);
    EXPECT_FALSE(intel.fast);
    EXPECT_NE(intel.reason.find("not faster than the f32 FMA"), std::string::npos) << intel.reason;
    EXPECT_NE(intel.reason.find("CONVGRAD_BF16_DOT=1"), std::string::npos) << intel.reason;
    EXPECT_FALSE(decide_bf16_dot("SomeOtherCPU", 6, nullptr).fast);
    EXPECT_FALSE(decide_bf16_dot("SomeOtherCPU", 6, nullptr).reason.empty());
    // The override wins both ways; anything else is ignored.
    EXPECT_TRUE(decide_bf16_dot("GenuineIntel", 6, "1").fast);
    EXPECT_FALSE(decide_bf16_dot("AuthenticAMD", 0x19, "0").fast);
    EXPECT_NE(decide_bf16_dot("AuthenticAMD", 0x19, "0").reason.find("CONVGRAD_BF16_DOT=0"),
              std::string::npos);
    EXPECT_TRUE(decide_bf16_dot("AuthenticAMD", 0x19, "yes").fast);
    EXPECT_FALSE(decide_bf16_dot("GenuineIntel", 6, "").fast);
}

}  // namespace
}  // namespace convgrad::detail
