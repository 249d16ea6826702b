// AVX2+FMA instantiation of the direct and grouped convolution kernels (8 floats per vector, 16 registers).
#include <immintrin.h>
#include <omp.h>

#include <cstdlib>
#include <cstring>
#include <utility>

#include "core/float_convert.hpp"
#include "kernels/common/direct_plan.hpp"

namespace convgrad::detail::avx2 {

struct vt {
    static constexpr int W = 8;
    using V = __m256;
    using mask_t = __m256i;
    static inline mask_t mask(int n) {
        return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    }
    static inline V zero() { return _mm256_setzero_ps(); }
    static inline V load(const float *p) { return _mm256_loadu_ps(p); }
    static inline V load_mask(const float *p, mask_t m) { return _mm256_maskload_ps(p, m); }
    static inline V bcast(const float *p) { return _mm256_broadcast_ss(p); }
    static inline V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
    static inline void store(float *p, V v) { _mm256_storeu_ps(p, v); }
    static inline void store_mask(float *p, V v, mask_t m) { _mm256_maskstore_ps(p, m, v); }
    static inline V add(V a, V b) { return _mm256_add_ps(a, b); }
    using perm_t = __m256i;
    static inline perm_t perm_index(int cg, int i) {
        alignas(32) int idx[8];
        for (int l = 0; l < 8; ++l) idx[l] = l - l % cg + i;
        return _mm256_load_si256(reinterpret_cast<const __m256i *>(idx));
    }
    static inline V permute(V v, perm_t idx) { return _mm256_permutevar8x32_ps(v, idx); }
};

#include "kernels/common/direct_conv_impl.hpp"
#include "kernels/common/grouped_conv_impl.hpp"

}  // namespace convgrad::detail::avx2
