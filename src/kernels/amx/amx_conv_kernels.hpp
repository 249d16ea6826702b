// The AMX convolution kernels as dispatch entries (cpu_isa::amx), and a factory that picks the
// backend, so that tests run the same kernels over the emulation on any CPU.
//
// amx_impls() is meant to be listed ahead of the avx512 kernels; every entry declines what it
// does not do, with the reason (CONVGRAD_VERBOSE shows it).
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

}  // namespace convgrad::detail::amx

namespace convgrad::detail {

/// The AMX entries of the dispatch list (native backend only).
std::vector<impl_desc> amx_impls();

}  // namespace convgrad::detail
