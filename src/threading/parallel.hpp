// Threading: OpenMP behind a few small functions, with a static split so that every run with
// the same thread count does the same work in the same order.
//
// Every parallel region of the library (kernels and reference) goes through parallel(): an
// exception thrown by any thread of a region (std::bad_alloc from scratch memory, above all)
// is caught in that thread, the first one is kept, and it is rethrown on the calling thread
// after the region. An exception must never leave an OpenMP region: that is std::terminate.
//
// There is no barrier inside a region: a thread that has thrown would never reach it, and the
// others would wait forever. Phases that need one (compute partials, then reduce them) are two
// regions with the same thread count.
#pragma once

#include <cstdint>
#include <type_traits>

#include "convgrad/types.hpp"  // max_thread_count

namespace convgrad::detail {

/// Threads a parallel region would use (convgrad::set_num_threads, else OpenMP's setting:
/// OMP_NUM_THREADS / omp_set_num_threads), unchecked.
int requested_threads();

/// requested_threads(), or convgrad::error (invalid_arguments) when it exceeds max_thread_count.
int max_threads();

/// The one "worth threading" rule: work below about a million multiply-adds runs on the calling
/// thread (waking a team costs more, and on a loaded machine a region can wait a time slice for
/// each thread); larger work runs on max_threads().
int threads_for(double macs);

/// Splits [0, n) into nthr contiguous parts as evenly as possible; part ithr is [start, end).
/// (static: each translation unit, whatever its ISA flags, keeps its own copy.)
static inline void balance211(int64_t n, int nthr, int ithr, int64_t &start, int64_t &end) {
    const int64_t base = n / nthr, extra = n % nthr;
    start = ithr * base + (ithr < extra ? ithr : extra);
    end = start + base + (ithr < extra ? 1 : 0);
}

/// A static split by weight of runs of items, each run's items equally heavy (the gather's stride
/// phases: a phase that no tap reaches only stores zeros). An item goes to the thread whose
/// share of the total weight, [total*ithr/nthr, total*(ithr+1)/nthr), holds the start of its
/// weight; every thread must visit the runs in the same order (weighted_next).
struct weighted_share {
    double lo, hi;  // this thread's share of the weight
    double base;    // weight of the runs visited so far
    bool last;      // the last thread takes every remaining item (rounding)
};
static inline weighted_share weighted_share_of(double total, int nthr, int ithr) {
    return {total * double(ithr) / double(nthr),
            ithr + 1 == nthr ? total : total * double(ithr + 1) / double(nthr), 0.0,
            ithr + 1 == nthr};
}
/// This thread's items [start, end) of the next run: `count` items of weight `w` (> 0) each.
static inline void weighted_next(weighted_share &sh, int64_t count, double w, int64_t &start,
                                 int64_t &end) {
    // The first item whose weight starts at or after `bound` (the same bounds, so the same
    // results, on neighbouring threads).
    auto first_at = [&](double bound) -> int64_t {
        const double q = (bound - sh.base) / w;
        if (q <= 0) return 0;
        if (q >= double(count)) return count;
        const int64_t i = int64_t(q);  // q in (0, count): truncation, then up to the ceiling
        return double(i) < q ? i + 1 : i;
    };
    start = first_at(sh.lo);
    end = sh.last ? count : first_at(sh.hi);
    sh.base += double(count) * w;
}

using region_fn = void (*)(void *ctx, int ithr, int nthr);

/// Actions each thread of a region runs once: enter before its first ithr, leave after its last
/// (e.g. loading the AMX tile configuration, then releasing the tiles). leave runs also when the
/// body threw on that thread; it does not run when enter threw. An exception from enter or
/// leave is captured like one from the body. Null members do nothing.
struct thread_hooks {
    void (*enter)(void *ctx) = nullptr;
    void (*leave)(void *ctx) = nullptr;
    void *ctx = nullptr;
};

/// Calls fn(ctx, ithr, nthr) once for every ithr in [0, nthr), on up to nthr threads; rethrows
/// the first exception any call threw (later calls are skipped once one has failed). Each
/// thread that takes part runs the hooks around its calls.
void parallel_region(int nthr, region_fn fn, void *ctx, const thread_hooks &hooks = {});

/// parallel(nthr, [&](int ithr, int nthr) { ... }): the same with a callable. Each ithr is
/// called exactly once even when OpenMP grants fewer threads, so per-ithr results (partial
/// sums) depend only on nthr.
/// With hooks, parallel(nthr, f, hooks) runs hooks.enter / hooks.leave on each thread.
template <typename F>
void parallel(int nthr, F &&f, const thread_hooks &hooks = {}) {
    using fn_t = std::remove_reference_t<F>;
    parallel_region(
        nthr, [](void *ctx, int ithr, int n) { (*static_cast<fn_t *>(ctx))(ithr, n); },
        const_cast<void *>(static_cast<const void *>(&f)), hooks);
}

}  // namespace convgrad::detail
