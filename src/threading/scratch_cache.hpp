// Scratch memory for kernels, recycled per thread. Fresh large allocations are returned to the
// OS on free and page-fault on every use; a few blocks kept per thread make repeated executions
// touch warm memory. Plain functions: callable from the per-ISA kernel units.
#pragma once

#include <cstddef>
#include <type_traits>

namespace convgrad::detail {

/// 64-byte aligned memory of at least `bytes` (never null: throws std::bad_alloc).
void *scratch_acquire(size_t bytes, size_t *capacity);
/// Gives the block back to this thread's cache (or frees it).
void scratch_release(void *p, size_t capacity);
/// For tests: while on, every block handed out is first filled with 0xFF bytes (NaN as f32,
/// bf16 and f16), so a kernel that reads scratch it never wrote shows it in its results
/// instead of passing on whatever the block held before. Off by default; returns the old state.
bool scratch_poison(bool on);

/// Typed per-thread scratch: `count` elements of T (at least one), 64-byte aligned, back to the
/// cache of the thread that destroys it. Create it inside a parallel region's body (or an enter
/// hook) to get memory that thread already touched; the elements are not initialized.
template <typename T>
class scratch_buffer {
    static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                  "scratch holds plain data: no constructors or destructors run");

public:
    explicit scratch_buffer(size_t count)
        : count_(count),
          p_(static_cast<T *>(scratch_acquire((count ? count : 1) * sizeof(T), &capacity_))) {}
    ~scratch_buffer() { scratch_release(p_, capacity_); }
    scratch_buffer(const scratch_buffer &) = delete;
    scratch_buffer &operator=(const scratch_buffer &) = delete;

    T *data() const { return p_; }
    size_t size() const { return count_; }
    T &operator[](size_t i) const { return p_[i]; }

private:
    size_t count_, capacity_ = 0;
    T *p_;
};

}  // namespace convgrad::detail
