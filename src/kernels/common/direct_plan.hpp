// The plan of the direct (brgemm-style) convolution kernels, fixed at compile time from the
// problem, the instruction set's registers and the machine's cache sizes. Plain data:
// it is shared by the per-ISA translation units, which must not share inline code (each ISA's
// code lives in its own namespace, see direct_conv_impl.hpp).
#pragma once

#include <algorithm>
#include <atomic>  // (direct_conv_impl.hpp: the packers' finiteness flag)
#include <string>

#include "core/conv_problem.hpp"
#include "kernels/plan/cache_sizes.hpp"
#include "kernels/plan/gather_split.hpp"
#include "ref/ref_conv.hpp"  // (direct_conv_impl.hpp: non-finite weights at padded taps)

namespace convgrad::detail {

// The fewest products per output element for which the direct kernels' AVX2 gather stores an
// output past the caches (direct_plan::stream_output): with fewer, streamed stores were the
// slower (make_direct_plan says where and how it was measured).
inline constexpr double min_macs_per_streamed_output = 16.0;

struct direct_plan {
    conv_problem p;
    int vlen;           // floats per vector of the ISA
    int max_nv;         // vectors per register tile along the channel (N) axis
    int max_m[5];       // register-tile rows for 1..4 vectors (index = vectors)
    // Whether each user tensor is used in place (f32 with contiguous channels) or copied into a
    // dense channels-last f32 scratch buffer (other layouts, bf16/f16).
    bool src_direct, dst_direct;
    // fwd: the kernel width and the channels are reduced together (direct_flattens_w).
    bool flat_w;
    // fwd, bwd_data: the output (dst, or src for bwd_data) is bf16/f16 with contiguous channels,
    // so the gather rounds its f32 sums into the user's tensor in place: the microkernel does
    // (brgemm_args::narrow) when all of K is one chunk, else the gather from its f32 tiles in L1.
    // The output has no f32 copy to write, read back and convert. The grouped kernel rounds
    // its register tiles in place the same way, and so does the vdpbf16ps kernel's gather.
    // Only for the kernels that asked for it (make_direct_plan).
    bool out_rounded_in_kernel;
    // bwd_data: its stride phases along w are one gather, their pixels' channels side by side
    // (direct_merges_w_phases, with the kernels' rules: src written in place only with its
    // pixels dense along w; the f32 kernel not by chunks of an image's rows, which may cut
    // along w, where the vdpbf16ps kernel, `pairs`, has no such chunks).
    bool merge_w_phases;
    int nthr;           // threads the work is split over (fixed: results do not depend on timing)
    dim_t rows_per_chunk;  // bwd_weights: rows (n, d, h) reduced together, sized for L2
    // bwd_weights: when one row of src and diff_dst is beyond that L2 budget (a long 1-D
    // signal), its output pixels are reduced this many at a time: every tap and block of
    // output channels reads a chunk's diff_dst pixels (and the src pixels they read) from L2,
    // not the whole row from memory once per tile. 0: whole rows.
    dim_t pixels_per_chunk;
    // bwd_weights: the threads split the weights (groups, taps, blocks of output channels) and
    // each reduces every row into the user's weights in place, instead of splitting the rows
    // and summing their partial weights (kernels/schedule/bwd_weights.hpp).
    bool weights_split;
    // bwd_weights: a block of diff_dst's output channels that several register tiles of input
    // channels read is first copied into a dense panel when that panel fits this many bytes
    // (L1): in place, its pixels lie a whole row of channels apart, and at such power-of-two
    // strides (1 KB for 256 channels) they fall into a few sets of L1 and evict each other
    // before the next tile reads them. 0: never.
    dim_t bwd_w_b_panel;
    // bwd_weights, groups whose channels are not whole cache lines (ResNeXt's 32 groups of 8),
    // f32 in place: each chunk's rows are copied with each group's channels dense
    // ([group][row][pixel][cg]) before the groups' passes. In place, a group's pixels are a row
    // of all the channels apart and use part of each line: each (pass, tap) call read the
    // chunk's lines again from L2, part of each line unused, its pixels at 1 KB strides. Whole
    // rows only (not pixels_per_chunk), rows split.
    bool bwd_w_group_copies;
    // fwd, bwd_data: when a data tensor is copied (NCX, bf16/f16), the images are converted,
    // computed and written back this many at a time, so the copies are read back from cache
    // and scratch holds a chunk, not the tensor (mb when nothing is copied).
    dim_t images_per_chunk;
    // Whether one chunk's copies fit that L2 budget (bwd_weights' row chunks always do); when
    // not, a chunk of one image is written to memory and read back (the estimate charges it).
    bool chunk_fits_l2;
    // fwd, bwd_data: when one image's copies do not fit, the image is computed
    // out_rows_per_chunk rows of the output at a time along its spatial axis out_row_axis
    // (direct_out_row_axis): a copied output's copy holds only the chunk's rows (the input's
    // copy, if any, is made per image); else (in_rows_copied) the input's copy holds only the
    // rows the chunk's windows read (direct_input_rows), each thread copying and computing its
    // own contiguous share of the chunks. 0: whole images.
    dim_t out_rows_per_chunk;
    int out_row_axis;
    bool in_rows_copied;
    // By rows with the output copied (NCX) and the input not copied by rows: each thread
    // computes its own contiguous share of the chunks into its own copy and stores it, where the
    // chunks are at least 2 per thread (with fewer, one thread's extra chunk weighs more than
    // the joins it saves); else every chunk is computed by all the threads, then stored.
    bool out_rows_private = false;
    // With out_rows_private, where one image has fewer than 2 chunks per thread but the batch
    // has enough, and the input is read in place: the threads split the batch's (image, chunk)
    // pairs, each thread taking a contiguous share of them across images.
    bool rows_across_images = false;
    // The gather (fwd, bwd_data) keeps all of K in one chunk while the taps x K x block panel
    // of packed weights is within gather_whole_k bytes (L2), else cuts K into chunks of
    // gather_panel bytes (L1), each reused by a group of register tiles (all of K when fewer
    // channels than two lines of an A row, 32 f32 or 64 bf16, fit gather_panel).
    dim_t gather_whole_k, gather_panel;
    // The gather runs a group's channel blocks innermost (each unit of register tiles over
    // every block while its A rows stay in L1) while the group's packed weights, all blocks,
    // are within gather_group bytes (L2); else block by block over all the units.
    dim_t gather_group;
    // Else it runs block by block over bands of units that read about gather_band bytes of A
    // (L2): a band's A rows are read from memory once, not once per block.
    dim_t gather_band;
    // > 0: block by block in bands of this many units whatever the budgets (tests: every
    // order must give the same bits); 0: as above.
    dim_t gather_band_units;
    // fwd, bwd_data: the output is f32 in place and far bigger than the threads' L2, so the
    // gather stores it past the caches when all of K is one chunk (brgemm_args::stream): each
    // C line is written once, and a plain store first reads it from memory for ownership.
    // (Not, with AVX2, where its elements take few products each: min_macs_per_streamed_output.)
    bool stream_output;
    // fwd, bwd_data: an NCX f32 output, copied back from channels-last, is stored past the caches
    // by the same rule (data_operand::store, transpose_run_block).
    bool stream_copied_output;
    // fwd, bwd_data: a gather of one tap (1x1 kernels, stride phases of one tap) fetches the
    // next register tile's A rows with software prefetches while a tile runs. On AMD (Zen 4,
    // 2 threads: ResNet-50's 1x1 data gradient 1.2-1.26x); not on Intel, whose L2 streamer
    // fetches those rows already and where the prefetches stalled on full fill buffers (a Xeon
    // of model 207, 1 thread: the prefetch loop a sixth of the 1x1 data gradient's time; without
    // it 1.10x, 1x1 forwards 1.03-1.05x, U-Net's up-convolution 1.05x, two data gradients
    // 0.98-0.99x).
    bool prefetch_next_rows;
    cache_sizes caches;  // what the blocking was derived from
};

/// The gather (kernels/schedule/gather.hpp) hands its register tiles to the threads in units of
/// this many.
inline constexpr int gather_tiles_per_unit = 8;

/// fwd, bwd_data by rows with only the input copied (direct_plan::in_rows_copied): each thread
/// copies the input rows of its own chunks into its own scratch, within this share of its L2
/// (the rest holds the chunks of packed weights and the output lines it writes). Measured on
/// Zen 5, f16, 2 threads, three alternated suite runs: against half of the L2, FCN's x8
/// upsampling's data gradient (16 input rows of 520 pixels, 700 KB, per output row) fits one
/// output row a chunk instead of falling back to a whole-image copy through memory (38 -> 4.5
/// ms); the other layers by rows within the noise, all fwd and bwd_data runs 1.07x.
inline constexpr double direct_private_rows_share = 0.75;

// Vectors per register tile along N (the plan's max_nv). With 32 registers, 4: a 6 x 4 tile, 24
// accumulators, 10 loads per 24 FMAs. With 16 (AVX2, SSE2), 2: a 6 x 2 tile, 12 accumulators, 8
// loads per 12 FMAs; 4 left them 2 x 4 tiles, 8 accumulators and 6 loads per 8 FMAs. Measured on
// AVX2 (Zen 3, 2 threads, 33 suite layer-ops, best of 3 alternated runs): 1.20x faster with 2,
// 27 of 33 faster, up to 1.77x (ResNet-50's 3x3 stride-2 forward); 3 (4 x 3 tiles, with tails on
// 64 or 128 channels) gained less in a first comparison (1.14x against 1.22x).
inline constexpr int direct_max_nv(int nregs) { return nregs >= 32 ? 4 : 2; }

/// Vectors per channel block of a gather whose C side has `c_chan` channels per group: the
/// plan's max_nv, except that C sides of 3 vectors with 16 registers (AVX2's 17-24 channels)
/// are one block of 3, a 4 x 3 tile: blocks of 2 and 1 read every A row twice, and the 1-vector
/// block spends a broadcast on each FMA, on lanes partly empty (FCN's 21 classes on 6 x 2 and
/// 6 x 1 tiles: the second took 45% of the microkernels' time for 24% of the products). Zen 3,
/// 2 threads, medians of 3-4 alternated rounds: FCN's x8 data gradient 1.22-1.32x, x2 forward
/// 1.14-1.16x and data gradient 1.02-1.15x; x8 forward 0.97-1.08x, within this host's noise.
inline int direct_block_nv(int max_nv, int vlen, dim_t c_chan) {
    const dim_t nv = (c_chan + vlen - 1) / vlen;
    return max_nv == 2 && nv == 3 ? 3 : max_nv;
}
inline int direct_block_nv(const direct_plan &pl, dim_t c_chan) {
    return direct_block_nv(pl.max_nv, pl.vlen, c_chan);
}

/// Fills the plan for an ISA with `vlen` floats per vector and `nregs` vector registers, for
/// caches of the given sizes (by default this machine's).
/// Few input channels (the first layer of a network: 3): the forward direct kernel makes the
/// kernel width and the channels together the reduced axis, contiguous in a copy of src padded
/// along w, so each batch element reduces KW*ICg values instead of ICg. conv_problem::flattens_w
/// is the widest rule, which the scratch bound shares; each kernel takes its part of it:
/// - the vdpbf16ps kernel (`pairs`), all of it (up to 31 channels and 128 values a window):
///   its tiles reduce a pair a step, so short windows of channels leave its gather bound by its
///   pointers and calls. Zen 5, bf16, 2 threads, 2 alternated rounds: FCN's x2 upsampling data
///   gradient (21 channels, 4x4 stride 2) 0.49 -> 0.29 ms; over 8 forwards of 8-31 channels and
///   kernels 3-7, 1.08-1.7x faster, none slower (even channel counts, which it reads in place
///   unflattened, too);
/// - the f32 kernel, which reads an f32 src in place unless it flattens: windows of stride 1 of
///   up to 16 channels, and the stem's (fewer than 8 channels, 64 values). Same runs, f32: 8
///   channels 5x5 1.27x, 15 channels 7x7 1.2x, 16 channels 3x3 1.1x; but FCN's x2 (stride 2)
///   0.8-0.9x and 12 channels 4x4 stride 2 even, so not at stride 2.
inline bool direct_flattens_w(const conv_problem &p, bool pairs) {
    if (!p.flattens_w()) return false;
    return pairs || (p.icg < 8 && p.icg * p.k[2] <= 64) || (p.s[2] == 1 && p.icg <= 16);
}
inline bool direct_flattens_w(const direct_plan &pl) {
    return pl.p.dir == conv_direction::fwd && pl.flat_w;
}

/// bwd_data's stride phases along w as one gather whose C pixel X is the s = p.s[2] src pixels
/// s*X .. s*X + s - 1 of a row, their channels side by side (kernels/schedule/gather.hpp:
/// bwd_data_phase_jobs): every sub-pixel reads the same k/s dst pixels, each through its own
/// kernel column. Where: one group, no dilation along w, a kernel width and begin pad that are
/// multiples of s (so every sub-pixel has a tap for each of those dst pixels, no zero weights:
/// a zero weight times an infinite dst value the reference never reads would be NaN), src's
/// width a multiple of s, every kernel column read, and channels that fill vectors of `vlen`
/// better merged, by a tenth of the lanes at least. (The layout is the kernel's condition:
/// src written in place must be dense along w.) The vdpbf16ps kernel's, with the output rounded
/// in place (make_bf16dot_kernel): FCN's 21-channel ConvTranspose x2 (4x4 stride 2) 110-150 ->
/// 230-310 GFLOP/s, its x8 (16x16 stride 8) 170-235 -> 430-470 (Zen 5, bf16, 2 threads, fastest
/// of 100 executions, 4 alternated rounds).
bool direct_merges_w_phases(const conv_problem &p, int vlen);
/// Whether a data gradient whose output is written in place has its pixels dense along w, as
/// the merge needs (its f32 copy is).
inline bool direct_src_dense_along_w(const conv_problem &p) {
    return p.src.c == 1 && p.src.sp[2] == p.ic();
}

/// bwd_weights: the rows of the register tile of the first block of output channels, the
/// height the rows (tap, channel) of shared tiles fill.
inline dim_t direct_bwd_w_tile_rows(const direct_plan &pl) {
    const dim_t nvec = (pl.p.ocg + pl.vlen - 1) / pl.vlen;
    return pl.max_m[std::min<dim_t>(nvec, pl.max_nv)];
}
/// bwd_weights, rows split, few input channels: the taps along w share the tiles, rows (kw,
/// channel), up to a tile's height of them.
inline dim_t direct_bwd_w_taps_along_w(const direct_plan &pl) {
    return pl.weights_split
               ? 1
               : std::max<dim_t>(1, direct_bwd_w_tile_rows(pl) / std::max<dim_t>(pl.p.icg, 1));
}
/// bwd_weights, groups copied dense: whether a chunk's rows are reduced as runs of whole rows
/// (kernels/schedule/bwd_weights_runs.hpp): each group's output channels one whole vector, the
/// stride and dilation along w 1, its pads not negative, and tiles of more than 8 rows (which
/// read the runs' rows as spaced rows); the shape, and the plan.
inline bool direct_bwd_w_runs_shape(const direct_plan &pl) {
    const conv_problem &p = pl.p;
    return p.s[2] == 1 && p.dl[2] == 1 && p.pb[2] >= 0 && p.pe[2] >= 0 && p.ocg == pl.vlen &&
           pl.max_m[1] > 8;
}
/// The runs' copies' row: the pads along w and the src pixels (pb + iw + pe; for stride and
/// dilation 1, ow + kw - 1 too).
inline dim_t direct_bwd_w_runs_pitch(const conv_problem &p) {
    return p.pb[2] + p.i[2] + p.pe[2];
}
inline bool direct_bwd_w_group_runs(const direct_plan &pl) {
    // (The copies come with the rows split and whole rows; checked again here, as a plan
    // changed after it was made may not keep that.)
    return pl.bwd_w_group_copies && !pl.weights_split && pl.pixels_per_chunk == 0 &&
           direct_bwd_w_runs_shape(pl);
}
/// Whether the taps along d and h share them too, rows (kd, kh, kw, channel), over the rows
/// where all of them read a src row: when the taps along w leave the tile short (a 3-D first
/// layer of 1 channel, 3x3x3: 3 rows of 16).
inline bool direct_bwd_w_shares_hd(const direct_plan &pl) {
    const conv_problem &p = pl.p;
    return !pl.weights_split && p.k[0] * p.k[1] > 1 && p.icg * p.k[2] < direct_bwd_w_tile_rows(pl);
}

/// The spatial axis along which fwd/bwd_data compute an image's output in chunks of rows
/// (direct_plan::out_row_axis): the outermost with more than one output pixel, d, h or w (a
/// 1-D image is cut along w); never w for the forward kernel that flattens w into K, whose
/// copy of src is padded along w.
inline int direct_out_row_axis(const conv_problem &p, bool flat_w) {
    const dim_t *out_sp = p.dir == conv_direction::fwd ? p.o : p.i;
    if (out_sp[0] > 1) return 0;
    if (out_sp[1] > 1 || flat_w) return 1;
    return 2;
}

/// The rows [*a0, *a1) along axis x of the input (src for fwd, dst for bwd_data) that the
/// windows of the output's rows [r0, r1) along x read, within the input's extent (empty, a0 ==
/// a1, when all of them fall in the padding). A superset for bwd_data: a row of dst reached only
/// by taps of other stride phases is included.
void direct_input_rows(const conv_problem &p, int x, dim_t r0, dim_t r1, dim_t *a0, dim_t *a1);

/// `split_weights`: the kernel's bwd_weights schedule can split the weights over the threads
/// (direct_plan::weights_split), when the problem allows it.
/// `round_output_in_kernel`: the kernel's gather can write a bf16/f16 output itself
/// (direct_plan::out_rounded_in_kernel), when the problem allows it.
/// `pairs`: the plan is the vdpbf16ps kernel's (its flattening rule, direct_flattens_w).
direct_plan make_direct_plan(const conv_problem &p, int vlen, int nregs,
                             const cache_sizes &caches = machine_caches(),
                             bool round_output_in_kernel = false, bool split_weights = false,
                             bool pairs = false);

/// "tile=6x64 rows_per_chunk=... caches: ..." for CONVGRAD_VERBOSE=2 (with merged stride phases,
/// "stride phases along w merged: ..." first and the merged gathers' tile).
std::string describe(const direct_plan &pl);

}  // namespace convgrad::detail
