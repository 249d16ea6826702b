// The pair ops (amx_pair_ops.hpp) in AVX-512, compiled with the native AMX unit's flags (every
// AMX CPU has AVX-512; without the flags, the compiler lacks AMX too and nothing native runs).
#include "kernels/amx/amx_pair_ops.hpp"

#if defined(__AVX512F__) && defined(__AVX512BW__)
#include <immintrin.h>

#include <algorithm>

namespace convgrad::detail::amx::native {
namespace {

__mmask32 mask32(int64_t n) {
    return n >= 32 ? __mmask32(~0u) : __mmask32((1u << unsigned(n)) - 1u);
}
__mmask16 mask16(int64_t n) {
    return n >= 16 ? __mmask16(0xffff) : __mmask16((1u << unsigned(n)) - 1u);
}

void interleave(const uint16_t *lo, const uint16_t *hi, int64_t n, uint16_t *dst) {
    // 32 channels a step: (lo, hi) into two vectors of 16 pairs.
    const __m512i first =
        _mm512_set_epi16(47, 15, 46, 14, 45, 13, 44, 12, 43, 11, 42, 10, 41, 9, 40, 8, 39, 7, 38, 6,
                         37, 5, 36, 4, 35, 3, 34, 2, 33, 1, 32, 0);
    const __m512i second = _mm512_add_epi16(first, _mm512_set1_epi16(16));
    for (int64_t c = 0; c < n; c += 32) {
        const __mmask32 k = mask32(n - c);
        const __m512i l = _mm512_maskz_loadu_epi16(k, lo + c),
                      h = _mm512_maskz_loadu_epi16(k, hi + c);
        const int64_t left = 2 * std::min<int64_t>(32, n - c);  // elements to write
        _mm512_mask_storeu_epi16(dst + 2 * c, mask32(left), _mm512_permutex2var_epi16(l, first, h));
        if (left > 32)
            _mm512_mask_storeu_epi16(dst + 2 * c + 32, mask32(left - 32),
                                     _mm512_permutex2var_epi16(l, second, h));
    }
}

// 16 x 16 dwords, rows r[i] -> columns: r[i] lane j becomes r'[j] lane i.
void transpose16(__m512i r[16]) {
    __m512i t[16];
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) {
        r[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]);
        r[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
        r[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]);
        r[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
    }
    for (int i = 0; i < 4; ++i) {
        t[i] = _mm512_shuffle_i32x4(r[i], r[i + 4], 0x88);
        t[i + 4] = _mm512_shuffle_i32x4(r[i], r[i + 4], 0xdd);
        t[i + 8] = _mm512_shuffle_i32x4(r[i + 8], r[i + 12], 0x88);
        t[i + 12] = _mm512_shuffle_i32x4(r[i + 8], r[i + 12], 0xdd);
    }
    for (int i = 0; i < 4; ++i) {
        r[i] = _mm512_shuffle_i32x4(t[i], t[i + 8], 0x88);
        r[i + 8] = _mm512_shuffle_i32x4(t[i], t[i + 8], 0xdd);
        r[i + 4] = _mm512_shuffle_i32x4(t[i + 4], t[i + 12], 0x88);
        r[i + 12] = _mm512_shuffle_i32x4(t[i + 4], t[i + 12], 0xdd);
    }
}

void transpose_pairs(const uint16_t *const *px, int pairs, int64_t n, uint16_t *col, int64_t ld) {
    for (int64_t c0 = 0; c0 < n; c0 += 16) {
        const __mmask16 k = mask16(n - c0);
        __m512i r[16];
        // Row j: pair j of channels c0..c0 + 15, one dword each (the first pixel in the low half).
        for (int j = 0; j < 16; ++j) {
            if (j >= pairs) {
                r[j] = _mm512_setzero_si512();
                continue;
            }
            const __m512i a = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(k, px[2 * j] + c0));
            const __m512i b =
                _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(k, px[2 * j + 1] + c0));
            r[j] = _mm512_or_si512(a, _mm512_slli_epi32(b, 16));
        }
        transpose16(r);  // r[c]: channel c0 + c, pairs 0..15
        const __mmask16 cols = mask16(pairs);
        const int64_t rows = std::min<int64_t>(16, n - c0);
        for (int64_t c = 0; c < rows; ++c)
            _mm512_mask_storeu_epi32(col + (c0 + c) * ld, cols, r[c]);
    }
}

bool all_finite_pixels(const uint16_t *v, int64_t pixels, int64_t stride, int64_t n, amx_dot dot) {
    const __m512i inf = _mm512_set1_epi16(dot == amx_dot::bf16 ? 0x7f80 : 0x7c00);
    const __m512i magnitude = _mm512_set1_epi16(0x7fff);
    __mmask32 bad = 0;
    for (int64_t x = 0; x < pixels; ++x, v += stride)
        for (int64_t i = 0; i < n; i += 32) {
            const __m512i e =
                _mm512_and_si512(_mm512_maskz_loadu_epi16(mask32(n - i), v + i), magnitude);
            bad |= _mm512_cmpge_epu16_mask(e, inf);
        }
    return bad == 0;
}

bool all_finite(const uint16_t *v, int64_t n, amx_dot dot) {
    return all_finite_pixels(v, 1, 0, n, dot);
}

void transpose_words(const uint32_t *const *rows, int nrows, int64_t n, uint32_t *out, int64_t ld) {
    const __mmask16 cols = mask16(nrows);
    for (int64_t c0 = 0; c0 < n; c0 += 16) {
        const __mmask16 k = mask16(n - c0);
        __m512i r[16];
        for (int j = 0; j < 16; ++j)
            r[j] = j < nrows ? _mm512_maskz_loadu_epi32(k, rows[j] + c0) : _mm512_setzero_si512();
        transpose16(r);  // r[c]: word c0 + c of every row
        const int64_t m = std::min<int64_t>(16, n - c0);
        for (int64_t c = 0; c < m; ++c) _mm512_mask_storeu_epi32(out + (c0 + c) * ld, cols, r[c]);
    }
}

const pair_ops ops{interleave, transpose_pairs, all_finite, all_finite_pixels, transpose_words};

}  // namespace

const pair_ops *vector_pair_ops() {
    return &ops;
}

}  // namespace convgrad::detail::amx::native

#else

namespace convgrad::detail::amx::native {
const pair_ops *vector_pair_ops() {
    return nullptr;
}
}  // namespace convgrad::detail::amx::native

#endif
