#include "bench_problems.hpp"

#include <cctype>
#include <cstring>
#include <map>
#include <random>

#include "core/float_convert.hpp"

namespace convgrad::bench {
namespace {

[[noreturn]] void bad(const std::string &what) { throw error(status::invalid_arguments, what); }

// The canonical convolution of a descriptor; arrays are d, h, w.
struct desc_values {
    int nsp = 1;
    dim_t g = 1, mb = 1, ic = 0, oc = 0;
    dim_t i[3], o[3], k[3], s[3], dl[3], pb[3], pe[3];
};

desc_values parse_desc(const std::string &text) {
    // Tokens: letters (an optional leading '_') then digits, e.g. "ih56", "_peh2".
    std::map<std::string, dim_t> v;
    for (size_t pos = 0; pos < text.size();) {
        if (text[pos] == '_') ++pos;
        size_t a = pos;
        while (pos < text.size() && std::isalpha(static_cast<unsigned char>(text[pos]))) ++pos;
        size_t b = pos;
        while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) ++pos;
        if (a == b || b == pos) bad("bad problem descriptor '" + text + "' at '" + text.substr(a) + "'");
        v[text.substr(a, b - a)] = std::stoll(text.substr(b, pos - b));
    }
    auto take = [&](const std::string &key, dim_t dflt) {
        auto it = v.find(key);
        if (it == v.end()) return dflt;
        dim_t r = it->second;
        v.erase(it);
        return r;
    };
    desc_values d;
    const char axes[3] = {'d', 'h', 'w'};
    auto has_axis = [&](char ax) {
        for (const char *q : {"i", "o", "k", "s", "p", "d", "pe"})
            if (v.count(q + std::string(1, ax))) return true;
        return false;
    };
    d.nsp = has_axis('d') ? 3 : has_axis('h') ? 2 : 1;
    const int first = 3 - d.nsp;
    // One spatial quantity: a missing axis copies the one before it (iw = ih), leading missing
    // ones the first given axis, else `dflt`.
    auto axis_values = [&](const char *q, dim_t *out, dim_t dflt) {
        dim_t given = -1;
        for (int a = 2; a >= first; --a) {
            out[a] = take(q + std::string(1, axes[a]), -1);
            if (out[a] >= 0) given = out[a];
        }
        for (int a = 0; a < 3; ++a) {
            if (a < first) out[a] = q[0] == 'p' || q[0] == 'd' ? 0 : 1;
            else if (out[a] < 0) out[a] = a > first ? out[a - 1] : given >= 0 ? given : dflt;
        }
    };
    d.g = take("g", 1);
    d.mb = take("mb", 1);
    d.ic = take("ic", 0);
    d.oc = take("oc", 0);
    axis_values("i", d.i, -1);
    axis_values("o", d.o, -1);
    axis_values("k", d.k, 1);
    axis_values("s", d.s, 1);
    axis_values("p", d.pb, 0);
    axis_values("d", d.dl, 0);
    axis_values("pe", d.pe, -1);
    if (!v.empty()) bad("unknown key '" + v.begin()->first + "' in problem descriptor '" + text + "'");
    if (d.ic <= 0 || d.oc <= 0 || d.i[2] <= 0) bad("problem descriptor '" + text + "' needs ic, oc and i*");
    for (int a = first; a < 3; ++a) {
        const dim_t ke = (d.k[a] - 1) * (d.dl[a] + 1) + 1;
        if (d.o[a] < 0) {
            if (d.pe[a] < 0) d.pe[a] = d.pb[a];
            d.o[a] = (d.i[a] + d.pb[a] + d.pe[a] - ke) / d.s[a] + 1;
        } else if (d.pe[a] < 0) {
            d.pe[a] = std::max<dim_t>(0, (d.o[a] - 1) * d.s[a] + ke - d.i[a] - d.pb[a]);
        }
    }
    return d;
}

dims spatial(const desc_values &d, const dim_t *v, dim_t plus = 0) {
    dims r;
    for (int a = 3 - d.nsp; a < 3; ++a) r.push_back(v[a] + plus);
    return r;
}

// NXC shape {mb, sp.., c}.
dims nxc(const desc_values &d, dim_t c, const dim_t *sp) {
    dims r{d.mb};
    for (dim_t x : spatial(d, sp)) r.push_back(x);
    r.push_back(c);
    return r;
}

}  // namespace

