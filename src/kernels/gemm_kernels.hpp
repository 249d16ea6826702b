#pragma once

#include <vector>

#include "dispatch/registry.hpp"

namespace convgrad::detail {

/// The GEMM kernel (convolutions that are matrix products) for every instruction set, best first.
std::vector<impl_desc> gemm_impls();

}  // namespace convgrad::detail
