// What `convgrad bench` compares against, when built with it: oneDNN 2.6 on the same problem in
// the same process (bench/onednn), and this machine's FMA peak (bench/fma_peak). Both are
// optional: the library never depends on them, and the tool reports "n/a" without them.
#pragma once

#include <cmath>
#include <string>

#include "convgrad/op.hpp"

namespace convgrad::tool {

struct baseline_time {
    double plain_ms = NAN;    // oneDNN with the same plain NXC tensors, reorders counted
    double blocked_ms = NAN;  // oneDNN in its preferred blocked layouts, reorders not counted
    std::string note;         // oneDNN's implementation, or why there is no time
};

bool onednn_available();
/// Times oneDNN on the op's normalized problem (`o` as the tool built it), `threads` threads: the
/// median of `reps` executions, or the fastest with `fastest`.
baseline_time time_onednn_for(const op &o, int threads, int reps, bool fastest = false);
/// FMA peak in GFLOP/s on `threads` threads (NaN when the tool was built without the bench).
double fma_peak_gflops(int threads);

}  // namespace convgrad::tool
