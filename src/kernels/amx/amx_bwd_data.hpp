// Backward-data on the AMX microkernel, by stride phases: the src pixels i = r + s * t of one
// phase r (per axis) are reached only by the taps k with (r + pb - k * dl) divisible by s, and
// pixel t of the phase reads dst pixel t + (r + pb - k * dl) / s: consecutive dst pixels, so a
// run of up to 32 src pixels of one phase along w is one brgemm over its taps with A = dst
// pixels (K = output channels of the group) and B = that tap's weights^T in VNNI pairs
// [ocg / 2][icg][2]. A is read from a bf16/f16 NXC copy of diff_dst with zero margins wide
// enough that no tap leaves it (dst pixels outside the image read 0, adding nothing). No
// reduction between work items, so the result does not depend on the thread count.
#pragma once

#include "core/conv_problem.hpp"
#include "kernels/amx/amx_ukernel.hpp"

namespace convgrad::detail::amx {

struct bwd_data_plan {
    conv_problem p;
    amx_backend backend = amx_backend::native;
    amx_dot dot = amx_dot::bf16;
    int nthr = 1;
    int64_t lo[3] = {0, 0, 0};  // zero dst pixels before dst pixel 0 in the copy (d, h, w)
    int64_t op[3] = {1, 1, 1};  // extent of the copy
    int64_t ocp = 0;            // channels of a copied dst pixel: ocg rounded up to even
    int64_t wruns = 0;          // runs of up to 32 pixels in the largest w phase
    bool blocks_outer = false;  // ic blocks outside the pixel runs (amx_blocking.hpp)
    /// A may be read from diff_dst itself, no copy (as the forward kernel's src): no margin is
    /// needed (1x1 kernels), diff_dst has the tiles' type, contiguous channels and an even count
    /// per group; taken when its rows are also 64-byte aligned (checked per execution).
    bool in_place = false;
    /// Some pixel of a run reads the zero margin. The reference leaves such taps out, so an
    /// infinite or NaN weight must not meet a zero there (0 * inf = NaN): the execution checks
    /// the packed weights and, when one is not finite, computes by the reference instead.
    bool reads_margin = false;
    /// With `hpair` (w phases of at most 16 pixels) a call takes two src rows, ih and ih + s_h
    /// when there is one: the same taps reach both, one diff_dst row apart (as the forward
    /// kernel's two rows per call). Its first rows are those with (ih / s_h) even.
    bool hpair = false;
    int64_t hunits = 0;  // calls' first rows along h
    /// The first row of unit u along h.
    int64_t first_row(int64_t u) const {
        return hpair ? 2 * p.s[1] * (u / p.s[1]) + u % p.s[1] : u;
    }
    /// Bytes of scratch one execution allocates (the margined copy, the packed weights, the
    /// per-thread tap lists).
    double scratch_bytes() const;
};

bwd_data_plan plan_bwd_data(const conv_problem &p, amx_backend backend);
void run_bwd_data(const bwd_data_plan &pl, const conv_args &args);

}  // namespace convgrad::detail::amx
