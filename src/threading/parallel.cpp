#include "threading/parallel.hpp"

#include <omp.h>

#include <atomic>
#include <string>

#include "convgrad/threads.hpp"
#include "convgrad/types.hpp"

namespace convgrad {

namespace {
// 0: follow OpenMP's setting. Global rather than OpenMP's per-thread ICV, so that a count set on
// one thread (a Python interpreter's) holds for compiles on every thread.
std::atomic<int> requested_threads{0};
}  // namespace

void set_num_threads(int n) {
    if (n < 0)
        throw error(status::invalid_arguments,
                    "set_num_threads: the thread count must be >= 0 (0 = OpenMP's default); got " +
                        std::to_string(n));
    requested_threads.store(n, std::memory_order_relaxed);
}

int get_num_threads() { return detail::max_threads(); }

namespace detail {

int max_threads() {
    const int n = requested_threads.load(std::memory_order_relaxed);
    return n > 0 ? n : omp_get_max_threads();
}

}  // namespace detail
}  // namespace convgrad
