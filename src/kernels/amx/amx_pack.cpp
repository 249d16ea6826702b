#include "kernels/amx/amx_pack.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "core/float_convert.hpp"
#include "kernels/amx/amx_pair_ops.hpp"

namespace convgrad::detail::amx {
namespace {

float load(const matrix_view &v, int64_t r, int64_t c) {
    const int64_t i = r * v.row_stride + c * v.col_stride;
    switch (v.dt) {
        case data_type::f32:
            return static_cast<const float *>(v.data)[i];
        case data_type::bf16:
            return bf16_to_float(static_cast<const uint16_t *>(v.data)[i]);
        case data_type::f16:
            return f16_to_float(static_cast<const uint16_t *>(v.data)[i]);
        default:
            break;
    }
    throw error(status::invalid_data_type, std::string("AMX packer: source type ") +
                                               convgrad::to_string(v.dt) +
                                               ", expected f32, bf16 or f16");
}

void check_source(const matrix_view &v) {
    if (!v.data) throw error(status::invalid_arguments, "AMX packer: null source");
    load(v, 0, 0);  // the type check (a valid element: the shapes are >= 1)
}

uint16_t narrow(float x, amx_dot to) {
    return to == amx_dot::bf16 ? float_to_bf16(x) : float_to_f16(x);
}
float widen(uint16_t h, amx_dot type) {
    return type == amx_dot::bf16 ? bf16_to_float(h) : f16_to_float(h);
}

void check_shape(int rows, int64_t K, const char *what) {
    if (rows < 1 || K < 1)
        throw error(status::invalid_arguments,
                    std::string("AMX packer: ") + what + " needs a non-empty matrix");
}

}  // namespace

void pack_a_panel(const matrix_view &src, int M, int64_t K, amx_dot to, uint16_t *dst,
                  int64_t lda) {
    check_shape(M, K, "pack_a_panel");
    if (lda < padded_k(K))
        throw error(status::invalid_arguments, "AMX packer: lda is less than K rounded up to even");
    check_source(src);
    for (int m = 0; m < M; ++m) {
        uint16_t *row = dst + m * lda;
        for (int64_t k = 0; k < K; ++k) row[k] = narrow(load(src, m, k), to);
        if (K & 1) row[K] = 0;
    }
}

void pack_b_vnni(const matrix_view &src, int64_t K, int N, amx_dot to, uint16_t *dst, int64_t ldb) {
    check_shape(N, K, "pack_b_vnni");
    if (ldb < 2 * int64_t(N))
        throw error(status::invalid_arguments, "AMX packer: ldb is less than 2 * N");
    check_source(src);
    for (int64_t k = 0; k < padded_k(K); ++k) {
        uint16_t *pairs = dst + (k / 2) * ldb + (k & 1);
        for (int n = 0; n < N; ++n)
            pairs[2 * n] = k < K ? narrow(load(src, k, n), to) : uint16_t(0);
    }
}

void unpack_a_panel(const uint16_t *packed, int M, int64_t K, amx_dot type, int64_t lda,
                    float *out) {
    for (int m = 0; m < M; ++m)
        for (int64_t k = 0; k < K; ++k) out[m * K + k] = widen(packed[m * lda + k], type);
}

void unpack_b_vnni(const uint16_t *packed, int64_t K, int N, amx_dot type, int64_t ldb,
                   float *out) {
    for (int64_t k = 0; k < K; ++k)
        for (int n = 0; n < N; ++n)
            out[k * N + n] = widen(packed[(k / 2) * ldb + 2 * n + (k & 1)], type);
}

namespace {

void interleave_portable(const uint16_t *lo, const uint16_t *hi, int64_t n, uint16_t *dst) {
    for (int64_t c = 0; c < n; ++c) {
        dst[2 * c] = lo[c];
        dst[2 * c + 1] = hi[c];
    }
}

void transpose_pairs_portable(const uint16_t *const *px, int pairs, int64_t n, uint16_t *col,
                              int64_t ld) {
    for (int j = 0; j < pairs; ++j)
        for (int64_t c = 0; c < n; ++c) {
            col[c * ld + 2 * j] = px[2 * j][c];
            col[c * ld + 2 * j + 1] = px[2 * j + 1][c];
        }
}

bool all_finite_portable(const uint16_t *v, int64_t n, amx_dot dot) {
    return bits_finite<uint16_t>(v, n, 1, uint16_t(dot == amx_dot::bf16 ? 0x7f80 : 0x7c00));
}

bool all_finite_pixels_portable(const uint16_t *v, int64_t pixels, int64_t stride, int64_t n,
                                amx_dot dot) {
    bool ok = true;
    for (int64_t x = 0; x < pixels; ++x) ok = ok && all_finite_portable(v + x * stride, n, dot);
    return ok;
}

void transpose_words_portable(const uint32_t *const *rows, int nrows, int64_t n, uint32_t *out,
                              int64_t ld) {
    for (int j = 0; j < nrows; ++j)
        for (int64_t c = 0; c < n; ++c) {
            uint32_t w;
            std::memcpy(&w, rows[j] + c, 4);  // (rows need no alignment)
            std::memcpy(out + c * ld + j, &w, 4);
        }
}

const pair_ops portable_ops{interleave_portable, transpose_pairs_portable, all_finite_portable,
                            all_finite_pixels_portable, transpose_words_portable};

}  // namespace

const pair_ops &pair_ops_for(amx_backend backend) {
    if (backend == amx_backend::native)
        if (const pair_ops *v = native::vector_pair_ops()) return *v;
    return portable_ops;
}

}  // namespace convgrad::detail::amx
