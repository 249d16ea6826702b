// The backward pass of a DCGAN generator layer through convgrad's public API:
// ConvTranspose 512 -> 256 channels, 4x4 kernel, stride 2, pad 1, 8x8 -> 16x16, batch 32, NXC.
// Computes ConvTransposeBackwardWeights and ConvTransposeBackwardData and prints a checksum and
// the time per execution.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "convgrad/convgrad.hpp"

using namespace convgrad;

namespace {

op make_layer_op(size_t id, op_kind kind) {
    op o(id, kind, to_string(kind));
    o.set_attr("strides", dims{2, 2})
        .set_attr("pads_begin", dims{1, 1})
        .set_attr("pads_end", dims{1, 1})
        .set_attr("dilations", dims{1, 1})
        .set_attr("data_format", std::string("NXC"))
        .set_attr("weights_format", std::string("XOI"));
    return o;
}

std::vector<float> random_floats(size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(-1.f, 1.f);
    std::vector<float> v(n);
    for (auto &x : v) x = d(rng);
    return v;
}

double checksum(const std::vector<float> &v) {
    double s = 0;
    for (float x : v) s += x;
    return s;
}

// Median milliseconds of `reps` executions after one warm-up.
double time_ms(const compiled_partition &cp, const std::vector<tensor> &in,
               const std::vector<tensor> &out, int reps) {
    cp.execute(in, out);
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        cp.execute(in, out);
        t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

}  // namespace

int main() {
    const dim_t mb = 32, ic = 512, oc = 256, h = 8, w = 8, oh = 16, ow = 16, k = 4;
    const logical_tensor src(0, data_type::f32, {mb, h, w, ic});
    const logical_tensor diff_dst(1, data_type::f32, {mb, oh, ow, oc});
    const logical_tensor weights(2, data_type::f32, {k, k, oc, ic});  // XOI: [K, OC/G, IC]

    try {
        graph g;
        // diff_weights = ConvTransposeBackwardWeights(src, diff_dst); shape from the attribute.
        op bwd_w = make_layer_op(0, op_kind::ConvTransposeBackwardWeights);
        bwd_w.set_attr("weights_shape", dims{k, k, oc, ic});
        bwd_w.add_input(src).add_input(diff_dst).add_output(logical_tensor::unknown(3, data_type::f32));
        // diff_src = ConvTransposeBackwardData(diff_dst, weights); shape inferred.
        op bwd_d = make_layer_op(1, op_kind::ConvTransposeBackwardData);
        bwd_d.add_input(diff_dst).add_input(weights).add_output(logical_tensor::unknown(4, data_type::f32));
        g.add_op(bwd_w);
        g.add_op(bwd_d);
        g.finalize();
        auto parts = g.get_partitions();

        auto x = random_floats(size_t(mb * h * w * ic), 1);
        auto dy = random_floats(size_t(mb * oh * ow * oc), 2);
        auto wv = random_floats(size_t(k * k * oc * ic), 3);

        const char *names[2] = {"ConvTransposeBackwardWeights", "ConvTransposeBackwardData"};
        for (int i = 0; i < 2; ++i) {
            compiled_partition cp = parts[size_t(i)].compile(parts[size_t(i)].input_ports(),
                                                             parts[size_t(i)].output_ports());
            const logical_tensor out_lt = cp.outputs()[0];
            std::vector<float> out(size_t(out_lt.element_count()));
            std::vector<tensor> in = i == 0 ? std::vector<tensor>{tensor(src, x.data()), tensor(diff_dst, dy.data())}
                                            : std::vector<tensor>{tensor(diff_dst, dy.data()), tensor(weights, wv.data())};
            const double ms = time_ms(cp, in, {tensor(out_lt, out.data())}, 3);
            std::printf("%-30s out %-16s kernel %-28s checksum %+.6e  %8.3f ms  %7.1f GFLOP/s\n",
                        names[i], out_lt.to_string().c_str(), cp.kernel_name().c_str(),
                        checksum(out), ms, cp.flops() / ms * 1e-6);
        }
    } catch (const error &e) {
        std::fprintf(stderr, "convgrad error (%s): %s\n", to_string(e.code()), e.what());
        return 1;
    }
    return 0;
}
