// A compiled partition is executed many times and from several threads at once, each thread
// with its own buffers: every run gives the same values as a run alone.
#include <gtest/gtest.h>

#include <thread>

#include "util/tensor_buffer.hpp"

namespace convgrad {
namespace {

using testing::tensor_buffer;

TEST(Concurrency, OneCompiledPartitionManyThreads) {
    for (op_kind kind : {op_kind::ConvTransposeBackwardWeights, op_kind::ConvolutionBackwardData,
                         op_kind::Convolution}) {
        op o(7, kind, "concurrent");
        o.set_attr("strides", dims{2, 2}).set_attr("pads_begin", dims{1, 1}).set_attr("pads_end", dims{1, 1});
        o.set_attr("dilations", dims{1, 1});
        const dims x{2, 9, 9, 24}, y{2, 5, 5, 40};
        if (kind == op_kind::ConvTransposeBackwardWeights) {
            o.set_attr("weights_shape", dims{3, 3, 24, 40});  // XOI: [K, OC/G, IC], IC = channels of y
            o.add_input(logical_tensor(0, data_type::f32, y)).add_input(logical_tensor(1, data_type::f32, x));
        } else if (kind == op_kind::ConvolutionBackwardData) {
            o.set_attr("dst_shape", x);
            o.add_input(logical_tensor(0, data_type::f32, y)).add_input(logical_tensor(1, data_type::f32, {3, 3, 24, 40}));
        } else {
            o.add_input(logical_tensor(0, data_type::f32, x)).add_input(logical_tensor(1, data_type::f32, {3, 3, 24, 40}));
        }
        o.add_output(logical_tensor::unknown(2, data_type::f32));
        const compiled_partition cp = compile_op(o);

        tensor_buffer a(cp.inputs()[0]), b(cp.inputs()[1]), alone(cp.outputs()[0]);
        a.fill_ints(1);
        b.fill_ints(2);
        cp.execute({a.as_tensor(), b.as_tensor()}, {alone.as_tensor()});
        const auto want = alone.values();

        constexpr int nthreads = 4, reps = 20;
        std::vector<std::vector<double>> got(nthreads);
        std::vector<std::thread> pool;
        for (int t = 0; t < nthreads; ++t)
            pool.emplace_back([&, t] {
                tensor_buffer ta(cp.inputs()[0]), tb(cp.inputs()[1]), out(cp.outputs()[0]);
                ta.fill_ints(1);
                tb.fill_ints(2);
                for (int r = 0; r < reps; ++r) cp.execute({ta.as_tensor(), tb.as_tensor()}, {out.as_tensor()});
                got[size_t(t)] = out.values();
            });
        for (auto &th : pool) th.join();
        for (int t = 0; t < nthreads; ++t) EXPECT_EQ(got[size_t(t)], want) << to_string(kind) << " thread " << t;
    }
}

// Problems big enough that every execution runs its own OpenMP regions (2 threads each),
// started from two std::threads at once: what the ThreadSanitizer job checks.
TEST(Concurrency, ThreadedExecutionsFromManyThreads) {
    for (op_kind kind : {op_kind::ConvolutionBackwardWeights, op_kind::Convolution}) {
        op o(8, kind, "threaded");
        o.set_attr("strides", dims{1, 1}).set_attr("pads_begin", dims{1, 1}).set_attr("pads_end", dims{1, 1});
        o.set_attr("dilations", dims{1, 1}).set_attr("data_format", std::string("NCX"));
        const dims x{2, 16, 20, 20}, w{3, 3, 16, 32};  // NCX data (packed copies), XIO weights
        if (kind == op_kind::ConvolutionBackwardWeights) {
            o.set_attr("weights_shape", w);
            o.add_input(logical_tensor(0, data_type::f32, x)).add_input(logical_tensor(1, data_type::f32, {2, 32, 20, 20}));
        } else {
            o.add_input(logical_tensor(0, data_type::f32, x)).add_input(logical_tensor(1, data_type::f32, w));
        }
        o.add_output(logical_tensor::unknown(2, data_type::f32));
        for (impl_choice choice : {impl_choice::best, impl_choice::reference}) {
            const compiled_partition cp = compile_op(o, choice);
            ASSERT_GE(cp.flops(), 2.0 * (1 << 20));  // over the threading threshold
            tensor_buffer a(cp.inputs()[0]), b(cp.inputs()[1]), alone(cp.outputs()[0]);
            a.fill_ints(3);
            b.fill_ints(4);
            cp.execute({a.as_tensor(), b.as_tensor()}, {alone.as_tensor()});
            const auto want = alone.values();
            std::vector<std::vector<double>> got(2);
            std::vector<std::thread> pool;
            for (int t = 0; t < 2; ++t)
                pool.emplace_back([&, t] {
                    tensor_buffer out(cp.outputs()[0]);
                    for (int r = 0; r < 3; ++r) cp.execute({a.as_tensor(), b.as_tensor()}, {out.as_tensor()});
                    got[size_t(t)] = out.values();
                });
            for (auto &th : pool) th.join();
            for (int t = 0; t < 2; ++t)
                EXPECT_EQ(got[size_t(t)], want) << to_string(kind) << " " << cp.kernel_name() << " thread " << t;
        }
    }
}

}  // namespace
}  // namespace convgrad
