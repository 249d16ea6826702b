// Packers for the AMX microkernel (amx_ukernel.hpp): A as rows of a strided panel, B as VNNI
// pairs [Kp/2][ldb/2][2], from f32, bf16 or f16 sources at any element strides, rounding to
// the kernel's type (bf16 or f16) to nearest even. For odd K the pad element k = K is written
// as zero, so the kernel's last pair adds nothing. The unpackers return what a packed operand
// holds, widened to f32 (for tests and debugging).
#pragma once

#include <cstdint>

#include "convgrad/types.hpp"
#include "kernels/amx/amx_ukernel.hpp"

namespace convgrad::detail::amx {

/// A source matrix: element (r, c) at data[r * row_stride + c * col_stride], of type dt
/// (f32, bf16 or f16). Strides are in elements.
struct matrix_view {
    data_type dt = data_type::f32;
    const void *data = nullptr;
    int64_t row_stride = 0, col_stride = 1;
};

/// dst[m * lda + k] = src(m, k) for m < M, k < K, rounded to `to`; dst[m * lda + K] = 0 when K
/// is odd. Needs lda >= padded_k(K).
void pack_a_panel(const matrix_view &src, int M, int64_t K, amx_dot to, uint16_t *dst, int64_t lda);

/// dst[(k / 2) * ldb + 2 * n + k % 2] = src(k, n) for k < K, n < N, rounded to `to`; the pad
/// row k = K of odd K is zero. Needs ldb >= 2 * N.
void pack_b_vnni(const matrix_view &src, int64_t K, int N, amx_dot to, uint16_t *dst, int64_t ldb);

/// out[m * K + k] = the packed A element (m, k), widened.
void unpack_a_panel(const uint16_t *packed, int M, int64_t K, amx_dot type, int64_t lda,
                    float *out);
/// out[k * N + n] = the packed B element (k, n), widened.
void unpack_b_vnni(const uint16_t *packed, int64_t K, int N, amx_dot type, int64_t ldb, float *out);

}  // namespace convgrad::detail::amx
