// benchdnn's graph rewrites (--dt, --mb, --in-shapes, --op-attrs) on JSON documents (the tool's
// tools/rewrite.*), and the reproducers of issue 11 for their bad input.
#include <gtest/gtest.h>

#include <algorithm>

#include "../io/io_test_util.hpp"
#include "rewrite.hpp"

using namespace convgrad;
using namespace convgrad::tool;

namespace {

// conv_2d.json's shape: src [2,32,28,28] with channels-last strides, weights OIX [128,32,2,2].
json::document conv_doc(op_kind kind = op_kind::Convolution) {
    op o(0, kind, "CONV_0");
    o.set_attr("strides", dims{2, 2})
        .set_attr("pads_begin", dims{0, 0})
        .set_attr("pads_end", dims{0, 0})
        .set_attr("dilations", dims{1, 1})
        .set_attr("auto_pad", std::string("None"))
        .set_attr("groups", int64_t(1))
        .set_attr("data_format", std::string("NCX"))
        .set_attr("weights_format", std::string("OIX"));
    if (kind == op_kind::Convolution) {
        o.add_input(logical_tensor(0, data_type::f32, {2, 32, 28, 28}, {25088, 1, 896, 32}))
            .add_input(logical_tensor(1, data_type::f32, {128, 32, 2, 2}, property_type::constant))
            .add_output(logical_tensor(2, data_type::f32, {2, 128, 14, 14}));
    } else {  // ConvolutionBackwardWeights
        o.set_attr("weights_shape", dims{128, 32, 2, 2});
        o.add_input(logical_tensor(0, data_type::f32, {2, 32, 28, 28}))
            .add_input(logical_tensor(1, data_type::f32, {2, 128, 14, 14}))
            .add_output(logical_tensor(2, data_type::f32, {128, 32, 2, 2}));
    }
    json::document d;
    d.ops.push_back(o);
    d.attr_order.push_back({"strides", "pads_begin"});
    return d;
}

void expect_error(json::document d, const rewrite_options &o,
                  const std::vector<std::string> &needles) {
    try {
        apply_rewrite(d, o);
    } catch (const error &e) {
        EXPECT_EQ(e.code(), status::invalid_arguments);
        for (const auto &n : needles)
            EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what();
        return;
    }
    ADD_FAILURE() << "no error";
}

}  // namespace

TEST(Rewrite, DimsAndTags) {
    EXPECT_EQ(parse_dims("2x28x28x32", "t"), (dims{2, 28, 28, 32}));
    EXPECT_EQ(parse_dims("7", "t"), (dims{7}));
    EXPECT_THROW(parse_dims("2x", "t"), error);
    EXPECT_THROW(parse_dims("2*3", "t"), error);
    EXPECT_EQ(tag_strides({2, 32, 28, 28}, "abcd"), (dims{25088, 784, 28, 1}));
    EXPECT_EQ(tag_strides({2, 32, 28, 28}, "acdb"), (dims{25088, 1, 896, 32}));
    EXPECT_EQ(tag_strides({2, 16, 5, 5, 5}, "acdeb"), (dims{2000, 1, 400, 80, 16}));
    EXPECT_EQ(tag_strides({2, 3, 4}, "cba"), (dims{1, 2, 6}));
    EXPECT_THROW(tag_strides({2, 3, 4}, "abd"), error);
    EXPECT_THROW(tag_strides({2, 3, 4}, "aab"), error);
    EXPECT_THROW(tag_strides({2, 3, 4}, "abcd"), error);
    EXPECT_EQ(strides_tag({2, 32, 28, 28}, {25088, 1, 896, 32}), "acdb");
    EXPECT_EQ(strides_tag({128, 32, 1, 1}, {32, 1, 1, 1}), "abcd");  // ties keep logical order
    EXPECT_EQ(strides_tag({2, 3}, {unknown_dim, 1}), "");
}

TEST(Rewrite, NothingGivenChangesNothing) {
    json::document d = conv_doc();
    EXPECT_TRUE(apply_rewrite(d, {}).empty());
    EXPECT_TRUE(d.ops[0].outputs()[0].has_known_shape());
}

