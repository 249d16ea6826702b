#include "kernels/amx/amx_conv_pack.hpp"

#include <string>

#include "core/float_convert.hpp"

namespace convgrad::detail::amx {
namespace {

// One element of the source as the kernel's 16-bit type. The loader is chosen once per call
// (a template parameter), not per element.
template <data_type Src, amx_dot To>
uint16_t element(const void *base, int64_t i) {
    if constexpr (Src == data_type::f32) {
        const float x = static_cast<const float *>(base)[i];
        return To == amx_dot::bf16 ? float_to_bf16(x) : float_to_f16(x);
    } else {
        const uint16_t h = static_cast<const uint16_t *>(base)[i];
        constexpr bool same = (Src == data_type::bf16) == (To == amx_dot::bf16);
        if constexpr (same) return h;
        const float x = Src == data_type::bf16 ? bf16_to_float(h) : f16_to_float(h);
        return To == amx_dot::bf16 ? float_to_bf16(x) : float_to_f16(x);
    }
}

template <data_type Src, amx_dot To>
void gather_a(const pixel_source &s, const int64_t *pix, int64_t K, int64_t c0, int64_t M,
              uint16_t *dst, int64_t lda) {
    for (int64_t m = 0; m < M; ++m) {
        uint16_t *row = dst + m * lda;
        const int64_t c = (c0 + m) * s.chan_stride;
        for (int64_t k = 0; k < K; ++k) row[k] = element<Src, To>(s.base, pix[k] + c);
        if (K & 1) row[K] = 0;
    }
}

template <data_type Src, amx_dot To>
void gather_b(const pixel_source &s, const int64_t *pix, int64_t K, int64_t c0, int64_t N,
              uint16_t *dst, int64_t ldb) {
    for (int64_t k = 0; k < K; ++k) {
        uint16_t *pairs = dst + (k / 2) * ldb + (k & 1);
        const int64_t o = pix[k] + c0 * s.chan_stride;
        for (int64_t n = 0; n < N; ++n)
            pairs[2 * n] = element<Src, To>(s.base, o + n * s.chan_stride);
    }
    if (K & 1)
        for (int64_t n = 0; n < N; ++n) dst[(K / 2) * ldb + 2 * n + 1] = 0;
}

void check(const pixel_source &s, int64_t K, int64_t rows, int64_t ld, int64_t ld_min,
           const char *what) {
    if (!s.base || K < 1 || rows < 1 || ld < ld_min)
        throw error(status::invalid_arguments,
                    std::string("AMX gather packer ") + what +
                        ": needs a source, K >= 1, at least one channel and a large enough "
                        "leading dimension");
}

// Instantiates `Fn` for the source type and the kernel type.
template <template <data_type, amx_dot> class Fn, typename... Args>
void dispatch_types(data_type dt, amx_dot to, Args &&...args) {
    const bool bf = to == amx_dot::bf16;
    switch (dt) {
        case data_type::f32:
            return bf ? Fn<data_type::f32, amx_dot::bf16>::run(args...)
                      : Fn<data_type::f32, amx_dot::f16>::run(args...);
        case data_type::bf16:
            return bf ? Fn<data_type::bf16, amx_dot::bf16>::run(args...)
                      : Fn<data_type::bf16, amx_dot::f16>::run(args...);
        case data_type::f16:
            return bf ? Fn<data_type::f16, amx_dot::bf16>::run(args...)
                      : Fn<data_type::f16, amx_dot::f16>::run(args...);
        default:
            break;
    }
    throw error(status::invalid_data_type, std::string("AMX gather packer: source type ") +
                                               convgrad::to_string(dt) +
                                               ", expected f32, bf16 or f16");
}

template <data_type Src, amx_dot To>
struct run_a {
    template <typename... Args>
    static void run(Args &&...args) {
        gather_a<Src, To>(args...);
    }
};
template <data_type Src, amx_dot To>
struct run_b {
    template <typename... Args>
    static void run(Args &&...args) {
        gather_b<Src, To>(args...);
    }
};

}  // namespace

void gather_a_pixels(const pixel_source &src, const int64_t *pix, int64_t K, int64_t c0, int64_t M,
                     amx_dot to, uint16_t *dst, int64_t lda) {
    check(src, K, M, lda, padded_k(K), "A");
    dispatch_types<run_a>(src.dt, to, src, pix, K, c0, M, dst, lda);
}

void gather_b_pixels(const pixel_source &src, const int64_t *pix, int64_t K, int64_t c0, int64_t N,
                     amx_dot to, uint16_t *dst, int64_t ldb) {
    check(src, K, N, ldb, 2 * N, "B");
    dispatch_types<run_b>(src.dt, to, src, pix, K, c0, N, dst, ldb);
}

}  // namespace convgrad::detail::amx
