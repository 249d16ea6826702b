// The AMX instruction emulation (src/kernels/amx/amx_emulation.hpp): its f32 steps agree bit
// for bit with this CPU's FMA under DAZ + FTZ, its instructions follow the SDM pseudo-code, and
// it refuses what the hardware would fault on.
#include <gtest/gtest.h>

#include <cfloat>
#include <cstring>
#include <random>
#include <vector>

#include "amx_test_util.hpp"
#include "convgrad/types.hpp"
#include "core/float_convert.hpp"
#include "kernels/amx/amx_emulation.hpp"
#include "kernels/amx/amx_ukernel.hpp"

namespace convgrad::detail::amx {
namespace {

using namespace amx::test;

TEST(AmxEmulation, FmaStepMatchesHardwareFmaWithDazFtz) {
    if (!have_fma()) GTEST_SKIP() << "this CPU has no FMA to compare with";
    std::mt19937 rng(7);
    int compared = 0, flushed = 0;
    auto check = [&](float acc, float a, float b) {
        float hw;
        {
            daz_ftz_scope scope;
            hw = hw_fma(acc, a, b);
        }
        const float em = emu::fma_daz_ftz(acc, a, b);
        ASSERT_TRUE(same_result(hw, em)) << std::hexfloat << acc << " + " << a << " * " << b
                                         << ": hardware " << hw << ", emulation " << em;
        compared++;
        if (hw == 0 && acc != 0) flushed++;
    };
    for (int i = 0; i < 400000; ++i) {
        // products near 2^-126 (exponents sum to about 127 + bias) against accumulators near it
        const float a = edgy_float(rng, 40, 90), b = edgy_float(rng, 0, 90);
        const float acc = edgy_float(rng, -3, 3);
        check(acc, a, b);
        check(edgy_float(rng, 0, 254), edgy_float(rng, 0, 254),
              edgy_float(rng, 0, 254));  // anywhere
        // acc and the product nearly cancel: the result's exponent is far below both
        const float x = edgy_float(rng, 1, 30);
        check(-x, edgy_float(rng, 126, 128), x);
    }
    // Ties to even, overflow, signed zeros, infinities.
    check(1.0f, 0x1p-24f, 1.0f);
    check(1.0f, 0x1.8p-23f, 1.0f);
    check(FLT_MAX, FLT_MAX, 1.0f);
    check(-0.0f, 0.0f, -1.0f);
    check(-0.0f, -0.0f, 1.0f);
    check(INFINITY, -1.0f, INFINITY);
    // Just below the smallest normal: FLT_MIN - 7 * 2^-153 rounds (24 bits, unbounded exponent)
    // to FLT_MIN - 2^-150, tiny, so it is flushed, although rounding to the denormal grid would
    // give FLT_MIN. FLT_MIN - 3 * 2^-153 rounds to FLT_MIN: not tiny, kept.
    for (float sign : {1.0f, -1.0f}) {
        check(sign * FLT_MIN, sign * -7 * 0x1p-80f, 0x1p-73f);
        check(sign * FLT_MIN, sign * -3 * 0x1p-80f, 0x1p-73f);
    }
    EXPECT_EQ(emu::fma_daz_ftz(FLT_MIN, -7 * 0x1p-80f, 0x1p-73f), 0.0f);
    EXPECT_EQ(emu::fma_daz_ftz(FLT_MIN, -3 * 0x1p-80f, 0x1p-73f), FLT_MIN);
    EXPECT_GT(flushed, 1000) << "the data should reach the flush-to-zero threshold often";
    std::printf("%d f32 FMA steps compared with the hardware, %d flushed to zero\n", compared,
                flushed);
}

TEST(AmxEmulation, AddStepMatchesHardwareAddWithDazFtz) {
    std::mt19937 rng(8);
    for (int i = 0; i < 200000; ++i) {
        const float x = edgy_float(rng, -3, 4), y = edgy_float(rng, -3, 4);
        float hw;
        {
            daz_ftz_scope scope;
            hw = hw_add(x, y);
        }
        ASSERT_TRUE(same_result(hw, emu::add_daz_ftz(x, y))) << std::hexfloat << x << " + " << y;
    }
}

// A denormal bf16 input counts as zero; a denormal f16 input keeps its value (SDM).
TEST(AmxEmulation, DenormalInputsBf16FlushedF16Kept) {
    tile_config cfg;
    cfg.palette_id = 1;
    cfg.set(0, 1, 4);  // C: 1 x 1
    cfg.set(1, 1, 4);  // A: 1 x 1 pair
    cfg.set(2, 1, 4);  // B: 1 pair x 1
    emu::ldtilecfg(cfg);
    const float one = 1.0f;
    // bf16 pair (denormal 0x0001 = 2^-133, 1.0) . (1.0, 2^-10): the denormal product is dropped.
    const uint16_t a_bf16[2] = {0x0001, float_to_bf16(1.0f)},
                   b_bf16[2] = {float_to_bf16(1.0f), float_to_bf16(0x1p-10f)};
    float c = one;
    emu::tileloadd(0, &c, 4);
    emu::tileloadd(1, a_bf16, 4);
    emu::tileloadd(2, b_bf16, 4);
    emu::tdpbf16ps(0, 1, 2);
    emu::tilestored(0, &c, 4);
    EXPECT_EQ(c, 1.0f + 0x1p-10f);
    // f16: the smallest denormal 2^-24 times 2^-10 is 2^-34, a normal f32: kept.
    const uint16_t a_f16[2] = {0x0001, 0}, b_f16[2] = {float_to_f16(0x1p-10f), 0};
    c = 0;
    emu::tileloadd(0, &c, 4);
    emu::tileloadd(1, a_f16, 4);
    emu::tileloadd(2, b_f16, 4);
    emu::tdpfp16ps(0, 1, 2);
    emu::tilestored(0, &c, 4);
    EXPECT_EQ(c, 0x1p-34f);
    // A denormal f32 in C counts as zero when added to.
    c = float_of(0x00000005u);
    emu::tileloadd(0, &c, 4);
    emu::tdpfp16ps(0, 1, 2);
    emu::tilestored(0, &c, 4);
    EXPECT_EQ(c, 0x1p-34f);
    emu::tilerelease();
}

// The even products and the odd products are summed separately, then added to C (current SDM
// pseudo-code), which a sequential pair-by-pair sum would not reproduce.
TEST(AmxEmulation, EvenAndOddProductsSummedApart) {
    tile_config cfg;
    cfg.palette_id = 1;
    cfg.set(0, 1, 4);
    cfg.set(1, 1, 8);  // A: 2 pairs
    cfg.set(2, 2, 4);  // B: 2 pair rows
    emu::ldtilecfg(cfg);
    // even terms: 2^24, then 1; odd terms: -2^24, then 1. Separately: (2^24 + 1 -> 2^24) and
    // (-2^24 + 1 -> -2^24 + 1), sum 1. Sequentially: 2^24 - 2^24 + 1 + 1 = 2.
    const uint16_t a[4] = {float_to_bf16(0x1p24f), float_to_bf16(-0x1p24f), float_to_bf16(1.0f),
                           float_to_bf16(1.0f)};
    const uint16_t b[4] = {float_to_bf16(1.0f), float_to_bf16(1.0f), float_to_bf16(1.0f),
                           float_to_bf16(1.0f)};
    float c = 0;
    emu::tileloadd(0, &c, 4);
    emu::tileloadd(1, a, 8);
    emu::tileloadd(2, b, 4);
    emu::tdpbf16ps(0, 1, 2);
    emu::tilestored(0, &c, 4);
    EXPECT_EQ(c, 1.0f);
    emu::tilerelease();
}

TEST(AmxEmulation, LoadStoreUseStridesAndZeroTheRest) {
    tile_config cfg;
    cfg.palette_id = 1;
    cfg.set(3, 3, 12);  // 3 rows of 12 bytes
    emu::ldtilecfg(cfg);
    std::vector<uint8_t> src(3 * 40), dst(3 * 40, 0xee);
    for (size_t i = 0; i < src.size(); ++i) src[i] = uint8_t(i);
    emu::tileloadd(3, src.data(), 40);
    emu::tilestored(3, dst.data(), 40);
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 40; ++c)
            EXPECT_EQ(dst[size_t(r * 40 + c)], c < 12 ? src[size_t(r * 40 + c)] : 0xee)
                << r << "," << c;
    emu::tilezero(3);
    emu::tilestored(3, dst.data(), 40);
    EXPECT_EQ(dst[0], 0);
    emu::tilerelease();
    EXPECT_EQ(emu::current_config().palette_id, 0);
}

void expect_fault(const tile_config &cfg, const char *what) {
    try {
        emu::ldtilecfg(cfg);
        ADD_FAILURE() << "accepted: " << what;
    } catch (const error &e) {
        EXPECT_EQ(e.code(), status::invalid_arguments) << what;
        EXPECT_NE(std::string(e.what()).find("#GP"), std::string::npos) << e.what();
    }
    emu::tilerelease();
}

TEST(AmxEmulation, ConfigurationsTheHardwareFaultsOnAreErrors) {
    tile_config good;
    good.palette_id = 1;
    good.set(0, 16, 64);
    EXPECT_NO_THROW(check_tile_config(good));
    tile_config c = good;
    c.palette_id = 2;
    expect_fault(c, "palette 2");
    c = good;
    c.set(0, 17, 64);
    expect_fault(c, "17 rows");
    c = good;
    c.set(0, 16, 66);
    expect_fault(c, "66 bytes per row");
    c = good;
    c.set(1, 0, 4);
    expect_fault(c, "colsb without rows");
    c = good;
    c.set(1, 2, 0);
    expect_fault(c, "rows without colsb");
    c = good;
    c.set(8, 1, 4);
    expect_fault(c, "tile 8");
    c = good;
    c.reserved_0[3] = 1;
    expect_fault(c, "reserved byte");
}

TEST(AmxEmulation, InstructionsTheHardwareRejectsAreErrors) {
    emu::tilerelease();
    uint8_t buf[1024] = {};
    EXPECT_THROW(emu::tileloadd(0, buf, 64), error);  // no configuration
    tile_config cfg;
    cfg.palette_id = 1;
    cfg.set(0, 2, 8);  // C 2 x 2
    cfg.set(1, 2, 8);  // A 2 x 2 pairs
    cfg.set(2, 2, 8);  // B 2 pairs x 2
    cfg.set(3, 3, 8);  // B with 3 pair rows: does not chain with A
    emu::ldtilecfg(cfg);
    EXPECT_NO_THROW(emu::tdpbf16ps(0, 1, 2));
    EXPECT_THROW(emu::tdpbf16ps(0, 1, 3), error);
    EXPECT_THROW(emu::tdpbf16ps(0, 0, 2), error);  // C used as A
    EXPECT_THROW(emu::tdpfp16ps(0, 1, 5), error);  // unconfigured
    EXPECT_THROW(emu::tilezero(6), error);
    emu::tilerelease();
}

TEST(AmxEmulation, EveryMicrokernelConfigurationIsValid) {
    for (int M = 1; M <= 32; ++M)
        for (int N = 1; N <= 32; ++N)
            for (int pairs = 1; pairs <= 16; ++pairs) {
                const tile_config cfg = ukernel_config(M, N, pairs);
                ASSERT_NO_THROW(check_tile_config(cfg)) << M << "x" << N << " pairs " << pairs;
                ASSERT_NO_THROW(check_dot_product_tiles(cfg, 0, 4, 6));
                if (N > 16) {
                    ASSERT_NO_THROW(check_dot_product_tiles(cfg, 1, 4, 7));
                }
                if (M > 16) {
                    ASSERT_NO_THROW(check_dot_product_tiles(cfg, 2, 5, 6));
                }
                if (M > 16 && N > 16) {
                    ASSERT_NO_THROW(check_dot_product_tiles(cfg, 3, 5, 7));
                }
            }
}

}  // namespace
}  // namespace convgrad::detail::amx
