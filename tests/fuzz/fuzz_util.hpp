// Shared by the fuzz targets: the contract they check is that convgrad either works or throws
// convgrad::error. Any other exception escapes and libFuzzer reports it as a crash (so does a
// sanitizer finding, and __builtin_trap() on a wrong result).
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "convgrad/convgrad.hpp"
#include "core/float_convert.hpp"
#include "core/tensor_index.hpp"

namespace convgrad::fuzz {

// Work small enough to execute inside a fuzzing iteration.
inline constexpr size_t max_bytes = size_t(1) << 22;
inline constexpr double max_flops = 4e7;

/// Memory of exactly a tensor's extent (no slack: ASan sees any read or write past it).
struct exact_buffer {
    logical_tensor lt;
    std::vector<uint8_t> bytes;
    explicit exact_buffer(const logical_tensor &l) : lt(l), bytes(l.size_bytes()) {}
    tensor as_tensor() { return tensor(lt, bytes.empty() ? nullptr : bytes.data()); }

    dim_t offset(dim_t logical) const { return detail::offset_of_logical(lt.shape(), lt.strides(), logical); }
    double get(dim_t i) const {
        const dim_t o = offset(i);
        switch (lt.dtype()) {
            case data_type::f32: {
                float f;
                std::memcpy(&f, bytes.data() + 4 * o, 4);
                return f;
            }
            case data_type::bf16:
            case data_type::f16: {
                uint16_t h;
                std::memcpy(&h, bytes.data() + 2 * o, 2);
                return lt.dtype() == data_type::bf16 ? detail::bf16_to_float(h) : detail::f16_to_float(h);
            }
            default: return 0;
        }
    }
    void set(dim_t i, double v) {
        const dim_t o = offset(i);
        switch (lt.dtype()) {
            case data_type::f32: {
                const float f = float(v);
                std::memcpy(bytes.data() + 4 * o, &f, 4);
                break;
            }
            case data_type::bf16:
            case data_type::f16: {
                const uint16_t h = lt.dtype() == data_type::bf16 ? detail::double_to_bf16(v) : detail::double_to_f16(v);
                std::memcpy(bytes.data() + 2 * o, &h, 2);
                break;
            }
            case data_type::s32: {
                const int32_t s = int32_t(v);
                std::memcpy(bytes.data() + 4 * o, &s, 4);
                break;
            }
            default: break;
        }
    }
};

/// Executes a compiled partition and the reference on the same small-integer inputs (sums are
/// exact, so both round the same value once) and traps when an output element differs.
/// Skips problems over `flop_cap` (a target whose inputs reach big problems easily passes less).
inline void run_and_compare(const compiled_partition &best, const compiled_partition &ref, uint64_t seed,
                            double flop_cap = max_flops) {
    size_t bytes = 0;
    for (const auto &l : best.inputs()) bytes += l.size_bytes();
    bytes += best.outputs()[0].size_bytes();
    if (bytes > max_bytes || best.flops() > flop_cap) return;
    std::vector<exact_buffer> in;
    std::vector<tensor> ins;
    for (const auto &l : best.inputs()) {
        in.emplace_back(l);
        const dim_t n = l.element_count();
        if (l.dtype() == data_type::s32) {  // a shape input holds the shape compiled for
            const dims &want = best.outputs()[0].shape();
            for (dim_t i = 0; i < n && size_t(i) < want.size(); ++i) in.back().set(i, double(want[size_t(i)]));
        } else {
            for (dim_t i = 0; i < n; ++i) {
                seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                in.back().set(i, double(int((seed >> 33) % 5) - 2));
            }
        }
        ins.push_back(in.back().as_tensor());
    }
    exact_buffer a(best.outputs()[0]), b(ref.outputs()[0]);
    best.execute(ins, {a.as_tensor()});
    ref.execute(ins, {b.as_tensor()});
    for (dim_t i = 0; i < a.lt.element_count(); ++i)
        if (!(a.get(i) == b.get(i))) __builtin_trap();  // wrong answer (NaN never occurs here)
}

}  // namespace convgrad::fuzz
