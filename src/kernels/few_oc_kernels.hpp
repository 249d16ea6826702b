// The few-output-channels kernel as inventory entries: forwards and weight gradients whose dst
// side has 1-4 channels per group (a segmentation or depth head to 1 channel, a super-resolution
// network's last layer to RGB, HiFi-GAN's conv_post to a waveform). Every other kernel puts the
// dst channels on the vector lanes, which leaves 15 of 16 lanes idle for one channel; here the
// src channels go there, and each output is a dot product:
//
//   fwd:          dst[q][o] = sum over taps t, channels c of src[q + t][c] * w[t][c][o]
//                 (per block of pixels: one accumulator vector per (pixel, o), summed over the
//                 taps and channel vectors, then across its lanes, all at once by a tree of
//                 even/odd merges)
//   bwd_weights:  w[t][c][o] = sum over q of src[q + t][c] * diff_dst[q][o]
//                 (per tap row (kd, kh), a register block of (kw, channel vector, o)
//                 accumulators over every output pixel of the thread's rows)
//
// Taps that read padding are left out, as by the reference. src rows are read in place (f32
// with contiguous channels) or converted a chunk of rows at a time (NCX, bf16/f16; the
// row_source of the weight-gradient schedule). The weight gradient's threads sum their rows
// into partial weights, added in thread order: the bits depend on the thread count, never on
// timing.
#pragma once

#include "core/conv_problem.hpp"
#include "kernels/inventory.hpp"

namespace convgrad::detail {

/// Plain data shared by the per-ISA translation units (see direct_plan.hpp).
struct few_oc_plan {
    conv_problem p;
    int vlen = 1;
    int nregs = 16;
    dim_t cpad = 0;  // channels per group rounded up to whole vectors (packed weights' rows)
    int pixels = 1;  // fwd: output pixels per register block (vlen / ocg: one vector of sums)
    dim_t rows_per_chunk = 1;  // output rows (n, d, h) whose src rows are converted together
    bool src_direct = false;   // src read in place (f32, contiguous channels)
    bool dst_direct = false;   // bwd_weights: diff_dst read in place
    // bf16/f16 with contiguous channels: src (and bwd_weights' diff_dst) read in place, widened
    // in the loads (no converted copies)
    bool native16 = false;
    int nthr = 1;
};

using few_oc_run_fn = void (*)(const few_oc_plan &, const conv_args &);

/// Empty when the few-output-channels kernel on vectors of `vlen` lanes computes the problem;
/// else why not.
std::string few_oc_why_not(const conv_problem &p, int vlen);

std::unique_ptr<kernel> make_few_oc_kernel(const conv_problem &p, register_tile t,
                                           few_oc_run_fn run);

}  // namespace convgrad::detail
