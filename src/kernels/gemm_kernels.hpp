// The GEMM kernel (convolutions that are matrix products) as inventory entries: the kernel
// object around a plan, its offset tables and a per-ISA run function.
#pragma once

#include "kernels/common/gemm_plan.hpp"
#include "kernels/inventory.hpp"

namespace convgrad::detail {

using gemm_run_fn = void (*)(const gemm_plan &, const conv_args &);

std::unique_ptr<kernel> make_gemm_kernel(const conv_problem &p, register_tile t, gemm_run_fn run);

}  // namespace convgrad::detail
