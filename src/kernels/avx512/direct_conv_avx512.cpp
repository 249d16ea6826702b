// AVX-512 instantiation of the direct and grouped convolution kernels (16 floats per vector, 32 registers).
#include <immintrin.h>
#include <omp.h>

#include <cstdlib>
#include <cstring>
#include <utility>

#include "core/float_convert.hpp"
#include "kernels/common/direct_plan.hpp"

namespace convgrad::detail::avx512 {

struct vt {
    static constexpr int W = 16;
    using V = __m512;
    using mask_t = __mmask16;
    static inline mask_t mask(int n) { return mask_t((1u << n) - 1u); }
    static inline V zero() { return _mm512_setzero_ps(); }
    static inline V load(const float *p) { return _mm512_loadu_ps(p); }
    static inline V load_mask(const float *p, mask_t m) { return _mm512_maskz_loadu_ps(m, p); }
    static inline V bcast(const float *p) { return _mm512_set1_ps(*p); }
    static inline V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
    static inline void store(float *p, V v) { _mm512_storeu_ps(p, v); }
    static inline void store_mask(float *p, V v, mask_t m) { _mm512_mask_storeu_ps(p, m, v); }
    static inline V add(V a, V b) { return _mm512_add_ps(a, b); }
    using perm_t = __m512i;
    static inline perm_t perm_index(int cg, int i) {
        alignas(64) int idx[16];
        for (int l = 0; l < 16; ++l) idx[l] = l - l % cg + i;
        return _mm512_load_si512(idx);
    }
    static inline V permute(V v, perm_t idx) { return _mm512_permutexvar_ps(idx, v); }
};

#include "kernels/common/direct_conv_impl.hpp"
#include "kernels/common/grouped_conv_impl.hpp"

}  // namespace convgrad::detail::avx512
