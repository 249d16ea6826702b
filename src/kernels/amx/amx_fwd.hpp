// Forward convolution on the AMX microkernel: C = a run of up to 32 dst pixels along w x up to
// 32 output channels, one brgemm over the taps (batch = taps, K = input channels of the group;
// undilated w taps are folded into K: batch = (kd, kh), K = k_w x the padded channels).
// A for a tap is src pixels at stride s_w * C, read from a bf16/f16 NXC copy of src made per
// execution, per group, with the pads written as zeros and wide enough that no tap of any
// output pixel leaves it: the microkernel then needs no bounds, and padding contributes 0 * w.
// B for a tap is that tap's weights in VNNI pairs [icg / 2][ocg][2], packed once per execution.
// Each work item (group, image, dst row, w run) writes its own dst pixels: no reduction, so
// the result does not depend on the thread count.
#pragma once

#include "core/conv_problem.hpp"
#include "kernels/amx/amx_ukernel.hpp"

namespace convgrad::detail::amx {

struct fwd_plan {
    conv_problem p;
    amx_backend backend = amx_backend::native;
    amx_dot dot = amx_dot::bf16;
    int nthr = 1;
    int64_t ip[3] = {1, 1, 1};  // padded src extent (d, h, w)
    int64_t icp = 0;            // channels of a padded src pixel: icg rounded up to even
    int64_t wruns = 0;          // runs of up to 32 dst pixels along w
    int64_t hrows = 1;          // dst rows per call: 2 when a row has at most 16 pixels
    int64_t fold = 1;           // w taps per K run (k_w when undilated along w, else 1)
    bool blocks_outer = false;  // oc blocks outside the pixel runs (amx_blocking.hpp)
    /// A may be read from src itself, no copy: src has the tiles' type with contiguous channels,
    /// an even count per group (a pair never reads past the group), no tap reads padding, and
    /// folded taps find their channels one pixel after another. Taken when src and its pixel
    /// stride are also 64-byte aligned (checked per execution: tile rows that straddle cache
    /// lines load at half speed).
    bool in_place = false;
    /// Some tap reads padding (zeros in the copy). The reference leaves such taps out, so an
    /// infinite or NaN weight there must not meet a zero (0 * inf = NaN): the execution checks
    /// the packed weights and, when one is not finite, computes by the reference instead.
    bool reads_padding = false;
    /// Bytes of scratch one execution allocates (the padded copy, the packed weights, the
    /// per-thread pointer lists).
    double scratch_bytes() const;
};

fwd_plan plan_fwd(const conv_problem &p, amx_backend backend);
void run_fwd(const fwd_plan &pl, const conv_args &args);

}  // namespace convgrad::detail::amx
