// Portable fallback of the direct convolution kernels: SSE2, the x86-64 baseline every processor
// has (4 floats per vector, 16 registers, no fused multiply-add). Compiled without ISA flags.
#include <emmintrin.h>

#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "core/float_convert.hpp"
#include "kernels/common/direct_plan.hpp"
#include "kernels/common/gemm_plan.hpp"
#include "kernels/pack/packed_formats.hpp"
#include "kernels/ukernel/brgemm_args.hpp"
#include "kernels/ukernel/ukernel_set.hpp"
#include "threading/parallel.hpp"
#include "threading/scratch_cache.hpp"

namespace convgrad::detail::sse2 {

#include "kernels/common/convert_scalar.hpp"

struct vt {
    static constexpr int W = 4;
    using V = __m128;
    using mask_t = int;  // number of valid lanes
    static inline mask_t mask(int n) { return n; }
    static inline V zero() { return _mm_setzero_ps(); }
    static inline V load(const float *p) { return _mm_loadu_ps(p); }
    static inline V load_mask(const float *p, mask_t n) {
        if (n >= 4) return _mm_loadu_ps(p);
        alignas(16) float t[4] = {0.f, 0.f, 0.f, 0.f};
        for (int i = 0; i < n && i < 4; ++i) t[i] = p[i];
        return _mm_load_ps(t);
    }
    static inline V bcast(const float *p) { return _mm_set1_ps(*p); }
    static inline V fma(V a, V b, V c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
    static inline V add(V a, V b) { return _mm_add_ps(a, b); }
    static inline void store(float *p, V v) { _mm_storeu_ps(p, v); }
    // A store that bypasses the caches (brgemm_args::stream), where p is aligned as the
    // instruction requires; else a plain one. stream_fence orders them before the threads join.
    static inline void stream(float *p, V v) {
        if ((reinterpret_cast<uintptr_t>(p) & 15) == 0)
            _mm_stream_ps(p, v);
        else
            _mm_storeu_ps(p, v);
    }
    static inline void stream_fence() { _mm_sfence(); }
    static inline void store_mask(float *p, V v, mask_t n) {
        if (n >= 4) return _mm_storeu_ps(p, v);
        alignas(16) float t[4];
        _mm_store_ps(t, v);
        for (int i = 0; i < n && i < 4; ++i) p[i] = t[i];
    }
    // r[i] lane j <-> r[j] lane i: the 4 x 4 block transpose of the NCX packers.
    static inline void transpose(V r[4]) { _MM_TRANSPOSE4_PS(r[0], r[1], r[2], r[3]); }
    // bf16/f16 <-> f32 for n contiguous elements (exact widening, nearest-even narrowing).
    static inline void widen(data_type dt, const uint16_t *x, float *y, dim_t n) { widen_scalar(dt, x, y, n); }
    static inline void narrow(data_type dt, const float *x, uint16_t *y, dim_t n) { narrow_scalar(dt, x, y, n); }
};

#define UKERNEL_SET_NREGS 16  // (the microkernel tables size their tiles by it)
// (Included in the order of dependence.)
// clang-format off
#include "kernels/ukernel/brgemm_impl.hpp"
#include "kernels/common/kernel_helpers.hpp"
#include "kernels/pack/packers_impl.hpp"
#include "kernels/pack/gemm_operands_impl.hpp"
#include "kernels/common/data_operands.hpp"
#include "kernels/schedule/gather.hpp"
#include "kernels/schedule/bwd_weights.hpp"
#include "kernels/schedule/gemm.hpp"
#include "kernels/common/direct_conv_impl.hpp"
// clang-format on

#define UKERNEL_SET_NAME "sse2"
#define UKERNEL_SET_ISA cpu_isa::generic
#include "kernels/ukernel/ukernel_set_impl.hpp"
#include "kernels/pack/pack_set_impl.hpp"

}  // namespace convgrad::detail::sse2
