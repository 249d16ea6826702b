#pragma once

#include <vector>

#include "dispatch/registry.hpp"

namespace convgrad::detail {

/// The grouped-lanes kernels for every instruction set, best first.
std::vector<impl_desc> grouped_impls();
/// The direct brgemm kernels for every instruction set, best first.
std::vector<impl_desc> direct_impls();

}  // namespace convgrad::detail
