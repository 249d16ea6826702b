// Scratch memory for kernels, recycled per thread. Fresh large allocations are returned to the
// OS on free and page-fault on every use; a few blocks kept per thread make repeated executions
// touch warm memory. Plain functions: callable from the per-ISA kernel units.
#pragma once

#include <cstddef>

namespace convgrad::detail {

/// 64-byte aligned memory of at least `bytes` (never null: throws std::bad_alloc).
void *scratch_acquire(size_t bytes, size_t *capacity);
/// Gives the block back to this thread's cache (or frees it).
void scratch_release(void *p, size_t capacity);

}  // namespace convgrad::detail
