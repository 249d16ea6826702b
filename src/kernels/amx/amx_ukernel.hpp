// The AMX microkernel: C[M x N] (+)= sum over b of A_b[M x K] * B_b[K x N], with C in f32 and
// A, B in bf16 (TDPBF16PS) or f16 (TDPFP16PS), on up to 32 x 32 of C per call.
//
// Operands (the packers in amx_pack.hpp write them):
//   A_b: M rows of a packed panel, element (m, k) at A[b][m * lda + k], k < Kp, where Kp is K
//        rounded up to even and the element at k = K (odd K) is zero. Or, with a_block > 0, in
//        blocks of one tile step: element (m, k) at A[b][(k / 32) * a_block + m * lda + k % 32]
//        (lda 32: each step's tile is one contiguous run; rows of a long panel are pages apart).
//   B_b: VNNI pairs [Kp / 2][ldb / 2][2]: element (k, n) at B[b][(k / 2) * ldb + 2 * n + k % 2],
//        the pad row k = K (odd K) zero.
//   C:   f32, element (m, n) at C[m * ldc + n]; `accumulate` adds to it, else it is overwritten.
//
// Blocking: four C tiles (2 x 2, each up to 16 x 16 f32), two A tiles and two B tiles, which is
// all 8 tiles of palette 1. K runs in tile steps of 32 elements (16 pairs). M and N tails shrink
// the tiles through the configuration; a K tail needs other A and B shapes, and since
// ldtilecfg zeroes every tile, C is stored, the tail configuration loaded and C reloaded (exact:
// f32 in, f32 out), once per call.
//
// Order of the sums (what the rounding model in the tests follows): for each batch item b in
// order, the full K steps in order; then, with the tail configuration, the tail step of each b in
// order. Each step is one TDPBF16PS / TDPFP16PS, whose own order amx_emulation.hpp spells out.
//
// The native path (amx_backend::native) runs the real instructions; it is compiled only when
// the compiler accepts -mamx-tile -mamx-bf16 (f16 too: tdpfp16ps is emitted by its encoding when
// the compiler lacks -mamx-fp16) and may run only where native_usable says so. The emulated path
// runs the same kernel source over amx_emulation.hpp on any CPU.
#pragma once

#include <cstdint>

#include "convgrad/types.hpp"
#include "kernels/amx/amx_tile_config.hpp"
#include "threading/parallel.hpp"

namespace convgrad::detail::amx {

enum class amx_dot { bf16, f16 };
enum class amx_backend { native, emulated };
const char *to_string(amx_dot d);
const char *to_string(amx_backend b);

inline constexpr int ukernel_max_m = 32, ukernel_max_n = 32;
inline constexpr int k_step = 32;  // elements of K per tile step

/// Rows of an f32 C block to finish: row m, column n (m < rows, n < cols <= 32), plus bias[n]
/// when bias is set, rounded once to dt and stored at element
/// base + m * row_stride + n * col_stride of out.
/// With rows0 > 0 the rows come in two segments, as the microkernel's two tile rows hold them
/// when its first has m0 < 16 rows: rows [0, rows0) as above, and rows [rows0, rows) from C row
/// 16 on, stored from element base1 (row m at base1 + (m - rows0) * row_stride).
struct c_rows {
    const float *C = nullptr;
    int64_t ldc = 0;
    int rows = 0, cols = 0;
    const float *bias = nullptr;
    data_type dt = data_type::f32;
    void *out = nullptr;
    int64_t base = 0, row_stride = 0, col_stride = 1;
    int rows0 = 0;
    int64_t base1 = 0;

