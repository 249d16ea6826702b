// The AVX-512 vector traits (16 floats per vector, 32 registers) of the microkernel and the
// direct/gemm/grouped kernels, included inside the namespace of an AVX-512 translation unit:
// the plain AVX-512 one (vdpbf16ps emulated) and the AVX512_BF16 one, which defines
// CONVGRAD_NATIVE_VDPBF16PS first.

#ifndef CONVGRAD_NATIVE_VDPBF16PS
#include "kernels/avx512/vdpbf16ps_emulation.hpp"
#endif

struct vt {
    static constexpr int W = 16;
    using V = __m512;
    static constexpr bool in_register = true;  // (asm operands may name a V)
    using mask_t = __mmask16;
    static inline mask_t mask(int n) { return mask_t((1u << n) - 1u); }
    static inline V zero() { return _mm512_setzero_ps(); }
    static inline V load(const float *p) { return _mm512_loadu_ps(p); }
    static inline V load_mask(const float *p, mask_t m) { return _mm512_maskz_loadu_ps(m, p); }
    static inline V bcast(const float *p) { return _mm512_set1_ps(*p); }
    static inline V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
    // base[idx[l]] for each lane l.
    static inline V gather(const float *base, const int32_t *idx) {
        return _mm512_i32gather_ps(_mm512_loadu_si512(idx), base, 4);
    }
    static inline void store(float *p, V v) { _mm512_storeu_ps(p, v); }
    // A store that bypasses the caches (brgemm_args::stream), where p is aligned as the
    // instruction requires; else a plain one. stream_fence orders them before the threads join.
    static inline void stream(float *p, V v) {
        if ((reinterpret_cast<uintptr_t>(p) & 63) == 0)
            _mm512_stream_ps(p, v);
        else
            _mm512_storeu_ps(p, v);
    }
    static inline void stream_fence() { _mm_sfence(); }
    static inline void store_mask(float *p, V v, mask_t m) { _mm512_mask_storeu_ps(p, m, v); }
    static inline V add(V a, V b) { return _mm512_add_ps(a, b); }
    // The lanes whose bits are set in `bits` (bit l: lane l).
    static inline mask_t mask_bits(unsigned bits) { return mask_t(bits); }
    // c + a * b on the lanes of m, c on the others (a padded tap must not make c NaN).
    static inline V fma_mask(V a, V b, V c, mask_t m) { return _mm512_mask3_fmadd_ps(a, b, c, m); }
    // The even and the odd elements of the 2W elements a, b (a first): a row split into its two
    // stride phases.
    static inline V even(V a, V b) {
        return _mm512_permutex2var_ps(
            a, _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30), b);
    }
    static inline V odd(V a, V b) {
        return _mm512_permutex2var_ps(
            a, _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31), b);
    }
    // a0 b0 a1 b1 ...: its first W elements (lo) and its last W (hi); the inverse of even/odd.
    static inline V interleave_lo(V a, V b) {
        return _mm512_permutex2var_ps(
            a, _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23), b);
    }
    static inline V interleave_hi(V a, V b) {
        return _mm512_permutex2var_ps(
            a, _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31), b);
    }
    // r[i] lane j <-> r[j] lane i: the 16 x 16 block transpose of the NCX packers.
    static inline void transpose(V r[16]) {
        V t[16], u[16];
        for (int i = 0; i < 16; i += 2) {
            t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
            t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
        }
        // u[4q + j], 128-bit lane L: rows 4q..4q+3 of column 4L + j.
        for (int q = 0; q < 16; q += 4) {
            u[q] = _mm512_shuffle_ps(t[q], t[q + 2], 0x44);
            u[q + 1] = _mm512_shuffle_ps(t[q], t[q + 2], 0xEE);
            u[q + 2] = _mm512_shuffle_ps(t[q + 1], t[q + 3], 0x44);
            u[q + 3] = _mm512_shuffle_ps(t[q + 1], t[q + 3], 0xEE);
        }
        for (int j = 0; j < 4; ++j) {
            const V x0 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0x88);
            const V x1 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0xDD);
            const V y0 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0x88);
            const V y1 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0xDD);
            r[j] = _mm512_shuffle_f32x4(x0, y0, 0x88);
            r[8 + j] = _mm512_shuffle_f32x4(x0, y0, 0xDD);
            r[4 + j] = _mm512_shuffle_f32x4(x1, y1, 0x88);
            r[12 + j] = _mm512_shuffle_f32x4(x1, y1, 0xDD);
        }
    }
    using perm_t = __m512i;
    static inline perm_t perm_index(int cg, int i) {
        alignas(64) int idx[16];
        for (int l = 0; l < 16; ++l) idx[l] = l - l % cg + i;
        return _mm512_load_si512(idx);
    }
    static inline V permute(V v, perm_t idx) { return _mm512_permutexvar_ps(idx, v); }
    // Indices given lane by lane; and vpermt2ps: lane l <- (idx[l] & 16 ? b : a)[idx[l] & 15].
    static inline perm_t perm_from(const int32_t *idx) { return _mm512_loadu_si512(idx); }
    static inline V permute2(V a, V b, perm_t idx) { return _mm512_permutex2var_ps(a, idx, b); }
    // Lanes l with bit D of l set from b, the others from a; and lane l <- lane l ^ D (D = 1,
    // 2, 4): the steps that add the lanes of groups of 2-8 channels (grouped_reduce).
    template <int D>
    static inline V blend_bit(V a, V b) {
        return _mm512_mask_blend_ps(__mmask16(D == 1 ? 0xAAAA : D == 2 ? 0xCCCC : 0xF0F0), a, b);
    }
    template <int D>
    static inline V swap_bit(V v) {
        if constexpr (D == 1)
            return _mm512_permute_ps(v, 0xB1);
        else if constexpr (D == 2)
            return _mm512_permute_ps(v, 0x4E);
        else
            return _mm512_shuffle_f32x4(v, v, 0xB1);
    }
    // bf16/f16 <-> f32 for n contiguous elements (exact widening, nearest-even narrowing).
    static inline void widen(data_type dt, const uint16_t *x, float *y, dim_t n) {
        dim_t i = 0;
        for (; i + 16 <= n; i += 16) {
            const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(x + i));
            _mm512_storeu_ps(y + i, dt == data_type::bf16 ? _mm512_castsi512_ps(_mm512_slli_epi32(
                                                                _mm512_cvtepu16_epi32(h), 16))
                                                          : _mm512_cvtph_ps(h));
        }
        // The tail (and whole short runs: block transposes widen a few rows at a time) by one
        // masked load, which does not touch the elements masked off.
        if (i < n) {
            const __mmask16 m = __mmask16((1u << unsigned(n - i)) - 1u);
            const __m256i h = _mm256_maskz_loadu_epi16(m, x + i);
            _mm512_mask_storeu_ps(y + i, m,
                                  dt == data_type::bf16 ? _mm512_castsi512_ps(_mm512_slli_epi32(
                                                              _mm512_cvtepu16_epi32(h), 16))
                                                        : _mm512_cvtph_ps(h));
        }
    }
    // n < 16 bf16 or f16 widened, the lanes from n on zero, by one masked load (which does not
    // touch the elements masked off) straight into a register: stored to a buffer by widen and
    // loaded back as a vector, the tail of a depthwise kernel's pixels waited on the store
    // forwarding at every tap (25 channels, kernel 185: bf16 6x its f32 time, Zen 4).
    static inline V load_half_tail(data_type dt, const uint16_t *p, int n) {
        const __m256i h = _mm256_maskz_loadu_epi16(__mmask16((1u << unsigned(n)) - 1u), p);
        return dt == data_type::bf16
                   ? _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16))
                   : _mm512_cvtph_ps(h);
    }
    // One vector of 16 bf16 or f16 (exact widening; nearest-even narrowing, NaN kept quiet).
    static inline V load_bf16(const uint16_t *p) {
        const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p));
        return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    }
    static inline V load_f16(const uint16_t *p) {
        return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(p)));
    }
    // 32 bf16 as two vectors split by parity: even = elements 0, 2, ..., 30 and odd = 1, 3,
    // ..., 31, widened exactly. One load and one integer op per vector, where load_bf16 takes
    // a widening load and a shift (the depthwise kernel's split blocks, dw_elements.hpp).
    // (The empty asm keeps the load one instruction: GCC 12 folded it into both the shift and
    // the AND as memory operands, two 64-byte loads per line, and the loads bound the kernel:
    // a Zen 5 core sustained about one 64-byte load per cycle with an FMA on each.)
    static inline void load_bf16_split(const uint16_t *p, V &even, V &odd) {
        __m512i u = _mm512_loadu_si512(p);
        __asm__("" : "+v"(u));
        even = _mm512_castsi512_ps(_mm512_maskz_slli_epi32(0xffff, u, 16));
        odd = _mm512_castsi512_ps(_mm512_and_si512(u, _mm512_set1_epi32(int(0xffff0000u))));
    }
    // (The zero-masked forms throughout: GCC 12 warns about the undefined source of the plain
    // ones once they are inlined into a kernel.)
    // v rounded to bf16, nearest-even (a NaN keeps its top bits, made quiet), the bits in the
    // high half of each 32-bit lane (the low half is left over from the rounding).
    static inline __m512i bf16_in_high_half(V v) {
        const __m512i u = _mm512_castps_si512(v);
        const __m512i lsb =
            _mm512_and_si512(_mm512_maskz_srli_epi32(0xffff, u, 16), _mm512_set1_epi32(1));
        const __m512i r = _mm512_add_epi32(u, _mm512_add_epi32(_mm512_set1_epi32(0x7fff), lsb));
        const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
        return _mm512_mask_or_epi32(r, nan, u, _mm512_set1_epi32(0x400000));
    }
    static inline __m256i to_bf16(V v) {
#ifdef CONVGRAD_NATIVE_VDPBF16PS
        // vcvtneps2bf16 rounds as below but reads a denormal input as zero: used where no
        // lane is one (denormal sums are rare; their exact rounding is kept).
        if (_mm512_fpclass_ps_mask(v, 0x20) == 0) return __m256i(_mm512_cvtneps_pbh(v));
#endif
        return _mm512_maskz_cvtepi32_epi16(
            0xffff, _mm512_maskz_srli_epi32(0xffff, bf16_in_high_half(v), 16));
    }
    static inline void store_bf16(uint16_t *p, V v) {
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(p), to_bf16(v));
    }
    // The inverse of load_bf16_split: each vector rounded as store_bf16 rounds it, the two
    // interleaved into 32 bf16; past the caches with `stream` where p is aligned to a line.
    // Rounded in place in their 32-bit lanes and merged by one shift and one bitwise select,
    // not narrowed to 16 bits and widened back: the depthwise kernel stores a bf16 line per 18
    // multiply-adds (a 3x3 kernel), and the narrowing and widening were shuffles.
    static inline void store_bf16_merge(uint16_t *p, V even, V odd, bool stream) {
        // (imm 0xf8: a | (b & c).)
        const __m512i u = _mm512_ternarylogic_epi32(
            _mm512_maskz_srli_epi32(0xffff, bf16_in_high_half(even), 16), bf16_in_high_half(odd),
            _mm512_set1_epi32(int(0xffff0000u)), 0xf8);
        if (stream && (reinterpret_cast<uintptr_t>(p) & 63) == 0)
            _mm512_stream_si512(reinterpret_cast<__m512i *>(p), u);
        else
            _mm512_storeu_si512(p, u);
    }
    // f16 of 16 floats; a NaN becomes sign | 0x7e00 like the scalar float_to_f16 (vcvtps2ph
    // alone keeps the top bits of the payload, and the results would depend on the ISA).
    static inline __m256i to_f16(V v) {
        const __m256i h =
            _mm512_maskz_cvtps_ph(0xffff, v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
        return _mm256_mask_mov_epi16(
            h, nan,
            _mm256_or_si256(_mm256_and_si256(h, _mm256_set1_epi16(short(0x8000))),
                            _mm256_set1_epi16(0x7e00)));
    }
    static inline void store_f16(uint16_t *p, V v) {
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(p), to_f16(v));
    }
    // The microkernel's rounded stores (brgemm_args::narrow), from the registers: one vector
    // of 16 results, its first lanes under a mask, or two vectors (32 results: one cache line
    // where aligned) streamed past the caches (a plain store where not aligned).
    template <data_type DT>
    static inline __m256i to_half(V v) {
        return DT == data_type::bf16 ? to_bf16(v) : to_f16(v);
    }
    template <data_type DT>
    static inline void store_half(uint16_t *p, V v) {
        if constexpr (DT == data_type::bf16)
            store_bf16(p, v);
        else
            store_f16(p, v);
    }
    template <data_type DT>
    static inline void store_half_mask(uint16_t *p, V v, mask_t m) {
        _mm256_mask_storeu_epi16(p, m, to_half<DT>(v));
    }
    template <data_type DT>
    static inline void stream_half2(uint16_t *p, V lo, V hi) {
#ifdef CONVGRAD_NATIVE_VDPBF16PS
        if (DT == data_type::bf16 && (cvtne_misreads(lo) | cvtne_misreads(hi)) == 0)
            return store_bf16x2_cvtne(p, lo, hi, true);
#endif
        store_halves(
            p, _mm512_inserti64x4(_mm512_castsi256_si512(to_half<DT>(lo)), to_half<DT>(hi), 1),
            true);
    }
    // 32 halves h, past the caches when `stream` and p is aligned to a line.
    static inline void store_halves(uint16_t *p, __m512i h, bool stream) {
        if (stream && (reinterpret_cast<uintptr_t>(p) & 63) == 0)
            _mm512_stream_si512(reinterpret_cast<__m512i *>(p), h);
        else
            _mm512_storeu_si512(p, h);
    }
