#include "convgrad/logical_tensor.hpp"
#include "core/checked.hpp"

namespace convgrad {

const char *to_string(data_type dt) {
    switch (dt) {
        case data_type::undef: return "undef";
        case data_type::f32: return "f32";
        case data_type::bf16: return "bf16";
        case data_type::f16: return "f16";
        case data_type::s32: return "s32";
    }
    return "?";
}

bool parse_data_type(std::string_view name, data_type &out) {
    for (data_type dt : {data_type::undef, data_type::f32, data_type::bf16, data_type::f16,
                         data_type::s32})
        if (name == to_string(dt)) {
            out = dt;
            return true;
        }
    return false;
}

size_t element_size(data_type dt) {
    switch (dt) {
        case data_type::f32:
        case data_type::s32: return 4;
        case data_type::bf16:
        case data_type::f16: return 2;
        default: return 0;
    }
}

const char *to_string(fpmath_mode m) {
    switch (m) {
        case fpmath_mode::strict: return "strict";
        case fpmath_mode::bf16: return "bf16";
        case fpmath_mode::f16: return "f16";
        case fpmath_mode::tf32: return "tf32";
        case fpmath_mode::any: return "any";
    }
    return "?";
}

bool parse_fpmath_mode(std::string_view name, fpmath_mode &out) {
    for (fpmath_mode m : {fpmath_mode::strict, fpmath_mode::bf16, fpmath_mode::f16, fpmath_mode::tf32,
                          fpmath_mode::any})
        if (name == to_string(m)) {
            out = m;
            return true;
        }
    return false;
}

const char *to_string(status s) {
    switch (s) {
        case status::success: return "success";
        case status::invalid_arguments: return "invalid_arguments";
        case status::invalid_graph_op: return "invalid_graph_op";
        case status::invalid_shape: return "invalid_shape";
        case status::invalid_data_type: return "invalid_data_type";
        case status::unimplemented: return "unimplemented";
        case status::out_of_memory: return "out_of_memory";
        case status::runtime_error: return "runtime_error";
    }
    return "?";
}

const char *to_string(layout_type lt) {
    switch (lt) {
        case layout_type::undef: return "undef";
        case layout_type::any: return "any";
        case layout_type::strided: return "strided";
    }
    return "?";
}

const char *to_string(property_type pt) {
    switch (pt) {
        case property_type::undef: return "undef";
        case property_type::variable: return "variable";
        case property_type::constant: return "constant";
    }
    return "?";
}

namespace detail {
void throw_overflow(const std::string &what) {
    throw error(status::out_of_memory, "size overflow: " + what + " does not fit in int64");
}
}  // namespace detail

}  // namespace convgrad
