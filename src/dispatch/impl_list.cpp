#include "dispatch/impl_list.hpp"

namespace convgrad::detail {

std::vector<impl_desc> optimized_impls() {
    return {};
}

}  // namespace convgrad::detail
