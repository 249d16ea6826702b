// Known answers for the six ops on tiny problems, worked out by hand.
#include <gtest/gtest.h>

#include "util/tensor_buffer.hpp"

namespace convgrad {
namespace {

using testing::tensor_buffer;

op make_op(op_kind k, dims strides, dims pb, dims pe, dims dl) {
    op o(0, k, "test");
    o.set_attr("strides", strides).set_attr("pads_begin", pb).set_attr("pads_end", pe);
    o.set_attr("dilations", dl).set_attr("data_format", std::string("NCX"));
    o.set_attr("weights_format", std::string(is_conv_transpose_family(k) ? "IOX" : "OIX"));
    return o;
}

// Runs a compiled op on the given input values; returns the output's values.
std::vector<double> run(const op &o, const std::vector<std::vector<double>> &in_values,
                        dims *out_shape = nullptr) {
    compiled_partition cp = compile_op(o);
    std::vector<tensor_buffer> ins;
    std::vector<tensor> in_t;
    for (size_t i = 0; i < cp.inputs().size(); ++i) {
        ins.emplace_back(cp.inputs()[i]);
        ins.back().fill_values(in_values[i]);
    }
    for (auto &b : ins) in_t.push_back(b.as_tensor());
    tensor_buffer out(cp.outputs()[0]);
    cp.execute(in_t, {out.as_tensor()});
    if (out_shape) *out_shape = cp.outputs()[0].shape();
    return out.values();
}

TEST(KnownAnswer, Convolution1D) {
    // src [1,1,5] = 1..5, w [1,1,3] = {1,0,-1}, stride 2, pads 1/1:
    // padded 0 1 2 3 4 5 0 -> windows (0,1,2),(2,3,4),(4,5,0): 0-2=-2, 2-4=-2, 4-0=4
    op o = make_op(op_kind::Convolution, {2}, {1}, {1}, {1});
    o.add_input(logical_tensor(0, data_type::f32, {1, 1, 5}));
    o.add_input(logical_tensor(1, data_type::f32, {1, 1, 3}));
    o.add_output(logical_tensor::unknown(2, data_type::f32));
    dims shape;
    auto y = run(o, {{1, 2, 3, 4, 5}, {1, 0, -1}}, &shape);
    EXPECT_EQ(shape, (dims{1, 1, 3}));
    EXPECT_EQ(y, (std::vector<double>{-2, -2, 4}));
}

TEST(KnownAnswer, GroupedConvTransposeFromOneDnnTests) {
    // oneDNN test_convtranspose.cpp: src [1,4,1,1], IOX [4,4,1,1], groups 2 -> dst [1,8,1,1].
    // src = {1,1,1,1}? Here: src {1,2,3,4}, weights V[ic][ocg] = 1 when ocg even else 0.
    // dst[g*4+ocg] = sum_{ic in group g} src[ic]*V[ic][ocg] -> g0: 1+2=3, g1: 3+4=7.
    op o = make_op(op_kind::ConvTranspose, {1, 1}, {0, 0}, {0, 0}, {1, 1});
    o.set_attr("groups", int64_t(2));
    o.add_input(logical_tensor(0, data_type::f32, {1, 4, 1, 1}));
    o.add_input(logical_tensor(1, data_type::f32, {4, 4, 1, 1}));
    o.add_output(logical_tensor::unknown(2, data_type::f32));
    std::vector<double> w(16);
    for (int ic = 0; ic < 4; ++ic)
        for (int oc = 0; oc < 4; ++oc) w[ic * 4 + oc] = oc % 2 == 0 ? 1 : 0;
    dims shape;
    auto y = run(o, {{1, 2, 3, 4}, w}, &shape);
    EXPECT_EQ(shape, (dims{1, 8, 1, 1}));
    EXPECT_EQ(y, (std::vector<double>{3, 0, 3, 0, 7, 0, 7, 0}));
}

TEST(KnownAnswer, DeconvJsonShapes) {
    // oneDNN's deconv.json: pads_end 41 larger than the output.
    op o = make_op(op_kind::ConvTranspose, {2, 2}, {0, 0}, {41, 41}, {1, 1});
    o.add_input(logical_tensor(0, data_type::f32, {1, 32, 28, 28}));
    o.add_input(logical_tensor(1, data_type::f32, {32, 128, 3, 3}));
    o.add_output(logical_tensor::unknown(2, data_type::f32));
    compiled_partition cp = compile_op(o);
    EXPECT_EQ(cp.outputs()[0].shape(), (dims{1, 128, 16, 16}));
}

}  // namespace
}  // namespace convgrad
