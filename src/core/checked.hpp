// Overflow-checked int64 arithmetic for every size computation on user input.
#pragma once

#include <string>

#include "convgrad/types.hpp"

namespace convgrad::detail {

[[noreturn]] void throw_overflow(const std::string &what);

inline dim_t checked_mul(dim_t a, dim_t b, const char *what) {
    dim_t r;
    if (__builtin_mul_overflow(a, b, &r)) throw_overflow(what);
    return r;
}
inline dim_t checked_add(dim_t a, dim_t b, const char *what) {
    dim_t r;
    if (__builtin_add_overflow(a, b, &r)) throw_overflow(what);
    return r;
}
inline dim_t checked_sub(dim_t a, dim_t b, const char *what) {
    dim_t r;
    if (__builtin_sub_overflow(a, b, &r)) throw_overflow(what);
    return r;
}

}  // namespace convgrad::detail
