// The data movement of the backward-weights packers, which put pixel pairs on K: two pixels'
// channels interleaved into VNNI pairs, pixel pairs transposed into the columns of a panel, and
// the finiteness test of a pixel's channels. Pure copies, so the native ops (AVX-512, in the
// unit compiled for AMX) and the portable ones (the emulated backend's) write the same bytes;
// portable code for the native backend cost as much as its tile products (a transposed
// diff_dst element by element, lines of pairs element by element: ResNet-50's 3x3 weight
// gradient spent 43% of its time there).
#pragma once

#include <cstdint>

#include "kernels/amx/amx_ukernel.hpp"

namespace convgrad::detail::amx {

inline constexpr int max_transposed_pairs = 16;

struct pair_ops {
    /// dst[2c] = lo[c], dst[2c + 1] = hi[c], c < n.
    void (*interleave)(const uint16_t *lo, const uint16_t *hi, int64_t n, uint16_t *dst);
    /// Columns 2j, 2j + 1 of the panel rows at col (row c at col + c * ld) get pixel pair j:
    /// (px[2j][c], px[2j + 1][c]) for c < n, j < pairs <= max_transposed_pairs.
    void (*transpose_pairs)(const uint16_t *const *px, int pairs, int64_t n, uint16_t *col,
                            int64_t ld);
    /// No element of v[0, n) is inf or NaN in the tiles' type.
    bool (*all_finite)(const uint16_t *v, int64_t n, amx_dot dot);
    /// The same for `pixels` runs of n elements, `stride` elements apart (a row of pixels).
    bool (*all_finite_pixels)(const uint16_t *v, int64_t pixels, int64_t stride, int64_t n,
                              amx_dot dot);
    /// 32-bit words (pairs of 16-bit elements) transposed: out[c * ld + j] = rows[j][c] for
    /// j < nrows <= 16, c < n (rows need no alignment).
    void (*transpose_words)(const uint32_t *const *rows, int nrows, int64_t n, uint32_t *out,
                            int64_t ld);
};

/// The ops of the backend: vector code for the native one where it was built, else portable.
const pair_ops &pair_ops_for(amx_backend backend);

namespace native {
/// The AVX-512 ops, or null when the native unit was built without AVX-512.
const pair_ops *vector_pair_ops();
}  // namespace native

}  // namespace convgrad::detail::amx
