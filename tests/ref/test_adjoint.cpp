// The adjoint identities over a seeded random sweep of small problems:
//   <Convolution(x, w), y> = <x, ConvolutionBackwardData(y, w)> = <w, ConvolutionBackwardWeights(x, y)>
//   <ConvTranspose(x, w), y> = <x, ConvTransposeBackwardData(y, w)>
//                            = <w, ConvTransposeBackwardWeights(x, y)>
// Ranks 1-3, strides (also larger than the kernel), dilations, asymmetric pads (also larger
// than the kernel), groups (also depthwise), NXC/NCX, every weights format, f32/bf16/f16.
//
// Exactness: every value is a small integer. Each output element is a sum of at most `terms`
// products of magnitude <= m^2; the generator keeps terms * m^2 <= 256 for bf16 (8 significant
// bits) and <= 2048 for f16 (11 bits), so every output is an integer that the type holds
// exactly, and f32 outputs stay far below 2^24. The inner products are then summed in double
// from exact integers (far below 2^53), so the three numbers must be equal, not just close.
#include <gtest/gtest.h>

#include <random>
#include <sstream>

#include "util/conv_test_util.hpp"

namespace convgrad {
namespace {

using testing::tensor_buffer;

struct problem {
    bool ct = false;  // ConvTranspose family
    int S = 1;
    dim_t N = 1, G = 1, a = 1, b = 1;  // Convolution: ICg, OCg. ConvTranspose: ICg, OCg too.
    dims big, small, K, s, dl, pb, pe, op;  // big: conv src / ConvTranspose dst
    bool ncx = true;
    std::string data_format, weights_format;  // "" = attribute not set (default)
    data_type dt = data_type::f32;
    int maxabs = 3;

