// The depthwise kernel for NCX tensors (one channel per group, icg == ocg == 1, each channel a
// plane whose w axis is contiguous): pixels on the vector lanes, one plane at a time, read and
// written in place. The channels-last depthwise kernel (dw_kernels.hpp) had to transpose NCX
// tensors to channels-last copies and back, and spent more than half its time there.
//
//   Every direction computes lines along w: output q of a line sums, over the (kd, kh) input
//   rows the taps reach and the w taps of the line, weight x input[phase][q + koff]. The
//   input's stride phases along w make every read contiguous:
//   - fwd and bwd_weights read src through its stride phases (phase r holds pixels
//     r, r + s, ...): a copy of the plane split by phase when the stride is above 1, in f32
//     (bf16/f16 widened there too); f32 with stride 1 reads the tensor itself.
//   - bwd_data computes one line per stride phase of the src row (the taps whose division by
//     the stride is exact, as dw_kernels.hpp does) and interleaves them into the row.
//   Only border vectors mask their lanes, and the masked lanes keep their accumulators (a
//   padded tap is never multiplied, so an Inf weight there gives the reference's result).
//   bwd_weights sums each tap's products along the lanes, per thread into f32 partial weights
//   of a static split of the planes, added in thread order: the bits depend only on the thread
//   count.
#pragma once

#include "core/conv_problem.hpp"
#include "kernels/inventory.hpp"

namespace convgrad::detail {

/// Plain data shared by the per-ISA translation units.
struct dw_ncx_plan {
    conv_problem p;
    int vlen = 1;
    int nthr = 1;
    bool staged = false;  // the input side is read from per-thread f32 plane copies
};

/// Whether fwd and bwd_weights read src rows of stride 2 in place, lane q being the even element
/// q of two vectors: f32 only (other types are widened into copies anyway).
inline bool dw_ncx_pairs(const conv_problem &p) {
    return p.dt == data_type::f32 && p.s[2] == 2;
}
/// The stride phases fwd and bwd_weights split src rows into (1: rows read whole, in place
/// when f32). Every other stride along w reads per-thread f32 copies of a plane split by phase.
inline dim_t dw_ncx_src_phases(const conv_problem &p) {
    return dw_ncx_pairs(p) ? 1 : p.s[2];
}

using dw_ncx_run_fn = void (*)(const dw_ncx_plan &, const conv_args &);

/// Empty when the NCX depthwise kernel computes the problem with vectors of vlen f32; else why
/// not.
std::string dw_ncx_why_not(const conv_problem &p, int vlen);

std::unique_ptr<kernel> make_dw_ncx_kernel(const conv_problem &p, register_tile t,
                                           dw_ncx_run_fn run);

}  // namespace convgrad::detail
