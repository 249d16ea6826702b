// A stride longer than the image plus a window, with several output pixels (begin pads as long;
// fuzz_op found a stride of 2^62 - 1 with such pads): at most one output pixel's window reaches
// src. The problem takes the shortest stride that keeps it so, with the pads to match
// (conv_problem::shorten_strides_past_image), and a kernel computes it. Checked by hand: 1-D
// NXC, 2 images, 3 -> 4 channels, a 5-tap kernel over 5 pixels, two output pixels; the first's
// window reads only padding, the second's starts `shift` pixels before src (0: the whole image;
// 2: its last three taps; 100: only padding too).
#include <gtest/gtest.h>

#include "core/resolve.hpp"
#include "util/conv_test_util.hpp"

namespace convgrad {
namespace {

using V = std::vector<double>;

constexpr dim_t N = 2, IC = 3, OC = 4, W = 5, huge = INT64_MAX / 2;

op make(op_kind k, dim_t shift) {
    const dims x{N, W, IC}, y{N, 2, OC}, w{W, IC, OC};  // NXC, XIO
    op o(0, k, "t");
    o.set_attr("strides", dims{huge}).set_attr("pads_begin", dims{huge + shift});
    o.set_attr("pads_end", dims{0}).set_attr("dilations", dims{1});
    o.set_attr("weights_format", std::string("XIO"));
    const logical_tensor X(0, data_type::f32, x), Y(1, data_type::f32, y), Wt(1, data_type::f32, w);
    if (k == op_kind::Convolution)
        o.add_input(X).add_input(Wt).add_output(logical_tensor::unknown(2, data_type::f32));
    else if (k == op_kind::ConvolutionBackwardData)
        o.add_input(logical_tensor(0, data_type::f32, y))
            .add_input(Wt)
            .add_output(logical_tensor(2, data_type::f32, x));
    else
        o.add_input(X).add_input(Y).add_output(logical_tensor(2, data_type::f32, w));
    return o;
}

TEST(StridePastImage, OneWindowReachesSrcAndAKernelComputesIt) {
    const V xv = testing::small_ints(N * W * IC, 1), yv = testing::small_ints(N * 2 * OC, 2),
            wv = testing::small_ints(W * IC * OC, 3);
    auto X = [&](dim_t n, dim_t iw, dim_t c) { return xv[size_t((n * W + iw) * IC + c)]; };
    auto Y = [&](dim_t n, dim_t c) { return yv[size_t((n * 2 + 1) * OC + c)]; };  // pixel 1
    auto Wt = [&](dim_t kw, dim_t ic, dim_t oc) { return wv[size_t((kw * IC + ic) * OC + oc)]; };
    for (dim_t shift : {0, 2, 100})
        for (op_kind k : {op_kind::Convolution, op_kind::ConvolutionBackwardData,
                          op_kind::ConvolutionBackwardWeights}) {
            SCOPED_TRACE(std::string(to_string(k)) + ", the second window " +
                         std::to_string(shift) + " pixels before src");
            // Tap kw of output pixel 1 reads src pixel kw - shift.
            auto reads = [&](dim_t kw) { return kw - shift >= 0 && kw - shift < W; };
            V want;
            if (k == op_kind::Convolution) {
                for (dim_t n = 0; n < N; ++n)
                    for (dim_t ow = 0; ow < 2; ++ow)
                        for (dim_t oc = 0; oc < OC; ++oc) {
                            double v = 0;
                            for (dim_t kw = 0; kw < W; ++kw)
                                for (dim_t ic = 0; ic < IC && ow == 1 && reads(kw); ++ic)
                                    v += X(n, kw - shift, ic) * Wt(kw, ic, oc);
                            want.push_back(v);
                        }
            } else if (k == op_kind::ConvolutionBackwardData) {
                for (dim_t n = 0; n < N; ++n)
                    for (dim_t iw = 0; iw < W; ++iw)
                        for (dim_t ic = 0; ic < IC; ++ic) {
                            double v = 0;
                            for (dim_t oc = 0; oc < OC && iw + shift < W; ++oc)  // tap iw + shift
                                v += Y(n, oc) * Wt(iw + shift, ic, oc);
                            want.push_back(v);
                        }
            } else {
                for (dim_t kw = 0; kw < W; ++kw)
                    for (dim_t ic = 0; ic < IC; ++ic)
                        for (dim_t oc = 0; oc < OC; ++oc) {
                            double v = 0;
                            for (dim_t n = 0; n < N && reads(kw); ++n)
                                v += X(n, kw - shift, ic) * Y(n, oc);
                            want.push_back(v);
                        }
            }
            const op o = make(k, shift);
            // The stride is the image plus a window, 10; output pixel 1's window where it was.
            const detail::conv_problem p = detail::resolve_op(o, o.inputs(), o.outputs()).prob;
            EXPECT_EQ(p.o[2], 2);
            EXPECT_EQ(p.s[2], 10);
            if (shift < W) {
                EXPECT_EQ(p.s[2] - p.pb[2], -shift);
            }
            const bool bwd_w = k == op_kind::ConvolutionBackwardWeights;
            const auto got =
                testing::run_op(o, {k == op_kind::Convolution || bwd_w ? xv : yv, bwd_w ? yv : wv});
            EXPECT_EQ(got.values, want);
            EXPECT_NE(got.cp.kernel_name(), "ref:any");
            const auto ref =
                testing::run_op(o, {k == op_kind::Convolution || bwd_w ? xv : yv, bwd_w ? yv : wv},
                                impl_choice::reference);
            EXPECT_EQ(ref.values, want);
        }
}

}  // namespace
}  // namespace convgrad
