// The plan of the GEMM kernel: convolutions that are matrix products, mapped by a cost estimate.
//
// With
//   P = dst pixels (n, od, oh, ow),  I = (input channel, tap),  O = output channels,
// src read through its windows is a P x I matrix (im2col, never materialized: an element's
// offset is row[p] + col[i]), dst a P x O matrix and the weights an O x I matrix, and
//   fwd: dst = src * wei^T,   bwd_data: src = dst * wei,   bwd_weights: wei = dst^T * src.
// fwd and bwd_weights only read src, so overlapping windows (any kernel, stride and dilation)
// are fine; taps that read padding read a zero-bordered copy of src (gemm_padded_src).
// bwd_data writes src through the windows: it is a product only when every src element is
// written by at most one (dst pixel, tap) pair and no tap reads padding (no begin padding,
// windows that neither overlap nor reach past the end of src): 1x1 kernels at stride 1, 1x1
// inputs covered by the kernel (a ConvTranspose from 1x1) and kernel == stride up-convolutions.
// (Its other shapes are the col2im kernel's.)
//
// Each product can be computed as C = A*B or as C^T = B^T*A^T: the plan picks the orientation and
// the register tile whose estimated time (FMAs at the lane utilization of the tile, plus the cost
// of packing operands and storing C, which depends on how contiguous each operand is) is least,
// and takes the problem only when that beats the estimate for the direct kernel (channels on the
// lanes, taps in padding computed on zeros, copies of non-channels-last tensors).
//
// Plain data, shared by the per-ISA translation units (see direct_plan.hpp).
#pragma once

#include <string>
#include <vector>

#include "core/conv_problem.hpp"

