// Test helpers: user buffers for logical tensors, seeded small-integer fills, and reading a
// tensor back in logical (row-major over its shape) order whatever its strides.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "convgrad/convgrad.hpp"
#include "core/float_convert.hpp"
#include "core/tensor_index.hpp"
#include "util/aligned_bytes.hpp"

namespace convgrad::testing {

struct tensor_buffer {
    logical_tensor lt;
    aligned_bytes bytes;  // (64-byte aligned)

    tensor_buffer() = default;
    explicit tensor_buffer(const logical_tensor &l) : lt(l), bytes(l.size_bytes() + 64, 0) {}
    void *data() { return bytes.data(); }
    tensor as_tensor() { return tensor(lt, bytes.data()); }

    // Element at a logical index (row-major over lt.shape()).
    dim_t offset_of(dim_t logical) const { return detail::offset_of_logical(lt.shape(), lt.strides(), logical); }
    double get(dim_t logical) const {
        const dim_t off = offset_of(logical);
        switch (lt.dtype()) {
            case data_type::f32: return reinterpret_cast<const float *>(bytes.data())[off];
            case data_type::bf16:
                return detail::bf16_to_float(reinterpret_cast<const uint16_t *>(bytes.data())[off]);
            case data_type::f16:
                return detail::f16_to_float(reinterpret_cast<const uint16_t *>(bytes.data())[off]);
            case data_type::s32: return reinterpret_cast<const int32_t *>(bytes.data())[off];
            default: return 0;
        }
    }
    void set(dim_t logical, double v) {
        const dim_t off = offset_of(logical);
        switch (lt.dtype()) {
            case data_type::f32: reinterpret_cast<float *>(bytes.data())[off] = float(v); break;
            case data_type::bf16:
                reinterpret_cast<uint16_t *>(bytes.data())[off] = detail::double_to_bf16(v);
                break;
            case data_type::f16:
                reinterpret_cast<uint16_t *>(bytes.data())[off] = detail::double_to_f16(v);
                break;
            case data_type::s32: reinterpret_cast<int32_t *>(bytes.data())[off] = int32_t(v); break;
            default: break;
        }
    }
    dim_t count() const { return lt.element_count(); }
    std::vector<double> values() const {
        std::vector<double> v(static_cast<size_t>(count()));
        for (dim_t i = 0; i < count(); ++i) v[size_t(i)] = get(i);
        return v;
    }
    // Small integers in [lo, hi]: sums of products stay exact in f32 for test-sized problems.
    void fill_ints(uint64_t seed, int lo = -3, int hi = 3) {
        std::mt19937_64 rng(seed);
        std::uniform_int_distribution<int> dist(lo, hi);
        for (dim_t i = 0; i < count(); ++i) set(i, dist(rng));
    }
    void fill_values(const std::vector<double> &v) {
        for (size_t i = 0; i < v.size(); ++i) set(dim_t(i), v[i]);
    }
};

}  // namespace convgrad::testing
