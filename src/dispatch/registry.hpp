// Dispatch: the kernel inventory (kernels/inventory.hpp) in its order, then the reference.
// Each kernel says why it declines a problem; the reference accepts everything.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kernels/inventory.hpp"

namespace convgrad::detail {

/// The inventory's rows in dispatch order, then the reference.
const std::vector<impl_desc> &impl_list();
const impl_desc &reference_impl();

struct dispatch_result {
    const impl_desc *impl = nullptr;
    std::unique_ptr<kernel> k;
    std::vector<std::string> refusals;  // "name: reason" of every implementation passed over
};

/// The first row whose features are `available`, that serves the problem's direction and data
/// type, is not disabled by CONVGRAD_DISABLE and does not decline; else the reference.
dispatch_result dispatch(const conv_problem &p, cpu_features available, bool reference_only);

}  // namespace convgrad::detail
