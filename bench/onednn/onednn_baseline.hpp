// oneDNN 2.6 as the yardstick: the same canonical problem run by oneDNN's convolution primitives
// (Convolution family) or deconvolution primitives (ConvTranspose family), in the same process.
// Only the benchmarks and their test use this; the library never depends on oneDNN.
#pragma once

#include <cmath>
#include <memory>
#include <string>

#include "core/conv_problem.hpp"
#include "fma_peak.hpp"

namespace convgrad::bench {

/// One problem prepared for oneDNN: primitive (format_tag::any), user tensors in the Graph
/// problem's plain layouts (the strides of the user's tensors: NXC or NCX data, any weights
/// format) and tensors in the primitive's layouts.
class onednn_conv {
public:
    /// Null with `why_not` set when oneDNN cannot run the problem (f16, unimplemented...).
    /// Threads: whatever omp_set_num_threads set before the call.
    static std::unique_ptr<onednn_conv> create(const detail::conv_problem &p, std::string &why_not);
    virtual ~onednn_conv() = default;
    /// Reorders the plain inputs into the primitive's layouts, runs it, reorders the output back.
    virtual void run_plain() = 0;
    /// Only the primitive, its tensors already in its preferred layouts.
    virtual void run_blocked() = 0;
    /// For checking results: copies the inputs from plain buffers (laid out as the problem's
    /// dense tensors, in the canonical roles: src = big side, dst = small side) into the user tensors
    /// and the primitive's; after run_plain() the plain output is at plain_output().
    virtual void set_plain_inputs(const detail::conv_args &a) = 0;
    virtual const void *plain_output() const = 0;
    /// oneDNN's implementation name, e.g. "brg:avx512_core_amx" or "jit:avx512_core".
    virtual std::string impl_name() const = 0;
};

struct onednn_timing {
    double plain_ms = NAN;    // reorders from/to the plain user tensors counted
    double blocked_ms = NAN;  // primitive only, tensors in its preferred layouts
    std::string note;         // "impl=<oneDNN implementation>" or why there is no time
};

/// Median of `reps` executions (after warm-up) of each variant on `threads` OpenMP threads, or
/// the fastest of them with `fastest` (the statistic convgrad's own time was taken with).
/// Never throws for a problem oneDNN rejects: NaN times and the reason in `note`.
onednn_timing time_onednn(const detail::conv_problem &p, int threads, int reps,
                          bool fastest = false);

}  // namespace convgrad::bench
