// .npy files: every version, order and type, tensors of any strides, bf16 through f32 files,
// and every error.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "convgrad/npy.hpp"
#include "util/tensor_buffer.hpp"

using namespace convgrad;
using convgrad::testing::tensor_buffer;

namespace {

std::vector<uint8_t> npy_bytes(int version, const std::string &header_dict, const std::vector<uint8_t> &data) {
    std::vector<uint8_t> b = {0x93, 'N', 'U', 'M', 'P', 'Y', uint8_t(version), 0};
    std::string h = header_dict;
    const size_t prefix = version == 1 ? 10 : 12;
    while ((prefix + h.size() + 1) % 64) h.push_back(' ');
    h.push_back('\n');
    for (size_t i = 0; i < prefix - 8; ++i) b.push_back(uint8_t(h.size() >> (8 * i)));
    b.insert(b.end(), h.begin(), h.end());
    b.insert(b.end(), data.begin(), data.end());
    return b;
}

template <typename T>
std::vector<uint8_t> raw(const std::vector<T> &v) {
    std::vector<uint8_t> b(v.size() * sizeof(T));
    std::memcpy(b.data(), v.data(), b.size());
    return b;
}

std::string tmp_path(const std::string &name) {
    return (std::filesystem::temp_directory_path() / ("convgrad_npy_" + name)).string();
}

void expect_error(const std::function<void()> &f, const std::vector<std::string> &needles) {
    try {
        f();
    } catch (const error &e) {
        for (const auto &n : needles) EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what();
        return;
    }
    ADD_FAILURE() << "no error";
}

}  // namespace

TEST(Npy, WritesWhatNumpyWrites) {
    // np.save(f, np.arange(6, dtype='<f4').reshape(2, 3)): format 1.0, header padded to 64 bytes.
    npy::array a;
    a.dtype = data_type::f32;
    a.shape = {2, 3};
    a.data = raw(std::vector<float>{0, 1, 2, 3, 4, 5});
    const auto bytes = npy::serialize(a);
    const auto expected = npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", a.data);
    EXPECT_EQ(bytes, expected);
    EXPECT_EQ((bytes.size() - a.data.size()) % 64, 0u);
    // One-dimensional shapes are written (n,) and scalars ().
    a.shape = {6};
    const auto b1 = npy::serialize(a);
    EXPECT_NE(std::string(b1.begin(), b1.end()).find("'shape': (6,)"), std::string::npos);
}

TEST(Npy, AllVersionsAndTypesRoundTrip) {
    for (int version : {1, 2, 3})
        for (data_type dt : {data_type::f32, data_type::f16, data_type::s32}) {
            SCOPED_TRACE(std::to_string(version) + " " + to_string(dt));
            npy::array a;
            a.dtype = dt;
            a.shape = {2, 1, 3};
            a.data.resize(6 * element_size(dt));
            for (size_t i = 0; i < a.data.size(); ++i) a.data[i] = uint8_t(i * 7 + 1);
            const auto bytes = npy::serialize(a, version);
            EXPECT_EQ(bytes[6], version);
            const npy::array b = npy::parse(bytes.data(), bytes.size());
            EXPECT_EQ(b.dtype, dt);
            EXPECT_EQ(b.shape, a.shape);
            EXPECT_EQ(b.data, a.data);
            EXPECT_FALSE(b.fortran_order);
        }
}

TEST(Npy, ReadsNumpyHeadersOfEveryVersion) {
    const std::vector<int32_t> v = {1, -2, 3, -4};
    for (int version : {1, 2, 3}) {
        // numpy writes a trailing comma and spaces; also accept no trailing comma, double quotes.
        for (const char *dict : {"{'descr': '<i4', 'fortran_order': False, 'shape': (2, 2), }",
                                 "{\"shape\": (2,2), \"descr\": \"<i4\", \"fortran_order\": False}"}) {
            const auto b = npy_bytes(version, dict, raw(v));
            const npy::array a = npy::parse(b.data(), b.size());
            EXPECT_EQ(a.dtype, data_type::s32);
            EXPECT_EQ(a.shape, (dims{2, 2}));
            EXPECT_EQ(a.get(3), -4);
        }
    }
    // Scalars and float16.
    const auto s = npy_bytes(1, "{'descr': '<f2', 'fortran_order': False, 'shape': (), }", raw(std::vector<uint16_t>{0x3c00}));
    const npy::array a = npy::parse(s.data(), s.size());
    EXPECT_TRUE(a.shape.empty());
    EXPECT_EQ(a.element_count(), 1);
    EXPECT_EQ(a.get(0), 1.0);
}

TEST(Npy, FortranOrderIsTransposedOnRead) {
    // Logical [[1,2,3],[4,5,6]] stored column-major: 1 4 2 5 3 6.
    const auto b = npy_bytes(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }",
                             raw(std::vector<float>{1, 4, 2, 5, 3, 6}));
    const npy::array a = npy::parse(b.data(), b.size());
    EXPECT_TRUE(a.fortran_order);
    for (int i = 0; i < 6; ++i) EXPECT_EQ(a.get(i), i + 1);
    tensor_buffer t(logical_tensor(0, data_type::f32, {2, 3}));
    npy::load_into(a, t.as_tensor());
    EXPECT_EQ(t.values(), (std::vector<double>{1, 2, 3, 4, 5, 6}));
    // Written back in C order.
    npy::array c = npy::from_tensor(t.as_tensor());
    EXPECT_FALSE(c.fortran_order);
    EXPECT_EQ(c.data, raw(std::vector<float>{1, 2, 3, 4, 5, 6}));
    // A serialized Fortran array keeps its flag.
    const auto again = npy::serialize(a);
    EXPECT_TRUE(npy::parse(again.data(), again.size()).fortran_order);
}

