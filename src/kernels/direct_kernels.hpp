#pragma once

#include <vector>

#include "dispatch/registry.hpp"

namespace convgrad::detail {

/// The grouped-lanes and direct brgemm kernels for every instruction set, best first.
std::vector<impl_desc> direct_impls();

}  // namespace convgrad::detail
