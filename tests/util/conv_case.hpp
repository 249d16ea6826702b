// Small convolution problems built by hand for kernel tests (the AMX and vdpbf16ps kernels):
// a case (shape, layout, types), its canonical problem with explicit strides, seeded inputs,
// and the run of a kernel or of the reference with a poisoned output.
#pragma once

#include <cstring>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/float_convert.hpp"
#include "dispatch/cpu_features.hpp"
#include "kernels/inventory.hpp"
#include "ref/ref_conv.hpp"
#include "util/aligned_bytes.hpp"

namespace convgrad::detail::testcase {

struct conv_case {
    int nsp = 2;
    dim_t mb = 1, g = 1, icg = 1, ocg = 1;
    dim_t i[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, dl[3] = {1, 1, 1};
    dim_t pb[3] = {0, 0, 0}, pe[3] = {0, 0, 0};
    conv_direction dir = conv_direction::bwd_weights;
    bool bias = false;  // fwd (Convolution) and bwd_data (ConvTranspose)
    bool ncx = false, xio = false;
    dim_t pad = 0;      // extra elements between channels (NXC) or rows (NCX)
    int64_t chunk = 0;  // AMX kernels: K chunk override (0: the planner's)
    data_type dt = data_type::bf16, math = data_type::bf16;
};

inline std::string describe(const conv_case &c) {
    std::string s = std::string(to_string(c.dir)) + (c.bias ? "+bias " : " ") +
                    std::to_string(c.nsp) + "-D mb" + std::to_string(c.mb) + " g" +
                    std::to_string(c.g) + " ic" + std::to_string(c.icg) + " oc" +
                    std::to_string(c.ocg);
    for (int x = 3 - c.nsp; x < 3; ++x)
        s += " [i" + std::to_string(c.i[x]) + " k" + std::to_string(c.k[x]) + " s" +
             std::to_string(c.s[x]) + " d" + std::to_string(c.dl[x]) + " p" +
             std::to_string(c.pb[x]) + "/" + std::to_string(c.pe[x]) + "]";
    s += c.ncx ? " NCX" : " NXC";
    s += c.xio ? " XIO" : " OIX";
    s += " pad" + std::to_string(c.pad) + " chunk" + std::to_string(c.chunk) + " " +
         to_string(c.dt) + "/" + to_string(c.math);
    return s;
}

// The kernel inventory's row of that name.
inline const impl_desc &inventory_row(const std::string &name) {
    for (const impl_desc &r : kernel_inventory())
        if (name == r.name) return r;
    throw std::runtime_error("no inventory row " + name);
}

// A row's native build and its emulation, each with why it cannot run here (empty: it can).
struct row_backend {
    const char *name;
    std::unique_ptr<kernel> (*create)(const conv_problem &);
    std::string skip;
};
inline std::vector<row_backend> native_and_emulated(const impl_desc &r, const std::string &native_missing,
                                                    const std::string &emulation_missing) {
    return {{"native", r.create, isa_available(r.isa) ? "" : native_missing},
            {"emulated", r.create_emulated, isa_available(r.emulation_isa) ? "" : emulation_missing}};
}

// Axis x (0: d, 1: h, 2: w) of a case: input size, kernel, stride, dilation, pads.
inline void set_axis(conv_case &c, int x, dim_t i, dim_t k, dim_t s = 1, dim_t dl = 1, dim_t pb = 0,
                     dim_t pe = 0) {
    c.i[x] = i, c.k[x] = k, c.s[x] = s, c.dl[x] = dl, c.pb[x] = pb, c.pe[x] = pe;
}

// The canonical problem with explicit strides (what the resolver would build from the op).
inline conv_problem make_problem(const conv_case &c) {
    conv_problem p;
    p.dir = c.dir;
    p.kind = c.dir == conv_direction::fwd           ? op_kind::Convolution
             : c.dir == conv_direction::bwd_weights ? op_kind::ConvolutionBackwardWeights
             : c.bias                               ? op_kind::ConvTranspose
                                                    : op_kind::ConvolutionBackwardData;
    p.with_bias = c.bias && c.dir != conv_direction::bwd_weights;
    p.bias_stride = 1;
    p.dt = c.dt;
    p.math_dt = c.math;
    p.nsp = c.nsp;
    p.mb = c.mb;
    p.g = c.g;
    p.icg = c.icg;
    p.ocg = c.ocg;
    for (int x = 0; x < 3; ++x) {
        p.i[x] = c.i[x];
        p.k[x] = c.k[x];
        p.s[x] = c.s[x];
        p.dl[x] = c.dl[x];
        p.pb[x] = c.pb[x];
        p.pe[x] = c.pe[x];
        p.o[x] = (c.i[x] + c.pb[x] + c.pe[x] - ((c.k[x] - 1) * c.dl[x] + 1)) / c.s[x] + 1;
    }
    auto layout = [&](dim_t C, const dim_t *sp) {
        data_layout l;
        if (c.ncx) {
            const dim_t row = sp[2] + c.pad;
            l.sp[2] = 1;
            l.sp[1] = row;
            l.sp[0] = row * sp[1];
            l.c = row * sp[1] * sp[0];
            l.n = l.c * C;
        } else {
            l.c = 1;
            l.sp[2] = C + c.pad;
            l.sp[1] = l.sp[2] * sp[2];
            l.sp[0] = l.sp[1] * sp[1];
            l.n = l.sp[0] * sp[0];
        }
        for (int x = 0; x < 3 - c.nsp; ++x) l.sp[x] = 0;  // axes the problem does not have
        return l;
    };
    p.src = layout(p.ic(), p.i);
    p.dst = layout(p.oc(), p.o);
    const dim_t OC = p.oc(), ksp = p.ksp();
    if (c.xio) {
        p.wei.oc = 1;
        p.wei.ic = OC;
        p.wei.sp[2] = OC * c.icg;
        p.wei.sp[1] = p.wei.sp[2] * c.k[2];
        p.wei.sp[0] = p.wei.sp[1] * c.k[1];
    } else {
        p.wei.sp[2] = 1;
        p.wei.sp[1] = c.k[2];
        p.wei.sp[0] = c.k[2] * c.k[1];
        p.wei.ic = ksp;
        p.wei.oc = ksp * c.icg;
    }
    return p;
}

inline dim_t extent(const data_layout &l, dim_t mb, dim_t C, const dim_t *sp) {
    dim_t e = (mb - 1) * l.n + (C - 1) * l.c + 1;
    for (int x = 0; x < 3; ++x) e += (sp[x] - 1) * l.sp[x];
    return e;
}
inline dim_t weights_extent(const conv_problem &p) {
    dim_t e = (p.oc() - 1) * p.wei.oc + (p.icg - 1) * p.wei.ic + 1;
    for (int x = 0; x < 3; ++x) e += (p.k[x] - 1) * p.wei.sp[x];
    return e;
}

// A tensor of type dt as bytes, with accessors in float.
struct buffer {
    data_type dt;
    testing::aligned_bytes bytes;  // (64-byte aligned)
    buffer(data_type t, dim_t n) : dt(t), bytes(size_t(n) * (t == data_type::f32 ? 4 : 2)) {}
    dim_t count() const { return dim_t(bytes.size() / (dt == data_type::f32 ? 4 : 2)); }
    void set(dim_t i, float v) {
        if (dt == data_type::f32)
            std::memcpy(&bytes[size_t(i) * 4], &v, 4);
        else {
            const uint16_t h = dt == data_type::bf16 ? float_to_bf16(v) : float_to_f16(v);
            std::memcpy(&bytes[size_t(i) * 2], &h, 2);
        }
    }
    float get(dim_t i) const {
        if (dt == data_type::f32) {
            float v;
            std::memcpy(&v, &bytes[size_t(i) * 4], 4);
            return v;
        }
        uint16_t h;
        std::memcpy(&h, &bytes[size_t(i) * 2], 2);
        return dt == data_type::bf16 ? bf16_to_float(h) : f16_to_float(h);
    }
};

// Values exact in the math type: small integers, or uniform in [-1, 1] rounded to it (the
// inputs of an f32 op under fpmath_mode bf16/f16 arrive rounded, rounded_inputs.cpp).
inline void fill(buffer &b, std::mt19937_64 &rng, bool integers, data_type math) {
    std::uniform_int_distribution<int> small(-3, 3);
    std::uniform_real_distribution<float> real(-1.f, 1.f);
    for (dim_t x = 0; x < b.count(); ++x) {
        float v = integers ? float(small(rng)) : real(rng);
        v = math == data_type::bf16 ? bf16_to_float(float_to_bf16(v))
                                    : f16_to_float(float_to_f16(v));
        b.set(x, v);
    }
}

// Every tensor of the problem; the output's buffer among them is not read.
struct inputs {
    buffer src, dst, wei, bias;
};

inline inputs make_inputs(const conv_problem &p, std::mt19937_64 &rng, bool integers) {
    inputs in{buffer(p.dt, extent(p.src, p.mb, p.ic(), p.i)),
              buffer(p.dt, extent(p.dst, p.mb, p.oc(), p.o)), buffer(p.dt, weights_extent(p)),
              buffer(p.dt, std::max(p.oc(), p.ic()))};
    fill(in.src, rng, integers, p.math_dt);
    fill(in.dst, rng, integers, p.math_dt);
    fill(in.wei, rng, integers, p.math_dt);
    fill(in.bias, rng, integers, p.math_dt);
    return in;
}

inline bool is_fwd(const conv_problem &p) {
    return p.dir == conv_direction::fwd;
}

inline buffer run(const conv_problem &p, const inputs &in, const kernel *k) {
    buffer out(p.dt, is_fwd(p)                           ? in.dst.count()
                     : p.dir == conv_direction::bwd_data ? in.src.count()
                                                         : in.wei.count());
    for (dim_t x = 0; x < out.count(); ++x) out.set(x, 12345.f);  // every weight is written
    conv_args a;
    a.src = in.src.bytes.data();
    a.dst = in.dst.bytes.data();
    a.wei = in.wei.bytes.data();
    a.bias = in.bias.bytes.data();
    a.out = out.bytes.data();
    if (k)
        k->execute(a);
    else
        ref_conv_execute(p, a);
    return out;
}

// Every output element's offset, for comparisons (walked the way the problem defines the
// layout: padded strides leave gaps that nothing writes).
inline std::vector<dim_t> output_offsets(const conv_problem &p) {
    std::vector<dim_t> v;
    if (p.dir != conv_direction::bwd_weights) {
        const bool f = is_fwd(p);
        const data_layout &l = f ? p.dst : p.src;
        const dim_t *sp = f ? p.o : p.i;
        for (dim_t n = 0; n < p.mb; ++n)
            for (dim_t c = 0; c < (f ? p.oc() : p.ic()); ++c)
                for (dim_t d = 0; d < sp[0]; ++d)
                    for (dim_t h = 0; h < sp[1]; ++h)
                        for (dim_t w = 0; w < sp[2]; ++w)
                            v.push_back(n * l.n + c * l.c + d * l.sp[0] + h * l.sp[1] +
                                        w * l.sp[2]);
        return v;
    }
    for (dim_t oc = 0; oc < p.oc(); ++oc)
        for (dim_t ic = 0; ic < p.icg; ++ic)
            for (dim_t kd = 0; kd < p.k[0]; ++kd)
                for (dim_t kh = 0; kh < p.k[1]; ++kh)
                    for (dim_t kw = 0; kw < p.k[2]; ++kw)
                        v.push_back(oc * p.wei.oc + ic * p.wei.ic + kd * p.wei.sp[0] +
                                    kh * p.wei.sp[1] + kw * p.wei.sp[2]);
    return v;
}

}  // namespace convgrad::detail::testcase
