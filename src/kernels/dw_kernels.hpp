// The depthwise kernel as inventory entries: one channel per group on both sides
// (icg == ocg == 1), the channels of g groups on the vector lanes (contiguous in NXC).
// Grouped layers with a few channels per group (up to 8 on each side) run the same engine
// over "planes": the lanes are the output side's channels, and each lane sums over a permuted
// copy of the input side per channel of its group (common/dw_planes.hpp).
//
//   fwd, bwd_data: a register tile of `ur` output pixels along w times up to two channel
//     vectors; per tap one weight vector per channel vector, one FMA per pixel and vector.
//     Only the taps that land inside the input are visited: rows whose taps miss are skipped,
//     pixel blocks whose every tap is inside run without checks, the few border blocks check
//     each pixel. Padding is never multiplied as zero, so an Inf weight at a padded tap gives
//     the reference's result. bwd_data runs one such line per stride phase along w.
//   bwd_weights: per thread f32 partial weights [tap][channel], from the rows (n, d, h) of a
//     static split, reduced in thread order: the bits depend only on the thread count.
//
// NXC tensors are read and written in place in their own type (bf16/f16 widened per vector,
// outputs rounded once). Tensors whose channels are not contiguous (NCX) are copied to dense
// channels-last f32 a chunk of images at a time, and the output copied back; true depthwise
// NCX layers with w contiguous and lines of half a vector or more go to dw_ncx_kernels.hpp.
#pragma once

#include "core/conv_problem.hpp"
#include "kernels/inventory.hpp"

namespace convgrad::detail {

/// Plain data shared by the per-ISA translation units (see direct_plan.hpp).
struct dw_plan {
    conv_problem p;
    int vlen = 1;
    int ur = 1;          // output pixels along w per register tile (fwd, bwd_data)
    bool native = true;  // data tensors used in place in their own type (channels contiguous)
    int nthr = 1;
    // Grouped layers (common/dw_planes.hpp): the lanes (fwd, bwd_weights: G*ocg; bwd_data:
    // G*icg), the input side's planes per lane (icg; bwd_data: ocg), whether they are copies
    // (more than one channel per group), and the images per chunk of copies.
    dim_t lanes = 0;
    int planes = 1;
    bool copies = false;
    dim_t chunk = 1;
    // Not native (NCX): this many images at a time are converted to f32 channels-last copies
    // and computed (fwd and bwd_data write their output back; bwd_weights adds to its sums), so
    // the copies are read back from cache.
    dim_t ncx_chunk = 1;
    // fwd, bwd_data: the output's whole vectors are stored past the caches (vt::stream; bf16
    // and f16 a block of two vectors, one line, at a time), with no read of their lines for
    // ownership. Native outputs far beyond the threads' L2.
    bool stream_output = false;
    // The input rows a line will read next are fetched into L2 (prefetcht1), not L1
    // (dw_ahead): where they bring many bytes per multiply-add (dw_fetch_to_l2_bytes_per_mac).
    bool fetch_to_l2 = false;
};

/// Native input rows that bring more than this many bytes per multiply-add of their line are
/// fetched into L2 only (dw_plan::fetch_to_l2). Measured on Zen 4 (MobileNetV2's depthwise
/// layers, 2 threads): at 0.44 bytes and more, fetches into L1 stalled the thread that issued
/// them; at 0.22 (bf16 stride-1 forward and data gradient), loads from L2 made it slower.
constexpr double dw_fetch_to_l2_bytes_per_mac = 0.3;

using dw_run_fn = void (*)(const dw_plan &, const conv_args &);

/// Empty when the depthwise kernel computes the problem with vectors of vlen f32; else why not.
std::string dw_why_not(const conv_problem &p, int vlen);

/// Empty unless a stride exceeds the padded input along its axis (one output pixel there,
/// nothing to block): the depthwise kernels' pixel steps are stride x pixel stride in elements,
/// which such a stride may overflow.
std::string dw_stride_why_not(const conv_problem &p);

/// The bytes of input rows new to each line per multiply-add (make_dw_plan's fetch_to_l2).
double dw_new_row_bytes_per_mac(const conv_problem &p);

/// The plan of problem p on a register file of tile t (make_dw_kernel's; tests change it).
dw_plan make_dw_plan(const conv_problem &p, register_tile t);

std::unique_ptr<kernel> make_dw_kernel(const conv_problem &p, register_tile t, dw_run_fn run);

}  // namespace convgrad::detail
