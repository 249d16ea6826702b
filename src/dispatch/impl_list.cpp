#include "dispatch/impl_list.hpp"

#include "kernels/direct_kernels.hpp"
#include "kernels/gemm_kernels.hpp"

namespace convgrad::detail {

std::vector<impl_desc> optimized_impls() {
    std::vector<impl_desc> v;
    // Grouped kernels first (they take only few channels per group), then per instruction set
    // the GEMM kernel (it takes only the matrix products its estimate gives it against that
    // set's direct kernel) and the general direct kernel, which takes everything.
    for (auto &d : grouped_impls()) v.push_back(d);
    const std::vector<impl_desc> gemm = gemm_impls(), direct = direct_impls();
    for (const auto &d : direct) {
        for (const auto &g : gemm)
            if (g.isa == d.isa) v.push_back(g);
        v.push_back(d);
    }
    return v;
}

}  // namespace convgrad::detail
