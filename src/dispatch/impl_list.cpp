#include "dispatch/impl_list.hpp"

#include "kernels/direct_kernels.hpp"
#include "kernels/gemm_kernels.hpp"

namespace convgrad::detail {

std::vector<impl_desc> optimized_impls() {
    std::vector<impl_desc> v;
    // Grouped kernels first (they take only few channels per group), then the GEMM kernel (it
    // takes only matrix products its estimate gives it), then the general direct kernels.
    for (auto &d : grouped_impls()) v.push_back(d);
    for (auto &d : gemm_impls()) v.push_back(d);
    for (auto &d : direct_impls()) v.push_back(d);
    return v;
}

}  // namespace convgrad::detail
