// Threading: OpenMP behind two small functions, with a static split so that every run with the
// same thread count does the same work in the same order.
#pragma once

#include <cstdint>

namespace convgrad::detail {

/// Threads a parallel region will use: convgrad::set_num_threads, else OpenMP's setting.
int max_threads();

/// Splits [0, n) into nthr contiguous parts as evenly as possible; part ithr is [start, end).
inline void balance211(int64_t n, int nthr, int ithr, int64_t &start, int64_t &end) {
    const int64_t base = n / nthr, extra = n % nthr;
    start = ithr * base + (ithr < extra ? ithr : extra);
    end = start + base + (ithr < extra ? 1 : 0);
}

}  // namespace convgrad::detail
