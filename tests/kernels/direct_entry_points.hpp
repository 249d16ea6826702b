// The direct kernels' run functions of each ISA unit, to run on a plan a test sets up: the f32
// direct kernel (and the grouped one) of each unit, and the vdpbf16ps kernel (direct_bf16dot)
// native, emulated on AVX-512F and emulated in plain C++. (The other kernels' entry points:
// kernels/common/unit_entry_points.hpp, as dw_test_util.hpp declares them.)
#pragma once

#include "kernels/common/direct_plan.hpp"

namespace convgrad::detail {
namespace sse2 {
void run_direct(const direct_plan &pl, const conv_args &args);
}
namespace avx2 {
void run_direct(const direct_plan &pl, const conv_args &args);
void run_grouped(const direct_plan &pl, const conv_args &args);
}  // namespace avx2
namespace avx512 {
void run_direct(const direct_plan &pl, const conv_args &args);
void run_grouped(const direct_plan &pl, const conv_args &args);
void run_bf16dot(const direct_plan &pl, const conv_args &args);  // vdpbf16ps on AVX-512F
}  // namespace avx512
namespace avx512_emu {
void run_direct(const direct_plan &pl, const conv_args &args);
void run_grouped(const direct_plan &pl, const conv_args &args);
void run_bf16dot(const direct_plan &pl, const conv_args &args);  // vdpbf16ps in plain C++
}  // namespace avx512_emu
namespace avx512_bf16 {
void run_bf16dot(const direct_plan &pl, const conv_args &args);  // vdpbf16ps native
}
}  // namespace convgrad::detail
