#include "host_tensor.hpp"

#include <cstdlib>
#include <cstring>

#include "core/float_convert.hpp"
#include "core/op_error.hpp"
#include "core/tensor_index.hpp"

namespace convgrad::tool {

host_tensor::host_tensor(const logical_tensor &lt, size_t offset_bytes) : lt_(lt) {
    count_ = lt.element_count();
    bytes_ = lt.size_bytes();
    const size_t alloc = (offset_bytes + bytes_ + 64 + 63) / 64 * 64;
    auto *p = static_cast<uint8_t *>(std::aligned_alloc(64, alloc));
    if (!p)
        throw error(status::out_of_memory, "tensor " + std::to_string(lt.id()) + " (" + to_string(lt.dtype()) +
                                               " " + detail::to_string(lt.shape()) + "): cannot allocate " +
                                               std::to_string(alloc) + " bytes");
    std::memset(p, 0, alloc);
    const std::shared_ptr<uint8_t> owner(p, [](uint8_t *q) { std::free(q); });
    mem_ = std::shared_ptr<uint8_t>(owner, p + offset_bytes);
}

dim_t host_tensor::offset_of(dim_t logical) const {
    return detail::offset_of_logical(lt_.shape(), lt_.strides(), logical);
}

double host_tensor::get(dim_t logical) const {
    const dim_t off = offset_of(logical);
    const uint8_t *b = mem_.get();
    switch (lt_.dtype()) {
        case data_type::f32: return reinterpret_cast<const float *>(b)[off];
        case data_type::bf16: return detail::bf16_to_float(reinterpret_cast<const uint16_t *>(b)[off]);
        case data_type::f16: return detail::f16_to_float(reinterpret_cast<const uint16_t *>(b)[off]);
        case data_type::s32: return reinterpret_cast<const int32_t *>(b)[off];
        default: return 0;
    }
}

void host_tensor::set(dim_t logical, double v) {
    const dim_t off = offset_of(logical);
    uint8_t *b = mem_.get();
    switch (lt_.dtype()) {
        case data_type::f32: reinterpret_cast<float *>(b)[off] = float(v); break;
        case data_type::bf16: reinterpret_cast<uint16_t *>(b)[off] = detail::double_to_bf16(v); break;
        case data_type::f16: reinterpret_cast<uint16_t *>(b)[off] = detail::double_to_f16(v); break;
        case data_type::s32: reinterpret_cast<int32_t *>(b)[off] = int32_t(v); break;
        default: break;
    }
}

std::vector<double> host_tensor::values() const {
    std::vector<double> v(static_cast<size_t>(count_));
    for (dim_t i = 0; i < count_; ++i) v[size_t(i)] = get(i);
    return v;
}

}  // namespace convgrad::tool
