// The zero-bordered copy of src that lets the GEMM kernel read the windows of a padded forward
// or weight-gradient problem through its offset tables (kernels/common/gemm_plan.hpp,
// gemm_padded_src). A plain byte copy in the tensor's own element type: no conversion, no
// rounding.
#pragma once

#include "kernels/common/gemm_plan.hpp"

namespace convgrad::detail {

/// Copies `src` (laid out as `user.src`) into `buf` (laid out as `pad.p.src`, pad.elems
/// elements): the padding's elements zero, every other one src's element at the same
/// coordinates shifted by the begin padding. Rows are split over `nthr` threads.
void copy_padded_src(const conv_problem &user, const gemm_padded_src &pad, const void *src,
                     void *buf, int nthr);

}  // namespace convgrad::detail