bench_problem make_problem(op_kind kind, const std::string &desc, data_type dt, bool bias) {
    const desc_values d = parse_desc(desc);
    const bool ct = is_conv_transpose_family(kind);
    // Canonical convolution: big side = src (ic channels), small side = dst (oc channels).
    // Weights XIO [K.., IC/G, OC] for convolutions; XOI [K.., OC_t/G, IC_t] for ConvTranspose,
    // which for the mirror is the same shape: [K.., ic/g, oc].
    const dims big = nxc(d, d.ic, d.i), small = nxc(d, d.oc, d.o);
    dims wei = spatial(d, d.k);
    wei.push_back(d.ic / std::max<dim_t>(d.g, 1));
    wei.push_back(d.oc);

    op o(1, kind, "bench");
    o.set_attr("strides", spatial(d, d.s))
        .set_attr("pads_begin", spatial(d, d.pb))
        .set_attr("pads_end", spatial(d, d.pe))
        .set_attr("dilations", spatial(d, d.dl, 1))
        .set_attr("groups", d.g)
        .set_attr("data_format", std::string("NXC"))
        .set_attr("weights_format", std::string(ct ? "XOI" : "XIO"));
    auto lt = [&](size_t id, const dims &shape) { return logical_tensor(id, dt, shape); };
    switch (kind) {
        case op_kind::Convolution:
            o.add_input(lt(0, big)).add_input(lt(1, wei));
            if (bias) o.add_input(lt(2, {d.oc}));
            o.add_output(lt(3, small));
            break;
        case op_kind::ConvolutionBackwardData:
            o.add_input(lt(0, small)).add_input(lt(1, wei)).add_output(lt(3, big));
            break;
        case op_kind::ConvolutionBackwardWeights:
            o.add_input(lt(0, big)).add_input(lt(1, small)).add_output(lt(3, wei));
            break;
        case op_kind::ConvTranspose: {
            dims op_pad;  // what reaches the big side exactly: I - (s*(O-1) + Ke - pb - pe)
            for (int a = 3 - d.nsp; a < 3; ++a)
                op_pad.push_back(d.i[a] - (d.s[a] * (d.o[a] - 1) + (d.k[a] - 1) * (d.dl[a] + 1) + 1 -
                                           d.pb[a] - d.pe[a]));
            o.set_attr("output_padding", op_pad);
            o.add_input(lt(0, small)).add_input(lt(1, wei));
            if (bias) o.add_input(lt(2, {d.ic}));
            o.add_output(lt(3, big));
            break;
        }
        case op_kind::ConvTransposeBackwardData:
            o.add_input(lt(0, big)).add_input(lt(1, wei)).add_output(lt(3, small));
            break;
        case op_kind::ConvTransposeBackwardWeights:
            o.add_input(lt(0, small)).add_input(lt(1, big)).add_output(lt(3, wei));
            break;
    }
    bench_problem p;
    p.o = o;
    p.r = detail::resolve_op(o, o.inputs(), o.outputs());
    p.label = std::string(to_string(kind)) + "/" + p.r.prob.desc() + "/" + to_string(dt) + (bias ? "/bias" : "");
    return p;
}

