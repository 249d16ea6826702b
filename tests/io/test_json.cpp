// The JSON reader and writer: every oneDNN case file round-trips byte for byte, and every
// malformed input is an error naming its position.
#include <gtest/gtest.h>

#include "convgrad/json.hpp"
#include "io_test_util.hpp"

using namespace convgrad;
using convgrad::testing::onednn_case_files;
using convgrad::testing::slurp;

namespace {

std::string trim_end(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
    return s;
}

// Expects parse() to throw, with every needle in the message; returns the message.
std::string parse_error(const std::string &text, const std::vector<std::string> &needles,
                        json::read_options opts = {}) {
    try {
        json::parse(text, "t.json", opts);
    } catch (const error &e) {
        const std::string msg = e.what();
        for (const auto &n : needles) EXPECT_NE(msg.find(n), std::string::npos) << "'" << n << "' not in: " << msg;
        return msg;
    }
    ADD_FAILURE() << "no error for: " << text;
    return {};
}

const char *lt_json(int id, const char *shape, const char *dtype = "f32") {
    static thread_local std::string s;
    s = std::string(R"({"id":)") + std::to_string(id) + R"(,"dtype":")" + dtype + R"(","shape":)" + shape +
        R"(,"stride":[-9223372036854775808],"layout_type":"strided","property_type":"undef"})";
    return s.c_str();
}

// A valid one-op document with `attrs` and `kind` substituted.
std::string doc_with(const std::string &attrs, const std::string &kind = "Convolution",
                     const std::string &extra_top = "") {
    std::string in0 = lt_json(0, "[1,4,5,5]"), in1 = lt_json(1, "[4,4,3,3]"), out = lt_json(2, "[1,4,3,3]");
    return R"({"version":"3.7.0","engine_kind":"cpu","fpmath_mode":"strict",)" + extra_top +
           R"("graph":[{"id":7,"name":"C","kind":")" + kind + R"(","attrs":{)" + attrs +
           R"(},"inputs":[)" + in0 + "," + in1 + R"(],"outputs":[)" + out + "]}]}";
}

const std::string good_attrs =
    R"("strides":{"type":"s64[]","value":[1,1]},"pads_begin":{"type":"s64[]","value":[0,0]},)"
    R"("pads_end":{"type":"s64[]","value":[0,0]},"dilations":{"type":"s64[]","value":[1,1]},)"
    R"("data_format":{"type":"string","value":"NCX"},"weights_format":{"type":"string","value":"OIX"})";

}  // namespace

TEST(Json, EveryOnednnCaseRoundTripsByteForByte) {
    const auto files = onednn_case_files();
    if (files.empty()) GTEST_SKIP() << "../shared/cases/onednn/op/f32 not found";
    for (const auto &f : files) {
        SCOPED_TRACE(f.string());
        const std::string text = slurp(f);
        const json::document doc = json::parse(text, f.string());
        EXPECT_EQ(trim_end(json::write(doc)), trim_end(text));
        // And the written text reads back to the same document.
        const json::document again = json::parse(json::write(doc, -1));
        ASSERT_EQ(again.ops.size(), doc.ops.size());
        for (size_t i = 0; i < doc.ops.size(); ++i) {
            EXPECT_EQ(again.ops[i].attrs(), doc.ops[i].attrs());
            EXPECT_EQ(again.ops[i].kind(), doc.ops[i].kind());
            ASSERT_EQ(again.ops[i].inputs().size(), doc.ops[i].inputs().size());
            for (size_t k = 0; k < doc.ops[i].inputs().size(); ++k)
                EXPECT_EQ(again.ops[i].inputs()[k].to_string(), doc.ops[i].inputs()[k].to_string());
        }
        EXPECT_EQ(again.input_ports, doc.input_ports);
        EXPECT_EQ(again.version, doc.version);
    }
}

TEST(Json, EveryOnednnCaseCompiles) {
    const auto files = onednn_case_files();
    if (files.empty()) GTEST_SKIP() << "../shared/cases/onednn/op/f32 not found";
    for (const auto &f : files) {
        SCOPED_TRACE(f.string());
        const json::document doc = json::read_file(f.string());
        graph g = doc.to_graph();
        const auto parts = g.get_partitions();
        ASSERT_EQ(parts.size(), 1u);
        const compiled_partition cp =
            parts[0].compile(doc.ops[0].inputs(), doc.ops[0].outputs(), impl_choice::reference);
        EXPECT_EQ(cp.outputs()[0].shape(), doc.ops[0].outputs()[0].shape());
    }
}

