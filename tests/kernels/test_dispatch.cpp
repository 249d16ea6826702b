// Dispatch: no problem silently falls back to the reference, every optimized kernel declines with
// a reason, and the chosen kernel matches the instruction set in force (CONVGRAD_MAX_ISA).
#include <gtest/gtest.h>

#include "convgrad/convgrad.hpp"
#include "dispatch/registry.hpp"

namespace convgrad {
namespace {

struct layer {
    dim_t mb, g, ic, oc, ih, k, s, p, dl;
    bool transposed = false;
};

op make(op_kind kind, const layer &l) {
    const dim_t ke = (l.k - 1) * l.dl + 1;
    const dim_t oh = l.transposed ? l.s * (l.ih - 1) + ke - 2 * l.p : (l.ih + 2 * l.p - ke) / l.s + 1;
    const dims x{l.mb, l.ih, l.ih, l.ic}, y{l.mb, oh, oh, l.oc};
    const dims w = l.transposed ? dims{l.k, l.k, l.oc / l.g, l.ic} : dims{l.k, l.k, l.ic / l.g, l.oc};
    op o(0, kind);
    o.set_attr("strides", dims{l.s, l.s}).set_attr("pads_begin", dims{l.p, l.p});
    o.set_attr("pads_end", dims{l.p, l.p}).set_attr("dilations", dims{l.dl, l.dl}).set_attr("groups", l.g);
    const bool fwd = kind == op_kind::Convolution || kind == op_kind::ConvTranspose;
    const bool bwd_d = kind == op_kind::ConvolutionBackwardData || kind == op_kind::ConvTransposeBackwardData;
    if (fwd) o.add_input(logical_tensor(0, data_type::f32, x)).add_input(logical_tensor(1, data_type::f32, w));
    if (bwd_d) o.add_input(logical_tensor(0, data_type::f32, y)).add_input(logical_tensor(1, data_type::f32, w));
    if (!fwd && !bwd_d) {
        o.add_input(logical_tensor(0, data_type::f32, x)).add_input(logical_tensor(1, data_type::f32, y));
        o.add_output(logical_tensor(2, data_type::f32, w));
    } else if (kind == op_kind::ConvolutionBackwardData) {
        o.add_output(logical_tensor(2, data_type::f32, x));
    } else {
        o.add_output(logical_tensor::unknown(2, data_type::f32));
    }
    return o;
}

TEST(Dispatch, SuiteLikeLayersGetOptimizedKernels) {
    const layer layers[] = {
        {2, 1, 64, 64, 14, 3, 1, 1, 1, false},    {2, 1, 3, 64, 30, 7, 2, 3, 1, false},
        {2, 32, 128, 128, 8, 3, 1, 1, 1, false},  {2, 144, 144, 144, 8, 3, 2, 1, 1, false},
        {2, 1, 32, 32, 9, 3, 1, 2, 2, false},     {2, 1, 64, 32, 4, 4, 2, 1, 1, true},
        {2, 16, 16, 16, 4, 4, 2, 1, 1, true},
    };
    const std::string isa = detail::to_string(detail::effective_isa());
    for (const layer &l : layers)
        for (op_kind k : all_op_kinds) {
            if (is_conv_transpose_family(k) != l.transposed) continue;
            const compiled_partition cp = compile_op(make(k, l));
            EXPECT_NE(cp.kernel_name(), "ref:any") << to_string(k) << " " << cp.problem_desc();
            if (detail::isa_available(detail::cpu_isa::avx512)) {
                EXPECT_NE(cp.kernel_name().find("avx512"), std::string::npos) << cp.kernel_name();
            } else if (detail::isa_available(detail::cpu_isa::avx2)) {
                EXPECT_NE(cp.kernel_name().find("avx2"), std::string::npos) << cp.kernel_name();
            }
        }
}

// Groups of one input channel and several outputs: the depthwise kernel copies the input
// into planes, one per output of a group, which a 3x3 kernel's nine taps read but a 1x1
// kernel's one tap does not pay for (kernels/dw_kernels.cpp, dw_why_not).
TEST(Dispatch, DepthwisePlanesOnlyForMoreThanOneTap) {
    const layer one_tap{2, 16, 16, 96, 8, 1, 1, 0, 1, false};
    const layer nine_taps{2, 16, 16, 96, 8, 3, 1, 1, 1, false};
    const bool vectors = detail::isa_available(detail::cpu_isa::avx2);
    for (op_kind k : {op_kind::Convolution, op_kind::ConvolutionBackwardData,
                      op_kind::ConvolutionBackwardWeights}) {
        const std::string one = compile_op(make(k, one_tap)).kernel_name();
        const std::string nine = compile_op(make(k, nine_taps)).kernel_name();
        EXPECT_NE(one.rfind("depthwise", 0), 0u) << to_string(k) << ": " << one;
        EXPECT_NE(one, "ref:any") << to_string(k);
        if (vectors) {
            EXPECT_EQ(nine.rfind("depthwise", 0), 0u) << to_string(k) << ": " << nine;
        }
    }
}

TEST(Dispatch, ReferenceOnRequestAndRefusalsHaveReasons) {
    const compiled_partition cp = compile_op(make(op_kind::Convolution, {1, 1, 8, 8, 5, 3, 1, 1, 1, false}),
                                             impl_choice::reference);
    EXPECT_EQ(cp.kernel_name(), "ref:any");
    detail::conv_problem p;  // a plain 1-group problem: the grouped kernels decline it
    for (const auto &impl : detail::impl_list()) {
        const std::string why = impl.why_not(p);
        if (std::string(impl.name).rfind("grouped", 0) == 0) {
            EXPECT_FALSE(why.empty()) << impl.name;
        }
    }
    EXPECT_EQ(std::string(detail::impl_list().back().name), "ref:any");
}

}  // namespace
}  // namespace convgrad
