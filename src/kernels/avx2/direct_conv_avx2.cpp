// AVX2+FMA instantiation of the common kernel source (8 floats per vector, 16 registers),
// compiled once per part of it (kernels/common/unit_parts.hpp).
#include <immintrin.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/float_convert.hpp"
#include "kernels/col2im_kernels.hpp"
#include "kernels/common/direct_plan.hpp"
#include "kernels/common/gemm_plan.hpp"
#include "kernels/direct_kernels.hpp"
#include "kernels/dw_kernels.hpp"
#include "kernels/dw_ncx_kernels.hpp"
#include "kernels/few_oc_kernels.hpp"
#include "kernels/pack/packed_formats.hpp"
#include "kernels/ukernel/brgemm_args.hpp"
#include "kernels/ukernel/ukernel_set.hpp"
#include "threading/parallel.hpp"
#include "threading/scratch_cache.hpp"

namespace convgrad::detail::avx2 {

#include "kernels/common/convert_scalar.hpp"

struct vt {
    static constexpr int W = 8;
    using V = __m256;
    static constexpr bool in_register = true;  // (asm operands may name a V)
    using mask_t = __m256i;
    static inline mask_t mask(int n) {
        return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    }
    static inline V zero() { return _mm256_setzero_ps(); }
    static inline V load(const float *p) { return _mm256_loadu_ps(p); }
    static inline V load_mask(const float *p, mask_t m) { return _mm256_maskload_ps(p, m); }
    static inline V bcast(const float *p) { return _mm256_broadcast_ss(p); }
    static inline V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
    // c + a * b into c's own register (the microkernel's accumulators).
    static inline V fma_acc(V a, V b, V c) {
        asm("vfmadd231ps %2, %1, %0" : "+x"(c) : "x"(a), "xm"(b));
        return c;
    }
    // base[idx[l]] for each lane l.
    static inline V gather(const float *base, const int32_t *idx) {
        return _mm256_i32gather_ps(base, _mm256_loadu_si256(reinterpret_cast<const __m256i *>(idx)), 4);
    }
    static inline void store(float *p, V v) { _mm256_storeu_ps(p, v); }
    // A store that bypasses the caches (brgemm_args::stream), where p is aligned as the
    // instruction requires; else a plain one. stream_fence orders them before the threads join.
    static inline void stream(float *p, V v) {
        if ((reinterpret_cast<uintptr_t>(p) & 31) == 0)
            _mm256_stream_ps(p, v);
        else
            _mm256_storeu_ps(p, v);
    }
    static inline void stream_fence() { _mm_sfence(); }
    // vmaskmovps to memory is microcoded on AMD: on Zen 3 it took about 5x a plain store's time
    // (measured, 8 independent stores, full or partial mask alike). A full mask, the common case
    // (the last vector of a microkernel's rows when the channels fill whole vectors), stores
    // plainly; the movemask is hoisted out of the loops that store with one mask.
    static inline void store_mask(float *p, V v, mask_t m) {
        if (_mm256_movemask_ps(_mm256_castsi256_ps(m)) == 0xFF)
            _mm256_storeu_ps(p, v);
        else
            _mm256_maskstore_ps(p, m, v);
    }
    static inline V add(V a, V b) { return _mm256_add_ps(a, b); }
    // The lanes whose bits are set in `bits` (bit l: lane l).
    static inline mask_t mask_bits(unsigned bits) {
        const __m256i b = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
        return _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(int(bits)), b), b);
    }
    // c + a * b on the lanes of m, c on the others (a padded tap must not make c NaN).
    static inline V fma_mask(V a, V b, V c, mask_t m) {
        return _mm256_blendv_ps(c, _mm256_fmadd_ps(a, b, c), _mm256_castsi256_ps(m));
    }
    // The even and the odd elements of the 2W elements a, b (a first): per 128-bit half the
    // shuffle gives a0 a2 b0 b2 | a4 a6 b4 b6, and the 64-bit permute orders the pairs.
    static inline V even(V a, V b) {
        return _mm256_castpd_ps(
            _mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0x88)), 0xD8));
    }
    static inline V odd(V a, V b) {
        return _mm256_castpd_ps(
            _mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0xDD)), 0xD8));
    }
    // a0 b0 a1 b1 ...: its first W elements (lo) and its last W (hi); the inverse of even/odd.
    static inline V interleave_lo(V a, V b) {
        return _mm256_permute2f128_ps(_mm256_unpacklo_ps(a, b), _mm256_unpackhi_ps(a, b), 0x20);
    }
    static inline V interleave_hi(V a, V b) {
        return _mm256_permute2f128_ps(_mm256_unpacklo_ps(a, b), _mm256_unpackhi_ps(a, b), 0x31);
    }
    // r[i] lane j <-> r[j] lane i: the 8 x 8 block transpose of the NCX packers.
    static inline void transpose(V r[8]) {
        V t[8], u[8];
        for (int i = 0; i < 8; i += 2) {
            t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
            t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
        }
        // u[4q + j], 128-bit half L: rows 4q..4q+3 of column 4L + j.
        for (int q = 0; q < 8; q += 4) {
            u[q] = _mm256_shuffle_ps(t[q], t[q + 2], 0x44);
            u[q + 1] = _mm256_shuffle_ps(t[q], t[q + 2], 0xEE);
            u[q + 2] = _mm256_shuffle_ps(t[q + 1], t[q + 3], 0x44);
            u[q + 3] = _mm256_shuffle_ps(t[q + 1], t[q + 3], 0xEE);
        }
        for (int j = 0; j < 4; ++j) {
            r[j] = _mm256_permute2f128_ps(u[j], u[4 + j], 0x20);
            r[4 + j] = _mm256_permute2f128_ps(u[j], u[4 + j], 0x31);
        }
    }
    using perm_t = __m256i;
    static inline perm_t perm_index(int cg, int i) {
        alignas(32) int idx[8];
        for (int l = 0; l < 8; ++l) idx[l] = l - l % cg + i;
        return _mm256_load_si256(reinterpret_cast<const __m256i *>(idx));
    }
    static inline V permute(V v, perm_t idx) { return _mm256_permutevar8x32_ps(v, idx); }
    // Lanes l with bit D of l set from b, the others from a; and lane l <- lane l ^ D (D = 1,
    // 2, 4): the steps that add the lanes of groups of 2-8 channels (grouped_reduce).
    template <int D>
    static inline V blend_bit(V a, V b) { return _mm256_blend_ps(a, b, D == 1 ? 0xAA : D == 2 ? 0xCC : 0xF0); }
    template <int D>
    static inline V swap_bit(V v) {
        if constexpr (D == 1) return _mm256_permute_ps(v, 0xB1);
        else if constexpr (D == 2) return _mm256_permute_ps(v, 0x4E);
        else return _mm256_permute2f128_ps(v, v, 0x01);
    }
    // bf16/f16 <-> f32 for n contiguous elements (exact widening, nearest-even narrowing).
    static inline void widen(data_type dt, const uint16_t *x, float *y, dim_t n) {
        dim_t i = 0;
        for (; i + 8 <= n; i += 8) {
            const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i *>(x + i));
            _mm256_storeu_ps(y + i, dt == data_type::bf16
                                        ? _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16))
                                        : _mm256_cvtph_ps(h));
        }
        widen_scalar(dt, x + i, y + i, n - i);
    }
    // n < 8 bf16 or f16 widened, the lanes from n on zero (AVX2 has no masked 16-bit load:
    // through a buffer).
    static inline V load_half_tail(data_type dt, const uint16_t *p, int n) {
        alignas(32) float tmp[8] = {};
        widen(dt, p, tmp, n);
        return _mm256_load_ps(tmp);
    }
    // One vector of 8 bf16 or f16 (exact widening; nearest-even narrowing, NaN kept quiet).
    static inline V load_bf16(const uint16_t *p) {
        const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p));
        return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    }
    static inline V load_f16(const uint16_t *p) {
        return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p)));
    }
    // Each lane's bf16 (nearest even, NaN kept quiet) in the low half of its dword.
    static inline __m256i bf16_dwords(V v) {
        const __m256i u = _mm256_castps_si256(v);
        const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
        const __m256i r = _mm256_srli_epi32(
            _mm256_add_epi32(u, _mm256_add_epi32(_mm256_set1_epi32(0x7fff), lsb)), 16);
        const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
        return _mm256_blendv_epi8(
            r, _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40)), nan);
    }
    static inline void store_bf16(uint16_t *p, V v) {
        const __m256i r = bf16_dwords(v);
        // Every dword is below 2^16: the unsigned-saturating pack keeps it exactly.
        _mm_storeu_si128(
            reinterpret_cast<__m128i *>(p),
            _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1)));
    }
    // 16 bf16 split by parity into two vectors (even elements, odd ones), and merged back
    // rounded (as the AVX-512 traits': the depthwise kernel's split blocks).
    static inline void load_bf16_split(const uint16_t *p, V &even, V &odd) {
        __m256i u = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p));
        __asm__("" : "+x"(u));  // (one load, not folded into both ops: the AVX-512 traits')
        even = _mm256_castsi256_ps(_mm256_slli_epi32(u, 16));
        odd = _mm256_castsi256_ps(_mm256_and_si256(u, _mm256_set1_epi32(int(0xffff0000u))));
    }
    static inline void store_bf16_merge(uint16_t *p, V even, V odd, bool) {
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(p),
                            _mm256_or_si256(bf16_dwords(even),
                                            _mm256_slli_epi32(bf16_dwords(odd), 16)));
    }
    // f16 of 8 floats; a NaN becomes sign | 0x7e00 like the scalar float_to_f16 (vcvtps2ph
    // alone keeps the top bits of the payload, and the results would depend on the ISA).
    static inline __m128i to_f16(V v) {
        const __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        const __m256i nan32 = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
        const __m128i nan =
            _mm_packs_epi32(_mm256_castsi256_si128(nan32), _mm256_extracti128_si256(nan32, 1));
        const __m128i quiet =
            _mm_or_si128(_mm_and_si128(h, _mm_set1_epi16(short(0x8000))), _mm_set1_epi16(0x7e00));
        return _mm_blendv_epi8(h, quiet, nan);
    }
    static inline void store_f16(uint16_t *p, V v) {
        _mm_storeu_si128(reinterpret_cast<__m128i *>(p), to_f16(v));
    }
    static inline void narrow(data_type dt, const float *x, uint16_t *y, dim_t n) {
        dim_t i = 0;
        for (; i + 8 <= n; i += 8) {
            if (dt == data_type::bf16)
                store_bf16(y + i, _mm256_loadu_ps(x + i));
            else
                store_f16(y + i, _mm256_loadu_ps(x + i));
        }
        narrow_scalar(dt, x + i, y + i, n - i);
    }
};

#define UKERNEL_SET_NREGS 16  // (the microkernel tables size their tiles by it)
#define UKERNEL_SET_NAME "avx2"
#define UKERNEL_SET_ISA cpu_isa::avx2
#include "kernels/common/unit_parts.hpp"  // (the part this compilation is: src/CMakeLists.txt)

}  // namespace convgrad::detail::avx2
