// Element access of the AMX convolution kernels (fwd, bwd_data, bwd_weights): one element of a
// user tensor of any float type as f32, as the tiles' 16-bit type, and an f32 result stored
// rounded once. Plain bit code (core/float_convert.hpp): no instruction-set flags.
#pragma once

#include <cstdint>

#include "core/float_convert.hpp"
#include "kernels/amx/amx_ukernel.hpp"

namespace convgrad::detail::amx {

inline float load_element(data_type dt, const void *base, int64_t i) {
    switch (dt) {
        case data_type::bf16:
            return bf16_to_float(static_cast<const uint16_t *>(base)[i]);
        case data_type::f16:
            return f16_to_float(static_cast<const uint16_t *>(base)[i]);
        default:
            return static_cast<const float *>(base)[i];
    }
}

// n elements `stride` apart as f32 (a bias vector, taken once per execution).
inline void load_elements(data_type dt, const void *base, int64_t stride, int64_t n, float *out) {
    for (int64_t i = 0; i < n; ++i) out[i] = load_element(dt, base, i * stride);
}

// The element as the kernel's type: the bits themselves when the op has that type.
inline uint16_t narrow_element(data_type dt, const void *base, int64_t i, amx_dot to) {
    if ((dt == data_type::bf16 && to == amx_dot::bf16) ||
        (dt == data_type::f16 && to == amx_dot::f16))
        return static_cast<const uint16_t *>(base)[i];
    const float x = load_element(dt, base, i);
    return to == amx_dot::bf16 ? float_to_bf16(x) : float_to_f16(x);
}

inline void store_element(data_type dt, void *out, int64_t off, float v) {
    switch (dt) {
        case data_type::bf16:
            static_cast<uint16_t *>(out)[off] = float_to_bf16(v);
            break;
        case data_type::f16:
            static_cast<uint16_t *>(out)[off] = float_to_f16(v);
            break;
        default:
            static_cast<float *>(out)[off] = v;
            break;
    }
}

}  // namespace convgrad::detail::amx
