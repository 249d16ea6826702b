// Backward-weights on the AMX microkernel: for every tap, dW^T[ocg x icg] += diff_dst^T * src,
// reduced over the output pixels. K is the pixel axis, so the operands put pixel PAIRS on K:
// A = diff_dst^T, a panel [oc][pixels], transposed once per chunk and shared by every tap (it
// does not depend on the tap); B = the tap's src pixels in VNNI pairs [pixels / 2][ic][2],
// which is two NXC pixel rows interleaved: cheap per tap. For one tap only the pixels whose
// source pixel is inside the image take part (padding contributes nothing, not even 0 * inf):
// when the chunk's diff_dst is finite, the outside pixels join as zero rows of B (exact, and A
// stays shared) unless they are more than half; else the tap takes only the inside pixels,
// A's columns picked out.
//
// Schedule: the output pixels (n, od, oh, ow flattened) are cut into K chunks sized so that
// one chunk's A and B stay in L2. Consecutive chunks form `slices`; a work item is one
// (slice, group) and owns an f32 partial of that group's weights. The number of slices
// depends on the problem only, never on the thread count, and a second region sums the slices
// in slice order and rounds once to the weights' type: the result is the same bit for bit
// on any number of threads.
#pragma once

#include <string>

#include "core/conv_problem.hpp"
#include "kernels/amx/amx_ukernel.hpp"

namespace convgrad::detail::amx {

struct bwd_weights_plan {
    conv_problem p;
    amx_backend backend = amx_backend::native;
    amx_dot dot = amx_dot::bf16;
    int nthr = 1;
    int64_t npix = 0;   // output pixels, all images
    int64_t chunk = 0;  // pixels per K chunk
    int64_t nchunks = 0;
    int64_t slices = 1;  // partial sums, each over a run of consecutive chunks
    int64_t lda = 0, ldb = 0;
    /// The rows path (w stride 1): K runs along whole output rows (ow, padded to even), src is
    /// copied once per execution as zero-padded lines of pixel pairs in both alignments, so a
    /// tap's B is a pointer into them instead of a per-tap interleave. Taken when the data are
    /// finite (padding then joins as exact zeros); else the pixel path above.
    bool rows = false;
    /// The rows path over whole planes (h stride 1 too): a unit of K is an output plane (n, od)
    /// with its rows wq elements apart (o_w plus the taps' reach; the columns past o_w are zero
    /// in diff_dst^T), and a src line is a plane of zero-padded rows wq apart, so that every
    /// (kh, kw) tap reads one run of it, kh * dl_h * wq + kw * dl_w elements on. Rows of 14
    /// pixels (ResNet-50's res4) filled 14 of a tile step's 32 K elements; a plane of them with
    /// rows 16 apart fills 7/8 of its steps.
    bool plane = false;
    int64_t wq = 0;      // plane: elements between rows (of a unit and of a line)
    int64_t hq = 1;      // plane: rows of a line
    int64_t owp = 0;     // elements of K per unit (a row, or a plane), rounded up to even
    int64_t rchunk = 0;  // units (rows, or planes) per K chunk
    int64_t rnchunks = 0, rslices = 1;
    int64_t np = 0;      // pixel pairs per alignment of a src line
    int64_t nicb = 0;    // 32-channel blocks of icg
    int64_t rsteps = 0;  // tile steps per unit (owp / 32, rounded up)
    /// The folded path (few input channels, when the rows path is not taken: the stem's w
    /// stride 2): kq w taps of icg channels side by side in the tile's columns (N = kq * icg <=
    /// 32), so that 3 channels fill 21 columns of 32 instead of 3 of 16. K runs along whole
    /// output rows (owp: o_w rounded up to the tile step, zero columns past o_w), and each src
    /// row is packed once per execution for every group of kq taps as the B of all the output
    /// rows that read it: [group][owp / 2][32][2], element (ow, kwl * icg + ic) the src pixel
    /// ow * s_w + (group * kq + kwl) * dl_w - pb_w. Taken when the data are finite (padding and
    /// the columns past o_w join as zeros); else the pixel path. Reuses owp, rsteps, rchunk,
    /// rnchunks and rslices.
    bool folded = false;
    int64_t kq = 0, njg = 0;  // w taps per group of columns; groups
    int64_t fold_wp = 0;      // pixels of a zero-padded src row
    int64_t fold_line() const { return njg * (owp / 2) * 2 * ukernel_max_n; }
    double folded_scratch_bytes() const;
    int64_t nunits() const { return plane ? p.mb * p.o[0] : p.mb * p.o[0] * p.o[1]; }
    int64_t nlines() const { return p.g * p.mb * p.i[0] * (plane ? 1 : p.i[1]); }
    double rows_scratch_bytes() const;
    /// Bytes of scratch one execution allocates (the slices' partial sums, the per-thread
    /// packed chunk and pixel lists).
    double scratch_bytes() const;
};

/// The 16-bit type the problem multiplies in, or an explanation why it has none ("" and
/// `dot` set when it has one): bf16/f16 ops, or f32 ops under fpmath_mode bf16/f16.
std::string amx_dot_of(const conv_problem &p, amx_dot &dot);

/// chunk_pixels = 0 picks the L2-sized chunk; tests pass small values to cross chunk edges.
bwd_weights_plan plan_bwd_weights(const conv_problem &p, amx_backend backend,
                                  int64_t chunk_pixels = 0);
void run_bwd_weights(const bwd_weights_plan &pl, const conv_args &args);

}  // namespace convgrad::detail::amx
