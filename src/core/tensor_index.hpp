// The memory offset of a logical index: one helper for everything that walks a strided tensor in
// logical order (the .npy reader and writer, the tool's host tensors, the tests' and fuzzers'
// buffers).
#pragma once

#include "convgrad/types.hpp"

namespace convgrad::detail {

/// Offset, in elements, of the element with row-major index `logical` over `shape` in a tensor
/// with `strides` (one per axis of `shape`). `logical` must be below the element count.
inline dim_t offset_of_logical(const dims &shape, const dims &strides, dim_t logical) {
    dim_t off = 0;
    for (size_t d = shape.size(); d-- > 0;) {
        off += (logical % shape[d]) * strides[d];
        logical /= shape[d];
    }
    return off;
}

}  // namespace convgrad::detail
