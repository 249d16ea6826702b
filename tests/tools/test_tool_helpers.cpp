// The tool's helpers: benchdnn descriptors, fills that keep sums exact, and the comparison.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "check.hpp"
#include "desc.hpp"
#include "fill.hpp"
#include "runner.hpp"

using namespace convgrad;
using namespace convgrad::tool;

TEST(Desc, ConvDescriptors) {
    const conv_desc d = parse_desc("mb8ic64ih56oc256oh56kh1", false);
    EXPECT_EQ(d.nsp, 2);
    EXPECT_EQ(d.mb, 8);
    EXPECT_EQ(d.i[1], 56);
    EXPECT_EQ(d.i[2], 56);  // square by default
    EXPECT_EQ(d.k[2], 1);
    EXPECT_EQ(d.o[2], 56);
    EXPECT_EQ(d.str(), "g1mb8ic64ih56iw56oc256oh56ow56kh1kw1sh1sw1ph0pw0");
    // Output computed when absent; end pads implied by a given output.
    const conv_desc s2 = parse_desc("mb2ic3ih224oc64kh7sh2ph3", false);
    EXPECT_EQ(s2.o[1], 112);
    EXPECT_EQ(s2.pe[1], 3);
    const conv_desc pe = parse_desc("ic128ih56oc128oh28kh3sh2ph1", false);
    EXPECT_EQ(pe.pe[1], 0);  // (28-1)*2 + 3 - 1 - 56
    EXPECT_EQ(pe.mb, 2);     // benchdnn's default batch
    const conv_desc dil = parse_desc("mb1ic256ih33oc256oh33kh3ph6dh5", false);
    EXPECT_EQ(dil.dl[1], 5);
    EXPECT_EQ(dil.pe[1], 6);
    const conv_desc g = parse_desc("g32mb4ic256ih28oc256oh28kh3ph1n\"resnext\"", false);
    EXPECT_EQ(g.g, 32);
    EXPECT_EQ(g.name, "resnext");
    const conv_desc d3 = parse_desc("mb1ic4id8oc4od8kd3pd1", false);
    EXPECT_EQ(d3.nsp, 3);
    EXPECT_EQ(d3.i[0] * d3.i[1] * d3.i[2], 512);
    const conv_desc d1 = parse_desc("mb1ic4iw100oc4ow100kw3pw1", false);
    EXPECT_EQ(d1.nsp, 1);
    // The library's own descriptors parse, end pads included.
    const conv_desc lib = parse_desc("g1mb1ic32ih28iw28oc128oh15ow15kh3kw3sh2sw2ph0pw0_peh3_pew3", false);
    EXPECT_EQ(lib.pe[1], 3);
}

TEST(Desc, DeconvDescriptorsUseDeconvSizes) {
    const conv_desc d = parse_desc("mb32ic512ih8oc256oh16kh4sh2ph1", true);
    EXPECT_EQ(d.pe[1], 1);
    const conv_desc h = parse_desc("mb8ic512iw32oc256kw16sw8pw4", true);
    EXPECT_EQ(h.nsp, 1);
    EXPECT_EQ(h.o[2], 256);
    const op o = make_op(op_kind::ConvTransposeBackwardWeights, d, data_type::f32);
    const compiled_partition cp = compile_op(o, impl_choice::reference);
    EXPECT_EQ(cp.outputs()[0].shape(), (dims{4, 4, 256, 512}));  // XOI
    for (op_kind k : all_op_kinds) {
        const bool deconv = is_conv_transpose_family(k);
        const conv_desc p = parse_desc(deconv ? "g2mb2ic4ih5oc6oh11kh3sh2ph0" : "g2mb2ic4ih11oc6oh5kh3sh2ph0", deconv);
        const compiled_partition c = compile_op(make_op(k, p, data_type::f32), impl_choice::reference);
        EXPECT_GT(c.flops(), 0) << to_string(k);
    }
}

TEST(Desc, Errors) {
    EXPECT_THROW(parse_desc("mb2ih5oc4", false), error);          // no ic
    EXPECT_THROW(parse_desc("mb2ic4ih5oc4zz3", false), error);    // unknown key
    EXPECT_THROW(parse_desc("g3mb2ic4ih5oc6", false), error);     // groups do not divide
    EXPECT_THROW(parse_desc("mb2ic4ih5oc4oh1kh3", false), error); // inconsistent output
    EXPECT_THROW(parse_desc("mb2ic4ih5ih6oc4", false), error);    // key twice
}