    dim_t IC() const { return G * a; }
    dim_t OC() const { return G * b; }
    std::string wfmt() const {
        if (!weights_format.empty()) return weights_format;
        return ct ? "XOI" : "XIO";
    }
    std::string str() const {
        std::ostringstream os;
        auto l = [&](const char *n, const dims &v) {
            os << " " << n << "=" << detail_list(v);
        };
        os << (ct ? "ConvTranspose family" : "Convolution family") << " " << to_string(dt)
           << " N=" << N << " G=" << G << " IC=" << IC() << " OC=" << OC();
        l(ct ? "dst" : "src", big);
        l(ct ? "src" : "dst", small);
        l("K", K);
        l("strides", s);
        l("dilations", dl);
        l("pads_begin", pb);
        l("pads_end", pe);
        if (ct) l("output_padding", op);
        os << " data_format=" << (data_format.empty() ? "(NXC)" : data_format)
           << " weights_format=" << (weights_format.empty() ? "(" + wfmt() + ")" : weights_format)
           << " maxabs=" << maxabs;
        return os.str();
    }
    static std::string detail_list(const dims &v) {
        std::ostringstream os;
        os << "[";
        for (size_t i = 0; i < v.size(); ++i) os << (i ? "," : "") << v[i];
        os << "]";
        return os.str();
    }
    dims data_shape(dim_t C, const dims &sp) const {
        dims d{N, C};
        d.insert(d.end(), sp.begin(), sp.end());
        return ncx ? d : testing::permute_dims(d, testing::ncx_to_nxc(S + 2));
    }
    // Convolution: src [N,IC,big], dst [N,OC,small]. ConvTranspose: src [N,IC,small],
    // dst [N,OC,big].
    dims x_shape() const { return ct ? data_shape(IC(), small) : data_shape(IC(), big); }
    dims y_shape() const { return ct ? data_shape(OC(), big) : data_shape(OC(), small); }
    dims w_shape() const {
        // Canonical OIX [OC, ICg, K] or IOX [IC, OCg, K], then the format's permutation.
        dims c = ct ? dims{IC(), b} : dims{OC(), a};
        c.insert(c.end(), K.begin(), K.end());
        return testing::permute_dims(
            c, testing::weights_perm(ct ? op_kind::ConvTranspose : op_kind::Convolution, wfmt(), S + 2));
    }
};

dim_t prod(const dims &v) {
    dim_t p = 1;
    for (dim_t x : v) p *= x;
    return p;
}

// Largest number of products summed into one output element by any of the three ops.
dim_t max_terms(const problem &p) {
    const dim_t ksp = prod(p.K);
    return std::max({p.a * ksp, p.b * ksp, p.N * prod(p.small)});
}

problem random_problem(std::mt19937_64 &rng, bool ct) {
    auto uni = [&](int lo, int hi) { return int(std::uniform_int_distribution<int>(lo, hi)(rng)); };
    for (;;) {
        problem p;
        p.ct = ct;
        const int r = uni(0, 9);
        p.S = r < 4 ? 1 : r < 8 ? 2 : 3;
        p.N = uni(1, 2);
        const int gkind = uni(0, 5);
        if (gkind <= 2) {  // plain
            p.G = 1;
            p.a = uni(1, 3);
            p.b = uni(1, 3);
        } else if (gkind <= 4) {  // grouped
            p.G = uni(2, 3);
            p.a = uni(1, 2);
            p.b = uni(1, 2);
        } else {  // depthwise (channel multiplier 1 or 2)
            p.G = uni(2, 4);
            p.a = 1;
            p.b = uni(1, 2);
        }
        const int maxsp = p.S == 1 ? 10 : p.S == 2 ? 6 : 4;
        const int maxk = p.S == 3 ? 2 : 3;
        bool ok = true;
        for (int j = 0; j < p.S; ++j) {
            const dim_t K = uni(1, maxk), s = uni(1, 3), dl = uni(0, 3) == 0 ? uni(2, 3) : 1;
            const dim_t pb = uni(0, 3) == 0 ? uni(2, 4) : uni(0, 1);
            const dim_t pe = uni(0, 3) == 0 ? uni(2, 4) : uni(0, 1);
            const dim_t ke = (K - 1) * dl + 1;
            dim_t big, small, op = 0;
            if (!ct) {
                big = uni(1, maxsp);
                if (big + pb + pe < ke) {
                    ok = false;
                    break;
                }
                small = (big + pb + pe - ke) / s + 1;
            } else {
                small = uni(1, maxsp - 1);
                op = uni(0, int(s) - 1);
                big = s * (small - 1) + ke - pb - pe + op;
                if (big < 1 || big > 3 * maxsp) {
                    ok = false;
                    break;
                }
            }
            p.K.push_back(K);
            p.s.push_back(s);
            p.dl.push_back(dl);
            p.pb.push_back(pb);
            p.pe.push_back(pe);
            p.big.push_back(big);
            p.small.push_back(small);
            p.op.push_back(op);
        }
        if (!ok) continue;
        const int df = uni(0, 2);
        p.data_format = df == 0 ? "" : df == 1 ? "NXC" : "NCX";
        p.ncx = df == 2;
        const std::vector<std::string> fmts =
            ct ? std::vector<std::string>{"", "IOX", "XOI", "OIX", "XIO"}
               : std::vector<std::string>{"", "OIX", "XIO"};
        p.weights_format = fmts[size_t(uni(0, int(fmts.size()) - 1))];
        const int t = uni(0, 5);
        p.dt = t <= 2 ? data_type::f32 : t <= 3 ? data_type::bf16 : data_type::f16;
        const dim_t limit = p.dt == data_type::bf16 ? 256 : p.dt == data_type::f16 ? 2048 : 1 << 20;
        const dim_t terms = max_terms(p);
        p.maxabs = 3;
        while (p.maxabs > 1 && terms * p.maxabs * p.maxabs > limit) --p.maxabs;
        if (terms * p.maxabs * p.maxabs > limit) continue;
        return p;
    }
}

op make(const problem &p, op_kind k) {
    op o(7, k, "adjoint");
    o.set_attr("strides", p.s).set_attr("pads_begin", p.pb).set_attr("pads_end", p.pe);
    o.set_attr("dilations", p.dl);
    if (p.G != 1) o.set_attr("groups", p.G);
    if (!p.data_format.empty()) o.set_attr("data_format", p.data_format);
    if (!p.weights_format.empty()) o.set_attr("weights_format", p.weights_format);
    return o;
}

std::vector<double> run(const op &o, const std::vector<const tensor_buffer *> &ins) {
    compiled_partition cp = compile_op(o);
    std::vector<tensor> t;
    for (const tensor_buffer *b : ins) t.emplace_back(b->lt, const_cast<uint8_t *>(b->bytes.data()));
    tensor_buffer out(cp.outputs()[0]);
    for (dim_t i = 0; i < out.count(); ++i) out.set(i, 1000);  // garbage: every element is written
    cp.execute(t, {out.as_tensor()});
    return out.values();
}

void check_problem(const problem &p, uint64_t seed) {
    SCOPED_TRACE("problem: " + p.str() + " (seed " + std::to_string(seed) + ")");
    const data_type dt = p.dt;
    const dims xs = p.x_shape(), ys = p.y_shape(), ws = p.w_shape();
    tensor_buffer x(logical_tensor(0, dt, xs)), w(logical_tensor(1, dt, ws)),
        y(logical_tensor(0, dt, ys));
    x.fill_ints(seed * 3 + 1, -p.maxabs, p.maxabs);
    w.fill_ints(seed * 3 + 2, -p.maxabs, p.maxabs);
    y.fill_ints(seed * 3 + 3, -p.maxabs, p.maxabs);
    // The same y tensor is input 0 of the backward-data op (id 0) and input 1 of the
    // backward-weights op (id 1).
    tensor_buffer y1 = y;
    y1.lt = logical_tensor(1, dt, ys);

    std::vector<double> fwd, bwd_data, bwd_weights;
    try {
        const op_kind kf = p.ct ? op_kind::ConvTranspose : op_kind::Convolution;
        op f = make(p, kf);
        if (p.ct) f.set_attr("output_padding", p.op);
        f.add_input(x.lt).add_input(w.lt).add_output(logical_tensor::unknown(2, dt));
        fwd = run(f, {&x, &w});

        op d = make(p, p.ct ? op_kind::ConvTransposeBackwardData : op_kind::ConvolutionBackwardData);
        d.add_input(y.lt).add_input(w.lt);
        if (p.ct) {
            d.set_attr("output_padding", p.op);  // accepted and unused
            d.add_output(logical_tensor::unknown(2, dt));
        } else if (seed % 2) {
            d.add_output(logical_tensor(2, dt, xs));
        } else {
            d.set_attr("dst_shape", xs).add_output(logical_tensor::unknown(2, dt));
        }
        bwd_data = run(d, {&y, &w});

        op b = make(p, p.ct ? op_kind::ConvTransposeBackwardWeights
                            : op_kind::ConvolutionBackwardWeights);
        b.add_input(logical_tensor(0, dt, xs)).add_input(y1.lt);
        if (seed % 3 == 0) b.add_output(logical_tensor(2, dt, ws));
        else b.set_attr("weights_shape", ws).add_output(logical_tensor::unknown(2, dt));
        tensor_buffer x0 = x;
        bwd_weights = run(b, {&x0, &y1});
    } catch (const error &e) {
        ADD_FAILURE() << "convgrad::error " << to_string(e.code()) << ": " << e.what();
        return;
    }
    ASSERT_EQ(fwd.size(), size_t(y.count()));
    ASSERT_EQ(bwd_data.size(), size_t(x.count()));
    ASSERT_EQ(bwd_weights.size(), size_t(w.count()));
    const double a = testing::dot(fwd, y.values());
    const double b = testing::dot(x.values(), bwd_data);
    const double c = testing::dot(w.values(), bwd_weights);
    EXPECT_EQ(a, b) << "<fwd(x,w),y> vs <x,bwd_data(y,w)>";
    EXPECT_EQ(a, c) << "<fwd(x,w),y> vs <w,bwd_weights(x,y)>";
    // The bound that makes the comparison exact holds for every output element.
    const double bound = double(max_terms(p) * p.maxabs * p.maxabs);
    for (const auto *v : {&fwd, &bwd_data, &bwd_weights})
        for (double e : *v) ASSERT_LE(std::abs(e), bound);
}

void sweep(bool ct, uint64_t base_seed, int count) {
    std::mt19937_64 rng(base_seed);
    int seen[4] = {0, 0, 0, 0};
    for (int i = 0; i < count; ++i) {
        const problem p = random_problem(rng, ct);
        ++seen[p.S];
        check_problem(p, base_seed * 1000 + uint64_t(i));
        if (::testing::Test::HasFailure()) {
            ADD_FAILURE() << "stopping the sweep at problem " << i;
            return;
        }
    }
    EXPECT_GT(seen[1], 0);
    EXPECT_GT(seen[2], 0);
    EXPECT_GT(seen[3], 0);
}

TEST(Adjoint, ConvolutionFamilySweep) { sweep(false, 20240611, 300); }
TEST(Adjoint, ConvTransposeFamilySweep) { sweep(true, 20240612, 300); }

// Hand-picked corners: pads larger than the kernel on both sides, stride > kernel,
// dilation > size, depthwise 3-D.
TEST(Adjoint, Corners) {
    auto base = [](bool ct, int S) {
        problem p;
        p.ct = ct;
        p.S = S;
        p.data_format = "NCX";
        return p;
    };
    std::vector<problem> ps;
    for (bool ct : {false, true}) {
        problem p = base(ct, 1);  // pads 4/5 around K 2
        p.a = 2;
        p.b = 3;
        p.K = {2}, p.s = {1}, p.dl = {1}, p.pb = {4}, p.pe = {5}, p.op = {0};
        ps.push_back(p);
        problem q = base(ct, 2);  // stride 3 > K 1, dilation 3
        q.G = 2;
        q.K = {1, 2}, q.s = {3, 3}, q.dl = {1, 3}, q.pb = {0, 1}, q.pe = {2, 0}, q.op = {2, 1};
        ps.push_back(q);
        problem d = base(ct, 3);  // depthwise 3-D, NXC
        d.G = 4;
        d.a = 1;
        d.b = 1;
        d.data_format = "NXC";
        d.ncx = false;
        d.K = {2, 2, 2}, d.s = {2, 1, 2}, d.dl = {1, 2, 1}, d.pb = {1, 0, 1}, d.pe = {0, 1, 1},
        d.op = {1, 0, 0};
        ps.push_back(d);
    }
    uint64_t seed = 77;
    for (problem &p : ps) {
        p.small.clear();
        p.big.clear();
        for (int j = 0; j < p.S; ++j) {
            const dim_t ke = (p.K[size_t(j)] - 1) * p.dl[size_t(j)] + 1;
            if (!p.ct) {
                p.big.push_back(3);
                p.small.push_back((3 + p.pb[size_t(j)] + p.pe[size_t(j)] - ke) / p.s[size_t(j)] + 1);
            } else {
                // The smallest src of at least 3 whose output is not empty.
                const size_t u = size_t(j);
                dim_t x = 3;
                while (p.s[u] * (x - 1) + ke - p.pb[u] - p.pe[u] + p.op[u] < 1) ++x;
                p.small.push_back(x);
                p.big.push_back(p.s[u] * (x - 1) + ke - p.pb[u] - p.pe[u] + p.op[u]);
            }
        }
        for (data_type dt : {data_type::f32, data_type::bf16, data_type::f16}) {
            p.dt = dt;
            p.maxabs = dt == data_type::f32 ? 3 : 1;
            for (const char *wf : {"", "OIX", "XIO", "IOX", "XOI"}) {
                if (!p.ct && (wf[0] == 'I' || std::string(wf) == "XOI")) continue;
                p.weights_format = wf;
                check_problem(p, seed++);
            }
        }
    }
}

}  // namespace
}  // namespace convgrad