TEST(Json, TopLevelFieldsAndPortsKept) {
    const std::string text = doc_with(good_attrs, "Convolution",
                                      R"("fpmath_mode_apply_to_int":"true","input_ports":[0,1],"output_ports":[2],)");
    const json::document doc = json::parse(text);
    EXPECT_EQ(doc.version, "3.7.0");
    EXPECT_EQ(doc.engine_kind, "cpu");
    EXPECT_EQ(doc.fpmath_mode, "strict");
    EXPECT_EQ(doc.fpmath_mode_apply_to_int, "true");
    EXPECT_EQ(doc.input_ports, (std::vector<size_t>{0, 1}));
    EXPECT_EQ(doc.output_ports, (std::vector<size_t>{2}));
    EXPECT_EQ(doc.graph_inputs(), (std::vector<size_t>{0, 1}));
    EXPECT_EQ(doc.graph_outputs(), (std::vector<size_t>{2}));
    const std::string out = json::write(doc, -1);
    // oneDNN's field order.
    const char *order[] = {"\"version\"", "\"engine_kind\"", "\"fpmath_mode\"", "\"fpmath_mode_apply_to_int\"",
                           "\"input_ports\"", "\"output_ports\"", "\"graph\"", "\"id\"", "\"name\"", "\"kind\"",
                           "\"attrs\"", "\"inputs\"", "\"outputs\""};
    size_t pos = 0;
    for (const char *k : order) {
        const size_t p = out.find(k, pos);
        ASSERT_NE(p, std::string::npos) << k;
        pos = p;
    }
    // Unknown strides read as dense strides of the known shape.
    EXPECT_EQ(doc.ops[0].inputs()[0].strides(), (dims{100, 25, 5, 1}));
}

TEST(Json, LegacyNamesAreWrittenWithCurrentNames) {
    std::string attrs = good_attrs;
    attrs.replace(attrs.find("weights_format"), 14, "filter_format");
    const json::document doc = json::parse(doc_with(attrs + R"(,"output_shape":{"type":"s64[]","value":[1,4,5,5]})",
                                                    "ConvolutionBackpropData"));
    EXPECT_EQ(doc.ops[0].kind(), op_kind::ConvolutionBackwardData);
    EXPECT_NE(doc.ops[0].find_attr("weights_format"), nullptr);
    EXPECT_NE(doc.ops[0].find_attr("dst_shape"), nullptr);
    const std::string out = json::write(doc);
    EXPECT_EQ(out.find("filter_format"), std::string::npos);
    EXPECT_EQ(out.find("output_shape"), std::string::npos);
    EXPECT_EQ(out.find("ConvolutionBackpropData"), std::string::npos);
    EXPECT_NE(out.find("\"ConvolutionBackwardData\""), std::string::npos);
    EXPECT_NE(out.find("\"dst_shape\""), std::string::npos);
}

TEST(Json, EveryAttributeTypeRoundTrips) {
    op o(3, op_kind::Convolution, "all");
    o.set_attr("a_s64", int64_t(-5))
        .set_attr("b_list", std::vector<int64_t>{1, INT64_MIN, 3})
        .set_attr("c_f32", 0.5f)
        .set_attr("d_f32s", std::vector<float>{1.5f, -2.25f})
        .set_attr("e_str", std::string("NXC"))
        .set_attr("f_bool", true)
        .add_input(logical_tensor(0, data_type::bf16, {2, 3, 4}))
        .add_input(logical_tensor::any(1, data_type::bf16, {3, 3, 3}, property_type::constant))
        .add_output(logical_tensor::unknown(2, data_type::bf16));
    json::document doc;
    doc.ops.push_back(o);
    const std::string text = json::write(doc);
    EXPECT_NE(text.find(R"("type": "f32[]")"), std::string::npos);
    EXPECT_NE(text.find(R"("type": "bool")"), std::string::npos);
    EXPECT_NE(text.find("-9223372036854775808"), std::string::npos);
    json::read_options no_schema;
    no_schema.validate = false;
    const json::document back = json::parse(text, "t", no_schema);
    EXPECT_EQ(back.ops[0].attrs(), o.attrs());
    EXPECT_EQ(back.ops[0].inputs()[1].layout(), layout_type::any);
    EXPECT_EQ(back.ops[0].inputs()[1].property(), property_type::constant);
    EXPECT_EQ(back.ops[0].outputs()[0].ndims(), -1);  // unknown rank survives
    EXPECT_EQ(json::write(back), text);
    // "type" comes first, then "value" (benchdnn's reader needs that order).
    EXPECT_NE(text.find(R"("a_s64": {
          "type": "s64",
          "value": -5)"),
              std::string::npos);
}

TEST(Json, FromGraphWritesEveryOp) {
    graph g;
    const json::document src = json::parse(doc_with(good_attrs));
    g.add_op(src.ops[0]);
    g.finalize();
    const json::document d = json::from_graph(g);
    ASSERT_EQ(d.ops.size(), 1u);
    EXPECT_EQ(json::parse(json::write(d)).ops[0].attrs(), src.ops[0].attrs());
}

