// Layout invariance: one problem per op (1-D, 2-D and 3-D, grouped, strided, dilated, with
// asymmetric pads) computed in the canonical layout (NCX, OIX/IOX, dense) and again with
// NXC, every weights format (OIX/XIO; IOX/XOI and the legacy OIX/XIO on the ConvTranspose
// family), attribute defaults, and non-contiguous strides (channels-last strides on NCX
// shapes, fully reversed axis order, padded rows, random axis orders with padding, outputs
// with given strides, "any" outputs). Every variant must give exactly the canonical result.
#include <gtest/gtest.h>

#include <random>

#include "util/conv_test_util.hpp"

namespace convgrad {
namespace {

using testing::tensor_buffer;
using V = std::vector<double>;

struct base_problem {
    bool ct = false;
    int S = 2;
    dim_t N = 2, G = 2, a = 2, b = 3;  // ICg, OCg (of the op's own IC/OC: see adjoint test)
    dims K, s, dl, pb, pe, op, big, small;
    dim_t IC() const { return G * a; }
    dim_t OC() const { return G * b; }
};

base_problem make_base(bool ct, int S) {
    base_problem p;
    p.ct = ct;
    p.S = S;
    if (S == 1) {
        p.K = {3}, p.s = {2}, p.dl = {1}, p.pb = {2}, p.pe = {1}, p.op = {1};
        p.big = {7};
    } else if (S == 2) {
        p.K = {2, 3}, p.s = {2, 1}, p.dl = {1, 2}, p.pb = {1, 0}, p.pe = {0, 2}, p.op = {1, 0};
        p.big = {5, 6};
    } else {
        p.N = 1;
        p.K = {2, 1, 2}, p.s = {1, 2, 1}, p.dl = {1, 1, 2}, p.pb = {0, 1, 1}, p.pe = {1, 0, 0};
        p.op = {0, 1, 0};
        p.big = {3, 4, 3};
    }
    for (int j = 0; j < S; ++j) {
        const size_t u = size_t(j);
        const dim_t ke = (p.K[u] - 1) * p.dl[u] + 1;
        p.small.push_back((p.big[u] + p.pb[u] + p.pe[u] - ke) / p.s[u] + 1);
        // For ConvTranspose, the big side is recomputed from the small one with output_padding.
        if (ct) p.big[u] = p.s[u] * (p.small[u] - 1) + ke - p.pb[u] - p.pe[u] + p.op[u];
    }
    return p;
}

enum class role { x, y, w, bias };

dims canonical_shape(const base_problem &p, role r) {
    auto data = [&](dim_t C, const dims &sp) {
        dims d{p.N, C};
        d.insert(d.end(), sp.begin(), sp.end());
        return d;
    };
    switch (r) {
        case role::x: return data(p.IC(), p.ct ? p.small : p.big);
        case role::y: return data(p.OC(), p.ct ? p.big : p.small);
        case role::w: {
            dims c = p.ct ? dims{p.IC(), p.b} : dims{p.OC(), p.a};
            c.insert(c.end(), p.K.begin(), p.K.end());
            return c;
        }
        case role::bias: return {p.OC()};
    }
    return {};
}

// The tensors of each op: inputs then output.
std::vector<role> roles_of(op_kind k) {
    switch (k) {
        case op_kind::Convolution:
        case op_kind::ConvTranspose: return {role::x, role::w, role::bias, role::y};
        case op_kind::ConvolutionBackwardData:
        case op_kind::ConvTransposeBackwardData: return {role::y, role::w, role::x};
        case op_kind::ConvolutionBackwardWeights:
        case op_kind::ConvTransposeBackwardWeights: return {role::x, role::y, role::w};
    }
    return {};
}

enum class strides_kind { dense, channels_last, reversed, padded, random_padded, any };

struct variant {
    std::string data_format;     // "" = not set (NXC)
    std::string weights_format;  // "" = not set (XIO / XOI)
    strides_kind in = strides_kind::dense;
    strides_kind out = strides_kind::dense;
    bool out_shape_given = false;  // output lt with a known shape (else attr / inferred)
    std::string name() const {
        static const char *sk[] = {"dense", "channels_last", "reversed", "padded", "random_padded", "any"};
        return "data_format=" + (data_format.empty() ? std::string("(NXC)") : data_format) +
               " weights_format=" + (weights_format.empty() ? std::string("(default)") : weights_format) +
               " in=" + sk[int(in)] + " out=" + sk[int(out)] +
               (out_shape_given ? " out_shape_given" : "");
    }
};

logical_tensor make_lt(size_t id, const dims &shape, strides_kind sk, std::mt19937_64 &rng) {
    const int r = int(shape.size());
    std::vector<int> order(static_cast<size_t>(r));
    for (int j = 0; j < r; ++j) order[size_t(j)] = j;
    dims extra(size_t(r), 0);
    switch (sk) {
        case strides_kind::dense: return logical_tensor(id, data_type::f32, shape);
        case strides_kind::any: return logical_tensor::any(id, data_type::f32, shape);
        case strides_kind::channels_last:  // axis 1 innermost (NCX shape, NXC memory)
            if (r > 2) {
                order.erase(order.begin() + 1);
                order.push_back(1);
            }
            break;
        case strides_kind::reversed: std::reverse(order.begin(), order.end()); break;
        case strides_kind::padded:
            for (int j = 0; j < r; ++j) extra[size_t(j)] = 1 + j % 2;
            break;
        case strides_kind::random_padded:
            std::shuffle(order.begin(), order.end(), rng);
            for (int j = 0; j < r; ++j) extra[size_t(j)] = dim_t(rng() % 3);
            break;
    }
    return logical_tensor(id, data_type::f32, shape, testing::strides_in_order(shape, order, extra));
}

// Runs op `k` of problem `p` in variant `v` on canonical values; returns the output in
// canonical (NCX, OIX/IOX) logical order.
V run_variant(op_kind k, const base_problem &p, const variant &v, const std::vector<V> &canon_in,
              uint64_t seed) {
    std::mt19937_64 rng(seed);
    const int r = p.S + 2;
    const bool nxc = v.data_format != "NCX";
    const std::string wfmt = v.weights_format.empty() ? (p.ct ? "XOI" : "XIO") : v.weights_format;
    auto perm_of = [&](role ro) -> std::vector<int> {
        if (ro == role::w) return testing::weights_perm(k, wfmt, r);
        if (ro == role::bias) return {0};
        if (nxc) return testing::ncx_to_nxc(r);
        std::vector<int> id(static_cast<size_t>(r));
        for (int j = 0; j < r; ++j) id[size_t(j)] = j;
        return id;
    };

    op o(5, k, "layout");
    o.set_attr("strides", p.s).set_attr("pads_begin", p.pb).set_attr("pads_end", p.pe);
    o.set_attr("dilations", p.dl).set_attr("groups", p.G);
    if (!v.data_format.empty()) o.set_attr("data_format", v.data_format);
    if (!v.weights_format.empty()) o.set_attr("weights_format", v.weights_format);
    if (k == op_kind::ConvTranspose) o.set_attr("output_padding", p.op);

    const auto roles = roles_of(k);
    std::vector<tensor_buffer> ins;
    for (size_t i = 0; i + 1 < roles.size(); ++i) {
        const dims cs = canonical_shape(p, roles[i]);
        const auto perm = perm_of(roles[i]);
        const dims fs = testing::permute_dims(cs, perm);
        ins.emplace_back(make_lt(i, fs, v.in, rng));
        ins.back().fill_values(testing::permute_values(cs, canon_in[i], perm));
        o.add_input(ins.back().lt);
    }
    const role out_role = roles.back();
    const dims ocs = canonical_shape(p, out_role);
    const auto operm = perm_of(out_role);
    const dims ofs = testing::permute_dims(ocs, operm);
    if (v.out_shape_given || v.out != strides_kind::dense) {
        o.add_output(make_lt(9, ofs, v.out, rng));
    } else {
        o.add_output(logical_tensor::unknown(9, data_type::f32));
        if (k == op_kind::ConvolutionBackwardData) o.set_attr("dst_shape", ofs);
        if (k == op_kind::ConvolutionBackwardWeights || k == op_kind::ConvTransposeBackwardWeights)
            o.set_attr("weights_shape", ofs);
    }
    compiled_partition cp = compile_op(o);
    EXPECT_EQ(cp.outputs()[0].shape(), ofs);
    if (v.out != strides_kind::dense && v.out != strides_kind::any) {
        EXPECT_EQ(cp.outputs()[0].strides(), o.outputs()[0].strides()) << "given strides are kept";
    }
    tensor_buffer out(cp.outputs()[0]);
    // Poison the whole buffer, the gaps of padded layouts too: they must stay untouched.
    std::fill(out.bytes.begin(), out.bytes.end(), uint8_t(0x5a));
    const auto before = out.bytes;
    std::vector<tensor> in_t;
    for (auto &b : ins) in_t.push_back(b.as_tensor());
    cp.execute(in_t, {out.as_tensor()});
    // Bytes not covered by an element are unchanged.
    std::vector<bool> covered(out.bytes.size(), false);
    for (dim_t i = 0; i < out.count(); ++i)
        for (size_t byte = 0; byte < 4; ++byte) covered[size_t(out.offset_of(i)) * 4 + byte] = true;
    for (size_t byte = 0; byte < out.bytes.size(); ++byte)
        if (!covered[byte] && out.bytes[byte] != before[byte]) {
            ADD_FAILURE() << "byte " << byte << " outside the output's elements was written";
            break;
        }
    return testing::permute_values(ofs, out.values(), testing::inverse_perm(operm));
}

std::vector<variant> variants_for(op_kind k) {
    const bool ct = is_conv_transpose_family(k);
    std::vector<std::string> wfs = ct ? std::vector<std::string>{"IOX", "XOI", "OIX", "XIO"}
                                      : std::vector<std::string>{"OIX", "XIO"};
    std::vector<variant> vs;
    const std::string canon = ct ? "IOX" : "OIX";
    for (const char *df : {"NCX", "NXC"})
        for (const auto &wf : wfs) vs.push_back({df, wf});
    vs.push_back({"", ""});  // all defaults: NXC, XIO / XOI
    for (strides_kind sk : {strides_kind::channels_last, strides_kind::reversed,
                            strides_kind::padded, strides_kind::random_padded}) {
        vs.push_back({"NCX", canon, sk, strides_kind::dense});
        vs.push_back({"NCX", canon, strides_kind::dense, sk});
        vs.push_back({"NXC", wfs.back(), sk, sk});
    }
    vs.push_back({"NCX", canon, strides_kind::dense, strides_kind::dense, true});
    vs.push_back({"NXC", canon, strides_kind::padded, strides_kind::any});
    return vs;
}

void check_op(op_kind k) {
    for (int S = 1; S <= 3; ++S) {
        const base_problem p = make_base(is_conv_transpose_family(k), S);
        const auto roles = roles_of(k);
        std::vector<V> canon_in;
        for (size_t i = 0; i + 1 < roles.size(); ++i) {
            tensor_buffer b(logical_tensor(0, data_type::f32, canonical_shape(p, roles[i])));
            b.fill_ints(1000 * uint64_t(S) + i);
            canon_in.push_back(b.values());
        }
        const variant canonical{"NCX", is_conv_transpose_family(k) ? "IOX" : "OIX"};
        const V expect = run_variant(k, p, canonical, canon_in, 1);
        ASSERT_FALSE(expect.empty());
        bool nonzero = false;
        for (double e : expect) nonzero |= e != 0;
        EXPECT_TRUE(nonzero);
        uint64_t seed = 2;
        for (const variant &v : variants_for(k)) {
            SCOPED_TRACE(std::string(to_string(k)) + " " + std::to_string(S) + "-D " + v.name());
            try {
                EXPECT_EQ(run_variant(k, p, v, canon_in, seed++), expect);
            } catch (const error &e) {
                ADD_FAILURE() << e.what();
            }
        }
    }
}

TEST(Layouts, Convolution) { check_op(op_kind::Convolution); }
TEST(Layouts, ConvolutionBackwardData) { check_op(op_kind::ConvolutionBackwardData); }
TEST(Layouts, ConvolutionBackwardWeights) { check_op(op_kind::ConvolutionBackwardWeights); }
TEST(Layouts, ConvTranspose) { check_op(op_kind::ConvTranspose); }
TEST(Layouts, ConvTransposeBackwardData) { check_op(op_kind::ConvTransposeBackwardData); }
TEST(Layouts, ConvTransposeBackwardWeights) { check_op(op_kind::ConvTransposeBackwardWeights); }

TEST(Layouts, OverlappingOutputStridesAreRejected) {
    // Inputs may be broadcast-free but arbitrary; outputs must not alias.
    op o = testing::make_conv_op(op_kind::Convolution, {1}, {0}, {0}, {1});
    o.add_input(logical_tensor(0, data_type::f32, {1, 2, 4}));
    o.add_input(logical_tensor(1, data_type::f32, {3, 2, 1}));
    o.add_output(logical_tensor(2, data_type::f32, {1, 3, 4}, {12, 1, 1}));
    EXPECT_THROW(compile_op(o), error);
}

}  // namespace
}  // namespace convgrad
