// The GEMM kernel (convolutions that are matrix products) against the reference, on every
// instruction set this machine has (the ctest kernels_vs_reference_cap_* entries repeat these
// tests under each cap), and the dispatch of GEMM-shaped problems to it.
//
// The sweep draws only matrix-product shapes, per spatial axis one of: a 1x1 kernel at stride 1,
// a kernel covering the whole input, kernel == stride tiles (with a remainder src never reads),
// a 1x1 kernel with stride (gaps), a dilated kernel with stride >= its extent; with channel
// counts and batches that leave tails of every register tile, groups, NCX/NXC and randomly
// strided views, f32/bf16/f16, bias, and thread counts 1-3 (K split reductions included).
#include <gtest/gtest.h>
#include <omp.h>

#include <random>

#include "convgrad/convgrad.hpp"
#include "core/resolve.hpp"
#include "dispatch/registry.hpp"
#include "kernels/common/gemm_plan.hpp"
#include "util/conv_test_util.hpp"
#include "util/tensor_buffer.hpp"

namespace convgrad {
namespace {

using testing::tensor_buffer;

dim_t pick(std::mt19937_64 &rng, std::initializer_list<dim_t> v) {
    return *(v.begin() + std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng));
}

struct gemm_case {
    op o{0, op_kind::Convolution};
    std::string text;
};

gemm_case make_gemm_case(std::mt19937_64 &rng, bool big) {
    const op_kind kind = all_op_kinds[rng() % 6];
    const bool ct = is_conv_transpose_family(kind);
    const int S = int(pick(rng, {1, 2, 2, 3}));
    const dim_t g = pick(rng, {1, 1, 1, 2, 3});
    const dim_t icg = big ? pick(rng, {33, 50, 64}) : pick(rng, {1, 2, 3, 4, 5, 7, 13, 17, 33, 50});
    const dim_t ocg = big ? pick(rng, {3, 17, 33}) : pick(rng, {1, 2, 3, 4, 5, 9, 16, 19, 65});
    const dim_t mb = big ? pick(rng, {33, 64}) : pick(rng, {1, 2, 3, 5});
    dims k, s, d, big_sp, small_sp, op_pad;
    std::string shape;
    for (int j = 0; j < S; ++j) {
        dim_t K = 1, St = 1, Dl = 1, I = 1;
        switch (rng() % 5) {
            case 0:
                I = big ? pick(rng, {16, 23}) : pick(rng, {1, 3, 7, 20}), shape += "1x1 ";
                break;
            case 1:
                K = I = pick(rng, {1, 2, 4, 5}), St = pick(rng, {1, 2}), shape += "whole ";
                break;
            case 2:
                K = St = pick(rng, {2, 3}), I = pick(rng, {1, 2, 3, 5}) * K + dim_t(rng() % K),
                shape += "tiles ";
                break;
            case 3:
                St = pick(rng, {2, 3}), I = pick(rng, {5, 9}), shape += "gaps ";
                break;
            default:
                K = 2, Dl = 2, St = 3, I = pick(rng, {7, 9}), shape += "dilated ";
                break;
        }
        const dim_t ke = (K - 1) * Dl + 1, O = (I - ke) / St + 1;
        k.push_back(K), s.push_back(St), d.push_back(Dl), big_sp.push_back(I),
            small_sp.push_back(O);
        op_pad.push_back(I - (St * (O - 1) + ke));
    }
    const bool ncx = rng() % 2;
    const std::string wf = ct ? (rng() % 2 ? "IOX" : "XOI") : (rng() % 2 ? "OIX" : "XIO");
    const data_type dt = std::vector<data_type>{data_type::f32, data_type::f32, data_type::bf16,
                                                data_type::f16}[rng() % 4];
    auto data_shape = [&](dim_t c, const dims &sp) {
        dims r{mb};
        if (ncx) r.push_back(c);
        r.insert(r.end(), sp.begin(), sp.end());
        if (!ncx) r.push_back(c);
        return r;
    };
    const dim_t O = g * ocg, I = icg;
    // Mirror-convolution weights: OIX/IOX are [O][I][K...], XIO/XOI are [K...][I][O].
    dims wshape = wf[0] == 'X' ? dims{I, O} : dims{O, I};
    if (wf[0] == 'X')
        wshape.insert(wshape.begin(), k.begin(), k.end());
    else
        wshape.insert(wshape.end(), k.begin(), k.end());
    auto strided = [&](size_t id, const dims &sh) { return testing::random_strided_tensor(rng, id, dt, sh); };
    const dims zeros(size_t(S), 0);
    op o(1, kind, "gemm_sweep");
    o.set_attr("strides", s)
        .set_attr("dilations", d)
        .set_attr("pads_begin", zeros)
        .set_attr("pads_end", zeros);
    o.set_attr("groups", g).set_attr("data_format", std::string(ncx ? "NCX" : "NXC"));
    o.set_attr("weights_format", wf);
    const dims src_shape = data_shape(g * icg, big_sp), dst_shape = data_shape(g * ocg, small_sp);
    const bool bias = rng() % 2;
    switch (kind) {
        case op_kind::Convolution:
            o.add_input(strided(0, src_shape)).add_input(strided(1, wshape));
            if (bias) o.add_input(logical_tensor(2, dt, {O}));
            o.add_output(strided(3, dst_shape));
            break;
        case op_kind::ConvolutionBackwardData:
            o.add_input(strided(0, dst_shape))
                .add_input(strided(1, wshape))
                .add_output(strided(3, src_shape));
            break;
        case op_kind::ConvolutionBackwardWeights:
            o.add_input(strided(0, src_shape))
                .add_input(strided(1, dst_shape))
                .add_output(strided(3, wshape));
            break;
        case op_kind::ConvTranspose:
            o.set_attr("output_padding", op_pad);
            o.add_input(strided(0, dst_shape)).add_input(strided(1, wshape));
            if (bias) o.add_input(logical_tensor(2, dt, {g * icg}));
            o.add_output(strided(3, src_shape));
            break;
        case op_kind::ConvTransposeBackwardData:
            o.add_input(strided(0, src_shape))
                .add_input(strided(1, wshape))
                .add_output(strided(3, dst_shape));
            break;
        case op_kind::ConvTransposeBackwardWeights:
            o.add_input(strided(0, dst_shape))
                .add_input(strided(1, src_shape))
                .add_output(strided(3, wshape));
            break;
    }
    gemm_case c;
    c.o = o;
    c.text = std::string(to_string(kind)) + " " + to_string(dt) + " " + (ncx ? "NCX " : "NXC ") +
             wf + " " + shape;
    return c;
}

void run_kernel(const detail::resolved_op &r, const detail::impl_desc &impl,
                std::vector<tensor_buffer> &in, tensor_buffer &out) {
    detail::conv_args a;
    auto ptr = [&](int i) -> const void * { return i >= 0 ? in[size_t(i)].data() : nullptr; };
    a.src = ptr(r.src_input);
    a.dst = ptr(r.dst_input);
    a.wei = ptr(r.wei_input);
    a.bias = ptr(r.bias_input);
    a.out = out.data();
    std::fill(out.bytes.begin(), out.bytes.end(),
              uint8_t(0x7f));  // poison: every value must be written
    impl.create(r.prob)->execute(a);
}

// Runs every GEMM kernel this machine (and the cap) allows on `count` cases, whatever the cost
// estimate would choose, and compares with the reference exactly (small integers: exact sums).
void sweep(uint64_t seed, int count, bool big) {
    std::mt19937_64 rng(seed);
    int runs = 0;
    const int saved_threads = omp_get_max_threads();
    for (int iter = 0; iter < count; ++iter) {
        const gemm_case c = make_gemm_case(rng, big);
        detail::resolved_op r;
        try {
            r = detail::resolve_op(c.o, c.o.inputs(), c.o.outputs());
        } catch (const error &e) {
            ADD_FAILURE() << "generator made an invalid case: " << c.text << ": " << e.what();
            continue;
        }
        ASSERT_EQ(detail::gemm_shape_why_not(r.prob), "") << c.text << " " << r.prob.desc();
        std::vector<tensor_buffer> in;
        for (size_t i = 0; i < r.inputs.size(); ++i) {
            in.emplace_back(r.inputs[i]);
            in.back().fill_ints(rng(), -3, 3);
        }
        tensor_buffer ref(r.outputs[0]);
        run_kernel(r, detail::reference_impl(), in, ref);
        const auto want = ref.values();
        const int nthr = big ? 1 + iter % 3 : 1;
        omp_set_num_threads(nthr);
        for (const auto &impl : detail::impl_list()) {
            if (std::string(impl.name).rfind("gemm:", 0) != 0 || impl.isa > detail::effective_isa())
                continue;
            tensor_buffer got(r.outputs[0]);
            run_kernel(r, impl, in, got);
            const auto have = got.values();
            size_t bad = 0;
            for (size_t i = 0; i < want.size(); ++i) bad += have[i] != want[i];
            EXPECT_EQ(bad, 0u) << impl.name << " on " << c.text << r.prob.desc() << " threads "
                               << nthr << ": " << bad << " of " << want.size() << " values differ";
            ++runs;
        }
        omp_set_num_threads(saved_threads);
    }
    EXPECT_GE(runs, count);  // gemm:sse2 runs under every cap
}

TEST(KernelsVsReference, GemmKernelOnMatrixProductShapes) {
    sweep(20261123, 300, false);
}

// Bigger problems: several threads, blocks of every size, K split into parts.
TEST(KernelsVsReference, GemmKernelThreadedAndKSplit) {
    sweep(7, 24, true);
}

// An empty batch: bwd_weights sums nothing (zeros), fwd and bwd_data have nothing to write.
TEST(KernelsVsReference, GemmKernelEmptyBatch) {
    for (op_kind kind : {op_kind::Convolution, op_kind::ConvolutionBackwardData,
                         op_kind::ConvolutionBackwardWeights}) {
        op o(0, kind);
        o.set_attr("strides", dims{1, 1})
            .set_attr("pads_begin", dims{0, 0})
            .set_attr("pads_end", dims{0, 0});
        o.set_attr("dilations", dims{1, 1}).set_attr("data_format", std::string("NCX"));
        o.set_attr("weights_format", std::string("OIX"));
        const logical_tensor x(0, data_type::f32, {0, 5, 3, 3}), y(1, data_type::f32, {0, 2, 3, 3}),
            w(2, data_type::f32, {2, 5, 1, 1});
        if (kind == op_kind::Convolution) o.add_input(x).add_input(w).add_output(y);
        if (kind == op_kind::ConvolutionBackwardData) o.add_input(y).add_input(w).add_output(x);
        if (kind == op_kind::ConvolutionBackwardWeights) o.add_input(x).add_input(y).add_output(w);
        const detail::resolved_op r = detail::resolve_op(o, o.inputs(), o.outputs());
        std::vector<tensor_buffer> in;
        for (const auto &lt : r.inputs) in.emplace_back(lt);
        for (const auto &impl : detail::impl_list()) {
            if (std::string(impl.name).rfind("gemm:", 0) != 0 || impl.isa > detail::effective_isa())
                continue;
            tensor_buffer got(r.outputs[0]);
            run_kernel(r, impl, in, got);
            for (double v : got.values()) EXPECT_EQ(v, 0.0) << impl.name << " " << to_string(kind);
        }
    }
}

// ------------------------------------------------------------------------------ dispatch --

std::string kernel_for(const op &o) {
    return compile_op(o).kernel_name();
}

TEST(Dispatch, GemmShapedProblemsPickTheGemmKernel) {
    const char *want = detail::effective_isa() >= detail::cpu_isa::avx512 ? "gemm:avx512"
                       : detail::effective_isa() >= detail::cpu_isa::avx2 ? "gemm:avx2"
                                                                          : "gemm:sse2";
    {  // DCGAN projection: ConvTranspose nz=100 -> 512 x 4x4 from a 1x1 input (batch 4 here).
        op o(0, op_kind::ConvTranspose);
        o.set_attr("strides", dims{1, 1})
            .set_attr("pads_begin", dims{0, 0})
            .set_attr("pads_end", dims{0, 0});
        o.set_attr("dilations", dims{1, 1}).set_attr("weights_format", std::string("XOI"));
        o.add_input(logical_tensor(0, data_type::f32, {4, 1, 1, 100}))
            .add_input(logical_tensor(1, data_type::f32, {4, 4, 512, 100}))
            .add_output(logical_tensor::unknown(2, data_type::f32));
        EXPECT_EQ(kernel_for(o), want);
    }
    {  // A user's ConvTranspose3d 50 -> 1 channel, kernel 28x28x1 on a 1x1x1 input, NCX.
        op o(0, op_kind::ConvTranspose);
        o.set_attr("strides", dims{1, 1, 1}).set_attr("pads_begin", dims{0, 0, 0});
        o.set_attr("pads_end", dims{0, 0, 0}).set_attr("dilations", dims{1, 1, 1});
        o.set_attr("data_format", std::string("NCX"))
            .set_attr("weights_format", std::string("IOX"));
        o.add_input(logical_tensor(0, data_type::f32, {8, 50, 1, 1, 1}))
            .add_input(logical_tensor(1, data_type::f32, {50, 1, 28, 28, 1}))
            .add_output(logical_tensor::unknown(2, data_type::f32));
        EXPECT_EQ(kernel_for(o), want);
    }
    {  // One output channel, 1x1 kernel, NCX: the direct kernel would use 1 lane of a vector
       // (and copy src to channels-last); the product puts the pixels on the lanes.
        op o(0, op_kind::Convolution);
        o.set_attr("strides", dims{1, 1})
            .set_attr("pads_begin", dims{0, 0})
            .set_attr("pads_end", dims{0, 0});
        o.set_attr("dilations", dims{1, 1}).set_attr("data_format", std::string("NCX"));
        o.set_attr("weights_format", std::string("OIX"));
        o.add_input(logical_tensor(0, data_type::f32, {2, 64, 32, 32}))
            .add_input(logical_tensor(1, data_type::f32, {1, 64, 1, 1}))
            .add_output(logical_tensor::unknown(2, data_type::f32));
        EXPECT_EQ(kernel_for(o), want);
    }
}

TEST(Dispatch, GemmKernelDeclinesWithReasons) {
    detail::conv_problem p;  // 3x3, pad 1: taps read padding
    p.nsp = 2;
    p.mb = 2, p.icg = p.ocg = 64;
    p.i[1] = p.i[2] = p.o[1] = p.o[2] = 14;
    p.k[1] = p.k[2] = 3;
    p.pb[1] = p.pb[2] = p.pe[1] = p.pe[2] = 1;
    p.src = {14 * 14 * 64, 1, {0, 14 * 64, 64}};
    p.dst = p.src;
    EXPECT_NE(detail::gemm_shape_why_not(p).find("begin padding"), std::string::npos);
    // A channels-last 1x1 layer with many channels: a matrix product, but the direct kernel
    // already fills the lanes, and the estimate leaves it there.
    p.k[1] = p.k[2] = 1;
    p.pb[1] = p.pb[2] = p.pe[1] = p.pe[2] = 0;
    p.ocg = 256;
    p.dst = {14 * 14 * 256, 1, {0, 14 * 256, 256}};
    p.wei = {64, 1, {0, 0, 0}};
    EXPECT_EQ(detail::gemm_shape_why_not(p), "");
    for (const auto &impl : detail::impl_list()) {
        if (std::string(impl.name).rfind("gemm:", 0) != 0) continue;
        EXPECT_NE(impl.why_not(p).find("direct kernel is estimated faster"), std::string::npos)
            << impl.name;
    }
}

// A matrix-product problem whose offset tables would be enormous (found by fuzz_op: a 343 GB
// reserve while dispatching) is declined with the reason, without building them.
TEST(Dispatch, GemmKernelDeclinesHugeOffsetTables) {
    const dim_t mb = dim_t(1) << 31;
    op o(0, op_kind::Convolution);
    o.set_attr("strides", dims{1, 1}).set_attr("pads_begin", dims{0, 0}).set_attr("pads_end", dims{0, 0});
    o.set_attr("dilations", dims{1, 1}).set_attr("data_format", std::string("NCX"));
    o.set_attr("weights_format", std::string("OIX"));
    o.add_input(logical_tensor(0, data_type::f32, {mb, 4, 1, 1}))
        .add_input(logical_tensor(1, data_type::f32, {2, 4, 1, 1}))
        .add_output(logical_tensor::unknown(2, data_type::f32));
    const detail::resolved_op r = detail::resolve_op(o, o.inputs(), o.outputs());
    EXPECT_EQ(detail::gemm_shape_why_not(r.prob), "");
    for (const auto &impl : detail::impl_list()) {
        if (std::string(impl.name).rfind("gemm:", 0) != 0) continue;
        EXPECT_NE(impl.why_not(r.prob).find("offset tables would hold"), std::string::npos) << impl.name;
    }
}

}  // namespace
}  // namespace convgrad