TEST(Npy, TensorsWithArbitraryStrides) {
    // NCHW shape with channels-last strides, plus padding between rows.
    const dims shape{2, 3, 2, 2};
    const dims strides{3 * 2 * 5, 1, 2 * 5, 5};  // c innermost, w stride 5 (gaps)
    for (data_type dt : {data_type::f32, data_type::f16, data_type::s32}) {
        SCOPED_TRACE(to_string(dt));
        tensor_buffer src(logical_tensor(1, dt, shape, strides));
        src.fill_ints(7);
        const std::string path = tmp_path(std::string("strided_") + to_string(dt) + ".npy");
        npy::save_file(path, src.as_tensor());
        tensor_buffer dense(logical_tensor(1, dt, shape));
        npy::load_file(path, dense.as_tensor());
        EXPECT_EQ(dense.values(), src.values());
        tensor_buffer back(logical_tensor(1, dt, shape, strides));
        npy::load_file(path, back.as_tensor());
        EXPECT_EQ(back.values(), src.values());
        std::filesystem::remove(path);
    }
}

TEST(Npy, Bf16GoesThroughF32Files) {
    tensor_buffer t(logical_tensor(4, data_type::bf16, {5}));
    // Widening is exact: the f32 file holds the bf16 values.
    t.fill_values({1.0, -2.5, 3.0e38, 1.0 / 128, 0.0});
    const npy::array a = npy::from_tensor(t.as_tensor());
    EXPECT_EQ(a.dtype, data_type::f32);
    for (int i = 0; i < 5; ++i) EXPECT_EQ(a.get(i), t.get(i));
    EXPECT_EQ(npy::file_type_for(data_type::bf16), data_type::f32);
    // Narrowing rounds to nearest, ties to even.
    npy::array f;
    f.dtype = data_type::f32;
    f.shape = {4};
    f.data = raw(std::vector<float>{1.00390625f /* 1 + 2^-8: tie -> 1 */, 1.01171875f /* 1 + 3*2^-8: tie -> 1+2^-6 */,
                                    1.0051f /* above the tie -> 1 + 2^-7 */, -7.0f});
    tensor_buffer n(logical_tensor(4, data_type::bf16, {4}));
    npy::load_into(f, n.as_tensor());
    EXPECT_EQ(n.values(), (std::vector<double>{1.0, 1.015625, 1.0078125, -7.0}));
}

TEST(NpyErrors, MismatchesWithTheTensor) {
    npy::array a;
    a.dtype = data_type::f32;
    a.shape = {2, 3};
    a.data.resize(24);
    tensor_buffer wrong_shape(logical_tensor(3, data_type::f32, {3, 2}));
    expect_error([&] { npy::load_into(a, wrong_shape.as_tensor(), "x.npy"); },
                 {"x.npy", "shape (2, 3)", "tensor 3", "[3,2]"});
    tensor_buffer wrong_type(logical_tensor(3, data_type::f16, {2, 3}));
    expect_error([&] { npy::load_into(a, wrong_type.as_tensor(), "x.npy"); },
                 {"float32", "tensor 3", "f16", "float16 file"});
    a.dtype = data_type::s32;
    tensor_buffer bf(logical_tensor(3, data_type::bf16, {2, 3}));
    expect_error([&] { npy::load_into(a, bf.as_tensor(), "x.npy"); }, {"int32", "bf16", "float32 file"});
}

TEST(NpyErrors, MalformedFiles) {
    const auto good = npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", raw(std::vector<float>{1, 2}));
    auto parse = [](const std::vector<uint8_t> &b) { npy::parse(b.data(), b.size(), "f.npy"); };
    expect_error([&] { parse({'n', 'o', 'p', 'e', 0, 0, 0, 0, 0, 0, 0}); }, {"f.npy", "not a .npy file"});
    auto v4 = good;
    v4[6] = 4;
    expect_error([&] { parse(v4); }, {"version 4.0"});
    auto truncated = good;
    truncated.resize(truncated.size() - 1);
    expect_error([&] { parse(truncated); }, {"truncated data", "(2,)"});
    auto trailing = good;
    trailing.push_back(0);
    expect_error([&] { parse(trailing); }, {"trailing bytes"});
    expect_error([&] { parse(npy_bytes(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", raw(std::vector<float>{1, 2}))); },
                 {"big-endian"});
    expect_error([&] { parse(npy_bytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", raw(std::vector<double>{1}))); },
                 {"'<f8' is not supported"});
    expect_error([&] { parse(npy_bytes(1, "{'descr': '<f4', 'shape': (2,), }", raw(std::vector<float>{1, 2}))); },
                 {"needs descr, fortran_order and shape"});
    expect_error([&] { parse(npy_bytes(1, "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }", raw(std::vector<float>{1, 2}))); },
                 {"malformed", "True or False"});
    expect_error([&] { parse(npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,x), }", raw(std::vector<float>{1, 2}))); },
                 {"malformed"});
    expect_error([] { npy::read_file("/nonexistent/a.npy"); }, {"cannot open"});
    npy::array a;
    a.dtype = data_type::f32;
    expect_error([&] { npy::serialize(a, 5); }, {"version must be 1, 2 or 3"});
}

TEST(Npy, LongHeadersUseVersion2) {
    npy::array a;
    a.dtype = data_type::s32;
    a.shape.assign(25000, 1);  // a header longer than 65535 bytes
    a.data.resize(4);
    const auto b = npy::serialize(a);
    EXPECT_EQ(b[6], 2);
    EXPECT_EQ(npy::parse(b.data(), b.size()).shape.size(), 25000u);
    EXPECT_THROW(npy::serialize(a, 1), error);
}
