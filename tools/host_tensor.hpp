// A tensor with its own memory (64-byte aligned), element access in logical order whatever the
// strides, for the command-line tool.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "convgrad/convgrad.hpp"

namespace convgrad::tool {

class host_tensor {
public:
    host_tensor() = default;
    /// Zeroed memory whose first element is `offset_bytes` past a 64-byte boundary (0: aligned;
    /// 16: where glibc's malloc puts a large std::vector's data).
    explicit host_tensor(const logical_tensor &lt, size_t offset_bytes = 0);

    const logical_tensor &lt() const { return lt_; }
    void *data() const { return mem_.get(); }
    tensor as_tensor() const { return tensor(lt_, mem_.get()); }
    dim_t count() const { return count_; }
    size_t bytes() const { return bytes_; }

    /// Memory offset (elements) of a logical row-major index.
    dim_t offset_of(dim_t logical) const;
    double get(dim_t logical) const;
    void set(dim_t logical, double v);  // bf16/f16: rounded to nearest-even
    /// Every element in logical order, as doubles.
    std::vector<double> values() const;

private:
    logical_tensor lt_;
    std::shared_ptr<uint8_t> mem_;
    dim_t count_ = 0;
    size_t bytes_ = 0;
};

}  // namespace convgrad::tool
