// Test helpers shared by the known-answer, adjoint, layout and error tests: building the six
// ops, running them on given values, and moving values between layouts (axis permutations and
// arbitrary strides) so that one problem can be checked in every layout.
#pragma once

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "util/tensor_buffer.hpp"

namespace convgrad::testing {

/// An op with the four required attributes (and NCX plus the family's canonical weights
/// format, OIX or IOX, unless `canonical` is false: then nothing else is set).
inline op make_conv_op(op_kind k, const dims &strides, const dims &pb, const dims &pe,
                       const dims &dl, bool canonical = true, size_t id = 0) {
    op o(id, k, "t");
    o.set_attr("strides", strides).set_attr("pads_begin", pb).set_attr("pads_end", pe);
    o.set_attr("dilations", dl);
    if (canonical) {
        o.set_attr("data_format", std::string("NCX"));
        o.set_attr("weights_format", std::string(is_conv_transpose_family(k) ? "IOX" : "OIX"));
    }
    return o;
}

struct run_result {
    compiled_partition cp;
    dims shape;                 // of the output
    std::vector<double> values;  // of the output, in logical order
};

/// Compiles `o` and runs it on `in_values` (logical order, one list per input; s32 inputs
/// too). The output buffer starts filled with `out_init` (to see that every element is written).
inline run_result run_op(const op &o, const std::vector<std::vector<double>> &in_values,
                         impl_choice choice = impl_choice::best, double out_init = 12345) {
    run_result r;
    r.cp = compile_op(o, choice);
    std::vector<tensor_buffer> ins;
    ins.reserve(r.cp.inputs().size());
    std::vector<tensor> in_t;
    for (size_t i = 0; i < r.cp.inputs().size(); ++i) {
        ins.emplace_back(r.cp.inputs()[i]);
        if (i < in_values.size()) ins.back().fill_values(in_values[i]);
    }
    for (auto &b : ins) in_t.push_back(b.as_tensor());
    tensor_buffer out(r.cp.outputs()[0]);
    if (out.count() > 0)
        for (dim_t i = 0; i < out.count(); ++i) out.set(i, out_init);
    r.cp.execute(in_t, {out.as_tensor()});
    r.shape = r.cp.outputs()[0].shape();
    r.values = out.values();
    return r;
}

/// `n` small integers in [-4, 4], varied by `seed`: exact in bf16 and f16, and in the sums of
/// the small problems whose answers tests work out by hand.
inline std::vector<double> small_ints(dim_t n, int seed) {
    std::vector<double> v(static_cast<size_t>(n));
    for (dim_t i = 0; i < n; ++i) v[size_t(i)] = double((i * 7 + seed * 13) % 9) - 4.0;
    return v;
}

/// Shape after an axis permutation: out[j] = shape[perm[j]].
inline dims permute_dims(const dims &shape, const std::vector<int> &perm) {
    dims out(perm.size());
    for (size_t j = 0; j < perm.size(); ++j) out[j] = shape[size_t(perm[j])];
    return out;
}

/// Values of a tensor of shape `shape` (logical order) re-laid out as the tensor of shape
/// permute_dims(shape, perm) holding the same elements: out[idx] = in[idx with axes mapped back].
inline std::vector<double> permute_values(const dims &shape, const std::vector<double> &in,
                                          const std::vector<int> &perm) {
    const dims oshape = permute_dims(shape, perm);
    const dims istr = dense_strides(shape);
    std::vector<double> out(in.size());
    const size_t r = shape.size();
    std::vector<dim_t> idx(r, 0);  // index in the output tensor
    for (size_t lin = 0; lin < out.size(); ++lin) {
        dim_t off = 0;
        for (size_t j = 0; j < r; ++j) off += idx[j] * istr[size_t(perm[j])];
        out[lin] = in[size_t(off)];
        for (size_t j = r; j-- > 0;) {
            if (++idx[j] < oshape[j]) break;
            idx[j] = 0;
        }
    }
    return out;
}

inline std::vector<int> inverse_perm(const std::vector<int> &perm) {
    std::vector<int> inv(perm.size());
    for (size_t j = 0; j < perm.size(); ++j) inv[size_t(perm[j])] = int(j);
    return inv;
}

/// Axis permutation from NCX to NXC (rank r): [N, X.., C].
inline std::vector<int> ncx_to_nxc(int r) {
    std::vector<int> p{0};
    for (int j = 2; j < r; ++j) p.push_back(j);
    p.push_back(1);
    return p;
}

/// Permutation from the canonical weights (OIX for the Convolution family, IOX for the
/// ConvTranspose family) to the given format.
inline std::vector<int> weights_perm(op_kind k, const std::string &fmt, int r) {
    std::vector<int> p;
    auto spatial = [&] {
        for (int j = 2; j < r; ++j) p.push_back(j);
    };
    const bool ct = is_conv_transpose_family(k);
    if ((ct && fmt == "IOX") || (!ct && fmt == "OIX")) {
        p = {0, 1};
        spatial();
    } else if ((ct && fmt == "XOI") || (!ct && fmt == "XIO")) {  // [K.., axis1, axis0]
        spatial();
        p.push_back(1);
        p.push_back(0);
    } else if (ct && fmt == "OIX") {  // legacy [OC/G, IC, K] from IOX [IC, OC/G, K]
        p = {1, 0};
        spatial();
    } else if (ct && fmt == "XIO") {  // legacy [K, IC, OC/G]
        spatial();
        p.push_back(0);
        p.push_back(1);
    }
    return p;
}

/// Strides of `shape` laid out with `order` (axes from outermost to innermost), each axis'
/// extent widened by `extra[axis]` elements (padding). Gives non-contiguous layouts.
inline dims strides_in_order(const dims &shape, const std::vector<int> &order,
                             const dims &extra = {}) {
    dims st(shape.size(), 0);
    dim_t acc = 1;
    for (size_t j = order.size(); j-- > 0;) {
        const size_t a = size_t(order[j]);
        st[a] = acc;
        acc *= std::max<dim_t>(shape[a], 1) + (extra.empty() ? 0 : extra[a]);
    }
    return st;
}

/// A logical tensor of `shape`, dense two times in three; otherwise with the strides of a random
/// axis order, each axis padded by one now and then (channels-last strides on NCX shapes, padded
/// rows). The kernel sweeps use it so that every kernel meets user strides.
template <class Rng>
logical_tensor random_strided_tensor(Rng &rng, size_t id, data_type dt, const dims &shape) {
    if (rng() % 3 != 0) return logical_tensor(id, dt, shape);
    std::vector<size_t> order(shape.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    dims st(shape.size());
    dim_t acc = 1;
    for (size_t i = order.size(); i-- > 0;) {
        st[order[i]] = acc;
        acc *= shape[order[i]] + dim_t(rng() % 2);
    }
    return logical_tensor(id, dt, shape, st);
}

inline double dot(const std::vector<double> &a, const std::vector<double> &b) {
    double s = 0;
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) s += a[i] * b[i];
    return s;
}

}  // namespace convgrad::testing
