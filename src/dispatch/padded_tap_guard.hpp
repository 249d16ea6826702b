// The reference leaves out the taps that read padding (for fwd, and for bwd_data the diff_dst
// positions outside the tensor), so an infinite or NaN weight at such a tap never meets a zero
// there: its outputs stay finite. Kernels that multiply padding as zeros (im2col, packed
// windows) make 0 * inf = NaN instead. Rows that leave those taps out, or check the weights as
// they pack them, say so in the inventory (guards_padded_taps); dispatch wraps the others' fwd
// and bwd_data kernels in this guard, which checks the weights per execution (one more pass
// over them: a few percent of a layer with megabytes of weights) and computes by the reference
// when one is not finite.
#pragma once

#include <memory>

#include "kernels/inventory.hpp"

namespace convgrad::detail {

/// No weight of the problem is infinite or NaN.
bool weights_all_finite(const conv_problem &p, const void *wei);

/// `inner` for fwd/bwd_data problems that read padding, behind the check above; else `inner`.
std::unique_ptr<kernel> guard_padded_taps(const conv_problem &p, std::unique_ptr<kernel> inner);

}  // namespace convgrad::detail
