// The AMX convolution kernels (fwd, bwd_data, bwd_weights; bf16 and f16 ops, and f32 ops under
// fpmath_mode bf16/f16) as plain functions with the shapes of a dispatch row's members, so that
// the dispatch table (whatever its form) lists them at cpu_isa::amx, ahead of the avx512
// kernels: cannot_conv (what the kernels cannot compute), why_not_native (that, or the tiles
// are not granted here), create_native, and create_emulated for tests on any CPU.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "dispatch/registry.hpp"
#include "kernels/amx/amx_ukernel.hpp"

namespace convgrad::detail::amx {

/// Why the AMX kernels decline `p` on `backend` ("" when they take it). The native backend
/// also needs the tiles granted: "AMX not granted: <native_unusable_reason>".
std::string why_not_conv(const conv_problem &p, amx_backend backend);

/// why_not_conv, and "" only when the kernel's scratch also stays within
/// conv_problem::scratch_bound (the limit the API checks up front): the dispatch entry's test.
std::string why_not_dispatch(const conv_problem &p, amx_backend backend);

/// The kernel for `p` on `backend` (any direction); chunk_pixels > 0 overrides the
/// backward-weights K chunk (tests).
/// convgrad::error (unimplemented) with why_not_conv's reason when it declines.
std::unique_ptr<kernel> make_conv_kernel(const conv_problem &p, amx_backend backend,
                                         int64_t chunk_pixels = 0);

/// Dispatch-row shapes: the reasons independent of this machine (the type, the scratch bound).
std::string cannot_conv(const conv_problem &p);
/// cannot_conv, or "AMX not granted: <native_unusable_reason>", or the tiles would be less
/// than a quarter full (the estimate: few channels on K or on the columns, few pixels on rows).
std::string why_not_native(const conv_problem &p);
/// Why the native kernel cannot run `p` on this machine although AMX is granted ("" when it
/// can): f16 tiles need AMX-FP16, which CPUs with AMX-BF16 may lack.
std::string cannot_natively(const conv_problem &p);
/// The fraction of a tile's rows, K depth or columns that n of them fill, in steps of `step`
/// (16 rows, 32 K elements, 16 columns; a tail fills part of a step). The tiles cost their full
/// time whatever their fill, so a problem with 3 channels on K or on the columns does a tenth of
/// the work per step that the f32 kernels would do per FMA at a fraction of the tiles' speed
/// (ResNet-50's 3-channel stem 0.12x of oneDNN, a 1-channel ConvTranspose's data gradient 0.01x).
inline double step_fill(int64_t n, int64_t step) {
    return double(n) / double((n + step - 1) / step * step);
}

/// The fraction of the tiles' rows x K x columns the kernel would fill on `p` (tails fill part
/// of a tile step), from which why_not_native decides.
double conv_tile_fill(const conv_problem &p);
std::unique_ptr<kernel> create_native(const conv_problem &p);
std::unique_ptr<kernel> create_emulated(const conv_problem &p);

}  // namespace convgrad::detail::amx
