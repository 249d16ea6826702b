// The direct (brgemm-style) kernels as inventory entries: the kernel object around a plan and a
// per-ISA run function, and the problems the lane-per-channel grouped variant takes.
#pragma once

#include "kernels/common/direct_plan.hpp"
#include "kernels/inventory.hpp"

namespace convgrad::detail {

using direct_run_fn = void (*)(const direct_plan &, const conv_args &);

/// The direct kernel takes every problem.
std::string direct_why_not(const conv_problem &p);
/// The lane-per-channel kernel for groups of few channels (depthwise included), on vectors of
/// `vlen` lanes.
std::string grouped_why_not(const conv_problem &p, int vlen);
/// Bytes of the zero-bordered src box that the grouped kernel's bwd_weights copies for a run of
/// `nr` diff_dst rows of one block of `vlen` channels, in double (extents may reach the dim_t
/// range). Defined in the baseline object: the ISA objects call it.
double grouped_box_bytes(const conv_problem &p, dim_t nr, int vlen);

/// `run` (run_direct, run_grouped) writes a bf16/f16 output in place, rounded, where the plan
/// allows (direct_plan::out_rounded_in_kernel). `split_weights`: its bwd_weights can split the
/// weights over the threads (run_direct; run_grouped splits the rows).
std::unique_ptr<kernel> make_direct_kernel(const conv_problem &p, register_tile t,
                                           direct_run_fn run, bool split_weights);

}  // namespace convgrad::detail