TEST(JsonErrors, SyntaxErrorGivesTheByte) {
    const std::string msg = parse_error(R"({"version": "3.7.0",, })", {"t.json", "syntax error at byte 21"});
    try {
        json::parse("{", "x.json");
    } catch (const error &e) {
        EXPECT_EQ(e.code(), status::invalid_arguments);
    }
}

TEST(JsonErrors, UnknownOpKind) {
    parse_error(doc_with(good_attrs, "MatMul"), {"graph[0] (op 7 'C')", "kind", "unknown op kind 'MatMul'"});
}

TEST(JsonErrors, AttributeValueDoesNotMatchItsType) {
    std::string a = good_attrs;
    a.replace(a.find(R"({"type":"s64[]","value":[1,1]})"), 30, R"({"type":"s64[]","value":"1x1"})");
    parse_error(doc_with(a), {"op 7", "attrs.strides.value", "s64[]", "string"});
    parse_error(doc_with(good_attrs + R"(,"groups":{"type":"s64","value":1.5})"), {"attrs.groups.value", "an integer"});
    parse_error(doc_with(good_attrs + R"(,"groups":{"type":"int","value":1})"), {"attrs.groups.type", "unknown attribute type 'int'"});
    parse_error(doc_with(good_attrs + R"(,"groups":{"value":1})"), {"attrs.groups.type", "missing"});
    parse_error(doc_with(good_attrs + R"(,"groups":3)"), {"attrs.groups", "expected an object"});
}

TEST(JsonErrors, AttributeOfTheWrongTypeForTheOp) {
    // Well-formed JSON, but groups must be s64 and strides s64[] (the op schema).
    parse_error(doc_with(good_attrs + R"(,"groups":{"type":"s64[]","value":[1]})"),
                {"graph[0] (op 7 'C')", "attribute 'groups'", "wrong value type"});
    parse_error(doc_with(good_attrs + R"(,"dst_shape":{"type":"s64[]","value":[1]})"),
                {"op 7", "attribute 'dst_shape'", "not defined"});
    std::string a = good_attrs;
    a.replace(a.find(R"("value":"NCX")"), 13, R"("value":"NHWC")");
    parse_error(doc_with(a), {"op 7", "data_format", "NHWC"});
}

TEST(JsonErrors, DanglingTensorIds) {
    parse_error(doc_with(good_attrs, "Convolution", R"("input_ports":[0,5],)"),
                {"input_ports[1]", "dangling tensor id 5"});
    parse_error(doc_with(good_attrs, "Convolution", R"("output_ports":[0],)"),
                {"output_ports[0]", "dangling tensor id 0"});
}

TEST(JsonErrors, TensorFields) {
    std::string d = doc_with(good_attrs);
    std::string bad = d;
    bad.replace(bad.find(R"("dtype":"f32")"), 13, R"("dtype":"s8")");
    parse_error(bad, {"op 7", "inputs[0] (tensor 0).dtype", "'s8' is not supported"});
    bad = d;
    bad.replace(bad.find(R"("shape":[1,4,5,5])"), 17, R"("shape":[1,4,-5,5])");
    parse_error(bad, {"inputs[0] (tensor 0).shape", "negative"});
    bad = d;
    bad.replace(bad.find(R"("shape":[1,4,5,5])"), 17, R"("shape":"1x4x5x5")");
    parse_error(bad, {"inputs[0] (tensor 0).shape", "list of integers"});
    bad = d;
    bad.replace(bad.find(R"("layout_type":"strided")"), 23, R"("layout_type":"opaque")");
    parse_error(bad, {"inputs[0] (tensor 0).layout_type", "opaque"});
    bad = d;
    bad.replace(bad.find(R"("id":0,)"), 7, "");
    parse_error(bad, {"inputs[0].id", "missing"});
    parse_error(R"({"graph":[{"id":1,"kind":"Convolution","attrs":{},"outputs":[]}]})", {"graph[0] (op 1)", "inputs", "missing"});
    parse_error(R"({"version":"1"})", {"graph", "missing"});
    parse_error(R"([1,2])", {"top level"});
}

TEST(JsonErrors, TensorRedefinedDifferently) {
    std::string d = doc_with(good_attrs);
    // The output reuses input id 0 with another shape.
    d.replace(d.rfind(R"({"id":2,)"), 8, R"({"id":0,)");
    parse_error(d, {"outputs[0]", "tensor id 0 was defined before"});
}

TEST(JsonErrors, DuplicateOpIdAndMissingFile) {
    const std::string one = doc_with(good_attrs);
    const size_t start = one.find(R"({"id":7)");
    const size_t end = one.rfind("]}");
    std::string op_text = one.substr(start, end - start);
    std::string two_ops = one.substr(0, end) + "," + op_text + "]}";
    parse_error(two_ops, {"graph[1]", "op id 7 is used twice"});
    EXPECT_THROW(json::read_file("/nonexistent/x.json"), error);
}
