// The direct convolution on vdpbf16ps (kernels/common/bf16dot_conv_impl.hpp) as an inventory
// row: what it can compute, when dispatch should give it a problem, and its kernel object.
#pragma once

#include "kernels/direct_kernels.hpp"

namespace convgrad::detail {

/// bf16 tensors, or f32 tensors under fpmath_mode bf16; scratch within the problem's bound.
std::string bf16dot_cannot(const conv_problem &p);
/// bf16dot_cannot, plus: declines where vdpbf16ps is not faster than the f32 FMA
/// (fast_bf16_dot(), dispatch/cpu_features.hpp), and fwd/bwd_data problems that reduce over
/// fewer than min_reduced_channels channels per group (except the forward that flattens the
/// kernel width into K, direct_flattens_w), and bwd_weights problems whose diff_dst rows have
/// fewer than min_bwd_weights_row_pixels output pixels (K is a row's pixel pairs).
std::string bf16dot_why_not(const conv_problem &p);
inline constexpr dim_t min_reduced_channels = 6;
inline constexpr dim_t min_bwd_weights_row_pixels = 6;
/// Bytes of scratch the kernel takes for p on nthr threads (its copies and partial sums).
double bf16dot_scratch_bytes(const conv_problem &p, int nthr);

std::unique_ptr<kernel> make_bf16dot_kernel(const conv_problem &p, register_tile t,
                                            direct_run_fn run);

}  // namespace convgrad::detail
