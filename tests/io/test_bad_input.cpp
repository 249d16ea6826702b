// Reproducers of issue 11 for the readers: numbers that do not fit, duplicate keys and other
// malformed input give a convgrad::error naming the file or option and the field, never a
// foreign exception (std::out_of_range from stoll, nlohmann::out_of_range) or a wrong message.
#include <gtest/gtest.h>

#include <functional>

#include "convgrad/json.hpp"
#include "convgrad/npy.hpp"
#include "io/rewrite.hpp"

using namespace convgrad;

namespace {

// Fails the test on any exception other than convgrad::error (gtest reports it as thrown).
void expect_error(const std::function<void()> &f, status code, const std::vector<std::string> &needles) {
    try {
        f();
    } catch (const error &e) {
        EXPECT_EQ(e.code(), code) << e.what();
        for (const auto &n : needles) EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what();
        return;
    }
    ADD_FAILURE() << "no error";
}

std::vector<uint8_t> npy_v1(const std::string &dict) {
    std::vector<uint8_t> b = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
    std::string h = dict;
    while ((10 + h.size() + 1) % 64) h.push_back(' ');
    h.push_back('\n');
    b.push_back(uint8_t(h.size()));
    b.push_back(uint8_t(h.size() >> 8));
    b.insert(b.end(), h.begin(), h.end());
    b.resize(b.size() + 8, 0);
    return b;
}

const char *conv_json = R"({"graph": [{"id": 0, "name": "c", "kind": "Convolution",
  "attrs": {"strides": {"type": "s64[]", "value": [1, 1]}, "pads_begin": {"type": "s64[]", "value": [0, 0]},
            "pads_end": {"type": "s64[]", "value": [0, 0]}, "dilations": {"type": "s64[]", "value": [1, 1]},
            "data_format": {"type": "string", "value": "NCX"}, "weights_format": {"type": "string", "value": "OIX"}},
  "inputs": [{"id": 0, "dtype": "f32", "shape": [2, 3, 4, 4], "stride": [48, 16, 4, 1], "layout_type": "strided"},
             {"id": 1, "dtype": "f32", "shape": [5, 3, 1, 1], "stride": [3, 1, 1, 1], "layout_type": "strided"}],
  "outputs": [{"id": 2, "dtype": "f32", "shape": [2, 5, 4, 4], "stride": [80, 16, 4, 1], "layout_type": "strided"}]}]})";

TEST(BadInput, NpyDimensionTooLongForInt64) {
    const auto b = npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999, 1), }");
    expect_error([&] { npy::parse(b.data(), b.size(), "big.npy"); }, status::invalid_arguments,
                 {"big.npy", "shape dimension 99999999999999999999999", "64-bit"});
}

TEST(BadInput, NpyDuplicateKey) {
    const auto b = npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'shape': (2,), }");
    expect_error([&] { npy::parse(b.data(), b.size(), "dup.npy"); }, status::invalid_arguments,
                 {"dup.npy", "key 'shape' given twice"});
}

TEST(BadInput, JsonNumberOutOfDoubleRange) {
    expect_error([] { json::parse(R"({"graph": [], "x": 1e400})", "huge.json"); }, status::invalid_arguments,
                 {"huge.json", "invalid JSON", "number overflow"});
}

TEST(BadInput, JsonDimensionAboveInt64IsNotNegative) {
    std::string j = conv_json;
    j.replace(j.find("[2, 3, 4, 4]"), 12, "[18446744073709551615, 3, 4, 4]");
    try {
        json::parse(j, "u64.json");
        ADD_FAILURE() << "no error";
    } catch (const error &e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("u64.json"), std::string::npos) << m;
        EXPECT_NE(m.find("inputs[0] (tensor 0).shape[0]"), std::string::npos) << m;
        EXPECT_NE(m.find("18446744073709551615 does not fit"), std::string::npos) << m;
        EXPECT_EQ(m.find("negative"), std::string::npos) << m;
    }
    std::string a = conv_json;
    a.replace(a.find("\"value\": [1, 1]"), 15, "\"value\": [18446744073709551615, 1]");
    expect_error([&] { json::parse(a, "attr.json"); }, status::invalid_shape, {"attr.json", "attrs.strides", "does not fit"});
}

TEST(BadInput, JsonF32AttributeOutOfRange) {
    std::string j = conv_json;
    j.replace(j.find("\"attrs\": {"), 10, R"("attrs": {"alpha": {"type": "f32", "value": 1e300}, )");
    expect_error([&] { json::parse(j, "f.json"); }, status::invalid_graph_op, {"f.json", "attrs.alpha", "range of f32"});
}

io::rewrite_options shapes(const std::string &s) {
    io::rewrite_options o;
    o.in_shapes = s;
    return o;
}

TEST(BadInput, InShapesNumbersTooLarge) {
    json::document d = json::parse(conv_json, "c.json");
    expect_error([&] { io::apply_rewrite(d, shapes("0:99999999999999999999x32x28x28")); }, status::invalid_arguments,
                 {"--in-shapes", "99999999999999999999", "64-bit"});
    expect_error([&] { io::apply_rewrite(d, shapes("99999999999999999999999:1x2")); }, status::invalid_arguments,
                 {"--in-shapes", "99999999999999999999999", "64-bit"});
    // Strides of a format tag that overflow: checked like the dense ones.
    expect_error([&] { io::apply_rewrite(d, shapes("0:4611686018427387904x3x4x4*acdb")); }, status::invalid_arguments,
                 {"--in-shapes", "does not fit in int64"});
}

TEST(BadInput, MbThatOverflowsTheStrides) {
    json::document d = json::parse(conv_json, "c.json");
    io::rewrite_options o;
    o.mb = dim_t(1) << 62;  // (the CLI test uses the issue's 58546812335685632 on conv_3d.json)
    expect_error([&] { io::apply_rewrite(d, o); }, status::out_of_memory, {"--mb 4611686018427387904", "tensor 0", "int64"});
}

TEST(BadInput, MbZeroIsAValidBatch) {
    json::document d = json::parse(conv_json, "c.json");
    io::rewrite_options o;
    o.mb = 0;
    io::apply_rewrite(d, o);
    EXPECT_EQ(d.ops[0].inputs()[0].shape()[0], 0);
}

}  // namespace
