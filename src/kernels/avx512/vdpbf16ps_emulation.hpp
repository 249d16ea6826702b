// vdpbf16ps (AVX512_BF16) in plain AVX-512F instructions, bit for bit, so that the bf16
// microkernel runs, and is tested, on processors without AVX512_BF16. Included inside an ISA
// namespace by a unit compiled with AVX-512F flags.
//
// Per f32 lane i, with a and b holding bf16 pairs (element 2i in the low half of the dword):
//   acc = DAZ(acc)
//   acc = FTZ(fma(DAZ(a.odd), DAZ(b.odd), acc))     the odd (high) elements first,
//   acc = FTZ(fma(DAZ(a.even), DAZ(b.even), acc))   then the even (low) ones;
// every step rounds to nearest even whatever MXCSR says, raises no exception, and a NaN result
// is the quieted first NaN of (a, b, acc). The SDM states the order, DAZ/FTZ and RNE; the
// single rounding of each step (a bf16 product is exact in f32, except below the normal
// range, where the fused step matches) and the NaN choice were established against the
// native instruction, and are re-checked by tests/kernels/test_ukernel_bf16.cpp.

static inline __m512i vdpbf16ps_daz(__m512i x) {
    const __mmask16 normal = _mm512_test_epi32_mask(x, _mm512_set1_epi32(0x7f800000));
    return _mm512_mask_mov_epi32(_mm512_and_si512(x, _mm512_set1_epi32(int(0x80000000u))), normal,
                                 x);
}

// One fused step of vdpbf16ps: FTZ(x * y + c) rounded to nearest even, NaN from x, y, c first.
static inline __m512 vdpbf16ps_step(__m512 x, __m512 y, __m512 c) {
    const __m512i quiet = _mm512_set1_epi32(0x00400000);
    __m512i r = vdpbf16ps_daz(_mm512_castps_si512(
        _mm512_fmadd_round_ps(x, y, c, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)));
    // Later moves win: x's NaN over y's over c's.
    r = _mm512_mask_mov_epi32(r, _mm512_cmp_ps_mask(c, c, _CMP_UNORD_Q),
                              _mm512_or_si512(_mm512_castps_si512(c), quiet));
    r = _mm512_mask_mov_epi32(r, _mm512_cmp_ps_mask(y, y, _CMP_UNORD_Q),
                              _mm512_or_si512(_mm512_castps_si512(y), quiet));
    r = _mm512_mask_mov_epi32(r, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q),
                              _mm512_or_si512(_mm512_castps_si512(x), quiet));
    return _mm512_castsi512_ps(r);
}

static inline __m512 vdpbf16ps_emulated(__m512 acc, __m512i a, __m512i b) {
    const __m512i high = _mm512_set1_epi32(int(0xffff0000u));
    const __m512 a_odd = _mm512_castsi512_ps(vdpbf16ps_daz(_mm512_and_si512(a, high)));
    const __m512 b_odd = _mm512_castsi512_ps(vdpbf16ps_daz(_mm512_and_si512(b, high)));
    const __m512 a_even = _mm512_castsi512_ps(vdpbf16ps_daz(_mm512_slli_epi32(a, 16)));
    const __m512 b_even = _mm512_castsi512_ps(vdpbf16ps_daz(_mm512_slli_epi32(b, 16)));
    acc = _mm512_castsi512_ps(vdpbf16ps_daz(_mm512_castps_si512(acc)));
    acc = vdpbf16ps_step(a_odd, b_odd, acc);
    return vdpbf16ps_step(a_even, b_even, acc);
}