std::vector<bench_problem> problems_from_args(int &argc, char **argv) {
    std::vector<bench_problem> out;
    int kept = 1;
    for (int a = 1; a < argc; ++a) {
        const std::string arg = argv[a];
        if (arg.rfind("--problem=", 0) != 0) {
            argv[kept++] = argv[a];
            continue;
        }
        // <Kind>:<desc>[:dt][:bias]
        std::vector<std::string> f;
        for (size_t pos = 10, next; pos <= arg.size(); pos = next + 1) {
            next = arg.find(':', pos);
            if (next == std::string::npos) next = arg.size();
            f.push_back(arg.substr(pos, next - pos));
        }
        const auto kind = parse_op_kind(f[0]);
        if (!kind || f.size() < 2) bad("expected --problem=<Kind>:<desc>[:bf16|:f16][:bias], got " + arg);
        data_type dt = data_type::f32;
        bool bias = false;
        for (size_t j = 2; j < f.size(); ++j) {
            if (f[j] == "bias") bias = true;
            else if (!parse_data_type(f[j], dt)) bad("unknown option '" + f[j] + "' in " + arg);
        }
        out.push_back(make_problem(*kind, f[1], dt, bias));
    }
    argc = kept;
    if (!out.empty()) return out;

    // Defaults: each shape in the three directions of the Convolution family, and a DCGAN
    // generator layer (ConvTranspose 512 -> 256, 4x4 s2, 8x8 -> 16x16) for the ConvTranspose family.
    const char *conv_shapes[] = {
        "mb8ic64ih56oc64oh56kh3ph1",        // ResNet-50 res2 3x3
        "mb8ic256ih56oc64oh56kh1ph0",       // ResNet-50 res2 1x1 reduce
        "mb8ic128ih56oc128oh28kh3sh2ph1",   // strided 3x3
        "g32mb8ic32ih112oc32oh112kh3ph1",   // MobileNet depthwise 3x3
        "mb8ic128iw512oc128kw3pw1",         // 1-D
        "mb1ic32id16ih32oc32kd3kh3pd1ph1",  // 3-D
    };
    for (const char *s : conv_shapes)
        for (op_kind k : {op_kind::Convolution, op_kind::ConvolutionBackwardData, op_kind::ConvolutionBackwardWeights})
            out.push_back(make_problem(k, s));
    for (op_kind k : {op_kind::ConvTranspose, op_kind::ConvTransposeBackwardData, op_kind::ConvTransposeBackwardWeights})
        out.push_back(make_problem(k, "mb8ic256ih16oc512oh8kh4sh2ph1"));
    return out;
}

problem_buffers::problem_buffers(const detail::resolved_op &r) {
    std::mt19937 rng(12345);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    for (const logical_tensor &lt : r.inputs) {
        std::vector<uint8_t> b(lt.size_bytes() + 64);
        const size_t n = lt.size_bytes() / std::max<size_t>(element_size(lt.dtype()), 1);
        for (size_t i = 0; i < n; ++i) {
            const float x = dist(rng);
            if (lt.dtype() == data_type::f32) std::memcpy(&b[i * 4], &x, 4);
            else if (lt.dtype() == data_type::bf16 || lt.dtype() == data_type::f16) {
                const uint16_t h = lt.dtype() == data_type::bf16 ? detail::float_to_bf16(x) : detail::float_to_f16(x);
                std::memcpy(&b[i * 2], &h, 2);
            }
        }
        in.push_back(std::move(b));
    }
    out.assign(r.outputs[0].size_bytes() + 64, 0);
}

std::vector<tensor> problem_buffers::input_tensors(const std::vector<logical_tensor> &lts) {
    std::vector<tensor> t;
    for (size_t i = 0; i < lts.size(); ++i) t.emplace_back(lts[i], in[i].data());
    return t;
}

std::vector<tensor> problem_buffers::output_tensors(const std::vector<logical_tensor> &lts) {
    return {tensor(lts[0], out.data())};
}

detail::conv_args problem_buffers::args(const detail::resolved_op &r) {
    auto ptr = [&](int i) -> const void * { return i >= 0 ? in[size_t(i)].data() : nullptr; };
    detail::conv_args a;
    a.src = ptr(r.src_input);
    a.wei = ptr(r.wei_input);
    a.dst = ptr(r.dst_input);
    a.bias = ptr(r.bias_input);
    a.out = out.data();
    return a;
}

}  // namespace convgrad::bench
