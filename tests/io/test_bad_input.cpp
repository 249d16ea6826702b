// Reproducers of issue 11 for the readers: numbers that do not fit, duplicate keys and other
// malformed input give a convgrad::error naming the file or option and the field, never a
// foreign exception (std::out_of_range from stoll, nlohmann::out_of_range) or a wrong message.
#include <gtest/gtest.h>

#include <functional>

#include "convgrad/json.hpp"
#include "convgrad/npy.hpp"
#include "io_test_util.hpp"

using namespace convgrad;
using convgrad::testing::conv_json;
using convgrad::testing::expect_error;

namespace {

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

TEST(BadInput, NpyDimensionTooLongForInt64) {
    const auto b =
        npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999, 1), }");
    expect_error([&] { npy::parse(b.data(), b.size(), "big.npy"); }, status::invalid_arguments,
                 {"big.npy", "shape dimension 99999999999999999999999", "64-bit"});
}

TEST(BadInput, NpyDuplicateKey) {
    const auto b =
        npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'shape': (2,), }");
    expect_error([&] { npy::parse(b.data(), b.size(), "dup.npy"); }, status::invalid_arguments,
                 {"dup.npy", "key 'shape' given twice"});
}

TEST(BadInput, JsonNumberOutOfDoubleRange) {
    expect_error([] { json::parse(R"({"graph": [], "x": 1e400})", "huge.json"); },
                 status::invalid_arguments, {"huge.json", "invalid JSON", "number overflow"});
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
    expect_error([&] { json::parse(a, "attr.json"); }, status::invalid_shape,
                 {"attr.json", "attrs.strides", "does not fit"});
}

TEST(BadInput, JsonF32AttributeOutOfRange) {
    std::string j = conv_json;
    j.replace(j.find("\"attrs\": {"), 10,
              R"("attrs": {"alpha": {"type": "f32", "value": 1e300}, )");
    expect_error([&] { json::parse(j, "f.json"); }, status::invalid_graph_op,
                 {"f.json", "attrs.alpha", "range of f32"});
}

}  // namespace