TEST(Rewrite, InShapesKeepTheFilesMemoryOrderAtTheSameRank) {
    json::document d = conv_doc();
    rewrite_options o;
    o.in_shapes = "0:2x28x28x32";
    apply_rewrite(d, o);
    const logical_tensor &src = d.ops[0].inputs()[0];
    EXPECT_EQ(src.shape(), (dims{2, 28, 28, 32}));
    EXPECT_EQ(src.strides(), tag_strides({2, 28, 28, 32}, "acdb"));
    // Outputs are inferred again.
    EXPECT_EQ(d.ops[0].outputs()[0].ndims(), -1);
    EXPECT_EQ(d.ops[0].outputs()[0].dtype(), data_type::f32);
}

TEST(Rewrite, InShapesWithTagOrNewRank) {
    json::document d = conv_doc();
    rewrite_options o;
    o.in_shapes = "0:2x16x5x5x5+1:16x16x3x3x3*acdeb";
    apply_rewrite(d, o);
    EXPECT_EQ(d.ops[0].inputs()[0].strides(), dense_strides({2, 16, 5, 5, 5}));  // new rank: plain
    EXPECT_EQ(d.ops[0].inputs()[1].strides(), tag_strides({16, 16, 3, 3, 3}, "acdeb"));
    EXPECT_EQ(d.ops[0].inputs()[1].property(), property_type::constant);
    json::document t = conv_doc();
    o.in_shapes = "0:abcd";  // a tag alone
    apply_rewrite(t, o);
    EXPECT_EQ(t.ops[0].inputs()[0].shape(), (dims{2, 32, 28, 28}));
    EXPECT_EQ(t.ops[0].inputs()[0].strides(), dense_strides({2, 32, 28, 28}));
}

TEST(Rewrite, MbOnlyWhereBenchdnnAppliesIt) {
    json::document d = conv_doc();
    rewrite_options o;
    o.mb = 4;
    EXPECT_TRUE(apply_rewrite(d, o).empty());
    EXPECT_EQ(d.ops[0].inputs()[0].shape(), (dims{4, 32, 28, 28}));
    EXPECT_EQ(d.ops[0].inputs()[0].strides(), tag_strides({4, 32, 28, 28}, "acdb"));
    EXPECT_EQ(d.ops[0].inputs()[1].shape(), (dims{128, 32, 2, 2}));  // weights keep theirs

    json::document w = conv_doc(op_kind::ConvolutionBackwardWeights);
    const auto notes = apply_rewrite(w, o);
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_NE(notes[0].find("--mb is not applied"), std::string::npos);
    EXPECT_EQ(w.ops[0].inputs()[0].shape()[0], 2);
    EXPECT_FALSE(mb_applies(op_kind::ConvolutionBackwardData, 0));
    EXPECT_FALSE(mb_applies(op_kind::ConvTransposeBackwardWeights, 0));
    EXPECT_TRUE(mb_applies(op_kind::ConvTransposeBackwardData, 0));
    EXPECT_TRUE(mb_applies(op_kind::ConvTranspose, 0));
    EXPECT_FALSE(mb_applies(op_kind::Convolution, 1));
}

TEST(Rewrite, DataType) {
    json::document d = conv_doc();
    rewrite_options o;
    o.dt = data_type::bf16;
    apply_rewrite(d, o);
    for (const auto &lt : d.ops[0].inputs()) EXPECT_EQ(lt.dtype(), data_type::bf16);
    EXPECT_EQ(d.ops[0].outputs()[0].dtype(), data_type::bf16);
    EXPECT_EQ(d.ops[0].inputs()[0].strides(), (dims{25088, 1, 896, 32}));
    o.dt = data_type::s32;
    expect_error(conv_doc(), o, {"--dt", "s32"});
}

TEST(Rewrite, OpAttrsTakeTheAttributesTypes) {
    json::document d = conv_doc();
    rewrite_options o;
    o.op_attrs = "0:strides:1x1*auto_pad:SAME_UPPER*groups:2*data_format:NXC*dilations:2x2";
    apply_rewrite(d, o);
    const op &c = d.ops[0];
    EXPECT_EQ(std::get<std::vector<int64_t>>(*c.find_attr("strides")), (dims{1, 1}));
    EXPECT_EQ(std::get<std::string>(*c.find_attr("auto_pad")), "SAME_UPPER");
    EXPECT_EQ(std::get<int64_t>(*c.find_attr("groups")), 2);
    EXPECT_EQ(std::get<std::string>(*c.find_attr("data_format")), "NXC");
    // New attributes get the type the schema uses, and are written after the file's ones.
    json::document e = conv_doc();
    o.op_attrs = "0:output_padding:1x1*filter_format:XIO";
    apply_rewrite(e, o);
    EXPECT_EQ(std::get<std::vector<int64_t>>(*e.ops[0].find_attr("output_padding")), (dims{1, 1}));
    EXPECT_EQ(std::get<std::string>(*e.ops[0].find_attr("weights_format")), "XIO");
    const auto &ord = e.attr_order[0];
    EXPECT_NE(std::find(ord.begin(), ord.end(), "output_padding"), ord.end());
}

