// The packed formats the microkernels read (plain data, shared by every instruction-set unit;
// the packers themselves are compiled per unit, see packers_impl.hpp):
//
//   f32 panel        [K][ldn] f32, ldn >= N a multiple of the vector width, columns N..ldn zero:
//                    the B operand of the f32 microkernel (K packing 1);
//   bf16 VNNI pairs  [ceil(K/2)][ldn][2] bf16: element (k, n) at ((k/2)*ldn + n)*2 + k%2, an odd
//                    K's last pair and columns N..ldn zero: the B operand of the bf16
//                    microkernel (K packing 2, the operand layout of vdpbf16ps);
//   channels-last    a data tensor as dense [mb][d][h][w][C] f32.
//
// Sources and destinations are user views of any strides and type (f32, bf16, f16): NXC and
// NCX are two choices of strides. Values are widened exactly, and rounded once (to nearest
// even) where the destination is narrower.
#pragma once

#include <cstdint>

#include "core/conv_problem.hpp"
#include "dispatch/cpu_features.hpp"

namespace convgrad::detail {

/// A K x N matrix in user memory: element (k, n) at base[off + k*ks + n*ns], of type dt.
struct matrix_view {
    void *base;
    data_type dt;
    dim_t off, ks, ns;
};

/// Elements of a bf16 VNNI-pairs buffer of K rows and ldn columns.
inline dim_t vnni_pairs_size(dim_t K, dim_t ldn) {
    return (K / 2 + K % 2) * ldn * 2;
}

/// The packers of one instruction-set unit, as constant data (see ukernel_set.hpp for why).
struct pack_set {
    const char *name;
    cpu_isa isa;
    int vlen;
    void (*pack_f32_panel)(const matrix_view &src, dim_t K, dim_t N, dim_t ldn, float *out);
    void (*unpack_f32_panel)(const float *in, dim_t K, dim_t N, dim_t ldn, const matrix_view &dst);
    void (*pack_bf16_pairs)(const matrix_view &src, dim_t K, dim_t N, dim_t ldn, uint16_t *out);
    void (*unpack_bf16_pairs)(const uint16_t *in, dim_t K, dim_t N, dim_t ldn,
                              const matrix_view &dst);
    /// A data tensor (strides l, C channels, spatial sp, batch mb) to dense channels-last f32
    /// and back, split over nthr threads; back, `stream` stores an NCX f32 tensor past the
    /// caches (an output too big to stay in them).
    void (*pack_channels_last)(data_type dt, dim_t mb, int nthr, const void *user,
                               const data_layout &l, dim_t C, const dim_t *sp, float *out);
    void (*unpack_channels_last)(data_type dt, dim_t mb, int nthr, const float *in, void *user,
                                 const data_layout &l, dim_t C, const dim_t *sp, bool stream);
    /// The unit's bf16/f16 <-> f32 conversion of n contiguous elements, which every packer and
    /// kernel of the unit uses: exact widening; rounding to nearest-even, bit for bit as the
    /// scalar float_to_bf16/float_to_f16 (NaN included).
    void (*widen)(data_type dt, const uint16_t *x, float *y, dim_t n);
    void (*narrow)(data_type dt, const float *x, uint16_t *y, dim_t n);
};

namespace sse2 {
extern const pack_set packers;
}
namespace avx2 {
extern const pack_set packers;
}
namespace avx512 {
extern const pack_set packers;
}
namespace avx512_emu {
extern const pack_set packers;
}

}  // namespace convgrad::detail
