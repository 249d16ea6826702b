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

namespace {

// One thread's part of a region: enter, its ithr values, leave. Returns the first exception
// this thread met (null when none); leave runs after a failing body, not after a failing enter.
template <typename Body>
std::exception_ptr run_with_hooks(const thread_hooks &hooks, Body &&body) {
    std::exception_ptr first;
    try {
        if (hooks.enter) hooks.enter(hooks.ctx);
    } catch (...) {
        return std::current_exception();
    }
    try {
        body();
    } catch (...) {
        first = std::current_exception();
    }
    try {
        if (hooks.leave) hooks.leave(hooks.ctx);
    } catch (...) {
        if (!first) first = std::current_exception();
    }
    return first;
}

}  // namespace

void parallel_region(int nthr, region_fn fn, void *ctx, const thread_hooks &hooks) {
    if (nthr <= 1) {
        // On the calling thread: the exception propagates as it is, after leave.
        const std::exception_ptr e = run_with_hooks(hooks, [&] { fn(ctx, 0, 1); });
        if (e) std::rethrow_exception(e);
        return;
    }
    std::exception_ptr first;
    std::atomic<bool> failed{false};
#pragma omp parallel num_threads(nthr)
    {
        const int team = omp_get_num_threads();
        const std::exception_ptr e = run_with_hooks(hooks, [&] {
            for (int ithr = omp_get_thread_num(); ithr < nthr; ithr += team) {
                if (failed.load(std::memory_order_relaxed)) break;
                fn(ctx, ithr, nthr);
            }
        });
        if (e) {
#pragma omp critical(convgrad_parallel_first_exception)
            if (!first) first = e;
            failed.store(true, std::memory_order_relaxed);
        }
    }
    if (first) std::rethrow_exception(first);
}

}  // namespace detail
}  // namespace convgrad
