// The reference leaves out the taps that read padding (for fwd and bwd_weights, and for
// bwd_data the diff_dst positions outside the tensor), so an infinite or NaN weight at such a
// tap, or (bwd_weights) an infinite diff_dst value whose window reads padding, never meets a
// zero there: those outputs stay finite. Kernels that multiply padding as zeros (im2col, packed
// windows) make 0 * inf = NaN instead. Rows that leave those taps out, or check what they pack,
// say so in the inventory (guards_padded_taps); dispatch wraps the others' kernels in this
// guard, which checks the weights (fwd, bwd_data: one more pass over them, a few percent of a
// layer with megabytes of weights) or the border of diff_dst (bwd_weights: the positions whose
// windows read padding) per execution, and computes by the reference when one is not finite.
#pragma once

#include <memory>

#include "kernels/inventory.hpp"

namespace convgrad::detail {

/// No weight of the problem is infinite or NaN.
bool weights_all_finite(const conv_problem &p, const void *wei);

/// No diff_dst value at a position whose window reads padding is infinite or NaN (bwd_weights:
/// such a value meets the zeros of padding in kernels that multiply them).
bool border_diff_dst_finite(const conv_problem &p, const void *dst);

/// `inner` for problems that read padding, behind the check above; else `inner`.
std::unique_ptr<kernel> guard_padded_taps(const conv_problem &p, std::unique_ptr<kernel> inner);

}  // namespace convgrad::detail
