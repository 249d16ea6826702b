#include "convgrad/logical_tensor.hpp"

#include <sstream>

#include "core/checked.hpp"
#include "core/op_error.hpp"

namespace convgrad {

using detail::checked_add;
using detail::checked_mul;

dims dense_strides(const dims &shape) {
    dims st(shape.size());
    dim_t acc = 1;
    for (size_t i = shape.size(); i-- > 0;) {
        st[i] = acc;
        acc = checked_mul(acc, std::max<dim_t>(shape[i], 1), "dense strides");
    }
    return st;
}

logical_tensor::logical_tensor(size_t id, data_type dt, dims shape, property_type pt)
    : id_(id), dt_(dt), rank_known_(true), shape_(std::move(shape)), property_(pt) {
    layout_ = layout_type::strided;
    if (has_known_shape()) strides_ = dense_strides(shape_);
    else strides_.assign(shape_.size(), unknown_dim);
}

logical_tensor::logical_tensor(size_t id, data_type dt, dims shape, dims strides, property_type pt)
    : id_(id),
      dt_(dt),
      rank_known_(true),
      shape_(std::move(shape)),
      strides_(std::move(strides)),
      layout_(layout_type::strided),
      property_(pt) {}

logical_tensor logical_tensor::any(size_t id, data_type dt, dims shape, property_type pt) {
    // No strides to compute: they are chosen at compile time (where sizes are checked).
    logical_tensor lt;
    lt.id_ = id;
    lt.dt_ = dt;
    lt.rank_known_ = true;
    lt.shape_ = std::move(shape);
    lt.layout_ = layout_type::any;
    lt.property_ = pt;
    return lt;
}

logical_tensor logical_tensor::unknown(size_t id, data_type dt) {
    logical_tensor lt;
    lt.id_ = id;
    lt.dt_ = dt;
    lt.layout_ = layout_type::any;
    return lt;
}

bool logical_tensor::has_known_shape() const {
    if (!rank_known_) return false;
    for (dim_t d : shape_)
        if (d == unknown_dim) return false;
    return true;
}

bool logical_tensor::has_known_strides() const {
    if (layout_ != layout_type::strided || !rank_known_ || strides_.size() != shape_.size())
        return false;
    for (dim_t s : strides_)
        if (s == unknown_dim) return false;
    return true;
}

dim_t logical_tensor::element_count() const {
    if (!has_known_shape())
        throw error(status::invalid_shape, "tensor " + to_string() + ": shape is not known");
    dim_t n = 1;
    for (dim_t d : shape_) n = checked_mul(n, d, "element count");
    return n;
}

size_t logical_tensor::size_bytes() const {
    if (!has_known_shape() || !has_known_strides())
        throw error(status::invalid_shape, "tensor " + to_string() + ": layout is not known");
    dim_t last = 0;  // offset of the last element
    for (size_t i = 0; i < shape_.size(); ++i) {
        if (shape_[i] == 0) return 0;
        last = checked_add(last, checked_mul(shape_[i] - 1, strides_[i], "tensor extent"),
                           "tensor extent");
    }
    const dim_t bytes = checked_mul(checked_add(last, 1, "tensor extent"),
                                    dim_t(element_size(dt_) ? element_size(dt_) : 1), "tensor bytes");
    // Leave headroom: nothing this large can be allocated on any machine.
    if (bytes > (dim_t(1) << 52))
        throw error(status::out_of_memory, "tensor " + to_string() + ": " + std::to_string(bytes) +
                                               " bytes is more than can be addressed");
    return size_t(bytes);
}

std::string logical_tensor::to_string() const {
    std::ostringstream os;
    os << id_ << ":" << convgrad::to_string(dt_) << ":";
    if (!rank_known_) os << "?";
    for (size_t i = 0; i < shape_.size(); ++i)
        os << (i ? "x" : "") << (shape_[i] == unknown_dim ? std::string("?") : std::to_string(shape_[i]));
    if (layout_ == layout_type::any) os << ":any";
    else if (has_known_strides()) {
        os << ":s";
        for (size_t i = 0; i < strides_.size(); ++i) os << (i ? "x" : "") << strides_[i];
    }
    return os.str();
}

}  // namespace convgrad
