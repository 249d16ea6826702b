// The grouped kernel on vdpbf16ps (kernels/common/grouped_pairs_impl.hpp) as an inventory row:
// what it can compute, when dispatch should give it a problem, and its kernel object.
#pragma once

#include "kernels/direct_kernels.hpp"

namespace convgrad::detail {

/// fwd and bwd_data with 2, 4 or 8 channels per group on both sides, bf16 tensors or f32 ones
/// under fpmath_mode bf16; scratch within the problem's bound.
std::string grouped_pairs_cannot(const conv_problem &p);
/// grouped_pairs_cannot, plus: declines where vdpbf16ps is not faster than the f32 FMA
/// (fast_bf16_dot(), dispatch/cpu_features.hpp): the f32 grouped kernel runs there.
std::string grouped_pairs_why_not(const conv_problem &p);

/// Output pixels per register tile: cg sums each, and one input vector each, plus the weights'
/// vector, within 28 of the 32 registers (8: 3 pixels, 4: 5, 2: 9).
constexpr int grouped_pairs_tile(int cg) {
    return 28 / (cg + 1);
}

std::unique_ptr<kernel> make_grouped_pairs_kernel(const conv_problem &p, register_tile t,
                                                  direct_run_fn run);

}  // namespace convgrad::detail
