// Overflow-checked int64 arithmetic for every size computation on user input.
#pragma once

#include <string>
#include <string_view>

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

namespace convgrad::detail {

/// Parses an optionally signed decimal integer that must fill all of `s` and fit int64.
/// Returns false otherwise (callers name the field in their own error message); never throws.
inline bool parse_int64(std::string_view s, dim_t &out) {
    size_t i = 0;
    const bool neg = !s.empty() && (s[0] == '-' || s[0] == '+') ? s[0] == '-' : false;
    if (!s.empty() && (s[0] == '-' || s[0] == '+')) i = 1;
    if (i == s.size()) return false;
    dim_t v = 0;
    for (; i < s.size(); ++i) {
        if (s[i] < '0' || s[i] > '9') return false;
        // Accumulate negatively: INT64_MIN has no positive counterpart.
        if (__builtin_mul_overflow(v, dim_t(10), &v) || __builtin_sub_overflow(v, dim_t(s[i] - '0'), &v))
            return false;
    }
    if (!neg) {
        if (v == INT64_MIN) return false;
        v = -v;
    }
    out = v;
    return true;
}

}  // namespace convgrad::detail
