// Limits checked up front (docs/semantics.md, "Limits") and arithmetic at the edges of int64:
// a thread count above max_thread_count is an error naming the op at compile and at execute;
// so is scratch memory beyond 2^52 bytes at compile; strides near INT64_MAX compile and run
// exactly (issue 11: signed overflow in the reference).
#include <gtest/gtest.h>
#include <omp.h>

#include <chrono>
#include <cstdint>

#include "util/conv_test_util.hpp"

namespace convgrad {
namespace {

using testing::make_conv_op;
using testing::run_op;

op small_conv() {
    op o = make_conv_op(op_kind::Convolution, {1}, {0}, {0}, {1}, true, 4);
    o.add_input(logical_tensor(0, data_type::f32, {1, 2, 5}))
        .add_input(logical_tensor(1, data_type::f32, {3, 2, 1}))
        .add_output(logical_tensor::unknown(2, data_type::f32));
    return o;
}

void expect_thread_error(const std::function<void()> &f) {
    try {
        f();
        ADD_FAILURE() << "no error";
    } catch (const error &e) {
        const std::string m = e.what();
        EXPECT_EQ(e.code(), status::invalid_arguments) << m;
        EXPECT_NE(m.find("Convolution (op 4"), std::string::npos) << m;
        EXPECT_NE(m.find("thread count"), std::string::npos) << m;
        EXPECT_NE(m.find("got 100000"), std::string::npos) << m;
    }
}

TEST(Limits, ThreadCountAboveTheMaximum) {
    const int saved = omp_get_max_threads();
    for (impl_choice choice : {impl_choice::best, impl_choice::reference}) {
        const compiled_partition cp = compile_op(small_conv(), choice);
        testing::tensor_buffer a(cp.inputs()[0]), b(cp.inputs()[1]), out(cp.outputs()[0]);
        omp_set_num_threads(100000);
        expect_thread_error([&] { compile_op(small_conv(), choice); });
        expect_thread_error([&] { cp.execute({a.as_tensor(), b.as_tensor()}, {out.as_tensor()}); });
        omp_set_num_threads(max_thread_count);  // the maximum itself is fine
        EXPECT_NO_THROW(cp.execute({a.as_tensor(), b.as_tensor()}, {out.as_tensor()}));
        omp_set_num_threads(saved);
    }
}

// 1-D, iw 4, kw 1, stride INT64_MAX: one output pixel, at input position -pb.
TEST(Limits, HugeStridesRunExactly) {
    constexpr dim_t smax = INT64_MAX;
    for (const auto &[pb, pe] : {std::pair<dim_t, dim_t>{3, 2}, {0, 0}, {0, 5}}) {
        for (impl_choice choice : {impl_choice::reference, impl_choice::best}) {
            op fwd = make_conv_op(op_kind::Convolution, {smax}, {pb}, {pe}, {1});
            fwd.add_input(logical_tensor(0, data_type::f32, {1, 1, 4}))
                .add_input(logical_tensor(1, data_type::f32, {1, 1, 1}))
                .add_output(logical_tensor::unknown(2, data_type::f32));
            const auto y = run_op(fwd, {{1, 2, 3, 4}, {2}}, choice);
            ASSERT_EQ(y.shape, (dims{1, 1, 1}));
            EXPECT_EQ(y.values[0], pb == 0 ? 2.0 : 0.0) << "pads " << pb << "/" << pe;

            op bwd_d = make_conv_op(op_kind::ConvolutionBackwardData, {smax}, {pb}, {pe}, {1});
            bwd_d.set_attr("dst_shape", dims{1, 1, 4});
            bwd_d.add_input(logical_tensor(0, data_type::f32, {1, 1, 1}))
                .add_input(logical_tensor(1, data_type::f32, {1, 1, 1}))
                .add_output(logical_tensor::unknown(2, data_type::f32));
            const auto dx = run_op(bwd_d, {{5}, {2}}, choice);
            EXPECT_EQ(dx.values, (pb == 0 ? std::vector<double>{10, 0, 0, 0} : std::vector<double>{0, 0, 0, 0}));

            op bwd_w = make_conv_op(op_kind::ConvolutionBackwardWeights, {smax}, {pb}, {pe}, {1});
            bwd_w.set_attr("weights_shape", dims{1, 1, 1});
            bwd_w.add_input(logical_tensor(0, data_type::f32, {1, 1, 4}))
                .add_input(logical_tensor(1, data_type::f32, {1, 1, 1}))
                .add_output(logical_tensor::unknown(2, data_type::f32));
            const auto dw = run_op(bwd_w, {{1, 2, 3, 4}, {5}}, choice);
            EXPECT_EQ(dw.values[0], pb == 0 ? 5.0 : 0.0);
        }
    }
}

// Small inputs, but pads of 2^48 at stride 1: an output of 2^49 pixels, whose f32 copy and the
// few-channel forward kernel's padded src row the bound counts. It exceeds 2^52 bytes, and
// compile says so before any allocation. (Pads of 2^50 at a stride of 2^49 once did too; that
// problem now takes a stride of the image plus a window, 7, and needs no such memory:
// conv_problem::shorten_strides_past_image.)
TEST(Limits, ScratchAboveTheMaximum) {
    op o =
        make_conv_op(op_kind::Convolution, {1}, {dim_t(1) << 48}, {dim_t(1) << 48}, {1}, true, 4);
    o.add_input(logical_tensor(0, data_type::f32, {1, 1, 4}))
        .add_input(logical_tensor(1, data_type::f32, {1, 1, 3}))
        .add_output(logical_tensor::unknown(2, data_type::f32));
    try {
        compile_op(o);
        ADD_FAILURE() << "no error";
    } catch (const error &e) {
        const std::string m = e.what();
        EXPECT_EQ(e.code(), status::out_of_memory) << m;
        EXPECT_NE(m.find("Convolution (op 4"), std::string::npos) << m;
        EXPECT_NE(m.find("scratch memory would exceed 2^52 bytes"), std::string::npos) << m;
    }
}

// An empty batch makes any spatial extent valid: 2^44 rows of 4 pixels hold no element. Choosing
// a kernel must not walk those rows (the direct kernel's cost estimate once visited each chunk
// of rows and hung the compile; found by fuzz_op), and the empty output is written at once.
TEST(Limits, EmptyBatchWithAHugeExtentCompilesAtOnce) {
    constexpr dim_t rows = dim_t(1) << 44;
    // bf16 data is converted into row copies, which is the estimate's walk over rows.
    for (data_type dt : {data_type::f32, data_type::bf16}) {
        for (op_kind kind : {op_kind::Convolution, op_kind::ConvolutionBackwardData}) {
            op o = make_conv_op(kind, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false, 4);
            const dims src{0, rows, 4, 16};
            if (kind == op_kind::ConvolutionBackwardData) o.set_attr("dst_shape", src);
            o.add_input(logical_tensor(0, dt, src))
                .add_input(logical_tensor(1, dt, {3, 3, 16, 16}))
                .add_output(logical_tensor::unknown(2, dt));
            // A bound on a hang, not a speed check: the compile takes microseconds; walking
            // the rows took a minute in a release build.
            const auto t0 = std::chrono::steady_clock::now();
            const compiled_partition cp = compile_op(o);
            EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
            EXPECT_EQ(cp.outputs()[0].shape(), src);
            testing::tensor_buffer a(cp.inputs()[0]), b(cp.inputs()[1]), out(cp.outputs()[0]);
            EXPECT_NO_THROW(cp.execute({a.as_tensor(), b.as_tensor()}, {out.as_tensor()}));
        }
    }
}

}  // namespace
}  // namespace convgrad
