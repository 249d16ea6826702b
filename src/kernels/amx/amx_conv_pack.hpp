// Gather packers for the AMX convolution kernels. A convolution's K axis is often a list of
// pixels rather than a strided run (backward-weights reduces over the output pixels whose
// source pixel is inside the image, for one tap), so these packers take K as a list of element
// offsets: pix[k] is where pixel k starts in the tensor, channel c of it is at
// pix[k] + c * chan_stride. They write the microkernel's operands (amx_ukernel.hpp): A as rows
// of a panel, B as VNNI pairs, with the pad element of an odd K zero.
#pragma once

#include <cstdint>

#include "convgrad/types.hpp"
#include "kernels/amx/amx_ukernel.hpp"

namespace convgrad::detail::amx {

/// A tensor read by pixel offsets: element (pixel at offset o, channel c) is
/// base[o + c * chan_stride], of type dt (f32, bf16 or f16).
struct pixel_source {
    data_type dt = data_type::f32;
    const void *base = nullptr;
    int64_t chan_stride = 1;
};

/// dst[m * lda + k] = src(pix[k], c0 + m) for m < M, k < K, rounded to `to` (bits copied when
/// the source already has that type); dst[m * lda + K] = 0 when K is odd. lda >= padded_k(K).
void gather_a_pixels(const pixel_source &src, const int64_t *pix, int64_t K, int64_t c0, int64_t M,
                     amx_dot to, uint16_t *dst, int64_t lda);

/// dst[(k / 2) * ldb + 2 * n + k % 2] = src(pix[k], c0 + n) for k < K, n < N, rounded to `to`;
/// the pad row k = K of an odd K is zero. ldb >= 2 * N.
void gather_b_pixels(const pixel_source &src, const int64_t *pix, int64_t K, int64_t c0, int64_t N,
                     amx_dot to, uint16_t *dst, int64_t ldb);

}  // namespace convgrad::detail::amx
