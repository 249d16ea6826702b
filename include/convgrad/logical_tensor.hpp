// Logical tensors: what a tensor is (id, type, shape, memory layout) without its data.
#pragma once

#include <optional>

#include "convgrad/types.hpp"

namespace convgrad {

enum class layout_type { undef, any, strided };
enum class property_type { undef, variable, constant };

CONVGRAD_API const char *to_string(layout_type lt);
CONVGRAD_API const char *to_string(property_type pt);

class CONVGRAD_API logical_tensor {
public:
    logical_tensor() = default;

    /// Dense row-major strides when every dim is known; otherwise unknown strides.
    logical_tensor(size_t id, data_type dt, dims shape, property_type pt = property_type::undef);

    /// Explicit strides in elements (any order: channels-last strides on an NCX shape are fine).
    logical_tensor(size_t id, data_type dt, dims shape, dims strides,
                   property_type pt = property_type::undef);

    /// Layout left to the library ("any"): it picks dense strides in the shape's own order.
    static logical_tensor any(size_t id, data_type dt, dims shape,
                              property_type pt = property_type::undef);

    /// Unknown rank and shape: everything is inferred at compile time.
    static logical_tensor unknown(size_t id, data_type dt);

    size_t id() const { return id_; }
    data_type dtype() const { return dt_; }
    /// Empty with `ndims() == -1` when the rank is unknown.
    const dims &shape() const { return shape_; }
    const dims &strides() const { return strides_; }
    layout_type layout() const { return layout_; }
    property_type property() const { return property_; }
    int ndims() const { return rank_known_ ? int(shape_.size()) : -1; }

    bool has_known_shape() const;    // rank and every dim known
    bool has_known_strides() const;  // strided layout with every stride known

    /// Number of elements (throws on overflow or unknown shape).
    dim_t element_count() const;
    /// Bytes spanned by the strided layout (throws on overflow or unknown layout).
    size_t size_bytes() const;

    /// Values of a small s32 shape tensor known before compilation (dst_shape/weights_shape).
    const std::optional<dims> &values() const { return values_; }
    logical_tensor &set_values(dims v) {
        values_ = std::move(v);
        return *this;
    }

    std::string to_string() const;  // e.g. "3:f32:1x32x28x28:s25088x784x28x1"

private:
    size_t id_ = 0;
    data_type dt_ = data_type::undef;
    bool rank_known_ = false;
    dims shape_;
    dims strides_;
    layout_type layout_ = layout_type::undef;
    property_type property_ = property_type::undef;
    std::optional<dims> values_;
};

/// Dense row-major strides of a fully known shape (throws on overflow).
CONVGRAD_API dims dense_strides(const dims &shape);

}  // namespace convgrad
