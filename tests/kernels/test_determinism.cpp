// Backward-weights results repeat bit for bit: the same problem, with random non-integer data
// (so that a different summation order would show), executed repeatedly gives byte-identical
// weights, for every kernel that accepts it (grouped and depthwise included), at 1 and 2 threads.
// The ctest runs repeat this under each CONVGRAD_MAX_ISA cap.
#include <gtest/gtest.h>
#include <omp.h>

#include <cstring>
#include <random>
#include <set>

#include "core/resolve.hpp"
#include "dispatch/registry.hpp"
#include "util/tensor_buffer.hpp"

namespace convgrad {
namespace {

using testing::tensor_buffer;

struct bwd_w_case {
    const char *what;
    op_kind kind;
    dim_t g, icg, ocg, mb;
    dims big, k, s;
    data_type dt;
};

// Big enough (over a million multiply-adds) that the kernels split the work over 2 threads.
const bwd_w_case cases[] = {
    {"direct 2-D", op_kind::ConvolutionBackwardWeights, 1, 19, 48, 2, {21, 21}, {3, 3}, {1, 1}, data_type::f32},
    {"direct 2-D strided bf16", op_kind::ConvolutionBackwardWeights, 1, 32, 33, 2, {28, 28}, {3, 3}, {2, 2}, data_type::bf16},
    {"direct 1-D f16", op_kind::ConvolutionBackwardWeights, 1, 24, 40, 3, {300}, {5}, {1}, data_type::f16},
    {"direct 3-D ConvTranspose", op_kind::ConvTransposeBackwardWeights, 1, 16, 24, 1, {9, 9, 9}, {3, 3, 3}, {1, 1, 1}, data_type::f32},
    {"grouped cg 2", op_kind::ConvolutionBackwardWeights, 16, 2, 2, 4, {32, 32}, {3, 3}, {1, 1}, data_type::f32},
    {"grouped cg 4", op_kind::ConvolutionBackwardWeights, 8, 4, 4, 2, {32, 32}, {3, 3}, {1, 1}, data_type::bf16},
    {"depthwise", op_kind::ConvolutionBackwardWeights, 64, 1, 1, 8, {32, 32}, {3, 3}, {2, 2}, data_type::f32},
    {"grouped ConvTranspose", op_kind::ConvTransposeBackwardWeights, 32, 2, 2, 2, {24, 24}, {3, 3}, {1, 1}, data_type::f32},
};

// Op with NXC data, canonical OIX/IOX weights of the mirror convolution, pads 1.
op make_op(const bwd_w_case &c) {
    const bool ct = is_conv_transpose_family(c.kind);
    const size_t S = c.big.size();
    dims small, pads(S, 1), dl(S, 1);
    for (size_t j = 0; j < S; ++j) small.push_back((c.big[j] + 2 - c.k[j]) / c.s[j] + 1);
    auto data = [&](dim_t C, const dims &sp) {
        dims d{c.mb};
        d.insert(d.end(), sp.begin(), sp.end());
        d.push_back(C);
        return d;
    };
    dims w{c.g * c.ocg, c.icg};
    w.insert(w.end(), c.k.begin(), c.k.end());
    // Conv: src = big side, diff_dst = small side. ConvTranspose: src is the small side.
    op o(0, c.kind, c.what);
    o.set_attr("strides", c.s).set_attr("dilations", dl).set_attr("pads_begin", pads).set_attr("pads_end", pads);
    o.set_attr("groups", c.g).set_attr("weights_format", std::string(ct ? "IOX" : "OIX"));
    o.set_attr("weights_shape", w);
    const dims x = data(c.g * c.icg, c.big), y = data(c.g * c.ocg, small);
    o.add_input(logical_tensor(0, c.dt, ct ? y : x)).add_input(logical_tensor(1, c.dt, ct ? x : y));
    o.add_output(logical_tensor::unknown(2, c.dt));
    return o;
}

testing::aligned_bytes run_once(const detail::impl_desc &impl, const detail::resolved_op &r,
                              std::vector<tensor_buffer> &in) {
    tensor_buffer out(r.outputs[0]);
    std::fill(out.bytes.begin(), out.bytes.end(), uint8_t(0x7f));
    detail::conv_args a;
    a.src = in[size_t(r.src_input)].data();
    a.dst = in[size_t(r.dst_input)].data();
    a.out = out.data();
    impl.create(r.prob)->execute(a);
    return out.bytes;
}

TEST(Determinism, BwdWeightsBitIdenticalPerThreadCount) {
    const int saved = omp_get_max_threads();
    int runs = 0;
    std::set<std::string> kernels_seen;
    for (const bwd_w_case &c : cases) {
        const op o = make_op(c);
        const detail::resolved_op r = detail::resolve_op(o, o.inputs(), o.outputs());
        ASSERT_EQ(r.prob.dir, detail::conv_direction::bwd_weights) << c.what;
        ASSERT_GE(r.prob.macs(), double(1 << 20)) << c.what << ": too small to be threaded";
        std::vector<tensor_buffer> in;
        std::mt19937_64 rng(7);
        std::uniform_real_distribution<double> val(-1.0, 1.0);
        for (const auto &lt : r.inputs) {
            in.emplace_back(lt);
            for (dim_t i = 0; i < in.back().count(); ++i) in.back().set(i, val(rng));
        }
        for (const auto &impl : detail::impl_list()) {
            if (!detail::isa_available(impl.isa) || !impl.why_not(r.prob).empty()) continue;
            for (int nthr : {1, 2}) {
                omp_set_num_threads(nthr);  // kernels fix their split when created
                const testing::aligned_bytes first = run_once(impl, r, in);
                for (int rep = 0; rep < 3; ++rep) {
                    const testing::aligned_bytes again = run_once(impl, r, in);
                    EXPECT_EQ(std::memcmp(first.data(), again.data(), first.size()), 0)
                        << impl.name << " on " << c.what << " at " << nthr << " threads, repetition " << rep;
                }
                ++runs;
            }
            kernels_seen.insert(impl.name);
        }
    }
    omp_set_num_threads(saved);
    // Under every cap at least the reference, a direct and (avx2 and up) a grouped kernel ran.
    EXPECT_GE(kernels_seen.size(), 2u);
    std::printf("%d (kernel, problem, threads) combinations repeated; kernels:", runs);
    for (const auto &k : kernels_seen) std::printf(" %s", k.c_str());
    std::printf("\n");
}

}  // namespace
}  // namespace convgrad
