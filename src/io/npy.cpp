// .npy reading and writing (https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html).
#include "convgrad/npy.hpp"

#include <cctype>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/checked.hpp"
#include "core/float_convert.hpp"
#include "core/op_error.hpp"
#include "core/tensor_index.hpp"

namespace convgrad::npy {

namespace {

const char magic[] = "\x93NUMPY";

[[noreturn]] void fail(const std::string &source, const std::string &what,
                       status code = status::invalid_arguments) {
    throw error(code, source + ": " + what);
}

const char *descr_of(data_type dt) {
    switch (dt) {
        case data_type::f32: return "<f4";
        case data_type::f16: return "<f2";
        case data_type::s32: return "<i4";
        default: return nullptr;
    }
}

const char *numpy_name(data_type dt) {
    switch (dt) {
        case data_type::f32: return "float32";
        case data_type::f16: return "float16";
        case data_type::s32: return "int32";
        default: return "?";
    }
}

// A tiny parser for the header's Python dict literal.
struct header_parser {
    const std::string &s;
    const std::string &source;
    size_t p = 0;

    void ws() {
        while (p < s.size() && std::isspace(static_cast<unsigned char>(s[p]))) ++p;
    }
    [[noreturn]] void bad(const std::string &what) const {
        fail(source, "malformed .npy header (" + what + " at header offset " + std::to_string(p) +
                         "): " + s);
    }
    void expect(char c) {
        ws();
        if (p >= s.size() || s[p] != c) bad(std::string("expected '") + c + "'");
        ++p;
    }
    bool peek(char c) {
        ws();
        return p < s.size() && s[p] == c;
    }
    std::string str() {
        ws();
        if (p >= s.size() || (s[p] != '\'' && s[p] != '"')) bad("expected a string");
        const char q = s[p++];
        const size_t e = s.find(q, p);
        if (e == std::string::npos) bad("unterminated string");
        std::string r = s.substr(p, e - p);
        p = e + 1;
        return r;
    }
    bool boolean() {
        ws();
        if (s.compare(p, 4, "True") == 0) return p += 4, true;
        if (s.compare(p, 5, "False") == 0) return p += 5, false;
        bad("expected True or False");
    }
    dims tuple() {
        expect('(');
        dims d;
        while (!peek(')')) {
            ws();
            size_t q = p;
            while (q < s.size() && std::isdigit(static_cast<unsigned char>(s[q]))) ++q;
            if (q == p) bad("expected a dimension");
            dim_t v = 0;
            if (!detail::parse_int64(std::string_view(s).substr(p, q - p), v))
                bad("shape dimension " + s.substr(p, q - p) + " does not fit a 64-bit integer");
            d.push_back(v);
            p = q;
            if (peek(',')) ++p;
            else if (!peek(')')) bad("expected ',' or ')'");
        }
        ++p;
        return d;
    }
};

uint32_t read_le(const uint8_t *b, int n) {
    uint32_t v = 0;
    for (int i = n - 1; i >= 0; --i) v = (v << 8) | b[i];
    return v;
}

// Offset (in the file's element order) of a logical row-major index.
dim_t file_index(const array &a, dim_t logical) {
    if (!a.fortran_order) return logical;
    dims column_major(a.shape.size());
    dim_t mul = 1;
    for (size_t d = 0; d < a.shape.size(); ++d) {
        column_major[d] = mul;
        mul *= a.shape[d];
    }
    return detail::offset_of_logical(a.shape, column_major, logical);
}

dim_t tensor_offset(const logical_tensor &lt, dim_t logical) {
    return detail::offset_of_logical(lt.shape(), lt.strides(), logical);
}

std::string shape_str(const dims &d) {
    std::string s = "(";
    for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
    if (d.size() == 1) s += ",";
    return s + ")";
}

}  // namespace

dim_t array::element_count() const {
    dim_t n = 1;
    for (dim_t d : shape) n *= d;
    return n;
}

double array::get(dim_t logical) const {
    const dim_t i = file_index(*this, logical);
    switch (dtype) {
        case data_type::f32: {
            float f;
            std::memcpy(&f, data.data() + 4 * i, 4);
            return f;
        }
        case data_type::f16: {
            uint16_t h;
            std::memcpy(&h, data.data() + 2 * i, 2);
            return detail::f16_to_float(h);
        }
        case data_type::s32: {
            int32_t v;
            std::memcpy(&v, data.data() + 4 * i, 4);
            return v;
        }
        default: return 0;
    }
}

array parse(const void *bytes, size_t size, const std::string &source) {
    const auto *b = static_cast<const uint8_t *>(bytes);
    if (size < 10 || std::memcmp(b, magic, 6) != 0)
        fail(source, "not a .npy file (no \\x93NUMPY magic)");
    const int major = b[6], minor = b[7];
    if (major < 1 || major > 3 || minor != 0)
        fail(source, "unsupported .npy format version " + std::to_string(major) + "." +
                         std::to_string(minor) + " (1.0, 2.0 and 3.0 are read)");
    const int len_bytes = major == 1 ? 2 : 4;
    if (size < size_t(8 + len_bytes)) fail(source, "truncated .npy header");
    const size_t hlen = read_le(b + 8, len_bytes);
    const size_t data_start = 8 + len_bytes + hlen;
    if (size < data_start) fail(source, "truncated .npy header (" + std::to_string(hlen) + " bytes announced)");
    const std::string header(reinterpret_cast<const char *>(b + 8 + len_bytes), hlen);

    header_parser hp{header, source};
    std::string descr;
    bool have_descr = false, have_order = false, have_shape = false;
    array a;
    hp.expect('{');
    while (!hp.peek('}')) {
        const std::string key = hp.str();
        if ((key == "descr" && have_descr) || (key == "fortran_order" && have_order) ||
            (key == "shape" && have_shape))
            hp.bad("key '" + key + "' given twice");
        hp.expect(':');
        if (key == "descr") descr = hp.str(), have_descr = true;
        else if (key == "fortran_order") a.fortran_order = hp.boolean(), have_order = true;
        else if (key == "shape") a.shape = hp.tuple(), have_shape = true;
        else hp.bad("unknown key '" + key + "'");
        if (hp.peek(',')) ++hp.p;
        else if (!hp.peek('}')) hp.bad("expected ',' or '}'");
    }
    if (!have_descr || !have_order || !have_shape)
        fail(source, "malformed .npy header (needs descr, fortran_order and shape): " + header);

    if (descr.size() >= 2 && descr[0] == '>' && descr != ">i1" && descr != ">u1")
        fail(source, "big-endian data ('" + descr + "') is not supported; save it little-endian",
             status::invalid_data_type);
    std::string d = descr;
    if (!d.empty() && (d[0] == '=' || d[0] == '|')) d[0] = '<';  // native = little-endian (x86)
    if (d == "<f4") a.dtype = data_type::f32;
    else if (d == "<f2") a.dtype = data_type::f16;
    else if (d == "<i4") a.dtype = data_type::s32;
    else
        fail(source, "data type '" + descr + "' is not supported (float32 '<f4', float16 '<f2', int32 '<i4')",
             status::invalid_data_type);

    dim_t n = 1;
    for (dim_t x : a.shape) {
        if (x < 0 || (x > 0 && n > (dim_t(1) << 50) / x)) fail(source, "shape too large");
        n *= x;
    }
    const size_t nbytes = size_t(n) * element_size(a.dtype);
    if (size - data_start < nbytes)
        fail(source, "truncated data: shape " + shape_str(a.shape) + " needs " + std::to_string(nbytes) +
                         " bytes, the file has " + std::to_string(size - data_start));
    if (size - data_start > nbytes)
        fail(source, "trailing bytes after the data (" + std::to_string(size - data_start - nbytes) +
                         "): shape and size disagree");
    a.data.assign(b + data_start, b + data_start + nbytes);
    return a;
}

array read_file(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw error(status::invalid_arguments, path + ": cannot open the file");
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    return parse(bytes.data(), bytes.size(), path);
}

std::vector<uint8_t> serialize(const array &a, int version) {
    const char *descr = descr_of(a.dtype);
    if (!descr) throw error(status::invalid_data_type, std::string(".npy: cannot store ") + to_string(a.dtype));
    std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': " +
                         (a.fortran_order ? "True" : "False") + ", 'shape': " + shape_str(a.shape) + ", }";
    if (version == 0) version = header.size() + 1 + 10 > 65535 ? 2 : 1;
    if (version < 1 || version > 3)
        throw error(status::invalid_arguments, ".npy: format version must be 1, 2 or 3");
    const size_t prefix = 8 + (version == 1 ? 2 : 4);
    // Pad with spaces and a final newline so that the data starts on a 64-byte boundary.
    size_t total = prefix + header.size() + 1;
    total = (total + 63) / 64 * 64;
    header.append(total - prefix - header.size() - 1, ' ');
    header.push_back('\n');
    if (version == 1 && header.size() > 65535)
        throw error(status::invalid_arguments, ".npy: header too long for format version 1.0");
    std::vector<uint8_t> out(magic, magic + 6);
    out.push_back(uint8_t(version));
    out.push_back(0);
    const uint32_t hl = uint32_t(header.size());
    for (size_t i = 0; i < prefix - 8; ++i) out.push_back(uint8_t(hl >> (8 * i)));
    out.insert(out.end(), header.begin(), header.end());
    out.insert(out.end(), a.data.begin(), a.data.end());
    return out;
}

void write_file(const std::string &path, const array &a, int version) {
    const auto bytes = serialize(a, version);
    std::ofstream f(path, std::ios::binary);
    if (!f) throw error(status::invalid_arguments, path + ": cannot open the file for writing");
    f.write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
    if (!f) throw error(status::runtime_error, path + ": write failed");
}

data_type file_type_for(data_type t) { return t == data_type::bf16 ? data_type::f32 : t; }

void load_into(const array &a, const tensor &t, const std::string &source) {
    const logical_tensor &lt = t.get_logical_tensor();
    const std::string who = "tensor " + std::to_string(lt.id());
    if (!lt.has_known_shape() || !lt.has_known_strides())
        fail(source, who + " has no known shape and strides to read into", status::invalid_shape);
    if (a.shape != lt.shape())
        fail(source, "shape " + shape_str(a.shape) + " does not match " + who + " of shape " +
                         detail::to_string(lt.shape()),
             status::invalid_shape);
    const data_type want = file_type_for(lt.dtype());
    if (a.dtype != want)
        fail(source, std::string("data type ") + numpy_name(a.dtype) + " does not match " + who + " (" +
                         to_string(lt.dtype()) + ", which needs a " + numpy_name(want) + " file)",
             status::invalid_data_type);
    if (!t.get_data_handle() && lt.element_count() > 0) fail(source, who + " has no memory");
    const dim_t n = a.element_count();
    auto *base = static_cast<uint8_t *>(t.get_data_handle());
    for (dim_t i = 0; i < n; ++i) {
        const dim_t fi = file_index(a, i);
        const dim_t off = tensor_offset(lt, i);
        switch (lt.dtype()) {
            case data_type::f32:
            case data_type::s32: std::memcpy(base + 4 * off, a.data.data() + 4 * fi, 4); break;
            case data_type::f16: std::memcpy(base + 2 * off, a.data.data() + 2 * fi, 2); break;
            case data_type::bf16: {
                float f;
                std::memcpy(&f, a.data.data() + 4 * fi, 4);
                const uint16_t h = detail::float_to_bf16(f);
                std::memcpy(base + 2 * off, &h, 2);
                break;
            }
            default: fail(source, who + ": unsupported data type", status::invalid_data_type);
        }
    }
}

void load_file(const std::string &path, const tensor &t) { load_into(read_file(path), t, path); }

array from_tensor(const tensor &t) {
    const logical_tensor &lt = t.get_logical_tensor();
    const std::string who = "tensor " + std::to_string(lt.id());
    if (!lt.has_known_shape() || !lt.has_known_strides())
        throw error(status::invalid_shape, who + ": shape and strides must be known to save it");
    array a;
    a.dtype = file_type_for(lt.dtype());
    if (!descr_of(a.dtype))
        throw error(status::invalid_data_type, who + ": cannot save data type " + to_string(lt.dtype()));
    a.shape = lt.shape();
    const dim_t n = lt.element_count();
    a.data.resize(size_t(n) * element_size(a.dtype));
    const auto *base = static_cast<const uint8_t *>(t.get_data_handle());
    for (dim_t i = 0; i < n; ++i) {
        const dim_t off = tensor_offset(lt, i);
        switch (lt.dtype()) {
            case data_type::f32:
            case data_type::s32: std::memcpy(a.data.data() + 4 * i, base + 4 * off, 4); break;
            case data_type::f16: std::memcpy(a.data.data() + 2 * i, base + 2 * off, 2); break;
            case data_type::bf16: {
                uint16_t h;
                std::memcpy(&h, base + 2 * off, 2);
                const float f = detail::bf16_to_float(h);
                std::memcpy(a.data.data() + 4 * i, &f, 4);
                break;
            }
            default: break;
        }
    }
    return a;
}

void save_file(const std::string &path, const tensor &t, int version) {
    write_file(path, from_tensor(t), version);
}

}  // namespace convgrad::npy
