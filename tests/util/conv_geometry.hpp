// A convolution case by its geometry (groups, channels per group, the big side's extents, the
// kernel, strides, pads, dilations, layout, type) and the op of any of the six kinds it makes:
// the kernels' edge-case sweeps share it.
#pragma once

#include "core/resolve.hpp"
#include "util/kernel_check.hpp"

namespace convgrad::testing {

struct conv_geometry {
    const char *what;
    dim_t g, mb;
    dims big, k, s, pb, pe, dl;  // dl: 1 = dense
    bool ncx, padded_strides;
    data_type dt;
    dim_t icg = 1, ocg = 1;  // channels per group of the big (src) and small (dst) sides
};

// clang-format off
inline const op_kind conv_kinds[] = {op_kind::Convolution, op_kind::ConvolutionBackwardData, op_kind::ConvolutionBackwardWeights,
                         op_kind::ConvTranspose, op_kind::ConvTransposeBackwardData, op_kind::ConvTransposeBackwardWeights};
// clang-format on

// Strides of `shape` (row-major) with every axis padded by one element.
inline dims padded(const dims &shape) {
    dims st(shape.size());
    dim_t acc = 1;
    for (size_t i = shape.size(); i-- > 0;) st[i] = acc, acc *= shape[i] + 1;
    return st;
}

inline op make_geometry_op(const conv_geometry &c, op_kind kind, bool bias) {
    const bool ct = is_conv_transpose_family(kind);
    const size_t S = c.big.size();
    dims small, op_pad;
    for (size_t j = 0; j < S; ++j) {
        const dim_t ke = (c.k[j] - 1) * c.dl[j] + 1, span = c.big[j] + c.pb[j] + c.pe[j] - ke;
        small.push_back(span / c.s[j] + 1);
        op_pad.push_back(span % c.s[j]);
    }
    auto data = [&](const dims &sp, dim_t channels) {
        dims d{c.mb};
        if (c.ncx) d.push_back(channels);
        d.insert(d.end(), sp.begin(), sp.end());
        if (!c.ncx) d.push_back(channels);
        return d;
    };
    // OIX [G*ocg, icg, K]; IOX [IC, OC/G, K] of the ConvTranspose (its src is the small side):
    // the same shape.
    dims w{c.g * c.ocg, c.icg};
    w.insert(w.end(), c.k.begin(), c.k.end());
    op o(0, kind, c.what);
    o.set_attr("strides", c.s).set_attr("dilations", c.dl).set_attr("pads_begin", c.pb);
    o.set_attr("pads_end", c.pe).set_attr("groups", c.g);
    o.set_attr("data_format", std::string(c.ncx ? "NCX" : "NXC"));
    o.set_attr("weights_format", std::string(ct ? "IOX" : "OIX"));
    if (kind == op_kind::ConvolutionBackwardWeights ||
        kind == op_kind::ConvTransposeBackwardWeights)
        o.set_attr("weights_shape", w);
    const dim_t big_c = c.g * c.icg, small_c = c.g * c.ocg;
    testing::conv_shapes sh{data(c.big, big_c), data(small, small_c), w, op_pad, big_c, small_c};
    testing::add_conv_tensors(o, kind, sh, bias, c.dt, [&](size_t id, const dims &shape) {
        return c.padded_strides ? logical_tensor(id, c.dt, shape, padded(shape))
                                : logical_tensor(id, c.dt, shape);
    });
    return o;
}

}  // namespace convgrad::testing