// Sizes the descriptor's values imply that overflow int64 are a clear invalid_arguments error
// naming the axis, not a wrapped (and then accepted) size.
TEST(Desc, OverflowingValuesAreErrors) {
    const std::string max = "9223372036854775807";
    const struct {
        std::string desc;
        bool deconv;
    } cases[] = {
        {"mb2ic4ih5oc4kh3dh" + max, false},  // (k - 1) * (d + 1)
        {"mb2ic4ih5oc4kh3dh" + max, true},
        {"mb2ic4ih" + max + "oc4sh2", true},  // (i - 1) * s
        {"mb2ic4ih5oc4ph" + max, false},      // i + pb + pe
        {"mb2ic4ih5oc4oh3kh3ph" + max, false},
        {"mb2ic4ih5oc4oh" + max + "sh4", false},  // (o - 1) * s
        {"mb2ic4iw5oc4kw3dw4611686018427387904", false},  // 2 * (2^62 + 1)
    };
    for (const auto &c : cases) {
        try {
            parse_desc(c.desc, c.deconv);
            ADD_FAILURE() << c.desc << " was accepted";
        } catch (const error &e) {
            EXPECT_EQ(e.code(), status::invalid_arguments) << c.desc;
            const std::string what = e.what();
            EXPECT_NE(what.find("overflow 64-bit integers"), std::string::npos) << what;
            EXPECT_NE(what.find("problem descriptor '" + c.desc + "'"), std::string::npos) << what;
        }
    }
}

TEST(Desc, TermsPerOutput) {
    const std::string p = "g2mb3ic8ih10iw10oc4oh5ow5kh3kw3sh2sw2ph1pw1";
    EXPECT_EQ(terms_per_output(op_kind::Convolution, p), 4 * 9);
    EXPECT_EQ(terms_per_output(op_kind::ConvolutionBackwardData, p), 2 * 9);
    EXPECT_EQ(terms_per_output(op_kind::ConvTransposeBackwardWeights, p), 3 * 25);
}

TEST(Fill, RangesKeepSumsExact) {
    EXPECT_EQ(fill_for(data_type::f32, 100).bound, 32);
    EXPECT_EQ(fill_for(data_type::bf16, 100).bound, 4);
    const fill_spec big = fill_for(data_type::f32, 156800);
    EXPECT_LE(156800.0 * big.bound * big.bound, double(1 << 23));
    const fill_spec f16 = fill_for(data_type::f16, 5000);
    EXPECT_LE(5000.0 * f16.bound * f16.bound, 32768.0);
    EXPECT_LT(fill_for(data_type::f16, 1e6).density, 1.0);
    host_tensor t(logical_tensor(0, data_type::f32, {1000}));
    fill_ints(t, 3, {2, 1.0});
    for (double v : t.values()) {
        EXPECT_EQ(v, std::round(v));
        EXPECT_LE(std::abs(v), 2);
    }
}

TEST(HostTensor, StartsAtTheRequestedOffsetPastALine) {
    for (size_t off : {size_t(0), size_t(4), size_t(16), size_t(60)}) {
        host_tensor t(logical_tensor(0, data_type::f32, {300}), off);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data()) % 64, off);
        for (dim_t i = 0; i < t.count(); ++i) EXPECT_EQ(t.get(i), 0.0);  // zeroed, in bounds
        t.set(299, 7);
        EXPECT_EQ(t.get(299), 7.0);
    }
}

TEST(Check, ExactAndTolerances) {
    host_tensor a(logical_tensor(0, data_type::f32, {4})), b(logical_tensor(0, data_type::f32, {4}));
    for (int i = 0; i < 4; ++i) a.set(i, i * 100.0), b.set(i, i * 100.0);
    EXPECT_TRUE(compare(a, b, 10, true).pass);
    b.set(3, 300.0001);
    EXPECT_FALSE(compare(a, b, 10, true).pass);
    EXPECT_TRUE(compare(a, b, 10, false).pass);  // within a few ulps * sqrt(terms)
    b.set(3, 301);
    const check_result r = compare(a, b, 10, false);
    EXPECT_FALSE(r.pass);
    EXPECT_EQ(r.worst_index, 3);
    EXPECT_NE(r.summary().find("FAIL"), std::string::npos);
    host_tensor h(logical_tensor(0, data_type::bf16, {1})), e(logical_tensor(0, data_type::bf16, {1}));
    h.set(0, 256);
    e.set(0, 258);  // one bf16 ulp at 256
    EXPECT_TRUE(compare(h, e, 1, false).pass);
    EXPECT_FALSE(compare(h, e, 1, true).pass);
}

// `convgrad bench --stat`: the median of the executions' times, or the fastest.
TEST(Timing, SummarizesByMedianOrFastest) {
    EXPECT_EQ(summarize_ms({5.0, 1.0, 3.0}, timing_stat::median), 3.0);
    EXPECT_EQ(summarize_ms({5.0, 1.0, 3.0}, timing_stat::min), 1.0);
    EXPECT_EQ(summarize_ms({4.0, 8.0, 2.0, 6.0}, timing_stat::median),
              5.0);  // (even count: the middle two)
    EXPECT_EQ(summarize_ms({4.0, 8.0, 2.0, 6.0}, timing_stat::min), 2.0);
    EXPECT_EQ(summarize_ms({7.0}, timing_stat::min), 7.0);
}

TEST(Timing, RunsAWarmUpThenTheMinimumRepetitionsWithinNoBudget) {
    for (const timing_stat s : {timing_stat::median, timing_stat::min}) {
        int calls = 0;
        const double ms = time_ms([&] { ++calls; }, s, 4, 0.0);
        EXPECT_EQ(calls, 5);
        EXPECT_GE(ms, 0.0);
    }
}
