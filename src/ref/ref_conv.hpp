// The reference: one plain implementation of the three core computations, layout-generic
// (reads and writes the user's strided tensors), accumulating in double and rounding once.
// Every optimized kernel is tested against it.
#pragma once

#include "core/conv_problem.hpp"

namespace convgrad::detail {

void ref_conv_execute(const conv_problem &p, const conv_args &args);

}  // namespace convgrad::detail
