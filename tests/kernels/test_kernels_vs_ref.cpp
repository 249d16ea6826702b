// Every optimized kernel in the dispatch list, on every instruction set this machine has (the
// ctest runs repeat this under each CONVGRAD_MAX_ISA cap), against the reference, over a seeded
// random sweep of problems that hits tails and edges: odd and tiny channel counts, groups and
// depthwise, dilation, stride > kernel, asymmetric and large pads, 1-D/2-D/3-D, spatial size 1,
// both data formats, every weights format, strided tensors, f32/bf16/f16.
#include <gtest/gtest.h>

#include <random>

#include "core/resolve.hpp"
#include "dispatch/registry.hpp"
#include "util/conv_test_util.hpp"
#include "util/tensor_buffer.hpp"

namespace convgrad {
namespace {

using testing::tensor_buffer;

struct random_case {
    op o{0, op_kind::Convolution};
    std::string text;
};

dim_t pick(std::mt19937_64 &rng, std::initializer_list<dim_t> v) {
    return *(v.begin() + std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng));
}

// A random op whose shapes are consistent (built from a random canonical convolution).
random_case make_case(std::mt19937_64 &rng) {
    const op_kind kind = all_op_kinds[rng() % 6];
    const bool ct = is_conv_transpose_family(kind);
    const int S = int(pick(rng, {1, 2, 2, 2, 3}));
    const dim_t G = pick(rng, {1, 1, 1, 2, 3, 4});
    const bool depthwise = rng() % 6 == 0;
    const dim_t icg = depthwise ? 1 : pick(rng, {1, 2, 3, 5, 8, 16, 17, 33});
    const dim_t ocg = depthwise ? 1 : pick(rng, {1, 3, 4, 7, 16, 19, 32, 48, 65});
    const dim_t g = depthwise ? pick(rng, {3, 8, 17, 32}) : G;
    const dim_t mb = pick(rng, {1, 2, 3});
    dims k, s, d, pb, pe, big, small, op_pad;
    for (int j = 0; j < S; ++j) {
        k.push_back(pick(rng, {1, 2, 3, 3, 4, 5}));
        s.push_back(pick(rng, {1, 1, 2, 3, 4}));
        d.push_back(pick(rng, {1, 1, 1, 2, 3}));
        pb.push_back(pick(rng, {0, 0, 1, 2, 3, 5}));
        pe.push_back(pick(rng, {0, 0, 1, 2, 4}));
        const dim_t ke = (k[j] - 1) * d[j] + 1;
        dim_t I = pick(rng, {1, 2, 4, 7, 9, 13, 20, 31});
        if (I + pb[j] + pe[j] < ke) I = ke - pb[j] - pe[j] + dim_t(rng() % 3);
        if (I < 1) I = 1;
        if (I + pb[j] + pe[j] < ke) pe[j] = ke - I - pb[j];
        big.push_back(I);
        small.push_back((I + pb[j] + pe[j] - ke) / s[j] + 1);
        // The big side of a ConvTranspose must be reachable as s*(Y-1)+Ke-pb-pe+op, op < s.
        op_pad.push_back(I - (s[j] * (small[j] - 1) + ke - pb[j] - pe[j]));
    }
    const bool ncx = rng() % 2;
    const bool legacy_wf = ct && rng() % 4 == 0;
    const bool first_wf = rng() % 2;
    const std::string wf = ct ? (legacy_wf ? (first_wf ? "OIX" : "XIO") : (first_wf ? "IOX" : "XOI"))
                              : (first_wf ? "OIX" : "XIO");
    const data_type dt = std::vector<data_type>{data_type::f32, data_type::f32, data_type::bf16,
                                                data_type::f16}[rng() % 4];
    auto data_shape = [&](dim_t c, const dims &sp) {
        dims r{mb};
        if (ncx) r.push_back(c);
        r.insert(r.end(), sp.begin(), sp.end());
        if (!ncx) r.push_back(c);
        return r;
    };
    // Mirror-convolution weights: O axis = g*ocg (conv dst channels), I axis = icg.
    dims wshape;
    const dim_t O = g * ocg, I = icg;
    dims kk = k;
    if (wf == "OIX" && !ct) wshape = {O, I};
    else if (wf == "XIO" && !ct) wshape = {I, O};
    else if (wf == "IOX") wshape = {O, I};
    else if (wf == "XOI") wshape = {I, O};
    else if (wf == "OIX") wshape = {I, O};  // legacy [OC/G, IC, K]
    else wshape = {O, I};                   // legacy XIO [K, IC, OC/G]
    if (wf[0] == 'X') wshape.insert(wshape.begin(), kk.begin(), kk.end());
    else wshape.insert(wshape.end(), kk.begin(), kk.end());

    const dims src_shape = data_shape(g * icg, big), dst_shape = data_shape(g * ocg, small);
    // Random strides: sometimes channels-last strides on NCX shapes, sometimes padded rows.
    auto strided = [&](size_t id, const dims &shape) { return testing::random_strided_tensor(rng, id, dt, shape); };
    op o(1, kind, "sweep");
    o.set_attr("strides", s).set_attr("dilations", d).set_attr("pads_begin", pb).set_attr("pads_end", pe);
    o.set_attr("groups", g).set_attr("data_format", std::string(ncx ? "NCX" : "NXC"));
    o.set_attr("weights_format", wf);
    const bool bias = rng() % 2;
    switch (kind) {
        case op_kind::Convolution:
            o.add_input(strided(0, src_shape)).add_input(strided(1, wshape));
            if (bias) o.add_input(logical_tensor(2, dt, {O}));
            o.add_output(strided(3, dst_shape));
            break;
        case op_kind::ConvolutionBackwardData:
            o.add_input(strided(0, dst_shape)).add_input(strided(1, wshape)).add_output(strided(3, src_shape));
            break;
        case op_kind::ConvolutionBackwardWeights:
            o.add_input(strided(0, src_shape)).add_input(strided(1, dst_shape)).add_output(strided(3, wshape));
            break;
        case op_kind::ConvTranspose:
            o.set_attr("output_padding", op_pad);
            o.add_input(strided(0, dst_shape)).add_input(strided(1, wshape));
            if (bias) o.add_input(logical_tensor(2, dt, {g * icg}));
            o.add_output(strided(3, src_shape));
            break;
        case op_kind::ConvTransposeBackwardData:
            o.add_input(strided(0, src_shape)).add_input(strided(1, wshape)).add_output(strided(3, dst_shape));
            break;
        case op_kind::ConvTransposeBackwardWeights:
            o.add_input(strided(0, dst_shape)).add_input(strided(1, src_shape)).add_output(strided(3, wshape));
            break;
    }
    random_case c;
    c.o = o;
    c.text = std::string(to_string(kind)) + " " + to_string(dt) + " " + (ncx ? "NCX " : "NXC ") + wf;
    return c;
}

void run_impl(const detail::resolved_op &r, const detail::impl_desc &impl,
              std::vector<tensor_buffer> &in, tensor_buffer &out) {
    detail::conv_args a;
    auto ptr = [&](int i) -> const void * { return i >= 0 ? in[size_t(i)].data() : nullptr; };
    a.src = ptr(r.src_input);
    a.dst = ptr(r.dst_input);
    a.wei = ptr(r.wei_input);
    a.bias = ptr(r.bias_input);
    a.out = out.data();
    std::fill(out.bytes.begin(), out.bytes.end(), uint8_t(0x7f));  // poison: every value must be written
    impl.create(r.prob)->execute(a);
}

TEST(KernelsVsReference, RandomSweep) {
    std::mt19937_64 rng(20261122);
    int checked = 0, impls_run = 0;
    for (int iter = 0; iter < 400; ++iter) {
        random_case c = make_case(rng);
        detail::resolved_op r;
        try {
            r = detail::resolve_op(c.o, c.o.inputs(), c.o.outputs());
        } catch (const error &e) {
            ADD_FAILURE() << "generator made an invalid case: " << e.what();
            continue;
        }
        std::vector<tensor_buffer> in;
        for (size_t i = 0; i < r.inputs.size(); ++i) {
            in.emplace_back(r.inputs[i]);
            in.back().fill_ints(rng(), -3, 3);
        }
        tensor_buffer ref(r.outputs[0]);
        run_impl(r, detail::reference_impl(), in, ref);
        const auto want = ref.values();
        for (const auto &impl : detail::impl_list()) {
            if (impl.create == detail::reference_impl().create || !detail::isa_available(impl.isa)) continue;
            if (!impl.why_not(r.prob).empty()) continue;
            tensor_buffer got(r.outputs[0]);
            run_impl(r, impl, in, got);
            const auto have = got.values();
            size_t bad = 0;
            for (size_t i = 0; i < want.size(); ++i) bad += have[i] != want[i];
            EXPECT_EQ(bad, 0u) << impl.name << " on " << c.text << " " << r.prob.desc()
                               << ": " << bad << " of " << want.size() << " values differ";
            ++impls_run;
        }
        ++checked;
    }
    EXPECT_GE(impls_run, checked);  // at least one optimized kernel per problem
    std::printf("%d problems, %d kernel runs compared\n", checked, impls_run);
}

}  // namespace
}  // namespace convgrad