    /// Row m's values in C and its output offset.
    const float *c_of(int m) const {
        return rows0 > 0 && m >= rows0 ? C + (16 + m - rows0) * ldc : C + m * ldc;
    }
    int64_t at_of(int m) const {
        return rows0 > 0 && m >= rows0 ? base1 + (m - rows0) * row_stride : base + m * row_stride;
    }
};

/// Work a call does between its tile steps, so that it runs while the tiles multiply: the
/// previous call's C rows, rounded and stored (amx_pipeline.hpp).
struct side_work {
    c_rows finish;
};

/// The row of r.cols values at c, finished in portable code into offset `at` of r.out (the
/// emulated backend's, and the native one's for strided columns).
void finish_row_portable(const c_rows &r, const float *c, int64_t at);
/// All rows of r, finished by the backend's code (the native one's vector conversions), outside
/// any call: a pipeline's last rows, and blocks no product reaches.
void finish_rows(amx_backend backend, const c_rows &r);
/// Row m of r, finished so.
inline void finish_row_portable(const c_rows &r, int m) {
    finish_row_portable(r, r.c_of(m), r.at_of(m));
}

struct ukernel_args {
    int M = 0, N = 0, K = 0;  // 1 <= M, N <= 32; K >= 1
    /// Rows of A and C in the first tile row (0: min(M, 16)); the others, M - m0 <= 16, are
    /// A rows from A_b + a1_offset (0: m0 * lda) on, and C rows from row 16 on. So a call can
    /// take two runs of pixels that are not one stride apart (two output rows of 14 pixels).
    int m0 = 0;
    int64_t a1_offset = 0;
    int batch = 1;                       // number of (A_b, B_b) pairs summed
    const uint16_t *const *A = nullptr;  // batch pointers to A panels
    const uint16_t *const *B = nullptr;  // batch pointers to B in VNNI pairs
    int64_t lda = 0;                     // elements between rows of A; >= Kp unless:
    /// Rows of A may overlap (1 <= lda < Kp): A is only read, so row m + 1 may start inside
    /// row m (the forward kernel's rows are windows of one padded src line, s pixels apart).
    bool a_rows_overlap = false;
    /// > 0: A in blocks of k_step columns, a_block elements apart (see above); lda >= k_step.
    int64_t a_block = 0;
    int64_t ldb = 0;  // elements between pair rows of B; >= 2 * N
    float *C = nullptr;
    int64_t ldc = 0;  // elements between rows of C; >= N
    bool accumulate = false;
    /// Optional: done between the tile steps (it does not change C).
    const side_work *side = nullptr;
};

/// K rounded up to even: the K extent of packed A and B.
inline int64_t padded_k(int64_t K) {
    return K + (K & 1);
}

/// Runs the microkernel. convgrad::error (invalid_arguments) for arguments outside the contract;
/// (unimplemented) for the native backend when it is not built or not usable here.
void ukernel(amx_backend backend, amx_dot dot, const ukernel_args &args);

/// The same without the checks on the native backend, for the schedules, whose plans checked
/// the backend and whose calls are within the contract by construction (the emulated backend,
/// which their tests run, still checks every call): at K = 64 a call is 8 tile products.
void ukernel_trusted(amx_backend backend, amx_dot dot, const ukernel_args &args);

/// The native kernel for `dot` was compiled (the compiler knows the instructions).
bool native_built(amx_dot dot);
/// ... and this CPU has them and the OS granted tile data (within CONVGRAD_MAX_ISA).
bool native_usable(amx_dot dot);
/// Why native_usable(dot) is false ("" when it is true), for test skips and logs.
const char *native_unusable_reason(amx_dot dot);

/// Per-thread hooks for detail::parallel: on entry each thread loads the full 32 x 32 tile
/// configuration (so the first ukernel call of a region usually finds its palette loaded), on
/// exit it releases the tiles (TILERELEASE returns the thread to the init state, so the OS need
/// not save 8 KB of tile data on every context switch after the region).
thread_hooks thread_tile_hooks(amx_backend backend);

/// The configuration ukernel loads for an M x N block with `pairs` K pairs per step
/// (exposed for tests: every configuration the kernel builds must pass check_tile_config).
tile_config ukernel_config(int M, int N, int pairs);

}  // namespace convgrad::detail::amx
