// The microkernel contract, shared by every instruction set (plain data only: each ISA's code
// lives in its own namespace, see brgemm_impl.hpp):
//
//   C[M x N] (+)= sum over b < nbatch of A_b[M x K] * B_b[K x N]
//
// accumulated in f32 registers, M rows by NV vectors of W floats (the last vector lane-masked
// to `tail` lanes). E is the element type of A and B and P their K packing:
//   f32:  E = float,    P = 1;
//   bf16: E = uint16_t, P = 2 (pairs of consecutive k, the operand layout of vdpbf16ps).
// A is addressed by row pointers, because the convolution gather's rows are scattered pixels
// (and padding rows point at a shared zero row); a strided or packed A is the special case of
// row pointers `base + m * stride`, which a batch element may also give as its row 0 and the
// stride (lda). Batch elements have row pointers of their own, or share one set displaced per
// element (a_boff).
#pragma once

#include <cstdint>

#include "core/conv_problem.hpp"

namespace convgrad::detail {

/// Largest register tile the kernel tables hold: rows and vectors.
constexpr int ukernel_max_rows = 16;
constexpr int ukernel_max_nv = 4;

/// Rows of the tallest tile of nv vectors whose accumulators, nv vectors of B and one broadcast
/// fit nregs vector registers: the rows every plan takes (the direct plan's max_m, the GEMM and
/// col2im plans' mr), and the tiles the microkernel tables compile unrolled (brgemm_impl.hpp).
constexpr int ukernel_rows_that_fit(int nregs, int nv) {
    return (nregs - nv - 1) / nv < ukernel_max_rows ? (nregs - nv - 1) / nv : ukernel_max_rows;
}

/// How the accumulators start.
enum class ukernel_init : int {
    zero = 0,        // C = sum
    bias = 1,        // C = bias row + sum
    accumulate = 2,  // C += sum
};

template <typename E>
struct brgemm_args {
    dim_t K;            // reduced length, a multiple of the packing P
    int nbatch;         // batch elements b (taps, rows) summed into C
    const E *const *A;  // [nbatch][M] row pointers:
    dim_t a_off, aks;   //   A_b(m, k) = A[b * M + m][a_off + (k / P) * aks + k % P]
    // Or, where every batch element reads each row at the same displacement (a gather tile
    // with every tap inside A: the tap moves all its pixels by one offset), A holds one set of
    // M row pointers and b's rows are displaced by a_boff[b] elements:
    //   A_b(m, k) = A[m][a_boff[b] + a_off + (k / P) * aks + k % P]
    // so such a tile's table is M pointers, not nbatch x M. [nbatch], or null.
    const dim_t *a_boff = nullptr;
    // Or, where a batch element's rows are equally spaced (a gather tile along one line of
    // pixels: a tap reads consecutive pixels), A holds one pointer per batch element, its row
    // 0, and its rows follow at lda elements (lda != 0, a_boff null):
    //   A_b(m, k) = A[b][m * lda + a_off + (k / P) * aks + k % P]
    // The tall one-vector tiles then address every row from one pointer instead of reloading
    // M pointers from a table (brgemm_impl.hpp: brgemm_strided_rows). 0: row pointers.
    dim_t lda = 0;
    const E *const *B;  // [nbatch]:
    dim_t b_off, ldb;   //   B_b(k, n) = B[b][b_off + (k / P) * ldb + n * P + k % P]
    float *const *C;    // [M] row pointers: C(m, n) = C[m][n], N = (NV - 1) * W + tail
    int tail;           // valid lanes of the last vector (1..W)
    ukernel_init init;
    const float *bias;  // with init == bias: the bias of C's first column
    // A C in bf16 or f16 (the user's output, in place): with `narrow` bf16/f16, the results
    // (with init == accumulate, C's f32 values plus the sums) go to C16's rows instead of C's,
    // rounded once to nearest-even, so such a call must be the last of its C's reduction.
    // f32 (the default): C.
    data_type narrow = data_type::f32;
    uint16_t *const *C16 = nullptr;  // [M] row pointers
    // C written once, too big to stay in cache: its whole vectors are stored past the caches
    // (vt::stream; a plain store where one is not aligned), with no read of C's lines for
    // ownership. A bf16/f16 C16 is streamed two whole vectors at a time (one cache line) where
    // the ISA rounds from its registers, else stored plainly. The caller fences
    // (vt::stream_fence) before its threads join.
    bool stream = false;
    // Several blocks of C's columns in one call, for short products whose call would cost more
    // than their arithmetic (a gather tile of K = 10 over 32 blocks of output channels): block
    // i is the call above with B read at b_off + i * b_blk and C, C16 and bias at column
    // i * c_blk of their rows. Each block's products and their order are those of its own
    // call, so the bits are too. Every block has NV vectors and the same tail.
    int nblk = 1;
    dim_t b_blk = 0, c_blk = 0;
    // Lines of 64 bytes fetched into L2 while the call runs (the next chunk's operands, which
    // the hardware prefetchers do not follow; schedule/bwd_weights.hpp, l2_ahead): pf_n lines
    // from pf on, two at each k step, the rest after the loop. Issued in a burst before the
    // call instead, 250 of them stalled it on the fill buffers. pf_n = 0: none.
    const char *pf = nullptr;
    dim_t pf_n = 0;
};

using brgemm_f32_args = brgemm_args<float>;
using brgemm_bf16_args = brgemm_args<uint16_t>;

}  // namespace convgrad::detail
