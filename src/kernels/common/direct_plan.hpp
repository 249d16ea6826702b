// The plan of the direct (brgemm-style) convolution kernels, fixed at compile time. Plain data:
// it is shared by the per-ISA translation units, which must not share inline code (each ISA's
// code lives in its own namespace, see direct_conv_impl.hpp).
#pragma once

#include "core/conv_problem.hpp"

namespace convgrad::detail {

struct direct_plan {
    conv_problem p;
    int vlen;           // floats per vector of the ISA
    int max_nv;         // vectors per register tile along the channel (N) axis
    int max_m[5];       // register-tile rows for 1..4 vectors (index = vectors)
    // Whether each user tensor is used in place (f32 with contiguous channels) or copied into a
    // dense channels-last f32 scratch buffer (other layouts, bf16/f16).
    bool src_direct, dst_direct;
    int nthr;           // threads the work is split over (fixed: results do not depend on timing)
    dim_t rows_per_chunk;  // bwd_weights: rows (n, d, h) reduced together, sized for L2
};

/// Fills the plan for an ISA with `vlen` floats per vector and `nregs` vector registers.
direct_plan make_direct_plan(const conv_problem &p, int vlen, int nregs);

}  // namespace convgrad::detail
