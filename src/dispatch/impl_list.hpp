// The optimized implementations, in priority order (the reference is appended by the registry).
#pragma once

#include <vector>

#include "dispatch/registry.hpp"

namespace convgrad::detail {

std::vector<impl_desc> optimized_impls();

}  // namespace convgrad::detail
