#include "api/rounded_inputs.hpp"

#include <cstring>

#include "core/float_convert.hpp"
#include "threading/parallel.hpp"

namespace convgrad::detail {

namespace {

// bf16 rounding written without branches (nearest-even; a NaN stays a NaN, quieted), so that a
// contiguous row compiles to vector code: the pass is memory-bound, and the scalar form with its
// NaN branch ran at a fraction of the memory speed.
inline float round_bf16(float v) {
    const uint32_t u = float_to_bits(v);
    const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
    const uint32_t nan = (u | 0x00400000u) & 0xffff0000u;
    return bits_to_float((u & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
}

inline float round_to(data_type to, float v) {
    return to == data_type::bf16 ? round_bf16(v) : f16_to_float(float_to_f16(v));
}

void round_row(data_type to, const float *in, float *out, dim_t n, dim_t st) {
    if (to == data_type::bf16 && st == 1) {
        for (dim_t i = 0; i < n; ++i) out[i] = round_bf16(in[i]);
        return;
    }
    for (dim_t i = 0; i < n; ++i) out[i * st] = round_to(to, in[i * st]);
}

}  // namespace

const float *rounded_inputs::add(const logical_tensor &lt, const void *data, data_type to, int nthr) {
    const dims &shape = lt.shape(), &strides = lt.strides();
    // The span of offsets the tensor covers (strides may be zero, or negative).
    dim_t lo = 0, hi = 0, elems = 1;
    for (size_t a = 0; a < shape.size(); ++a) {
        if (shape[a] == 0) return static_cast<const float *>(data);  // no elements: nothing read
        const dim_t ext = (shape[a] - 1) * strides[a];
        (ext < 0 ? lo : hi) += ext;
        elems *= shape[a];
    }
    const size_t span = size_t(hi - lo + 1);
    // Every offset of the span is an element when the tensor is dense: the copy needs no zeroing.
    // Otherwise the gaps are zeroed, so that nothing in the copy is left undefined.
    copies_.emplace_back(new float[span]);
    if (dim_t(span) != elems) std::memset(copies_.back().get(), 0, span * sizeof(float));
    float *out = copies_.back().get() - lo;
    const float *in = static_cast<const float *>(data);
    if (shape.empty()) {
        out[0] = round_to(to, in[0]);
        return out;
    }
    // Rows along the last axis, split over the threads: each element is written once, unless a
    // zero stride makes rows share elements, when one thread writes them all.
    const size_t last = shape.size() - 1;
    const dim_t rows = elems / shape[last];
    bool shared = false;
    for (size_t a = 0; a < last; ++a) shared = shared || (strides[a] == 0 && shape[a] > 1);
    parallel(shared ? 1 : nthr, [&](int ithr, int nt) {
        dim_t s, e;
        balance211(rows, nt, ithr, s, e);
        for (dim_t r = s; r < e; ++r) {
            dim_t off = 0, q = r;
            for (size_t a = last; a-- > 0;) {
                off += (q % shape[a]) * strides[a];
                q /= shape[a];
            }
            round_row(to, in + off, out + off, shape[last], strides[last]);
        }
    });
    return out;
}

}  // namespace convgrad::detail