TEST(Rewrite, ResultCompilesWithInferredOutput) {
    json::document d = conv_doc();
    rewrite_options o;
    o.in_shapes = "0:2x28x28x32+1:1x1x32x128";
    o.op_attrs = "0:data_format:NXC*weights_format:XIO";
    apply_rewrite(d, o);
    const compiled_partition cp = compile_op(d.ops[0], impl_choice::reference);
    EXPECT_EQ(cp.outputs()[0].shape(), (dims{2, 14, 14, 128}));
}

TEST(RewriteErrors, EveryBadOption) {
    rewrite_options o;
    o.in_shapes = "5:1x2x3x4";
    expect_error(conv_doc(), o, {"--in-shapes", "tensor 5 is not an input", "inputs: 0, 1"});
    o.in_shapes = "2:1x2x3x4";  // an output
    expect_error(conv_doc(), o, {"tensor 2 is not an input"});
    o.in_shapes = "0-1x2";
    expect_error(conv_doc(), o, {"expected ID:SHAPE"});
    o.in_shapes = "x:1x2";
    expect_error(conv_doc(), o, {"'x' is not an id"});
    o.in_shapes = "0:1x2x3x4*abce";
    expect_error(conv_doc(), o, {"format tag 'abce'"});
    o.in_shapes = "0:1x2x3x4*";
    expect_error(conv_doc(), o, {"SHAPE*TAG"});
    o.in_shapes = "0:1x2yx3";
    expect_error(conv_doc(), o, {"not a shape"});
    o = {};
    o.op_attrs = "3:strides:1x1";
    expect_error(conv_doc(), o, {"no op with id 3"});
    o.op_attrs = "0:strides";
    expect_error(conv_doc(), o, {"NAME:VALUE"});
    o.op_attrs = "0:groups:two";
    expect_error(conv_doc(), o, {"attribute 'groups'", "'two' is not a valid s64"});
    o.op_attrs = "0:strides:1xx1";
    expect_error(conv_doc(), o, {"'1xx1' is not a valid s64[]"});
    o = {};
    o.mb = -1;
    expect_error(conv_doc(), o, {"--mb", ">= 0", "got -1"});
}

namespace {

using convgrad::testing::conv_json;

rewrite_options shapes(const std::string &s) {
    rewrite_options o;
    o.in_shapes = s;
    return o;
}

TEST(RewriteBadInput, InShapesNumbersTooLarge) {
    json::document d = json::parse(conv_json, "c.json");
    convgrad::testing::expect_error(
        [&] { apply_rewrite(d, shapes("0:99999999999999999999x32x28x28")); },
        status::invalid_arguments, {"--in-shapes", "99999999999999999999", "64-bit"});
    convgrad::testing::expect_error(
        [&] { apply_rewrite(d, shapes("99999999999999999999999:1x2")); }, status::invalid_arguments,
        {"--in-shapes", "99999999999999999999999", "64-bit"});
    // Strides of a format tag that overflow: checked like the dense ones.
    convgrad::testing::expect_error(
        [&] { apply_rewrite(d, shapes("0:4611686018427387904x3x4x4*acdb")); },
        status::invalid_arguments, {"--in-shapes", "does not fit in int64"});
}

TEST(RewriteBadInput, MbThatOverflowsTheStrides) {
    json::document d = json::parse(conv_json, "c.json");
    rewrite_options o;
    o.mb = dim_t(1) << 62;  // (the CLI test uses the 58546812335685632 on conv_3d.json)
    convgrad::testing::expect_error([&] { apply_rewrite(d, o); }, status::out_of_memory,
                                    {"--mb 4611686018427387904", "tensor 0", "int64"});
}

TEST(RewriteBadInput, MbZeroIsAValidBatch) {
    json::document d = json::parse(conv_json, "c.json");
    rewrite_options o;
    o.mb = 0;
    apply_rewrite(d, o);
    EXPECT_EQ(d.ops[0].inputs()[0].shape()[0], 0);
}

}  // namespace
