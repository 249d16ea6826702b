#include "dispatch/impl_list.hpp"

#include "kernels/direct_kernels.hpp"

namespace convgrad::detail {

std::vector<impl_desc> optimized_impls() {
    std::vector<impl_desc> v;
    for (auto &d : direct_impls()) v.push_back(d);
    return v;
}

}  // namespace convgrad::detail
