// The col2im kernel as inventory entries: data gradients (bwd_data) whose src side has few
// channels per group (the ResNet stem's 3, a GAN's last ConvTranspose to RGB). Channels on the
// lanes would leave most of a vector idle, so the taps go there too:
//
//   per image and group, per tile of dst pixels:
//     G[pixels x (taps * icg)] = dst[pixels x ocg] * Wt[ocg x (taps * icg)]   (the microkernel)
//   then every (pixel, tap) block of icg entries of G is added into the src pixel that tap
//   reaches (col2im); taps that land in the padding are dropped.
//
// One thread owns a whole (image, group) unit and sums it in a fixed order, so the bits of the
// result do not depend on the thread count. The unit accumulates in an f32 buffer and is
// written once (rounded once to bf16/f16).
#pragma once

#include "core/conv_problem.hpp"
#include "kernels/inventory.hpp"

namespace convgrad::detail {

/// Plain data shared by the per-ISA translation units (see direct_plan.hpp).
struct col2im_plan {
    conv_problem p;
    int vlen = 1;
    int nv = 1;       // vectors per microkernel call (the columns of a register tile)
    int mr = 1;       // dst pixels per register tile
    dim_t N = 0;      // columns of G: ksp * icg, column tap * icg + ic
    dim_t ldb = 0;    // N rounded up to whole vectors (row stride of Wt and of G)
    bool dst_direct;  // dst read in place (f32: any channel stride), else copied per tile
    bool pairs;       // on the bf16-pairs microkernel (run_col2im_pairs), else f32
    int nthr = 1;
};

using col2im_run_fn = void (*)(const col2im_plan &, const conv_args &);

/// Empty when the col2im kernel on vectors of `vlen` lanes computes the problem; else why not.
std::string col2im_why_not(const conv_problem &p, int vlen);
/// The same on the bf16-pairs microkernel: bf16 tensors only.
std::string col2im_pairs_why_not(const conv_problem &p, int vlen);

/// `pairs`: run is a run_col2im_pairs (the bf16-pairs microkernel).
std::unique_ptr<kernel> make_col2im_kernel(const conv_problem &p, register_tile t,
                                           col2im_run_fn run, bool pairs = false);

}  // namespace convgrad::detail