namespace convgrad::detail {

enum class gemm_tensor : int { src = 0, wei = 1, dst = 2 };

/// One GEMM operand X[r][c] of group g: element g*gstride + row[r] + col[c] of tensor t.
/// row_run[r] / col_run[c]: how many entries from r (c) on step by exactly +1 (at least 1), so a
/// packer knows where it may copy contiguous runs.
struct gemm_operand {
    gemm_tensor t = gemm_tensor::src;
    const dim_t *row = nullptr, *col = nullptr;
    const dim_t *row_run = nullptr, *col_run = nullptr;
    dim_t gstride = 0;
};

/// fwd/bwd_weights whose taps read padding: the GEMM kernel first copies src, in its own type
/// and axis order (channels last or not), into a buffer with the zeros of the padding around it,
/// and computes `p` over that copy (no padding, src the copy's dense layout).
struct gemm_padded_src {
    bool needed = false;
    std::string why_not;  // why no copy can serve (too big): then `p` is not set
    conv_problem p;       // the problem over the copy (the given one when not needed)
    dim_t elems = 0;      // elements of the copy
    bool nxc = true;      // the copy's channels are innermost
};
gemm_padded_src padded_src_of(const conv_problem &p);

/// Estimated cost of one mapping, in FMA-port cycles per group (for the choice and for logs).
struct gemm_estimate {
    bool transposed = false;  // C^T = B^T A^T: the M and N roles of the natural product swapped
    int nv = 1, mr = 1;       // register tile: mr rows x nv vectors
    double fma = 0, pack = 0, store = 0;
    // Cycles per element to read A again for another column block (its copy, or from memory
    // when it is used in place and outgrows the L2), and to pack B again for another row block:
    // which side of C the threads' blocks split first (make_gemm_plan).
    double a_again = 0, b_again = 0;
    double total() const { return fma + pack + store; }
};

struct gemm_plan {
    conv_problem p;     // the problem the tables index (over src's padded copy when pad.needed)
    conv_problem user;  // the problem as given
    gemm_padded_src pad;
    dim_t M = 0, N = 0, K = 0;  // per group: C[M x N] = sum_k A[M x K] * B[K x N]
    gemm_operand a, b, c;       // c is the output tensor of the direction
    int vlen = 1, nv = 1, mr = 1;
    dim_t mc = 1, nc = 1, kc = 1;  // cache blocks (mc a multiple of mr, nc of nv*vlen)
    dim_t mblocks = 0, nblocks = 0;
    dim_t ksplit = 1;  // parts K is split into (partial sums reduced in a fixed order)
    // Whether a unit may accumulate in a per-thread f32 block of C (mc x nc); false when every
    // unit accumulates in the user's tensor (gemm_c_in_place, column runs, f32 or one K block),
    // and then mc is not bounded by the block's L2 budget.
    bool c_block = true;
    // C in place and far beyond the caches (output_streams_past_caches): units of mc rows, all
    // groups and column blocks of a row block one after another, and C's whole vectors stored
    // past the caches when all of K is one block.
    bool stream_c = false;
    int nthr = 1;
    bool prefill = false;  // bwd_data: src elements no window reads are set to bias (or 0) first
    int bias_axis = -1;    // -1: no bias, 0: bias per C row, 1: per C column
    const dim_t *bias_ch = nullptr;  // channel in the group of each C row (or column)
    dim_t bias_chg = 0;              // channels per group of the biased tensor
    gemm_estimate est;
    double direct_estimate = 0;
};

/// Empty when the problem is a matrix product per group; else the rule it breaks.
std::string gemm_shape_why_not(const conv_problem &p);

/// Empty when every src element is in at most one window and no window reads padding (then
/// src read through its windows holds each element once, and bwd_data is a product); else the
/// rule the problem breaks.
std::string gemm_disjoint_why_not(const conv_problem &p);

/// Empty when the problem's offset tables stay small enough to build; else why not.
std::string gemm_tables_why_not(const conv_problem &p);

/// Empty when the GEMM kernel takes the problem (a matrix product, and the best mapping is
/// estimated faster than the direct kernel by a margin); else why not, with the estimates.
/// `direct_speedup`: how much faster than the f32 direct kernel the direct kernel that would
/// take the problem instead multiplies (2 for bf16 on vdpbf16ps where it runs at twice the FMA
/// rate, as on AMD Zen 4).
std::string gemm_why_not(const conv_problem &p, int vlen, int nregs, double direct_speedup = 1);

/// What a mapping is chosen for: the f32 kernel's register tiles (the estimate of FMAs, packing
/// and stores), or the AMX kernel's packers (operands read as runs first).
enum class gemm_mapping { f32_registers, tiles };

/// The row block for M rows split over nthr threads: mc (whole tiles of mr rows), or equal
/// blocks, one per thread or a multiple of the threads within mc_cached rows, where those give
/// the busiest thread at least half a tile fewer rows.
dim_t equal_row_blocks(dim_t M, dim_t mc, dim_t mc_cached, dim_t mr, int nthr);

/// Fills `tables` (the offset tables the plan points into; the caller keeps them alive and
/// does not resize them) and returns the plan of the best mapping. The problem must pass
/// gemm_shape_why_not.
gemm_plan make_gemm_plan(const conv_problem &p, int vlen, int nregs, std::vector<dim_t> &tables,
                         gemm_mapping mapping = gemm_mapping::f32_registers);

/// Whether the kernel writes C in the user's tensor itself (no f32 block stored after): no
/// bias, no prefill, no K split. Per unit, also its columns must be one contiguous run.
inline bool gemm_c_in_place(const gemm_plan &pl) {
    return pl.ksplit == 1 && pl.bias_axis < 0 && !pl.prefill;
}

/// Whether each column block of nc columns of C is one contiguous run of the user's tensor (the
/// other condition for a unit to accumulate there).
inline bool gemm_column_blocks_are_runs(const gemm_plan &pl) {
    for (dim_t n0 = 0; n0 < pl.N; n0 += pl.nc)
        if (pl.c.col_run[n0] < (pl.nc < pl.N - n0 ? pl.nc : pl.N - n0)) return false;
    return true;
}

/// Whether idx[0..n) steps by one constant `stride` (any stride when n <= 1: 0).
inline bool uniform_steps(const dim_t *idx, dim_t n, dim_t &stride) {
    stride = n > 1 ? idx[1] - idx[0] : 0;
    for (dim_t j = 2; j < n; ++j)
        if (idx[j] - idx[j - 1] != stride) return false;
    return true;
}

/// Empty when the bf16-pairs packers of the GEMM kernel (gemm_bf16dot) read the plan's operands
/// by rows, transposes or the unit's pair packer: A with k contiguous, or with contiguous rows
/// and k in even steps; B in even steps along both k and n. Else why not (they would copy
/// element by element, slower than the f32 packers' runs and block transposes).
std::string gemm_pairs_operands_why_not(const gemm_plan &pl);

/// "C=src[P x I]*... lanes=..." description of the mapping a plan chose.
std::string describe(const gemm_plan &pl);

}  // namespace convgrad::detail
