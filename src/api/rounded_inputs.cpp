#include "api/rounded_inputs.hpp"

#include "core/float_convert.hpp"
#include "threading/parallel.hpp"

namespace convgrad::detail {

namespace {

float round_to(data_type to, float v) {
    return to == data_type::bf16 ? bf16_to_float(float_to_bf16(v)) : f16_to_float(float_to_f16(v));
}

// Rounds the elements of one slice along the inner axes (dims [axis, rank)), recursively.
void round_slice(const dims &shape, const dims &strides, size_t axis, const float *in, float *out,
                 data_type to) {
    const dim_t n = shape[axis], st = strides[axis];
    if (axis + 1 == shape.size()) {
        for (dim_t i = 0; i < n; ++i) out[i * st] = round_to(to, in[i * st]);
        return;
    }
    for (dim_t i = 0; i < n; ++i) round_slice(shape, strides, axis + 1, in + i * st, out + i * st, to);
}

}  // namespace

const float *rounded_inputs::add(const logical_tensor &lt, const void *data, data_type to, int nthr) {
    const dims &shape = lt.shape(), &strides = lt.strides();
    // The span of offsets the tensor covers (strides may be zero, or negative).
    dim_t lo = 0, hi = 0;
    for (size_t a = 0; a < shape.size(); ++a) {
        if (shape[a] == 0) return static_cast<const float *>(data);  // no elements: nothing read
        const dim_t ext = (shape[a] - 1) * strides[a];
        (ext < 0 ? lo : hi) += ext;
    }
    copies_.emplace_back(size_t(hi - lo + 1));
    float *out = copies_.back().data() - lo;
    const float *in = static_cast<const float *>(data);
    if (shape.empty()) {
        out[0] = round_to(to, in[0]);
        return out;
    }
    // Split the outermost axis over the threads (each element is written once).
    parallel(nthr, [&](int ithr, int nt) {
        dim_t s, e;
        balance211(shape[0], nt, ithr, s, e);
        for (dim_t i = s; i < e; ++i) {
            if (shape.size() == 1) out[i * strides[0]] = round_to(to, in[i * strides[0]]);
            else round_slice(shape, strides, 1, in + i * strides[0], out + i * strides[0], to);
        }
    });
    return out;
}

}  // namespace convgrad::detail
