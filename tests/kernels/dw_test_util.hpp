// What the depthwise kernel's tests share: the channels-last kernel's per-ISA units, to run
// directly on a plan (the geometry of a case and its op: util/conv_geometry.hpp).
#pragma once

#include <gtest/gtest.h>

#include "core/resolve.hpp"
#include "kernels/col2im_kernels.hpp"
#include "kernels/few_oc_kernels.hpp"
#include "kernels/common/direct_plan.hpp"
#include "kernels/common/gemm_plan.hpp"
#include "kernels/dw_kernels.hpp"
#include "kernels/dw_ncx_kernels.hpp"
#include "util/conv_geometry.hpp"
#include "util/kernel_check.hpp"

// The run functions of the per-ISA units, declared as kernels/inventory.cpp declares them.
namespace convgrad::detail {
namespace avx2 {
#include "kernels/common/unit_entry_points.hpp"
}  // namespace avx2
namespace avx512 {
#include "kernels/common/unit_entry_points.hpp"
}  // namespace avx512
namespace avx512_emu {
#include "kernels/common/unit_entry_points.hpp"
}  // namespace avx512_emu
}  // namespace convgrad::detail

namespace convgrad::testing {

// The channels-last kernel's units, run directly on a plan the test changes.
struct dw_unit {
    const char *name;
    detail::cpu_isa isa;  // what the machine needs to run it
    detail::register_tile tile;
    void (*run)(const detail::dw_plan &, const detail::conv_args &);
};
inline const dw_unit dw_units[] = {
    {"avx512", detail::cpu_isa::avx512, {16, 32}, detail::avx512::run_depthwise},
    {"avx2", detail::cpu_isa::avx2, {8, 16}, detail::avx2::run_depthwise},
    // (The AVX-512 source on its plain C++ traits: where AVX-512 is missing, it runs here.)
    {"avx512_emulated", detail::cpu_isa::avx2, {16, 32}, detail::avx512_emu::run_depthwise}};

}  // namespace convgrad::testing