#ifdef CONVGRAD_NATIVE_VDPBF16PS
    // The lanes of v that vcvtneps2bf16 reads as zero (denormals). Where no lane of a tile's
    // vectors is one, the instruction rounds them all as to_bf16 does, and the microkernel
    // rounds the tile by the stores below (ukernel_store_halves), deciding once per tile.
    static inline mask_t cvtne_misreads(V v) {
        return _mm512_fpclass_ps_mask(v, 0x20);
    }
    // lo and hi (no lane denormal) by one vcvtne2ps2bf16 into 32 bf16; past the caches when
    // `stream` and p is aligned to a line.
    static inline void store_bf16x2_cvtne(uint16_t *p, V lo, V hi, bool stream) {
        store_halves(p, __m512i(_mm512_cvtne2ps_pbh(hi, lo)), stream);  // (lo in the low half)
    }
    static inline void store_bf16_cvtne_mask(uint16_t *p, V v, mask_t m) {
        _mm256_mask_storeu_epi16(p, m, __m256i(_mm512_cvtneps_pbh(v)));
    }
#endif
    static inline void narrow(data_type dt, const float *x, uint16_t *y, dim_t n) {
        dim_t i = 0;
        for (; i + 16 <= n; i += 16) {
            const __m512 v = _mm512_loadu_ps(x + i);
            if (dt == data_type::bf16)
                store_bf16(y + i, v);
            else
                store_f16(y + i, v);
        }
        // The tail (and whole short runs: 3-channel pixels, block transposes of a few rows) by
        // one masked load and store, not element by element.
        if (i < n) {
            const __mmask16 m = __mmask16((1u << unsigned(n - i)) - 1u);
            const __m512 v = _mm512_maskz_loadu_ps(m, x + i);
            _mm256_mask_storeu_epi16(y + i, m, dt == data_type::bf16 ? to_bf16(v) : to_f16(v));
        }
    }
    // bf16 pairs (the K packing 2 of the microkernel): 16 dwords of two bf16 each.
    using VI = __m512i;
    static inline VI load_pairs(const uint16_t *p) { return _mm512_loadu_si512(p); }
    static inline VI load_pairs_mask(const uint16_t *p, mask_t m) {
        return _mm512_maskz_loadu_epi32(m, p);
    }
    static inline VI bcast_pair(const uint16_t *p) {
        int32_t pair;
        std::memcpy(&pair, p, sizeof pair);
        return _mm512_set1_epi32(pair);
    }
#ifdef CONVGRAD_NATIVE_VDPBF16PS
    static inline V dot_bf16(V acc, VI a, VI b) {
        return _mm512_dpbf16_ps(acc, (__m512bh)a, (__m512bh)b);
    }
#else
    static inline V dot_bf16(V acc, VI a, VI b) {
        return vdpbf16ps_emulated(acc, a, b);
    }
#endif
};
