// One test per error rule: the op schema (src/core/op_schema.cpp), shape inference and
// validation (src/core/resolve.cpp), execution (src/api/execute.cpp), graphs (src/api/graph.cpp)
// and size arithmetic. Each asserts the convgrad::error status code and that the message names
// the op (kind and id), the tensor or attribute, and holds the expected and actual values.
// Nothing may crash: every failure is a convgrad::error.
#include <gtest/gtest.h>

#include <functional>

#include "util/conv_test_util.hpp"

namespace convgrad {
namespace {

using testing::tensor_buffer;

constexpr data_type f32 = data_type::f32;
constexpr size_t op_id = 42;

logical_tensor lt(size_t id, dims shape, data_type dt = f32) { return logical_tensor(id, dt, shape); }
logical_tensor unk(size_t id, data_type dt = f32) { return logical_tensor::unknown(id, dt); }

std::string detail_str(const dims &d) {
    std::string s = "[";
    for (size_t i = 0; i < d.size(); ++i) {
        if (i) s += ",";
        s += std::to_string(d[i]);
    }
    s += "]";
    return s;
}

// A valid 1-D NCX op of each kind (OIX / IOX weights), id 42:
//   Convolution               src [1,4,8] * OIX [6,4,3] -> dst [1,6,6]
//   ConvolutionBackwardData   diff_dst [1,6,6], OIX [6,4,3] -> diff_src [1,4,8]
//   ConvolutionBackwardWeights src [1,4,8], diff_dst [1,6,6] -> OIX [6,4,3] (weights_shape)
//   ConvTranspose             src [1,4,6] * IOX [4,6,3] -> dst [1,6,8]
//   ConvTransposeBackwardData diff_dst [1,6,8], IOX [4,6,3] -> diff_src [1,4,6]
//   ConvTransposeBackwardWeights src [1,4,6], diff_dst [1,6,8] -> IOX [4,6,3] (weights_shape)
op base(op_kind k) {
    op o = testing::make_conv_op(k, {1}, {0}, {0}, {1}, true, op_id);
    switch (k) {
        case op_kind::Convolution: o.add_input(lt(0, {1, 4, 8})).add_input(lt(1, {6, 4, 3})); break;
        case op_kind::ConvolutionBackwardData:
            o.add_input(lt(0, {1, 6, 6})).add_input(lt(1, {6, 4, 3}));
            break;
        case op_kind::ConvolutionBackwardWeights:
            o.add_input(lt(0, {1, 4, 8})).add_input(lt(1, {1, 6, 6}));
            o.set_attr("weights_shape", dims{6, 4, 3});
            break;
        case op_kind::ConvTranspose: o.add_input(lt(0, {1, 4, 6})).add_input(lt(1, {4, 6, 3})); break;
        case op_kind::ConvTransposeBackwardData:
            o.add_input(lt(0, {1, 6, 8})).add_input(lt(1, {4, 6, 3}));
            break;
        case op_kind::ConvTransposeBackwardWeights:
            o.add_input(lt(0, {1, 4, 6})).add_input(lt(1, {1, 6, 8}));
            o.set_attr("weights_shape", dims{4, 6, 3});
            break;
    }
    o.add_output(unk(2));
    return o;
}

// Runs `f`, which must throw convgrad::error with `code` and a message containing every needle.
void expect_error(const std::function<void()> &f, status code,
                  const std::vector<std::string> &needles) {
    try {
        f();
    } catch (const error &e) {
        const std::string m = e.what();
        EXPECT_EQ(e.code(), code) << "status " << to_string(e.code()) << ", message: " << m;
        for (const auto &n : needles)
            EXPECT_NE(m.find(n), std::string::npos) << "'" << n << "' not in: " << m;
        return;
    } catch (const std::exception &e) {
        ADD_FAILURE() << "not a convgrad::error: " << e.what();
        return;
    }
    ADD_FAILURE() << "no error";
}

// The op's name in messages: "<Kind> (op 42".
std::string who(op_kind k) { return std::string(to_string(k)) + " (op 42"; }

void expect_compile_error(const op &o, status code, std::vector<std::string> needles) {
    needles.push_back(who(o.kind()));
    expect_error([&] { compile_op(o); }, code, needles);
}

void expect_add_op_error(const op &o, status code, std::vector<std::string> needles) {
    needles.push_back(who(o.kind()));
    expect_error(
        [&] {
            graph g;
            g.add_op(o);
        },
        code, needles);
}

// A fresh op with the given attributes only (for missing-attribute tests).
op bare(op_kind k, const std::map<std::string, attr_value> &attrs) {
    op o = base(k);
    op b(op_id, k, "t");
    for (const auto &[n, v] : attrs) b.set_attr(n, v);
    b.set_inputs(o.inputs()).set_outputs(o.outputs());
    return b;
}

TEST(Errors, BaseOpsAreValid) {
    for (op_kind k : all_op_kinds) EXPECT_NO_THROW(compile_op(base(k))) << to_string(k);
}

// ------------------------------------------------------------------------------ op schema

TEST(Errors, AttributeNotDefinedForTheOp) {
    const std::pair<op_kind, const char *> cases[] = {
        {op_kind::Convolution, "dst_shape"},
        {op_kind::Convolution, "output_padding"},
        {op_kind::Convolution, "weights_shape"},
        {op_kind::ConvolutionBackwardData, "weights_shape"},
        {op_kind::ConvolutionBackwardWeights, "output_padding"},
        {op_kind::ConvolutionBackwardWeights, "dst_shape"},
        {op_kind::ConvTranspose, "weights_shape"},
        {op_kind::ConvTransposeBackwardData, "dst_shape"},
        {op_kind::ConvTransposeBackwardWeights, "dst_shape"},
    };
    for (auto [k, name] : cases) {
        SCOPED_TRACE(name);
        op o = base(k);
        o.set_attr(name, dims{1});
        expect_add_op_error(o, status::invalid_graph_op,
                            {"attribute '" + std::string(name) + "'", "not defined"});
    }
    op o = base(op_kind::Convolution);
    o.set_attr("alpha", 1.0f);
    expect_add_op_error(o, status::invalid_graph_op, {"attribute 'alpha'", "not defined"});
}

TEST(Errors, AttributeOfTheWrongType) {
    op g = base(op_kind::Convolution);
    g.set_attr("groups", dims{2});
    expect_add_op_error(g, status::invalid_graph_op, {"attribute 'groups'", "expected s64, got s64[]"});
    op s = base(op_kind::ConvTranspose);
    s.set_attr("strides", int64_t(1));
    expect_add_op_error(s, status::invalid_graph_op, {"attribute 'strides'", "expected s64[], got s64"});
    op a = base(op_kind::ConvolutionBackwardData);
    a.set_attr("auto_pad", true);
    expect_add_op_error(a, status::invalid_graph_op, {"attribute 'auto_pad'", "expected string, got bool"});
    op f = base(op_kind::ConvTransposeBackwardWeights);
    f.set_attr("weights_shape", std::vector<float>{4, 6, 3});
    expect_add_op_error(f, status::invalid_graph_op,
                        {"attribute 'weights_shape'", "expected s64[], got f32[]"});
}

TEST(Errors, RequiredAttributeMissing) {
    const std::map<std::string, attr_value> all = {{"strides", dims{1}},
                                                   {"pads_begin", dims{0}},
                                                   {"pads_end", dims{0}},
                                                   {"dilations", dims{1}},
                                                   {"data_format", std::string("NCX")}};
    for (op_kind k : all_op_kinds)
        for (const char *missing : {"strides", "pads_begin", "pads_end", "dilations"}) {
            SCOPED_TRACE(std::string(to_string(k)) + " " + missing);
            auto attrs = all;
            attrs.erase(missing);
            expect_add_op_error(bare(k, attrs), status::invalid_graph_op,
                                {"attribute '" + std::string(missing) + "'", "required"});
        }
}

TEST(Errors, AutoPadUnknownValue) {
    op o = base(op_kind::ConvolutionBackwardData);
    o.set_attr("auto_pad", std::string("SAME"));
    expect_add_op_error(o, status::invalid_graph_op,
                        {"attribute 'auto_pad'", "SAME_UPPER, SAME_LOWER or VALID", "'SAME'"});
}

TEST(Errors, DataFormatUnknownValue) {
    op o = base(op_kind::Convolution);
    o.set_attr("data_format", std::string("NHWC"));
    expect_add_op_error(o, status::invalid_graph_op, {"attribute 'data_format'", "NXC or NCX", "'NHWC'"});
    // Unlike auto_pad, data_format is case-sensitive.
    o.set_attr("data_format", std::string("ncx"));
    expect_add_op_error(o, status::invalid_graph_op, {"attribute 'data_format'", "'ncx'"});
}

TEST(Errors, WeightsFormatOfTheOtherFamily) {
    for (op_kind k : {op_kind::Convolution, op_kind::ConvolutionBackwardData,
                      op_kind::ConvolutionBackwardWeights})
        for (const char *f : {"IOX", "XOI", "OIHW"}) {
            op o = base(k);
            o.set_attr("weights_format", std::string(f));
            std::string quoted = "'";
            quoted += f;
            quoted += "'";
            expect_add_op_error(o, status::invalid_graph_op,
                                {"attribute 'weights_format'", "XIO or OIX", quoted});
        }
    for (op_kind k : {op_kind::ConvTranspose, op_kind::ConvTransposeBackwardData,
                      op_kind::ConvTransposeBackwardWeights}) {
        op o = base(k);
        o.set_attr("weights_format", std::string("OIHW"));
        expect_add_op_error(o, status::invalid_graph_op,
                            {"attribute 'weights_format'", "XOI or IOX", "'OIHW'"});
    }
}

TEST(Errors, GroupsNotPositive) {
    for (int64_t g : {0, -2}) {
        op o = base(op_kind::ConvTranspose);
        o.set_attr("groups", g);
        expect_add_op_error(o, status::invalid_graph_op,
                            {"attribute 'groups'", "expected >= 1, got " + std::to_string(g)});
    }
}

TEST(Errors, StridesAndDilationsNotPositive) {
    op s = base(op_kind::ConvolutionBackwardWeights);
    s.set_attr("strides", dims{0});
    expect_add_op_error(s, status::invalid_graph_op, {"attribute 'strides'", "expected >= 1, got [0]"});
    op d = base(op_kind::ConvTransposeBackwardData);
    d.set_attr("dilations", dims{-1});
    expect_add_op_error(d, status::invalid_graph_op, {"attribute 'dilations'", "expected >= 1, got [-1]"});
}

TEST(Errors, NegativePads) {
    op b = base(op_kind::Convolution);
    b.set_attr("pads_begin", dims{-1});
    expect_add_op_error(b, status::invalid_graph_op, {"attribute 'pads_begin'", "expected >= 0, got [-1]"});
    op e = base(op_kind::ConvTransposeBackwardWeights);
    e.set_attr("pads_end", dims{-3});
    expect_add_op_error(e, status::invalid_graph_op, {"attribute 'pads_end'", "expected >= 0, got [-3]"});
    // Also with auto_pad (the pads are replaced, but must still be valid).
    op a = base(op_kind::ConvolutionBackwardData);
    a.set_attr("auto_pad", std::string("VALID")).set_attr("pads_begin", dims{-1});
    expect_add_op_error(a, status::invalid_graph_op, {"attribute 'pads_begin'", "got [-1]"});
}

TEST(Errors, NegativeOutputPaddingAndShapeAttributes) {
    op o = base(op_kind::ConvTranspose);
    o.set_attr("output_padding", dims{-1});
    expect_add_op_error(o, status::invalid_graph_op, {"attribute 'output_padding'", "expected >= 0, got [-1]"});
    op d = base(op_kind::ConvolutionBackwardData);
    d.set_attr("dst_shape", dims{1, -4, 8});
    expect_add_op_error(d, status::invalid_graph_op, {"attribute 'dst_shape'", "got [1,-4,8]"});
    op w = base(op_kind::ConvolutionBackwardWeights);
    w.set_attr("weights_shape", dims{6, 4, -3});
    expect_add_op_error(w, status::invalid_graph_op, {"attribute 'weights_shape'", "got [6,4,-3]"});
}

TEST(Errors, StridesListLength) {
    for (dims s : {dims{}, dims{1, 1, 1, 1}}) {
        op o = base(op_kind::Convolution);
        o.set_attr("strides", s).set_attr("dilations", s).set_attr("pads_begin", dims{});
        o.set_attr("pads_end", dims{});
        expect_add_op_error(o, status::invalid_graph_op,
                            {"attribute 'strides'", "expected 1 to 3 entries, got " + std::to_string(s.size())});
    }
}

TEST(Errors, SpatialListsOfDifferentLengths) {
    op d = base(op_kind::ConvTranspose);
    d.set_attr("dilations", dims{1, 1});
    expect_add_op_error(d, status::invalid_graph_op, {"attribute 'dilations'", "expected 1, got 2"});
    op p = base(op_kind::ConvolutionBackwardData);
    p.set_attr("pads_end", dims{0, 0});
    expect_add_op_error(p, status::invalid_graph_op, {"attribute 'pads_end'", "expected 1, got 2"});
}

TEST(Errors, WrongNumberOfInputs) {
    op one = base(op_kind::Convolution);
    one.set_inputs({lt(0, {1, 4, 8})});
    expect_add_op_error(one, status::invalid_graph_op, {"inputs", "expected 2 or 3, got 1"});
    op three = base(op_kind::ConvTransposeBackwardData);
    three.add_input(lt(3, {3}, data_type::s32));
    expect_add_op_error(three, status::invalid_graph_op, {"inputs", "expected 2, got 3"});
    op four = base(op_kind::ConvolutionBackwardWeights);
    four.add_input(lt(3, {3}, data_type::s32)).add_input(lt(4, {3}, data_type::s32));
    expect_add_op_error(four, status::invalid_graph_op, {"inputs", "expected 2 or 3, got 4"});
}

TEST(Errors, WrongNumberOfOutputs) {
    op none = base(op_kind::ConvTranspose);
    none.set_outputs({});
    expect_add_op_error(none, status::invalid_graph_op, {"outputs", "expected 1, got 0"});
    op two = base(op_kind::ConvolutionBackwardData);
    two.add_output(unk(3));
    expect_add_op_error(two, status::invalid_graph_op, {"outputs", "expected 1, got 2"});
}

TEST(Errors, UnsupportedDataType) {
    op o = base(op_kind::Convolution);
    o.set_inputs({lt(0, {1, 4, 8}, data_type::s32), lt(1, {6, 4, 3}, data_type::s32)});
    expect_add_op_error(o, status::invalid_data_type,
                        {"tensor 'input 0' (id 0)", "expected f32, bf16 or f16, got s32"});
    op b = base(op_kind::ConvTranspose);
    b.add_input(lt(3, {6}, data_type::s32));  // bias is a float tensor
    expect_add_op_error(b, status::invalid_data_type, {"tensor 'input 2' (id 3)", "got s32"});
}

TEST(Errors, MixedFloatDataTypes) {
    op w = base(op_kind::Convolution);
    w.set_inputs({lt(0, {1, 4, 8}), lt(1, {6, 4, 3}, data_type::bf16)});
    expect_add_op_error(w, status::invalid_data_type,
                        {"tensor 'input 1' (id 1)", "input 0", "expected f32, got bf16"});
    op b = base(op_kind::ConvTranspose);
    b.add_input(lt(3, {6}, data_type::f16));
    expect_add_op_error(b, status::invalid_data_type, {"tensor 'input 2' (id 3)", "expected f32, got f16"});
    op out = base(op_kind::ConvTransposeBackwardWeights);
    out.set_outputs({unk(2, data_type::bf16)});
    expect_add_op_error(out, status::invalid_data_type, {"tensor 'output 0' (id 2)", "expected f32, got bf16"});
}

TEST(Errors, ShapeInputMustBeS32) {
    for (op_kind k : {op_kind::ConvolutionBackwardData, op_kind::ConvolutionBackwardWeights,
                      op_kind::ConvTransposeBackwardWeights}) {
        op o = base(k);
        o.add_input(lt(3, {3}, data_type::f32));
        expect_add_op_error(o, status::invalid_data_type, {"tensor 'input 2' (id 3)", "expected s32, got f32"});
    }
}

// ------------------------------------------------------------------------------ graph

TEST(Errors, GraphRules) {
    graph g;
    g.add_op(base(op_kind::Convolution));
    expect_error([&] { g.get_partitions(); }, status::invalid_arguments, {"finalize()"});
    // Same op id twice.
    op other = base(op_kind::ConvTranspose);
    expect_error([&] { g.add_op(other); }, status::invalid_graph_op,
                 {who(op_kind::ConvTranspose), "op id 42 is already used"});
    g.finalize();
    op late = base(op_kind::ConvolutionBackwardData);
    expect_error([&] { g.add_op(late); }, status::invalid_arguments,
                 {who(op_kind::ConvolutionBackwardData), "finalized"});

    // Two ops producing the same tensor id.
    graph h;
    h.add_op(base(op_kind::Convolution));
    op second(43, op_kind::ConvTranspose, "second");
    const op ct = base(op_kind::ConvTranspose);
    for (const auto &[n, v] : ct.attrs()) second.set_attr(n, v);
    second.set_inputs(ct.inputs()).add_output(unk(2));
    h.add_op(second);
    expect_error([&] { h.finalize(); }, status::invalid_graph_op,
                 {"ConvTranspose (op 43", "output tensor id 2 is produced by another op too"});
}

TEST(Errors, CompiledPartitionRules) {
    compiled_partition empty;
    expect_error([&] { empty.pads_begin(); }, status::invalid_arguments, {"empty"});
    expect_error([&] { empty.execute({}, {}); }, status::invalid_arguments, {"empty"});
    compiled_partition cp = compile_op(base(op_kind::Convolution));
    expect_error([&] { cp.query_logical_tensor(77); }, status::invalid_arguments,
                 {who(op_kind::Convolution), "no tensor with id 77"});
    EXPECT_EQ(cp.query_logical_tensor(2).shape(), (dims{1, 6, 6}));
}

TEST(Errors, CompileWithTensorsOfAnotherOp) {
    graph g;
    g.add_op(base(op_kind::ConvolutionBackwardData));
    g.finalize();
    const partition p = g.get_partitions()[0];
    expect_error([&] { p.compile({lt(77, {1, 6, 6})}, {}); }, status::invalid_arguments,
                 {who(op_kind::ConvolutionBackwardData), "input tensor id 77", "not an input"});
    expect_error([&] { p.compile({}, {lt(78, {1, 4, 8})}); }, status::invalid_arguments,
                 {who(op_kind::ConvolutionBackwardData), "output tensor id 78", "not an output"});
}

// ------------------------------------------------------------------------------ resolve: tensors

TEST(Errors, InputShapeUnknown) {
    op o = base(op_kind::Convolution);
    o.set_inputs({lt(0, {1, unknown_dim, 8}), lt(1, {6, 4, 3})});
    expect_compile_error(o, status::invalid_shape, {"tensor 'src' (id 0)", "known at compile time", "got [1,?,8]"});
    op r = base(op_kind::ConvTransposeBackwardWeights);
    r.set_inputs({lt(0, {1, 4, 6}), unk(1)});
    expect_compile_error(r, status::invalid_shape, {"tensor 'diff_dst' (id 1)", "unknown rank"});
}

TEST(Errors, NegativeInputDims) {
    op o = base(op_kind::ConvolutionBackwardData);
    o.set_inputs({lt(0, {1, 6, -6}), lt(1, {6, 4, 3})});
    expect_compile_error(o, status::invalid_shape, {"tensor 'diff_dst' (id 0)", "non-negative", "got [1,6,-6]"});
}

TEST(Errors, EmptySpatialOrChannelDims) {
    // Only the batch may be zero: an empty spatial axis is rejected even when pads would
    // cover the kernel.
    op o = base(op_kind::Convolution);
    o.set_attr("pads_begin", dims{2}).set_attr("pads_end", dims{2});
    o.set_inputs({lt(0, {1, 4, 0}), lt(1, {6, 4, 3})});
    expect_compile_error(o, status::invalid_shape, {"tensor 'src' (id 0)", "only the batch may be 0", "got [1,4,0]"});
    op c = base(op_kind::ConvTransposeBackwardData);
    c.set_inputs({lt(0, {1, 0, 8}), lt(1, {4, 6, 3})});
    expect_compile_error(c, status::invalid_shape, {"tensor 'diff_dst' (id 0)", "got [1,0,8]"});
}

TEST(Errors, InputStridesCountDiffers) {
    op o = base(op_kind::Convolution);
    o.set_inputs({logical_tensor(0, f32, {1, 4, 8}, {32, 8}), lt(1, {6, 4, 3})});
    expect_compile_error(o, status::invalid_shape, {"tensor 'src' (id 0)", "one stride per dim", "expected 3, got 2"});
}

TEST(Errors, InputStridesNotPositive) {
    op z = base(op_kind::ConvTranspose);
    z.set_inputs({logical_tensor(0, f32, {1, 4, 6}, {24, 0, 1}), lt(1, {4, 6, 3})});
    expect_compile_error(z, status::invalid_shape, {"tensor 'src' (id 0)", "strides must be positive", "got [24,0,1]"});
    op n = base(op_kind::ConvTranspose);
    n.set_inputs({lt(0, {1, 4, 6}), logical_tensor(1, f32, {4, 6, 3}, {18, -3, 1})});
    expect_compile_error(n, status::invalid_shape, {"tensor 'weights' (id 1)", "got [18,-3,1]"});
    // A zero stride on an axis of size 1 is fine.
    op ok = base(op_kind::ConvTranspose);
    ok.set_inputs({logical_tensor(0, f32, {1, 4, 6}, {0, 6, 1}), lt(1, {4, 6, 3})});
    EXPECT_NO_THROW(compile_op(ok));
}

TEST(Errors, DataRank) {
    for (dims sh : {dims{4, 8}, dims{1, 1, 1, 1, 4, 8}}) {
        op o = base(op_kind::Convolution);
        dims w = sh;
        o.set_inputs({lt(0, sh), lt(1, w)});
        expect_compile_error(o, status::invalid_shape,
                             {"tensor 'src' (id 0)", "rank 3, 4 or 5", "got " + std::to_string(sh.size())});
    }
}

TEST(Errors, RanksDiffer) {
    op w = base(op_kind::Convolution);
    w.set_inputs({lt(0, {1, 4, 8}), lt(1, {6, 4, 3, 1})});
    expect_compile_error(w, status::invalid_shape, {"tensor 'weights' (id 1)", "rank must equal that of src", "expected 3, got 4"});
    op d = base(op_kind::ConvolutionBackwardWeights);
    d.set_inputs({lt(0, {1, 4, 8}), lt(1, {1, 6, 6, 1})});
    expect_compile_error(d, status::invalid_shape, {"tensor 'diff_dst' (id 1)", "expected 3, got 4"});
}

TEST(Errors, AttributeLengthsAgainstTheData) {
    // 2 spatial entries for 1-D data: passes the schema, fails against the tensors.
    op o = base(op_kind::ConvTransposeBackwardData);
    o.set_attr("strides", dims{1, 1}).set_attr("dilations", dims{1, 1});
    o.set_attr("pads_begin", dims{0, 0}).set_attr("pads_end", dims{0, 0});
    expect_compile_error(o, status::invalid_shape, {"attribute 'strides'", "one entry per spatial axis", "expected 1, got 2"});
}

TEST(Errors, OutputPaddingLength) {
    op shortl = base(op_kind::ConvTranspose);
    shortl.set_inputs({lt(0, {1, 4, 6, 6}), lt(1, {4, 6, 3, 3})});
    shortl.set_attr("strides", dims{2, 2}).set_attr("dilations", dims{1, 1});
    shortl.set_attr("pads_begin", dims{0, 0}).set_attr("pads_end", dims{0, 0});
    shortl.set_attr("output_padding", dims{1});
    expect_compile_error(shortl, status::invalid_shape, {"attribute 'output_padding'", "expected >= 2, got 1"});
    op extra = shortl;
    extra.set_attr("output_padding", dims{1, 1, 1});
    expect_compile_error(extra, status::invalid_shape, {"attribute 'output_padding'", "beyond the spatial axes", "got [1,1,1]"});
}

TEST(Errors, OutputPaddingNotBelowStride) {
    for (op_kind k : {op_kind::ConvTranspose, op_kind::ConvTransposeBackwardData,
                      op_kind::ConvTransposeBackwardWeights}) {
        op o = base(k);
        o.set_attr("output_padding", dims{1});  // stride 1
        expect_compile_error(o, status::invalid_shape,
                             {"attribute 'output_padding'", "smaller than the stride", "expected < [1], got [1]"});
    }
}

TEST(Errors, WeightsRankAndDims) {
    op r = base(op_kind::ConvolutionBackwardWeights);
    r.set_attr("weights_shape", dims{6, 4});
    expect_compile_error(r, status::invalid_shape, {"attribute 'weights_shape'", "one value per output dim", "expected 3, got 2"});
    op o = base(op_kind::ConvTransposeBackwardWeights);
    o.set_outputs({lt(2, {4, 6, 3, 1})});
    expect_compile_error(o, status::invalid_shape, {"tensor 'diff_weights' (id 2)", "weights rank must equal the data rank", "expected 3, got 4"});
    op z = base(op_kind::Convolution);
    z.set_inputs({lt(0, {1, 4, 8}), lt(1, {6, 4, 0})});
    expect_compile_error(z, status::invalid_shape, {"tensor 'weights' (id 1)", "weights dims must be positive", "got [6,4,0]"});
}

TEST(Errors, GroupsDoNotDivideTheWeightsOAxis) {
    // Convolution: OC 6 is not a multiple of 4.
    op c = base(op_kind::Convolution);
    c.set_attr("groups", int64_t(4));
    c.set_inputs({lt(0, {1, 4, 8}), lt(1, {6, 1, 3})});
    expect_compile_error(c, status::invalid_shape, {"tensor 'weights' (id 1)", "divisible by groups", "a multiple of 4, got 6"});
    // ConvTranspose: IC 3 (IOX axis 0) is not a multiple of 2.
    op t = base(op_kind::ConvTranspose);
    t.set_attr("groups", int64_t(2));
    t.set_inputs({lt(0, {1, 3, 6}), lt(1, {3, 3, 3})});
    expect_compile_error(t, status::invalid_shape, {"tensor 'weights' (id 1)", "I of IOX", "input channels", "a multiple of 2, got 3"});
}

TEST(Errors, SrcChannelsMustMatchExactly) {
    // oneDNN checks trunc(5 / 2) == 2 and passes; convgrad wants 5 == 2 * 2.
    op c = base(op_kind::Convolution);
    c.set_attr("groups", int64_t(2));
    c.set_inputs({lt(0, {1, 5, 8}), lt(1, {6, 2, 3})});
    expect_compile_error(c, status::invalid_shape, {"tensor 'src' (id 0)", "channels must equal groups", "expected 4 (groups 2), got 5"});
    // ConvTransposeBackwardData: diff_dst C must be groups * (OC/G axis).
    op d = base(op_kind::ConvTransposeBackwardData);
    d.set_attr("groups", int64_t(2));
    d.set_inputs({lt(0, {1, 7, 8}), lt(1, {4, 3, 3})});
    expect_compile_error(d, status::invalid_shape, {"tensor 'diff_dst' (id 0)", "expected 6 (groups 2), got 7"});
}

TEST(Errors, SmallSideChannelsMustMatch) {
    op d = base(op_kind::ConvolutionBackwardData);
    d.set_inputs({lt(0, {1, 5, 6}), lt(1, {6, 4, 3})});
    expect_compile_error(d, status::invalid_shape, {"tensor 'diff_dst' (id 0)", "O of OIX", "expected 6, got 5"});
    op t = base(op_kind::ConvTranspose);
    t.set_inputs({lt(0, {1, 3, 6}), lt(1, {4, 6, 3})});
    expect_compile_error(t, status::invalid_shape, {"tensor 'src' (id 0)", "I of IOX", "expected 4, got 3"});
}

TEST(Errors, KernelMustFitThePaddedInput) {
    // I 2, K 3, s 2, no pads: oneDNN's truncating division gives 1 ((2-3)/2 + 1); convgrad
    // rejects it.
    op c = base(op_kind::Convolution);
    c.set_attr("strides", dims{2});
    c.set_inputs({lt(0, {1, 4, 2}), lt(1, {6, 4, 3})});
    expect_compile_error(c, status::invalid_shape, {"tensor 'src' (id 0)", "spatial axis 0", "must fit", "expected >= 3, got 2"});
    op d = base(op_kind::ConvTransposeBackwardData);
    d.set_attr("dilations", dims{5});  // Ke 11 > 8
    expect_compile_error(d, status::invalid_shape, {"tensor 'diff_dst' (id 0)", "expected >= 11, got 8"});
    op w = base(op_kind::ConvolutionBackwardWeights);
    w.set_inputs({lt(0, {1, 4, 2}), lt(1, {1, 6, 1})});
    expect_compile_error(w, status::invalid_shape, {"tensor 'diff_dst' (id 1)", "kernel that fits", "got 1"});
    op b = base(op_kind::ConvolutionBackwardData);
    b.set_attr("dst_shape", dims{1, 4, 2});
    b.set_inputs({lt(0, {1, 6, 1}), lt(1, {6, 4, 3})});
    expect_compile_error(b, status::invalid_shape, {"attribute 'dst_shape'", "kernel that fits", "got 1"});
}

TEST(Errors, SizesDoNotSatisfyTheConvolutionRelation) {
    // ConvolutionBackwardData: diff_src 9 gives diff_dst 7, not 6.
    op d = base(op_kind::ConvolutionBackwardData);
    d.set_attr("dst_shape", dims{1, 4, 9});
    expect_compile_error(d, status::invalid_shape, {"attribute 'dst_shape'", "spatial axis 0", "expected 7, got 6"});
    // Given output tensor instead of the attribute.
    op o = base(op_kind::ConvolutionBackwardData);
    o.set_outputs({lt(2, {1, 4, 5})});
    expect_compile_error(o, status::invalid_shape, {"tensor 'diff_src' (id 2)", "expected 3, got 6"});
    // ConvolutionBackwardWeights: K 2 would give 7.
    op w = base(op_kind::ConvolutionBackwardWeights);
    w.set_attr("weights_shape", dims{6, 4, 2});
    expect_compile_error(w, status::invalid_shape, {"tensor 'diff_dst' (id 1)", "expected 7, got 6"});
    // ConvTransposeBackwardWeights: src is the small side.
    op t = base(op_kind::ConvTransposeBackwardWeights);
    t.set_inputs({lt(0, {1, 4, 5}), lt(1, {1, 6, 8})});
    expect_compile_error(t, status::invalid_shape, {"tensor 'src' (id 0)", "expected 6, got 5"});
    // ConvolutionBackwardData inferred from output_padding >= stride.
    op p = base(op_kind::ConvolutionBackwardData);
    p.set_attr("strides", dims{2}).set_attr("output_padding", dims{2});
    expect_compile_error(p, status::invalid_shape, {"attribute 'output_padding'", "expected 7, got 6"});
}

TEST(Errors, GivenOutputShapeDiffers) {
    op c = base(op_kind::Convolution);
    c.set_outputs({lt(2, {1, 6, 7})});
    expect_compile_error(c, status::invalid_shape, {"tensor 'dst' (id 2)", "differs from the inferred", "expected [1,6,6], got [1,6,7]"});
    op t = base(op_kind::ConvTranspose);
    t.set_outputs({lt(2, {1, 6, 8, 1})});
    expect_compile_error(t, status::invalid_shape, {"tensor 'dst' (id 2)", "expected [1,6,8], got [1,6,8,1]"});
    op d = base(op_kind::ConvTransposeBackwardData);
    d.set_outputs({lt(2, {1, 5, 6})});
    expect_compile_error(d, status::invalid_shape, {"tensor 'diff_src' (id 2)", "expected [1,4,6], got [1,5,6]"});
}

TEST(Errors, OutputStridesOverlap) {
    op o = base(op_kind::ConvTranspose);
    o.set_outputs({logical_tensor(2, f32, {1, 6, 8}, {48, 4, 1})});
    expect_compile_error(o, status::invalid_shape, {"tensor 'dst' (id 2)", "must not overlap", "[48,4,1]", "[1,6,8]"});
}

TEST(Errors, ShapeInputShape) {
    // Output unknown: the s32 tensor's shape is checked when its values are read.
    op d = base(op_kind::ConvolutionBackwardData);
    d.add_input(logical_tensor(3, data_type::s32, {2}).set_values({1, 4}));
    expect_compile_error(d, status::invalid_shape, {"tensor 'dst_shape' (id 3)", "1-D s32", "expected [3], got [2]"});
    // Output known: checked all the same.
    op w = base(op_kind::ConvolutionBackwardWeights);
    w.add_input(lt(3, {3, 1}, data_type::s32)).set_outputs({lt(2, {6, 4, 3})});
    expect_compile_error(w, status::invalid_shape, {"tensor 'weights_shape' (id 3)", "expected [3], got [3,1]"});
}

TEST(Errors, ShapeInputValuesCount) {
    op d = base(op_kind::ConvolutionBackwardData);
    d.add_input(logical_tensor(3, data_type::s32, {3}).set_values({1, 4}));
    expect_compile_error(d, status::invalid_shape, {"tensor 'dst_shape' (id 3)", "one value per output dim", "expected 3, got 2"});
}

TEST(Errors, ShapeAttributeLength) {
    op d = base(op_kind::ConvolutionBackwardData);
    d.set_attr("dst_shape", dims{4, 8});
    expect_compile_error(d, status::invalid_shape, {"attribute 'dst_shape'", "expected 3, got 2"});
    op t = base(op_kind::ConvTransposeBackwardWeights);
    t.set_attr("weights_shape", dims{4, 6, 3, 1});
    expect_compile_error(t, status::invalid_shape, {"attribute 'weights_shape'", "expected 3, got 4"});
}

TEST(Errors, ConvTransposeOutputNotPositive) {
    op t = base(op_kind::ConvTranspose);
    t.set_attr("pads_begin", dims{1}).set_attr("pads_end", dims{1});
    t.set_inputs({lt(0, {1, 4, 1}), lt(1, {4, 6, 1})});  // 0 + 1 - 2 = -1
    expect_compile_error(t, status::invalid_shape, {"tensor 'src' (id 0)", "must be positive", "expected >= 1, got -1"});
}

TEST(Errors, ConvolutionBackwardDataGivenShape) {
    op r = base(op_kind::ConvolutionBackwardData);
    r.set_outputs({lt(2, {1, 4, 8, 1})});
    expect_compile_error(r, status::invalid_shape, {"tensor 'diff_src' (id 2)", "rank", "expected 3, got 4"});
    op n = base(op_kind::ConvolutionBackwardData);
    n.set_attr("dst_shape", dims{2, 4, 8});
    expect_compile_error(n, status::invalid_shape, {"attribute 'dst_shape'", "batch", "expected 1, got 2"});
    op c = base(op_kind::ConvolutionBackwardData);
    c.set_attr("dst_shape", dims{1, 5, 8});
    expect_compile_error(c, status::invalid_shape, {"attribute 'dst_shape'", "channels", "expected 4, got 5"});
    op s = base(op_kind::ConvolutionBackwardData);
    s.set_attr("dst_shape", dims{1, 4, 0});
    expect_compile_error(s, status::invalid_shape, {"attribute 'dst_shape'", "spatial dims must be positive", "got [1,4,0]"});
    op v = base(op_kind::ConvolutionBackwardData);
    v.add_input(logical_tensor(3, data_type::s32, {3}).set_values({1, 5, 8}));
    expect_compile_error(v, status::invalid_shape, {"tensor 'dst_shape' (id 3)", "expected 4, got 5"});
}

TEST(Errors, ConvolutionBackwardDataAutoPadNeedsAShape) {
    op o = base(op_kind::ConvolutionBackwardData);
    o.set_attr("auto_pad", std::string("SAME_UPPER"));
    expect_compile_error(o, status::invalid_shape, {"tensor 'diff_src' (id 2)", "auto_pad", "must be given"});
}

TEST(Errors, ConvolutionBackwardDataInferredSizeNotPositive) {
    op o = base(op_kind::ConvolutionBackwardData);
    o.set_attr("pads_begin", dims{2}).set_attr("pads_end", dims{2});
    o.set_inputs({lt(0, {1, 6, 1}), lt(1, {6, 4, 1})});  // 0 + 1 - 4 = -3
    expect_compile_error(o, status::invalid_shape, {"tensor 'diff_src' (id 2)", "must be positive", "got -3"});
}

TEST(Errors, BackwardWeightsBatchDiffers) {
    op o = base(op_kind::ConvolutionBackwardWeights);
    o.set_inputs({lt(0, {1, 4, 8}), lt(1, {2, 6, 6})});
    expect_compile_error(o, status::invalid_shape, {"tensor 'diff_dst' (id 1)", "batch must equal that of src", "expected 1, got 2"});
    op t = base(op_kind::ConvTransposeBackwardWeights);
    t.set_inputs({lt(0, {2, 4, 6}), lt(1, {1, 6, 8})});
    expect_compile_error(t, status::invalid_shape, {"tensor 'src' (id 0)", "batch must equal that of diff_dst", "expected 1, got 2"});
}

TEST(Errors, BackwardWeightsShapeNotGiven) {
    for (op_kind k : {op_kind::ConvolutionBackwardWeights, op_kind::ConvTransposeBackwardWeights}) {
        op o = base(k);
        o.set_attr("weights_shape", dims(12, 0));  // oneDNN's default: absent
        expect_compile_error(o, status::invalid_shape, {"tensor 'diff_weights' (id 2)", "must be given"});
    }
}

TEST(Errors, BackwardWeightsChannels) {
    op o = base(op_kind::ConvolutionBackwardWeights);
    o.set_attr("weights_shape", dims{5, 4, 3});
    expect_compile_error(o, status::invalid_shape, {"tensor 'diff_dst' (id 1)", "O of OIX", "expected 5, got 6"});
    op i = base(op_kind::ConvolutionBackwardWeights);
    i.set_attr("weights_shape", dims{6, 3, 3});
    expect_compile_error(i, status::invalid_shape, {"tensor 'src' (id 0)", "I of OIX", "expected 3 (groups 1), got 4"});
    op t = base(op_kind::ConvTransposeBackwardWeights);
    t.set_attr("weights_shape", dims{4, 5, 3});
    expect_compile_error(t, status::invalid_shape, {"tensor 'diff_dst' (id 1)", "O of IOX", "expected 5 (groups 1), got 6"});
    op x = base(op_kind::ConvTransposeBackwardWeights);
    x.set_attr("weights_format", std::string("XOI")).set_attr("weights_shape", dims{3, 6, 5});
    expect_compile_error(x, status::invalid_shape, {"tensor 'src' (id 0)", "I of XOI", "expected 5, got 4"});
}

TEST(Errors, DataTypesAtCompile) {
    // No data type anywhere.
    op u = base(op_kind::Convolution);
    u.set_inputs({lt(0, {1, 4, 8}, data_type::undef), lt(1, {6, 4, 3}, data_type::undef)});
    expect_compile_error(u, status::invalid_data_type, {"unsupported data type", "got undef"});
    // One input without a type: the message names that input.
    op w = base(op_kind::ConvTranspose);
    w.set_inputs({lt(0, {1, 4, 6}), lt(1, {4, 6, 3}, data_type::undef)});
    expect_compile_error(w, status::invalid_data_type, {"tensor 'weights' (id 1)", "expected f32, got undef"});
    op s = base(op_kind::ConvolutionBackwardData);
    s.add_input(lt(3, {3}, data_type::undef));
    expect_compile_error(s, status::invalid_data_type, {"tensor 'dst_shape' (id 3)", "expected s32, got undef"});
    // Tensors given at compile time replace the op's and are checked the same way.
    graph g;
    g.add_op(base(op_kind::ConvTransposeBackwardData));
    g.finalize();
    const partition p = g.get_partitions()[0];
    expect_error([&] { p.compile({}, {unk(2, data_type::bf16)}); }, status::invalid_data_type,
                 {who(op_kind::ConvTransposeBackwardData), "tensor 'diff_src' (id 2)", "expected f32, got bf16"});
    expect_error([&] { p.compile({lt(1, {4, 6, 3}, data_type::f16)}, {}); }, status::invalid_data_type,
                 {who(op_kind::ConvTransposeBackwardData), "f16", "f32"});
}

TEST(Errors, BiasShape) {
    for (dims b : {dims{5}, dims{1, 6}}) {
        op c = base(op_kind::Convolution);
        c.add_input(lt(3, b));
        expect_compile_error(c, status::invalid_shape, {"tensor 'bias' (id 3)", "expected [6], got " + detail_str(b)});
    }
    op t = base(op_kind::ConvTranspose);
    t.add_input(lt(3, {4}));  // ConvTranspose bias has OC = 6 entries
    expect_compile_error(t, status::invalid_shape, {"tensor 'bias' (id 3)", "expected [6], got [4]"});
}

// ------------------------------------------------------------------------------ execute

struct exec_fixture {
    compiled_partition cp;
    std::vector<tensor_buffer> ins;
    tensor_buffer out;
    explicit exec_fixture(const op &o) : cp(compile_op(o)) {
        for (const auto &l : cp.inputs()) ins.emplace_back(l);
        out = tensor_buffer(cp.outputs()[0]);
    }
    std::vector<tensor> in_t() {
        std::vector<tensor> t;
        for (auto &b : ins) t.push_back(b.as_tensor());
        return t;
    }
};

TEST(Errors, ExecuteTensorCounts) {
    exec_fixture f(base(op_kind::Convolution));
    expect_error([&] { f.cp.execute({f.ins[0].as_tensor()}, {f.out.as_tensor()}); },
                 status::invalid_arguments, {who(op_kind::Convolution), "input tensors", "expected 2, got 1"});
    expect_error([&] { f.cp.execute(f.in_t(), {}); }, status::invalid_arguments,
                 {who(op_kind::Convolution), "output tensors", "expected 1, got 0"});
    expect_error([&] { f.cp.execute(f.in_t(), {f.out.as_tensor(), f.out.as_tensor()}); },
                 status::invalid_arguments, {"expected 1, got 2"});
}

TEST(Errors, ExecuteTensorMismatch) {
    exec_fixture f(base(op_kind::ConvolutionBackwardWeights));
    auto with_input1 = [&](const logical_tensor &l) {
        auto t = f.in_t();
        t[1] = tensor(l, f.ins[1].data());
        f.cp.execute(t, {f.out.as_tensor()});
    };
    const std::string w = who(op_kind::ConvolutionBackwardWeights);
    expect_error([&] { with_input1(lt(5, {1, 6, 6})); }, status::invalid_arguments,
                 {w, "input 1 (id 1)", "tensor id", "expected 1, got 5"});
    expect_error([&] { with_input1(lt(1, {1, 6, 7})); }, status::invalid_shape,
                 {w, "input 1 (id 1)", "shape differs", "expected [1,6,6], got [1,6,7]"});
    expect_error([&] { with_input1(logical_tensor(1, f32, {1, 6, 6}, {36, 1, 6})); }, status::invalid_shape,
                 {w, "input 1 (id 1)", "strides differ", "expected [36,6,1], got [36,1,6]"});
    expect_error([&] { with_input1(lt(1, {1, 6, 6}, data_type::bf16)); }, status::invalid_data_type,
                 {w, "input 1 (id 1)", "data type differs", "expected f32, got bf16"});
    expect_error([&] { f.cp.execute(f.in_t(), {tensor(lt(2, {6, 4, 3}), nullptr)}); },
                 status::invalid_arguments, {w, "output 0 (id 2)", "null"});
    // A tensor with unknown shape and layout at execution is taken as the compiled one.
    auto t = f.in_t();
    t[0] = tensor(unk(0, data_type::undef), f.ins[0].data());
    EXPECT_NO_THROW(f.cp.execute(t, {f.out.as_tensor()}));
}

TEST(Errors, ExecuteShapeInputValues) {
    op d = base(op_kind::ConvolutionBackwardData);
    d.add_input(logical_tensor(3, data_type::s32, {3}).set_values({1, 4, 8}));
    exec_fixture f(d);
    f.ins[2].fill_values({1, 4, 9});
    expect_error([&] { f.cp.execute(f.in_t(), {f.out.as_tensor()}); }, status::invalid_shape,
                 {who(op_kind::ConvolutionBackwardData), "tensor 'dst_shape' (id 3)", "expected [1,4,8], got [1,4,9]"});
    op w = base(op_kind::ConvTransposeBackwardWeights);
    w.add_input(lt(3, {3}, data_type::s32));
    exec_fixture g(w);
    g.ins[2].fill_values({4, 6, 2});
    expect_error([&] { g.cp.execute(g.in_t(), {g.out.as_tensor()}); }, status::invalid_shape,
                 {who(op_kind::ConvTransposeBackwardWeights), "tensor 'weights_shape' (id 3)", "expected [4,6,3], got [4,6,2]"});
}

// ------------------------------------------------------------------------------ sizes

TEST(Errors, ArithmeticOverflowInShapeInference) {
    const dim_t big = dim_t(1) << 62;
    // Effective kernel (K-1)*dilation + 1.
    op k = base(op_kind::Convolution);
    k.set_attr("dilations", dims{big});
    expect_compile_error(k, status::out_of_memory, {"overflow"});
    // Padded size I + pb + pe.
    op p = base(op_kind::ConvolutionBackwardWeights);
    p.set_attr("pads_begin", dims{big}).set_attr("pads_end", dims{big});
    expect_compile_error(p, status::out_of_memory, {"overflow"});
    // ConvTranspose output size s*(X-1).
    op s = base(op_kind::ConvTranspose);
    s.set_attr("strides", dims{big});
    expect_compile_error(s, status::out_of_memory, {"overflow"});
    // pads_begin + pads_end in the ConvTranspose / ConvolutionBackwardData output size.
    for (op_kind kk : {op_kind::ConvTranspose, op_kind::ConvolutionBackwardData}) {
        op q = base(kk);
        q.set_attr("pads_begin", dims{big}).set_attr("pads_end", dims{big});
        expect_compile_error(q, status::out_of_memory, {"overflow"});
    }
    // SAME padding with a huge dilation.
    op a = base(op_kind::ConvTransposeBackwardData);
    a.set_attr("auto_pad", std::string("SAME_UPPER")).set_attr("dilations", dims{big});
    expect_compile_error(a, status::out_of_memory, {"overflow"});
}

// Groups and the weights' input channels of 2^32 each: their product, compared with the
// channels of src, does not fit (fuzz_op found it in the weight gradient's shape inference,
// UBSan: signed overflow); an overflow error naming the product, not undefined behaviour.
TEST(Errors, GroupsTimesWeightChannelsOverflow) {
    const dim_t big = dim_t(1) << 32;
    op w = base(op_kind::ConvolutionBackwardWeights);
    w.set_attr("groups", big).set_attr("weights_shape", dims{big, big, 3});
    w.set_inputs({lt(0, {1, 4, 8}), lt(1, {1, big, 6})});
    expect_compile_error(w, status::out_of_memory,
                         {"overflow", "groups * the diff_weights' input channels"});
    op c = base(op_kind::Convolution);
    c.set_attr("groups", big);
    // (Weights of that shape only with strides of their own: dense ones do not fit.)
    c.set_inputs({lt(0, {1, 4, 8}), logical_tensor(1, f32, {big, big, 3}, {1, 1, 1})});
    expect_compile_error(c, status::out_of_memory,
                         {"overflow", "groups * the weights' input channels"});
}

TEST(Errors, HugeTensors) {
    const dim_t g = dim_t(1) << 31;
    // The input's byte extent overflows int64.
    op o = base(op_kind::Convolution);
    o.set_inputs({logical_tensor(0, f32, {g, 4, g}, {4 * g, g, 1}), lt(1, {6, 4, 3})});
    expect_compile_error(o, status::out_of_memory, {"tensor 'src' (id 0)"});
    // Fits int64 but is more than can be addressed (> 2^52 bytes).
    op a = base(op_kind::Convolution);
    a.set_inputs({logical_tensor(0, f32, {dim_t(1) << 25, 4, dim_t(1) << 24}, {dim_t(1) << 26, dim_t(1) << 24, 1}),
                  lt(1, {6, 4, 3})});
    expect_compile_error(a, status::out_of_memory, {"tensor 'src' (id 0)", "bytes"});
    // "any" layout: dense strides computed by convgrad overflow.
    op y = base(op_kind::ConvTransposeBackwardData);
    y.set_inputs({logical_tensor::any(0, f32, {g, 6, g * 4}), lt(1, {4, 6, 3})});
    expect_compile_error(y, status::out_of_memory, {"tensor 'diff_dst' (id 0)"});
    // The inferred output is too large: ConvTranspose with a stride of 2^48.
    op t = base(op_kind::ConvTranspose);
    t.set_attr("strides", dims{dim_t(1) << 48});
    expect_compile_error(t, status::out_of_memory, {"tensor 'dst' (id 2)"});
    // A large problem that fits compiles (nothing is allocated).
    op fine = base(op_kind::Convolution);
    fine.set_inputs({lt(0, {1, 4, dim_t(1) << 32}), lt(1, {6, 4, 3})});
    EXPECT_NO_THROW(compile_op(fine));
}

TEST(Errors, LogicalTensorSizes) {
    const dim_t g = dim_t(1) << 40;
    expect_error([&] { logical_tensor(0, f32, {g, g, g}); }, status::out_of_memory, {"overflow"});
    expect_error([&] { unk(0).element_count(); }, status::invalid_shape, {"not known"});
    expect_error([&] { logical_tensor::any(0, f32, {2, 3}).size_bytes(); }, status::invalid_shape, {"not known"});
}

}  // namespace
}  // namespace convgrad
