// Thread count of the kernels, settable from a program (or a Python binding) rather than only
// through OMP_NUM_THREADS.
#pragma once

#include "convgrad/export.hpp"

namespace convgrad {

/// Threads the kernels of partitions compiled *after* this call split their work over. A
/// compiled partition keeps the count it was compiled with, so that its results repeat bit for
/// bit. `n` = 0 restores the default (OpenMP's: OMP_NUM_THREADS or the number of cores).
/// Throws convgrad::error (invalid_arguments) for n < 0 or n > max_thread_count.
CONVGRAD_API void set_num_threads(int n);

/// The thread count partitions compiled now would use (>= 1).
CONVGRAD_API int get_num_threads();

}  // namespace convgrad
