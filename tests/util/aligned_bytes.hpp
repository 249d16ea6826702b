// Byte vectors whose data is 64-byte aligned, as the tensors of PyTorch and of most allocators
// of big buffers are: kernels that read a tensor in place when its rows are whole cache lines
// (the AMX forward's A) then take that path in the tests every time, not by the chance of
// malloc's alignment.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

namespace convgrad::testing {

template <class T>
struct aligned64_allocator {
    using value_type = T;
    aligned64_allocator() = default;
    template <class U>
    aligned64_allocator(const aligned64_allocator<U> &) {}
    T *allocate(size_t n) {
        return static_cast<T *>(::operator new(n * sizeof(T), std::align_val_t(64)));
    }
    void deallocate(T *p, size_t) { ::operator delete(p, std::align_val_t(64)); }
    template <class U>
    bool operator==(const aligned64_allocator<U> &) const {
        return true;
    }
};

using aligned_bytes = std::vector<uint8_t, aligned64_allocator<uint8_t>>;

}  // namespace convgrad::testing
