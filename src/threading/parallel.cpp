#include "threading/parallel.hpp"

#include <omp.h>

#include <atomic>
#include <exception>
#include <string>

#include "convgrad/threads.hpp"
#include "convgrad/types.hpp"

namespace convgrad {

namespace {
// 0: follow OpenMP's setting. Global rather than OpenMP's per-thread ICV, so that a count set on
// one thread (a Python interpreter's) holds for compiles on every thread.
std::atomic<int> requested_count{0};
}  // namespace

void set_num_threads(int n) {
    if (n < 0 || n > max_thread_count)
        throw error(status::invalid_arguments,
                    "set_num_threads: the thread count must be in [0, " + std::to_string(max_thread_count) +
                        "] (0 = OpenMP's default); got " + std::to_string(n));
    requested_count.store(n, std::memory_order_relaxed);
}

int get_num_threads() { return detail::max_threads(); }

namespace detail {

int requested_threads() {
    const int n = requested_count.load(std::memory_order_relaxed);
    return n > 0 ? n : omp_get_max_threads();
}

int max_threads() {
    const int n = requested_threads();
    if (n > max_thread_count)
        throw error(status::invalid_arguments,
                    "thread count (OMP_NUM_THREADS or omp_set_num_threads): at most " +
                        std::to_string(max_thread_count) + " threads are supported; expected <= " +
                        std::to_string(max_thread_count) + ", got " + std::to_string(n));
    return n;
}

int threads_for(double macs) {
    const int n = max_threads();  // checked even when the work stays on one thread
    return macs < double(1 << 20) ? 1 : n;
}

void parallel_region(int nthr, region_fn fn, void *ctx) {
    if (nthr <= 1) {
        fn(ctx, 0, 1);  // on the calling thread: exceptions propagate as they are
        return;
    }
    std::exception_ptr first;
    std::atomic<bool> failed{false};
#pragma omp parallel num_threads(nthr)
    {
        const int team = omp_get_num_threads();
        for (int ithr = omp_get_thread_num(); ithr < nthr; ithr += team) {
            if (failed.load(std::memory_order_relaxed)) break;
            try {
                fn(ctx, ithr, nthr);
            } catch (...) {
#pragma omp critical(convgrad_parallel_first_exception)
                if (!first) first = std::current_exception();
                failed.store(true, std::memory_order_relaxed);
            }
        }
    }
    if (first) std::rethrow_exception(first);
}

}  // namespace detail
}  // namespace convgrad
